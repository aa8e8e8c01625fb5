#!/usr/bin/env bash
# Tunnel profile settings for slow peers, against a scripted peer (peer.py)
# that advertises a Receive Window of 1024 but acknowledges nothing for a
# while: send_window = 1 keeps at most 1 of the LNS's messages (ICRPs) in
# flight, the rest queued until acknowledgements come (without it, the
# congestion window already lets 2 go at this point: check_sess covers a
# window opened wider); and
# session_setup_timeout = 3 clears sessions whose ICCN never comes after
# 3 s (CDN result 16), not after the default 60 s.
#
#   +------ ns A -------------+          +------ ns B --------+
#   | peer.py 192.0.2.1:1701  |--veth----| l2tpv3d "b"        |
#   +-------------------------+          +--------------------+
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
it_setup

write_conf b $B_ADDR '
tunnel_profiles = ( { name = "default"; send_window = 1; session_setup_timeout = 3; } );
peer_default = { accept = true; };'
start b "$NSB" || exit 1
counters() { ctlj b tunnel show "$(ctlj b tunnel list | jq '.tunnels[0].tunnel_id')" | jq '.. | .counters? // empty'; }

peer_start $A_ADDR --rws 1024
P connect && wait_until 10 expect_count 1 count_tunnels b established	# (B's, once it read the SCCCN)
log_test $? "the peer's connection is up (Receive Window 1024)"
P set ack=0
# each ICRQ acknowledges only the SCCRP (Nr 1), none of the ICRPs
for l in 101 102 103 104 105 106; do P send ICRQ lsid=$l nr=1 || break; done
# the LNS has read the 6 ICRQs (it answers each as it reads it)
icrqs_in() { [ "$(counters | jq '.msgs_in.ICRQ // 0')" -ge 6 ]; }
wait_until 10 icrqs_in
t=$(counters)
P count ICRP 1 timeout=1 && n=$(J .count) && [ "$n" = 1 ] &&
	[ "$(jq .peer_rx_window <<<"$t")" = 1024 ] && [ "$(jq .tx_window <<<"$t")" = 1 ] &&
	[ "$(jq .in_flight <<<"$t")" = 1 ]
log_test $? "send_window = 1: 1 ICRP of 6 sent while the peer acknowledges nothing (got $n)"
P set ack=1
P count ICRP 6 timeout=10
log_test $? "acknowledged again: the 5 queued ICRPs follow ($(J .count) in all)"

# no ICCN: each session is cleared 3 s after its ICRQ
wait_until 8 expect_count 0 count_sessions b
rc=$?
P count CDN 6 timeout=3 && [ $rc = 0 ] && P wait CDN && [ "$(J .msg.result)" = 16 ]
log_test $? "session_setup_timeout = 3: the 6 sessions without ICCN cleared with CDN 16"
peer_stop
it_done
