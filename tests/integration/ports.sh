#!/usr/bin/env bash
# Local ports never bound the tunnels one address holds, and running out of
# them is answered at once, with the reason:
#  - LNS, responder_port "auto" (default): with 10 ephemeral ports, 20
#    tunnels come up (the rest share the listener's port) and a warning
#    names net.ipv4.ip_local_port_range;
#  - LNS, responder_port "ephemeral": the 11th SCCRQ gets one StopCCN
#    (result 2, error 4) naming the exhausted port range, nothing stays on
#    the LNS, and the LAC's CLI says why at once;
#  - LAC: a create that finds no ephemeral port fails at once naming the
#    port range and the udp_src_port option.
. "$(dirname "$0")/lib.sh"
it_setup
ip netns exec "$NSB" sysctl -qw net.ipv4.ip_local_port_range="40000 40009"
write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "daemons start; the LNS has 10 ephemeral ports"

for i in $(seq 1 20); do echo "tunnel create peer $B_ADDR"; done > "$W/t.batch"
ctl a -j -b "$W/t.batch" > "$W/t.out"
ok=$(jq -s '[.[] | select(.status == 0)] | length' "$W/t.out")
[ "$ok" = 20 ] && [ "$(count_tunnels b established)" = 20 ]
log_test $? "auto: 20 tunnels on 10 ephemeral ports ($ok established)"
shared=$(ctlj b tunnel list | jq '[.tunnels[] | select(.local | endswith(":1701"))] | length')
[ "$shared" -ge 10 ] && grep -q "no free ephemeral port.*ip_local_port_range" "$W/b.log"
log_test $? "the rest answer from the listener's port 1701 ($shared), and the log says why"
h0=$(ctlj b stats | jq '(.global.msgs_in.HELLO // 0)')
t=$(ctlj a tunnel list | jq -r '[.tunnels[] | .tunnel_id] | last')
ctl a session create tunnel "$t" >/dev/null && [ "$(count_sessions b established)" = 1 ]
log_test $? "a session on a tunnel sharing port 1701 comes up"
ctl a tunnel delete "$t" >/dev/null
wait_until 5 expect_count 19 count_tunnels b established
log_test $? "its teardown reaches the LNS"

# ephemeral only: refused at once, with the reason, nothing left
sed -i 's|ctl_socket|responder_port = "ephemeral"; ctl_socket|' "$W/b.conf"
ctl b reload >/dev/null
n0=$(count_tunnels b)
t0=$(date +%s%N)
out=$(ctlj a tunnel create peer $B_ADDR 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q "ip_local_port_range" <<<"$out" && [ $ms -lt 3000 ] && [ "$(count_tunnels b)" = "$n0" ]
log_test $? "ephemeral: refused within one round trip ($ms ms) naming the port range, nothing left"
jq -e '.result.code == 2 and .result.error == 4' <<<"$(ctlj a tunnel create peer $B_ADDR 2>/dev/null)" >/dev/null
log_test $? "the StopCCN says result 2, error 4 (insufficient resources)"

# the LAC side: a create with no free port fails at once and names the fix
ip netns exec "$NSA" sysctl -qw net.ipv4.ip_local_port_range="50000 50000"
ctl a tunnel create peer $B_ADDR >/dev/null 2>&1	# may take the only port
out=$(ctl a tunnel create peer $B_ADDR 2>&1)
grep -q "ip_local_port_range" <<<"$out" && grep -q 'udp_src_port' <<<"$out"
log_test $? "LAC out of ports: $(head -c 150 <<<"$out")"
it_done
