#!/usr/bin/env bash
# LNS pools on the LAC (doc/failover.md): one LAC, three LNSs.
#
#   +---- ns A (LAC) ----+          +------------- ns B -------------+
#   | a  192.0.2.1       |--veth----| b1 192.0.2.2  (weight 2 in     |
#   |  pool "spread"     |          | b2 192.0.2.3   "spread",        |
#   |  pool "lns"        |          | b3 192.0.2.4   1 elsewhere)     |
#   +--------------------+          +--------------------------------+
#
#  - 3,000 tunnels created through pool "spread" (weights 2:1:1) by a CLI
#    batch land 1500/750/750 exactly; deleting them holds no member down;
#  - six static tunnels through pool "lns" (hold_down $HOLD s), one session
#    each: b1 is SIGKILLed, its tunnels and their sessions come back on b2
#    and b3 (HELLO every second: detection takes seconds), b1 shows held
#    down with the reason, logged once, and new tunnels avoid it; once its
#    hold-down is over and it runs again, a new tunnel goes to it;
#  - a reload keeps the pool tunnels and the hold-down state, a
#    `l2tpv3ctl restart` of the LAC keeps them and their "pool" field.
. "$(dirname "$0")/lib.sh"
it_setup

B1=192.0.2.2 B2=192.0.2.3 B3=192.0.2.4
ip -n "$NSB" addr add $B2/24 dev veth1 && ip -n "$NSB" addr add $B3/24 dev veth1 ||
	{ echo "cannot add addresses in $NSB"; exit 1; }
for n in 1 2 3; do
	eval "addr=\$B$n"
	write_conf b$n "$addr" 'peer_default = { accept = true; };'
	sed -i 's/log_level = "debug";/log_level = "info";/' "$W/b$n.conf"
done
# the LAC: hello every second, a HELLO given up after about 1.4 s unanswered
lac_conf() {	# lac_conf HOLD_DOWN_S
	write_conf a $A_ADDR "tunnel_profiles = (
  { name = \"fast\"; hello_interval = 1; retransmit_initial = 0.2; retransmit_cap = 0.4;
    max_retries = 3; } );
lns_pools = (
  { name = \"spread\"; members = ( { address = \"$B1\"; weight = 2; }, { address = \"$B2\"; },
                                   { address = \"$B3\"; } ); },
  { name = \"lns\"; hold_down = $1;
    members = ( { address = \"$B1\"; }, { address = \"$B2\"; }, { address = \"$B3\"; } ); } );
tunnels = ( $(for i in 1 2 3 4 5 6; do
	printf '{ name = "st%s"; pool = "lns"; profile = "fast"; sessions = ( { name = "s%s"; } ); },\n' $i $i
done | sed '$ s/,$//') );"
	sed -i 's/log_level = "debug";/log_level = "info";/' "$W/a.conf"
}
# long enough to outlast the checks made while b1 is held down, on a loaded
# machine too (a 4 s one ended before them: its tunnels took 5.5 s to move)
HOLD=20
lac_conf $HOLD
start b1 "$NSB" && start b2 "$NSB" && start b3 "$NSB" && start a "$NSA"
log_test $? "one LAC and three LNSs start"

# members NAME POOL: "address=tunnels/up ..." of the LAC's show daemon
members() {
	ctlj "$1" show daemon | jq -r --arg p "$2" '.pools[] | select(.name == $p) | .members |
		map("\(.address)=\(.tunnels)/\(.up)") | join(" ")'
}
# static_on: the static tunnels' peers, established ones only ("192.0.2.3 192.0.2.3 ...")
static_on() {
	ctlj a tunnel list | jq -r '[.tunnels[] | select(.pool == "lns" and .held != true and
		.state == "established") | .peer | sub(":[0-9]+$"; "")] | sort | join(" ")'
}
statics_up_on() {	# statics_up_on "PEERS": all six established, on these peers, with sessions
	[ "$(static_on)" = "$1" ] &&
		[ "$(ctlj a session list | jq '[.sessions[] | select(.state == "established")] | length')" = 6 ]
}

wait_until 20 statics_up_on "$B1 $B1 $B2 $B2 $B3 $B3"
log_test $? "six static tunnels through pool lns: two on each member, sessions up"

# --- the spread ---------------------------------------------------------------
for i in $(seq 1 3000); do echo "tunnel create pool spread name c$i"; done > "$W/spread.batch"
ctl a -q -b "$W/spread.batch" > "$W/spread.out" 2>&1
rc=$?
got=$(members a spread)
[ $rc = 0 ] && [ "$got" = "$B1=1500/true $B2=750/true $B3=750/true" ]
log_test $? "3000 tunnels through pool spread (weights 2:1:1): $got"
by_peer=$(ctlj a tunnel list | jq -c '[.tunnels[] | select(.pool == "spread" and .state == "established")
	| .peer | sub(":[0-9]+$"; "")] | group_by(.) | map(length)')
# (each LNS's side is up once it read A's SCCCN: a moment after A's)
[ "$by_peer" = "[1500,750,750]" ] && wait_until 30 expect_count 1502 count_tunnels b1 established &&
	wait_until 30 expect_count 752 count_tunnels b2 established && wait_until 30 expect_count 752 count_tunnels b3 established
log_test $? "tunnel list and the LNSs agree: $by_peer established, each with its pool"

for i in $(seq 1 3000); do echo "tunnel delete name c$i"; done > "$W/delete.batch"
ctl a -q -b "$W/delete.batch" > "$W/delete.out" 2>&1
rc=$?
wait_until 20 expect_count 6 count_tunnels a
[ $? = 0 ] && [ $rc = 0 ] && [ "$(members a spread)" = "$B1=0/true $B2=0/true $B3=0/true" ] &&
	ctlj a show daemon | jq -e '[.pools[].members[] | select(.last_failure != null)] | length == 0' >/dev/null
log_test $? "deleting them (ours) holds no member down"

# --- a reload keeps the pool tunnels ------------------------------------------
ids0=$(ctlj a tunnel list | jq -c '[.tunnels[] | .tunnel_id] | sort')
ctlj a reload > "$W/reload.json"
ids1=$(ctlj a tunnel list | jq -c '[.tunnels[] | .tunnel_id] | sort')
jq -e '.tunnels_kept == 6 and .tunnels_restarted == 0 and .tunnels_started == 0' "$W/reload.json" >/dev/null &&
	[ "$ids0" = "$ids1" ]
log_test $? "reload with the same pools: the six pool tunnels kept"

# --- a member dies -------------------------------------------------------------
kill -9 "$(pid_of b1)"
t0=$(date +%s%N)
wait_until 20 statics_up_on "$B2 $B2 $B2 $B3 $B3 $B3"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log_test $rc "b1 killed: its two tunnels and their sessions back on b2 and b3 in $ms ms"
held=$(ctlj a show daemon | jq -c --arg m $B1 '.pools[] | select(.name == "lns") | .members[] |
	select(.address == $m)')
ctl a show daemon > "$W/daemon.txt"
# no tunnel through pool lns created here before the check
ctlj a tunnel create pool lns name avoid1 > "$W/avoid1.json" &&
	ctlj a tunnel create pool lns name avoid2 > "$W/avoid2.json"
rc=$?
echo "$held" | jq -e '.up == false and .held_down_until != null and
	(.last_failure | test("not responding"))' >/dev/null &&
	[ "$(grep -c "pool lns: member $B1 held down for $HOLD s: tunnel st[0-9] ([0-9]*): tunnel down: result" "$W/a.log")" = 1 ]
log_test $? "b1 shows held down with the reason, logged once: $(echo "$held" | jq -r .last_failure)"
grep -q "^    $B1 .* held down ([0-9]* s left); last failure: tunnel down: " "$W/daemon.txt" &&
	grep -q "^    $B2 .* up$" "$W/daemon.txt"
log_test $? "show daemon (text): a line per member, b1 held down with its last failure"
[ $rc = 0 ] && jq -e --arg m $B1 '.peer | startswith($m) | not' "$W/avoid1.json" "$W/avoid2.json" >/dev/null
log_test $? "new tunnels through the pool avoid it: $(jq -r .peer "$W/avoid1.json" "$W/avoid2.json" | tr '\n' ' ')"

start b1 "$NSB"
b1_back() { [ "$(members a lns | cut -d' ' -f1)" = "$B1=0/true" ]; }
wait_until $((HOLD + 10)) b1_back
rc=$?
ctlj a tunnel create pool lns name back1 > "$W/back1.json"
[ $rc = 0 ] && jq -e --arg m $B1 '(.peer | startswith($m)) and .state == "established"' "$W/back1.json" >/dev/null
log_test $? "after its hold-down and started again, b1 takes the next tunnel: $(jq -r .peer "$W/back1.json")"

# --- a restart of the LAC keeps them ---------------------------------------------
snap() { ctlj a tunnel list | jq -c '[.tunnels[] | select(.held != true) |
	{tunnel_id, name, peer, state, pool}] | sort_by(.tunnel_id)'; }
before=$(snap)
ctl a restart > "$W/restart.out"
rc=$?
after=$(snap)
[ $rc = 0 ] && [ "$before" = "$after" ] &&
	[ "$(echo "$after" | jq '[.[] | select(.pool == "lns")] | length')" = 9 ] &&
	[ "$(members a lns)" = "$B1=1/true $B2=4/true $B3=4/true" ]
log_test $? "restart of the LAC: the nine pool tunnels kept with their pool, counted again"
ctlj a tunnel show name st1 | jq -e '.pool == "lns"' >/dev/null &&
	ctl a tunnel list | grep -q "^ *ID .*POOL"
log_test $? "tunnel show and tunnel list name the pool"
ctl a metrics > "$W/a.prom"
grep -qx "l2tpv3d_pool_member_tunnels{pool=\"lns\",member=\"$B2\"} 4" "$W/a.prom" &&
	grep -qx "l2tpv3d_pool_member_up{pool=\"lns\",member=\"$B1\"} 1" "$W/a.prom" &&
	grep -qx "l2tpv3d_pool_member_tunnels{pool=\"spread\",member=\"$B1\"} 0" "$W/a.prom"
log_test $? "metrics: tunnels and up per pool member"
it_done
