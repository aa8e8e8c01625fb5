#!/usr/bin/env bash
# 20% random packet loss on the veth (nftables numgen drop rule, both
# directions): all of 100 tunnels still come up through retransmission.
. "$(dirname "$0")/lib.sh"
command -v nft >/dev/null || skip "needs nft (nftables)"
it_setup
N=${IT_LOSS_TUNNELS:-100}

PROFILE='tunnel_profiles = ( { name = "default"; retransmit_initial = 0.2; retransmit_cap = 1.0;
                               max_retries = 12; sccrq_max_retries = 12;
                               sccrp_max_retries = 12; } );
peer_default = { accept = true; };'
write_conf b $B_ADDR "$PROFILE"
write_conf a $A_ADDR "$PROFILE"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

for ns in "$NSA" "$NSB"; do
	ip netns exec "$ns" nft -f - <<NFT || { log_test 1 "nftables rule"; it_done; exit 1; }
table inet loss {
	chain in { type filter hook input priority 0; meta l4proto udp numgen random mod 100 < 20 counter drop; }
}
NFT
done
log_test 0 "20% loss installed on both sides"

for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR"; done > "$W/t.batch"
ctl a -j -b "$W/t.batch" > "$W/t.out"
ok=$(jq -s '[.[] | select(.status == 0)] | length' "$W/t.out")
[ "$ok" = "$N" ]
log_test $? "all $N tunnel creates succeed under loss ($ok)"
wait_until 20 expect_count "$N" count_tunnels b established
log_test $? "$N tunnels established on B"
dropped=$(ip netns exec "$NSB" nft -j list table inet loss | jq '[.nftables[].rule?.expr[]?.counter?.packets // 0] | add')
rtx=$(ctlj a stats | jq '.global.retransmits')
[ "$dropped" -gt 0 ]
log_test $? "the rule really dropped packets ($dropped on B; A retransmitted $rtx)"

it_done
