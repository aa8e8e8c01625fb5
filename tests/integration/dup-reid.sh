#!/usr/bin/env bash
# A Remote End ID is one pseudowire per peers entry: A opens a session
# "cust-a" to B, then a second "cust-a" on the same tunnel and a third on
# another tunnel of its own (B matches both tunnels to the entry lac-a).
# B refuses both with a CDN that names the session holding the ID, before
# any data plane object is made (its interface would be named "cust-a"
# too); once the first one goes, the ID is free again.  Another entry's
# "cust-a" is another customer's.
#
#   +------ ns A (LAC) ------+          +------ ns B (LNS) -----------------+
#   | tunnels t1, t2 -> B    |--veth----| peers lac-a (192.0.2.1), lac-v6   |
#   | tunnel t6 over IPv6    |          | (2001:db8::1): sessions "%r"       |
#   +------------------------+          +-----------------------------------+
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR "peers = (
  { name = \"lac-a\"; match = \"$A_ADDR/32\"; accept = true;
    sessions = ( { remote_end_id = \"cust-*\"; ifname = \"%r\"; } ); },
  { name = \"lac-v6\"; match = \"$A_ADDR6/128\"; accept = true;
    sessions = ( { remote_end_id = \"cust-*\"; ifname = \"v6-%r\"; } ); } );
peer_default = { accept = false; };"
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"$B_ADDR\", \"$B_ADDR6\"]|" "$W/b.conf"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (B: Remote End IDs name the interfaces)"

ctl a tunnel create peer $B_ADDR name t1 >/dev/null && ctl a tunnel create peer $B_ADDR name t2 >/dev/null
expect_count 2 count_tunnels b established
log_test $? "two tunnels from A, both matched to lac-a"

out=$(ctlj a session create tunnel name t1 name s1 remote-end-id cust-a)
S1=$(ctlj b session list | jq -r '.sessions[] | select(.remote_end_id == "cust-a") | .session_id')
[ "$(jq -r .state <<<"$out")" = established ] && [ -n "$S1" ]
log_test $? "the first cust-a is up (B's session $S1)"

# refused: the CLI's error carries B's CDN
refused_by_b() {	# refused_by_b OUTPUT: B's CDN, result 4, names the holder
	grep -q "CDN result 4" <<<"$1" &&
		grep -q "Remote End ID \\\\\?\"cust-a\\\\\?\" is already in use by session $S1" <<<"$1"
}
out=$(ctlj a session create tunnel name t1 name s2 remote-end-id cust-a 2>&1)
refused_by_b "$out"
rc=$?; log_test $rc "a second cust-a on the same tunnel: CDN that names session $S1"
[ $rc = 0 ] || echo "$out"
out=$(ctlj a session create tunnel name t2 name s3 remote-end-id cust-a 2>&1)
refused_by_b "$out"
rc=$?; log_test $rc "a second cust-a on another tunnel of the same peers entry: refused too"
[ $rc = 0 ] || echo "$out"
grep -q "refusing session: Remote End ID \"cust-a\" is already in use by session $S1" "$W/b.log"
log_test $? "B's log says why"
[ "$(ctlj b session list | jq '[.sessions[] | select(.remote_end_id == "cust-a")] | length')" = 1 ] &&
	[ "$(ctlj b session show "$S1" | jq -r .state)" = established ]
log_test $? "B keeps exactly one cust-a, the first, established"

ctl a session delete name s1 >/dev/null
wait_until 10 expect_count 0 count_sessions b
log_test $? "the first cust-a is cleared"
out=$(ctlj a session create tunnel name t2 name s4 remote-end-id cust-a)
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "then cust-a is free again, on the other tunnel"

# another peers entry: another customer's namespace
ctl a tunnel create peer $B_ADDR6 name t6 >/dev/null &&
	out=$(ctlj a session create tunnel name t6 name s6 remote-end-id cust-a) &&
	[ "$(jq -r .state <<<"$out")" = established ] &&
	[ "$(ctlj b session list | jq '[.sessions[] | select(.remote_end_id == "cust-a")] | length')" = 2 ]
log_test $? "cust-a of another peers entry (lac-v6) is accepted beside lac-a's"

it_done
