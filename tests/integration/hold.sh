#!/usr/bin/env bash
# The StopCCN hold costs no descriptor beyond the live tunnels:
#  - LNS with responder_port "listener": the tunnels the LAC deletes stay
#    held on the LNS (stopping, RFC 3931 4.2's retransmission cycle) but
#    their sockets close at once, so its descriptors are back to the
#    baseline; a retransmitted StopCCN is still acknowledged, through the
#    listener;
#  - LNS with ports of its own (the default) under a 64-descriptor limit:
#    held tunnels give their sockets up to new ones, so a second round of
#    tunnels comes up in full instead of failing with EMFILE;
#  - the listener's receive buffer is sized for max_half_open SCCRQs.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
command -v prlimit >/dev/null || skip "needs prlimit (util-linux)"
it_setup
PEER_ADDR=192.0.2.3
ip -n "$NSA" addr add $PEER_ADDR/24 dev veth0

nfd() { ls "/proc/$(pid_of "$1")/fd" | wc -l; }
creates() {	# creates N: N tunnels from a to b in one batch; prints how many were made
	for i in $(seq 1 "$1"); do echo "tunnel create peer $B_ADDR"; done > "$W/c.batch"
	ctl a -j -b "$W/c.batch" | jq -s '[.[] | select(.status == 0)] | length'
}
delete_all() {
	ctlj a tunnel list | jq -r '.tunnels[] | "tunnel delete \(.tunnel_id)"' > "$W/d.batch"
	ctl a -b "$W/d.batch" >/dev/null
	wait_until 5 expect_count 0 count_tunnels a
}

write_conf b $B_ADDR 'peer_default = { accept = true; };'
sed -i 's|ctl_socket|responder_port = "listener"; ctl_socket|' "$W/b.conf"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "daemons start; the LNS answers from its listener's port"

# the listener's receive buffer holds max_half_open (default 1000) SCCRQs of
# ~2.3 KB each: a burst of peers coming back at once is not dropped
rb=$(ip netns exec "$NSB" ss -uamnl "sport = :1701" | grep -o 'rb[0-9]*' | head -1 | tr -d rb)
[ -n "$rb" ] && [ "$rb" -ge $((1000 * 2304)) ]
log_test $? "the listener's receive buffer holds 1000 SCCRQs (rb $rb)"

base=$(nfd b)
made=$(creates 50)
[ "$made" = 50 ] && [ "$(count_tunnels b established)" = 50 ] && [ "$(nfd b)" -ge $((base + 50)) ]
log_test $? "50 tunnels up, one socket each on the LNS ($base -> $(nfd b) descriptors)"
delete_all
held=$(count_tunnels b stopping)
wait_until 3 expect_count "$base" nfd b
rc=$?
[ $rc = 0 ] && [ "$held" = 50 ] &&
	[ "$(ctlj b stats | jq .global.hold_sockets_closed)" = 50 ]
log_test $? "deleted by the LAC: 50 held on the LNS, descriptors back to $base (now $(nfd b))"

peer_start $PEER_ADDR
P connect && [ "$(J .reply.type)" = SCCRP ] && P acked &&
	P send StopCCN && sns=$(J .ns) && P acked && P state && z0=$(J .zlb_rx) &&
	wait_until 3 expect_count "$base" nfd b &&
	P send StopCCN ns="$sns" && sleep 0.5 && P state && [ "$(J .zlb_rx)" -gt "$z0" ]
log_test $? "a retransmitted StopCCN to a held tunnel without a socket is acknowledged"
peer_stop

# ports of their own, 64 descriptors: the held ones make room
kill "$(pid_of b)"; wait_until 5 sh -c "! kill -0 $(pid_of b) 2>/dev/null"
sed -i 's|responder_port = "listener"; ||' "$W/b.conf"
start b "$NSB" && prlimit --pid "$(pid_of b)" --nofile=64:64
log_test $? "LNS restarted with ports of its own and 64 descriptors"
delete_all
made=$(creates 40)
[ "$made" = 40 ]
log_test $? "40 tunnels up ($made)"
delete_all
made=$(creates 40)
[ "$made" = 40 ] && [ "$(count_tunnels b established)" = 40 ] &&
	[ "$(ctlj b stats | jq .global.hold_sockets_reclaimed)" -gt 0 ]
log_test $? "40 more while 40 are held: all up ($made), $(ctlj b stats | jq .global.hold_sockets_reclaimed) held sockets reclaimed"
it_done
