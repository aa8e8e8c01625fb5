#!/usr/bin/env bash
# Local ports never bound the tunnels one address holds, and running out of
# them is answered at once, with the reason:
#  - LNS, responder_port "auto" (default): with 10 ephemeral ports, 20
#    tunnels come up (the rest share those ports, each socket connected to
#    its own peer) and a warning names net.ipv4.ip_local_port_range;
#  - a LAC whose tunnels all come from one port (udp_src_port = "1701"):
#    one tunnel per LNS port for that peer endpoint, 10 + the listener's,
#    the 12th refused at once with the reason (never two sockets with the
#    same addresses and ports, which would take each other's messages);
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
ctlj b tunnel list > "$W/b.list"
ports=$(jq -r '[.tunnels[].local | capture(":(?<p>[0-9]+)$").p | tonumber] | unique | map(select(. >= 40000 and . <= 40009)) | length' "$W/b.list")
outside=$(jq '[.tunnels[].local | select(test(":400[0-9][0-9]$") | not)] | length' "$W/b.list")
[ "$ports" = 10 ] && [ "$outside" = 0 ] &&
	grep -q "no free ephemeral port.*ip_local_port_range 40000-40009.*share our ports" "$W/b.log"
log_test $? "the rest share the 10 ports ($ports used, $outside elsewhere), and the log says why"
h0=$(ctlj b stats | jq '(.global.msgs_in.HELLO // 0)')
t=$(ctlj a tunnel list | jq -r '[.tunnels[] | .tunnel_id] | last')
ctl a session create tunnel "$t" >/dev/null && wait_until 20 expect_count 1 count_sessions b established
log_test $? "a session on a tunnel sharing a port comes up"
ctl a tunnel delete "$t" >/dev/null
wait_until 5 expect_count 19 count_tunnels b established
log_test $? "its teardown reaches the LNS"

# one peer endpoint: one tunnel per port of ours, then a refusal that says why
sed -i 's|peer_default|tunnel_profiles = ( { name = "default"; udp_src_port = "1701"; } );\npeer_default|' "$W/a.conf"
ctl a reload >/dev/null
n0=$(count_tunnels b established)
for i in $(seq 1 11); do echo "tunnel create peer $B_ADDR"; done > "$W/f.batch"
ctl a -j -b "$W/f.batch" > "$W/f.out"
ok=$(jq -s '[.[] | select(.status == 0)] | length' "$W/f.out")
ctlj b tunnel list | jq --arg a "$A_ADDR:1701" '[.tunnels[] | select(.peer == $a) | .local] | [length, (unique | length)]' -c > "$W/f.ports"
[ "$ok" = 11 ] && [ "$(cat "$W/f.ports")" = "[11,11]" ]
log_test $? "11 tunnels from $A_ADDR:1701: 11 distinct local ports on B $(cat "$W/f.ports")"
ctlj a tunnel create peer $B_ADDR > "$W/f12.json" 2> "$W/f12.err"
jq -e '.result.code == 2 and .result.error == 4' "$W/f12.json" >/dev/null &&
	tr -d "\n" < "$W/f12.err" | grep -q "all our ports carry a tunnel to this peer port" &&
	[ "$(count_tunnels b established)" = $((n0 + 11)) ]
log_test $? "the 12th: StopCCN result 2, error 4, naming the reason: $(cat "$W/f12.err")"
ctlj a tunnel list | jq -r '.tunnels[] | select(.local | endswith(":1701")) | "tunnel delete \(.tunnel_id)"' > "$W/fd.batch"
ctl a -b "$W/fd.batch" >/dev/null
sed -i 's|tunnel_profiles = .*||' "$W/a.conf"
ctl a reload >/dev/null

# ephemeral only: refused at once, with the reason, nothing left
sed -i 's|ctl_socket|responder_port = "ephemeral"; ctl_socket|' "$W/b.conf"
ctl b reload >/dev/null
n0=$(count_tunnels b)
t0=$(date +%s%N)
out=$(ctlj a tunnel create peer $B_ADDR 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# (the reason is B's StopCCN, read: a CLI left to its setup timeout would say that)
grep -q "ip_local_port_range" <<<"$out" && [ "$(count_tunnels b)" = "$n0" ]
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
