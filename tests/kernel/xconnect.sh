#!/usr/bin/env bash
# Customers by Remote End ID with real interfaces: B's
# peer entry maps "cust-a" to the interface cust-a in bridge br-a and
# "site-*" to pw-<ID> in br-sites; A's static sessions name their own
# interfaces.  The kernel has exactly those names and bridge ports, and
# they are the same after the session comes back.
. "$(dirname "$0")/lib.sh"
kt_setup
ip -n "$NSB" link add br-a type bridge && ip -n "$NSB" link add br-sites type bridge

write_conf b $B_ADDR "peers = ( { name = \"lac\"; match = \"$A_ADDR/32\"; accept = true; refuse_unknown_sessions = true;
  sessions = ( { remote_end_id = \"cust-a\"; ifname = \"cust-a\"; bridge = \"br-a\"; },
               { remote_end_id = \"site-*\"; ifname = \"pw-%r\"; bridge = \"br-sites\"; } ); } );
peer_default = { accept = false; };"
write_conf a $A_ADDR "peer_default = { accept = true; };
tunnels = ( { name = \"t\"; peer = \"$B_ADDR\";
  sessions = ( { name = \"a\"; remote_end_id = \"cust-a\"; ifname = \"to-cust-a\"; },
               { name = \"s3\"; remote_end_id = \"site-3\"; ifname = \"to-site3\"; } ); } );"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
wait_until 20 expect_count 2 count_sessions b established
log_test $? "two sessions up"

master() { ip -n "$1" -j link show dev "$2" | jq -r '.[0].master // ""'; }
[ "$(master "$NSB" cust-a)" = br-a ] && [ "$(master "$NSB" pw-site-3)" = br-sites ] &&
	ip -n "$NSA" link show to-cust-a >/dev/null && ip -n "$NSA" link show to-site3 >/dev/null
rc=$?; log_test $rc "B: cust-a in br-a, pw-site-3 in br-sites; A: to-cust-a, to-site3"
[ $rc = 0 ] || { ip -n "$NSB" -br link; ip -n "$NSA" -br link; }
[ "$(k_session_ids "$NSB" | jq -r '[.[][3]] | sort | join(" ")')" = "cust-a pw-site-3" ]
log_test $? "iproute2 shows B's kernel sessions on exactly those interfaces"

SB=$(ctlj b session list | jq -r '.sessions[] | select(.remote_end_id == "cust-a") | .session_id')
ctl b session delete "$SB" >/dev/null
wait_until 20 sh -c "ip -n $NSB -j l2tp show session | jq -e '[.[] | select(.interface == \"cust-a\" and .session_id != $SB)] | length == 1' >/dev/null" &&
	[ "$(master "$NSB" cust-a)" = br-a ] && wait_until 5 ip -n "$NSA" link show to-cust-a
rc=$?; log_test $rc "cleared and back: the same names and bridge port (cust-a in br-a, to-cust-a)"
[ $rc = 0 ] || { ip -n "$NSB" -br link; k_session_ids "$NSB"; }
kt_done
