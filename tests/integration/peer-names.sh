#!/usr/bin/env bash
# Tunnels and sessions a peer opens are named after their peers entry, the
# peer's host name and the Remote End ID, so an LNS operator can address
# them and the log names the customer: "lacs/a", then "lacs/a:2" for the
# same LAC's second connection; "lacs/cust-a" for its session.  The names
# work wherever names do (show, delete).  A peer's words become a name only
# through the characters a configured name may hold: a host name with a
# quote, a slash and a semicolon comes out with '_' for each.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR 'peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; } );'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

ctl a tunnel create peer $B_ADDR name t1 >/dev/null &&
	ctl a session create tunnel name t1 name s1 remote-end-id cust-a >/dev/null &&
	ctl a tunnel create peer $B_ADDR name t2 >/dev/null
log_test $? "A opens two tunnels, a session with Remote End ID cust-a on the first"

T1B=$(ctlj a tunnel show name t1 | jq .peer_tunnel_id)
T2B=$(ctlj a tunnel show name t2 | jq .peer_tunnel_id)
# B names a peer's tunnel when it comes up, once it has read A's SCCCN
wait_until 20 expect_count 2 count_tunnels b established
[ "$(ctlj b tunnel show "$T1B" | jq -r .name)" = lacs/a ] &&
	[ "$(ctlj b tunnel show "$T2B" | jq -r .name)" = lacs/a:2 ] &&
	[ "$(ctlj b tunnel show name lacs/a | jq .tunnel_id)" = "$T1B" ]
log_test $? "B names them lacs/a and lacs/a:2, and finds them by those names"
# A's create returns once A sent its ICCN: B's session is up when B has read it
b_established() { ctlj b session show name lacs/cust-a | jq -e '.remote_end_id == "cust-a" and .state == "established"' >/dev/null; }
wait_until 20 b_established
log_test $? "B's session is lacs/cust-a"
grep -q "info: session lacs/cust-a ([0-9]*): up: tunnel lacs/a ([0-9]*)" "$W/b.log"
log_test $? "B's log names the customer"

ctl b session delete name lacs/cust-a >/dev/null &&
	wait_until 10 expect_count 0 count_sessions a
log_test $? "deleted by its name on B: gone on A too"
ctl b tunnel delete name lacs/a:2 >/dev/null &&
	wait_until 10 expect_count 1 count_tunnels a established
log_test $? "tunnel lacs/a:2 deleted by its name"

# a LAC with many connections: each has a name of its own, past any round
# number, and the thousandth costs no more than the second
for i in $(seq 1 1100); do echo "tunnel create peer $B_ADDR name m$i"; done > "$W/m.batch"
ctl a -q -b "$W/m.batch" && wait_until 60 expect_count 1101 count_tunnels b established
log_test $? "A opens 1,100 more tunnels to B"
ctlj b tunnel list | jq -e '[.tunnels[] | select(.name != null and (.name | startswith("lacs/a")))] |
	(length == 1101) and ((map(.name) | unique | length) == 1101)' >/dev/null
log_test $? "B names each of the 1,101 (one name each, none twice; $(ctlj b tunnel list | jq '[.tunnels[] | select((.name // "") | startswith("lacs/a") | not)] | length') without)"
ctl a -q -b <(for i in $(seq 1 1100); do echo "tunnel delete name m$i"; done) &&
	wait_until 60 expect_count 1 count_tunnels b
log_test $? "A closes them again"
# their names' records (flaps, last change) wait for the names to come back,
# but a peer's names are its own to choose: the most recently gone are kept
names() { ctl b metrics | awk -v k="l2tpv3d_metrics_names{state=\"$1\"}" '$1 == k { print $2 }'; }
gone=$(names gone) all=$(names all)
[ "$gone" = 1024 ] && [ "$all" -ge 1024 ] && [ "$all" -le 1030 ]
log_test $? "B keeps the records of the 1,024 names gone last, not of all 1,101 ($all kept, $gone of them gone)"

# a hostile host name: a quote, a slash, a semicolon
ip -n "$NSA" addr add 192.0.2.11/24 dev veth0
peer_start 192.0.2.11
P 'connect host=x"y/z;w' && wait_until 10 expect_count 2 count_tunnels b established
log_test $? "a scripted peer with host name x\"y/z;w connects"
ctlj b tunnel list | jq -e 'any(.tunnels[]; .name == "lacs/x_y_z_w")' >/dev/null
log_test $? "its tunnel is named lacs/x_y_z_w ($(ctlj b tunnel list | jq -c "[.tunnels[].name]"))"

it_done
