#!/usr/bin/env bash
# Forged SCCRQs with a Tie Breaker from the address of a peer we are
# connecting to, refused (accept = false) and accepted: the daemon survives
# and the tie break goes by RFC 3931 5.4.3.  Two LCCEs opening to each other
# at once end with one tunnel, established on both sides.
. "$(dirname "$0")/lib.sh"
adv_setup

adv_conf_b 'peer_default = { accept = false; };'
adv_start

block_b_at_a() {	# a's namespace drops what b sends to port 1701
	ip netns exec "$NSA" nft -f - <<NFT
table inet advblock {
	chain inp { type filter hook input priority 0; ip saddr $B_ADDR udp dport 1701 drop; }
}
NFT
}

# b connects to 192.0.2.1, whose daemon drops b's SCCRQs: b stays in wait-ctl-reply
block_b_at_a
ctl b tunnel create peer $A_ADDR name pending >/dev/null 2>&1 & pc=$!
wait_until 5 sh -c "$C -s $W/b.ctl -j tunnel list | jq -e '.tunnels[] | select(.state == \"wait-ctl-reply\")'"
log_test $? "b has a tunnel of its own waiting for 192.0.2.1"

# forged: from 192.0.2.1, another port, tie breaker 0 (always wins)
adv_forge_seen 3 sccrq --dst $B_ADDR --src $A_ADDR --sport 40000 --tie-breaker 0000000000000000 --count 3
alive b
log_test $? "b survives SCCRQs with a tie breaker from that peer (accept = false)"
[ "$(count_tunnels b wait-ctl-reply)" = 1 ]
log_test $? "a refused SCCRQ does not take part in the tie break: b's tunnel still waits"

# now b accepts 192.0.2.1: the forged SCCRQ wins and replaces b's tunnel; no crash
ctl b tunnel delete name pending >/dev/null 2>&1
wait $pc; ip netns exec "$NSA" nft delete table inet advblock
adv_conf_b 'peer_default = { accept = true; };'
ctl b reload >/dev/null
block_b_at_a
ctl b tunnel create peer $A_ADDR name pending2 >/dev/null 2>&1 & pc=$!
wait_until 5 sh -c "$C -s $W/b.ctl -j tunnel list | jq -e '.tunnels[] | select(.state == \"wait-ctl-reply\")'"
adv_forge_seen 1 sccrq --dst $B_ADDR --src $A_ADDR --sport 40001 --tie-breaker 0000000000000000
lost_tie() { [ "$(count_tunnels b wait-ctl-reply)" = 0 ] && [ "$(count_tunnels b wait-ctl-conn)" = 1 ]; }
alive b && wait_until 10 lost_tie
log_test $? "b loses the tie break to an accepted SCCRQ: its own tunnel is discarded, no crash"
ip netns exec "$NSA" nft delete table inet advblock
# the forged winner never completes: when its SCCRPs run out, b opens its own
# connection again, with the name and the waiting CLI, and A answers it now
REOPEN_S=60	# the forged connection's SCCRP retries (about 23 s), then a handshake
only_pending2() {
	$C -s $W/b.ctl -j tunnel list | jq -e '[.tunnels[] | select(.state != "stopping")] |
		length == 1 and .[0].name == "pending2" and .[0].state == "established"' >/dev/null
}
wait_until $REOPEN_S only_pending2 && grep -q "never came up: opening ours to $A_ADDR again" "$W/b.log"
log_test $? "the forged winner's connection ends by its deadline, and b's own, reopened, is up as pending2"
wait $pc
log_test $? "the tunnel create that lost the tie break succeeds"
ctl b tunnel delete name pending2 >/dev/null
# (the side that gets the StopCCN holds the tunnel, stopping, for 31 s)
none_live() { $C -s "$W/$1.ctl" -j tunnel list | jq -e '[.tunnels[] | select(.state != "stopping")] | length == 0' >/dev/null; }
wait_until 20 none_live b && wait_until 20 none_live a
log_test $? "deleted: no live tunnel left on either side"

# --- a real simultaneous open: both daemons create a tunnel to each other ---
for ns in "$NSA" "$NSB"; do
	ip netns exec "$ns" nft -f - <<NFT
table inet advhold {
	chain inp { type filter hook input priority 0; udp dport 1701 drop; }
}
NFT
done
ctlj a tunnel create peer $B_ADDR name sim >"$W/sim-a.json" 2>&1 & pa=$!
ctlj b tunnel create peer $A_ADDR name sim >"$W/sim-b.json" 2>&1 & pb=$!
# both SCCRQs pending on both sides; their retransmissions then cross
pending() { expect_count 1 count_tunnels a wait-ctl-reply && expect_count 1 count_tunnels b wait-ctl-reply; }
wait_until 10 pending
log_test $? "simultaneous open: both SCCRQs sent and held back"
for ns in "$NSA" "$NSB"; do ip netns exec "$ns" nft delete table inet advhold; done
wait $pa; ra=$?; wait $pb; rb=$?
[ $ra = 0 ] && [ $rb = 0 ]
log_test $? "simultaneous open: both tunnel create commands succeed"
wait_until 5 sh -c "[ \$($C -s $W/a.ctl -j tunnel list | jq '[.tunnels[] | select(.state == \"established\")] | length') = 1 ] &&
	[ \$($C -s $W/b.ctl -j tunnel list | jq '[.tunnels[] | select(.state == \"established\")] | length') = 1 ]"
log_test $? "simultaneous open: one tunnel, established on both sides"
ta=$(jq -r .tunnel_id "$W/sim-a.json"); tb=$(jq -r .tunnel_id "$W/sim-b.json")
x=$(ctlj a tunnel show name sim | jq -r .peer_tunnel_id) y=$(ctlj b tunnel show name sim | jq -r .tunnel_id)
[ -n "$x" ] && [ "$x" != null ] && [ "$x" = "$y" ]
log_test $? "simultaneous open: the name 'sim' on both sides names the same tunnel ($ta, $tb)"
alive a && alive b
log_test $? "both daemons alive"
it_done
