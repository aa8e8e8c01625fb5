#!/usr/bin/env bash
# A message for a known CCID must come from that tunnel's peer address and
# port (else: drop "wrong-source"): StopCCNs from the peer's address and
# other ports, with the CCID and every plausible Ns/Nr, leave the tunnel up;
# only a message whose Ns/Nr pass reliable delivery counts as a sign of life.
. "$(dirname "$0")/lib.sh"
adv_setup

adv_conf_b 'peer_default = { accept = true; };'
adv_start
adv_victim
sleep 2	# a few HELLOs each way

# StopCCNs for the victim's CCID at b from a's address, 8 other ports, every
# plausible Ns (0-31) and Nr (0-15): one of them is in sequence
lport=$(ctlj b tunnel show "$VPTID" | jq -r .peer | sed 's/.*://')
rb0=$(ctlj b stats | jq '.global.udp_rcvbuf_errors')
adv_forge_seen 4096 stopccn --dst $B_ADDR --src $A_ADDR --ccid "$VPTID" --sports 40000-40007 --ns 0-31 --nr 0-15
alive b
log_test $? "b alive after 4,096 forged StopCCNs"
[ "$(ctlj b tunnel show "$VPTID" | jq -r .state)" = established ]
log_test $? "the victim tunnel is not torn down by messages from other ports (peer port $lport)"
# what the kernel did not drop for a full receive buffer reached us and was refused
wait_until 10 drops_reach wrong-source 4096 "$rb0"; rc=$?
ws=$(ctlj b stats | jq '.global.drops["wrong-source"] // 0')
rb=$(( $(ctlj b stats | jq '.global.udp_rcvbuf_errors') - rb0 ))
[ $rc = 0 ] && [ "$ws" -gt 0 ]
log_test $? "they are counted as wrong-source ($ws, and $rb dropped by a full socket buffer)"
adv_victim_ok
log_test $? "the victim tunnel is established and passing HELLOs"
it_done
