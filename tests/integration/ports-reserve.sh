#!/usr/bin/env bash
# A responder (responder_port "auto", the default) shares its ports before
# the ephemeral range runs out: once its own sockets hold all but a
# sixteenth of the range on its address, a new tunnel shares one of our
# ports instead of asking the kernel, whose search for a free port scans
# more of the range the fuller it is (tunnel-storm --lns-ports shows the
# dip it avoids).  With 32 ports: 30 of its own, then sharing, every tunnel
# up, and the log says why; the kernel never had to answer EADDRINUSE.
. "$(dirname "$0")/lib.sh"
it_setup
ip netns exec "$NSB" sysctl -qw net.ipv4.ip_local_port_range="40000 40031"
write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "daemons start; the LNS has 32 ephemeral ports"

for i in $(seq 1 40); do echo "tunnel create peer $B_ADDR"; done > "$W/t.batch"
ctl a -j -q -b "$W/t.batch" > "$W/t.out"
wait_until 20 expect_count 40 count_tunnels b established
log_test $? "40 tunnels up on the LNS's 32 ports"
ctlj b tunnel list > "$W/b.list"
in_range=$(jq '[.tunnels[].local | select(test(":400[0-3][0-9]$"))] | length' "$W/b.list")
[ "$in_range" = 40 ]
log_test $? "every LNS tunnel socket is on a port of the range ($in_range of 40)"
grep -q "ephemeral ports on $B_ADDR nearly all ours (30 of net.ipv4.ip_local_port_range 40000-40031)" "$W/b.log"
log_test $? "the LNS shares once 30 of the 32 are its own, and says why"
grep -q "nearly all ours" "$W/b.log" && ! grep -q "no free ephemeral port" "$W/b.log"
log_test $? "so the kernel never ran out of ports to search"
it_done
