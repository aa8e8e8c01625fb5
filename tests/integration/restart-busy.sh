#!/usr/bin/env bash
# A restarted peer whose old connection is still retransmitting our HELLO:
# the LNS ("b") says HELLO every 2 s to a scripted peer (peer.py) that then
# vanishes, so the HELLO goes unanswered and is retransmitted (1 s doubling,
# 10 retries: 71 s to give up).  The peer comes back from the same address
# and opens a new connection.  The old one is silent and busy: it counts as
# probed, its retransmissions are cut, and it is cleared within seconds,
# before its stale HELLOs can confuse a peer that demultiplexes by address
# (freeRtr).  The log says what the sweep did.
#
#   +------ ns A -------------+          +------ ns B --------+
#   | peer.py 192.0.2.1:1701  |--veth----| l2tpv3d "b"        |
#   +-------------------------+          +--------------------+
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
it_setup

write_conf b $B_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 2; } );
peer_default = { accept = true; };'
start b "$NSB" || exit 1
retransmits() { ctlj b stats | jq '.global.retransmits // 0'; }

peer_start $A_ADDR
P connect && wait_until 10 expect_count 1 count_tunnels b established	# (once B read the SCCCN)
log_test $? "the peer's first connection is up"
P disappear
# HELLO after 2 s of silence, retransmitted at +1 s and +3 s
wait_until 10 at_least 2 retransmits
log_test $? "the peer vanished: the LNS retransmits its HELLO ($(retransmits) retransmissions)"
peer_stop

peer_start $A_ADDR
P connect
t0=$(date +%s%N)
wait_until 4 expect_count 1 count_tunnels b
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 0 ] && expect_count 1 count_tunnels b established
log_test $? "the peer restarted: its old, retransmitting connection cleared $ms ms after the new one came up"
grep -q "new connection .*, and 1 of its older connections are silent with messages unanswered: cutting their retransmissions" "$W/b.log" &&
	! grep -q "probing 0 more" "$W/b.log"
log_test $? "the log says the sweep cut a retransmitting connection short"
P send HELLO && P acked && expect_count 1 count_tunnels b established
log_test $? "the new connection works"
peer_stop
it_done
