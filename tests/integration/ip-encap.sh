#!/usr/bin/env bash
# L2TP over IP (protocol 115) on a host without the kernel's l2tp_ip: with
# the null data plane the control channel runs over a raw IP socket, so the
# whole control plane over IPv4 and IPv6 works (and is tested) anywhere.
# Tunnels, sessions, HELLOs, teardown from either side, a refused peer, and
# no UDP port shown for IP tunnels.
. "$(dirname "$0")/lib.sh"
it_setup

if ip netns exec "$NSB" python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM, 115)' 2>/dev/null; then
	IPMOD=1	# l2tp_ip is loaded here: the daemons use it, which is tested the same way
else
	IPMOD=0
fi
PROF='tunnel_profiles = ( { name = "default"; encap = "ip"; hello_interval = 1; } );'
write_conf b $B_ADDR "$PROF peers = ( { name = \"lac\"; match = \"192.0.2.1/32\"; accept = true; },
	{ name = \"lac6\"; match = \"2001:db8::1/128\"; accept = true; } );
peer_default = { accept = false; };"
write_conf a $A_ADDR "$PROF peer_default = { accept = true; };"
for n in a b; do
	sed -i "s|ctl_socket|listen_ip = true; ctl_socket|" "$W/$n.conf"
done
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"$B_ADDR\", \"$B_ADDR6\"]|" "$W/b.conf"
sed -i "s|listen = \[\"$A_ADDR\"\]|listen = [\"$A_ADDR\", \"$A_ADDR6\"]|" "$W/a.conf"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start with listen_ip (l2tp_ip loaded: $IPMOD)"
[ $IPMOD = 1 ] || grep -q "raw IP socket" "$W/b.log"
log_test $? "without l2tp_ip the log says the control channel uses a raw IP socket"

# B's monitor: events name the peer as tunnel show does (no port over IP)
$C -s "$W/b.ctl" -j monitor >"$W/b.mon" 2>&1 &
MON=$!
wait_until 3 grep -q monitoring "$W/b.mon"

for fam in 4 6; do
	peer=$B_ADDR; [ $fam = 6 ] && peer=$B_ADDR6
	out=$(ctlj a tunnel create peer "$peer" encap ip name ip$fam)
	TID=$(jq -r .tunnel_id <<<"$out") PTID=$(jq -r .peer_tunnel_id <<<"$out")
	[ "$(jq -r .state <<<"$out")" = established ] && [ "$(jq -r .encap <<<"$out")" = ip ]
	log_test $? "IPv$fam: tunnel over IP established from A"
	bt=$(ctlj b tunnel show "$PTID")
	[ "$(jq -r .state <<<"$bt")" = established ] && [ "$(jq -r .encap <<<"$bt")" = ip ] &&
		[ "$(jq -r .peer_tunnel_id <<<"$bt")" = "$TID" ]
	log_test $? "IPv$fam: B sees it over IP with A's CCID"
	# "a.b.c.d:port" or "[v6]:port" is a UDP form; a bare address is right
	! jq -r '.peer, .local' <<<"$bt" | grep -Eq '^\[.*\]:[0-9]+$|^[0-9.]+:[0-9]+$' &&
		[ "$(jq -r .peer <<<"$bt")" = "$([ $fam = 4 ] && echo $A_ADDR || echo $A_ADDR6)" ]
	log_test $? "IPv$fam: no UDP port shown for an IP tunnel ($(jq -r .peer <<<"$bt"))"
	apeer=$([ $fam = 4 ] && echo $A_ADDR || echo $A_ADDR6)
	wait_until 3 sh -c "jq -c 'select(.event == \"tunnel-up\" and .tunnel_id == $PTID)' \
		$W/b.mon | grep -q ."
	[ "$(jq -r "select(.event == \"tunnel-up\" and .tunnel_id == $PTID) | .peer" \
		"$W/b.mon")" = "$apeer" ]
	log_test $? "IPv$fam: B's monitor shows the same bare address on tunnel-up"
	out=$(ctlj a session create tunnel "$TID" remote-end-id pw$fam)
	SID=$(jq -r .session_id <<<"$out")
	[ "$(jq -r .state <<<"$out")" = established ]
	log_test $? "IPv$fam: session established over the IP control channel"
	q='(.counters.msgs_in.HELLO // 0) + (.counters.msgs_out.HELLO // 0)'
	h0=$(ctlj b tunnel show "$PTID" | jq "$q")
	wait_until 4 sh -c "[ \$($C -s $W/b.ctl -j tunnel show $PTID | jq '$q') -gt $h0 ]"
	log_test $? "IPv$fam: HELLOs flow"
done

# teardown from B (the responder) reaches A over IP
ctl b tunnel delete "$PTID" >/dev/null
wait_until 5 sh -c "! $C -s $W/a.ctl -j tunnel show $TID >/dev/null 2>&1 ||
	[ \$($C -s $W/a.ctl -j tunnel show $TID | jq -r .state) != established ]"
log_test $? "a StopCCN from B over IP takes A's tunnel down"

# B refuses a peer it does not accept: one StopCCN over IP, nothing left on B
ip -n "$NSA" addr add 192.0.2.9/24 dev veth0
out=$(ctlj a tunnel create peer $B_ADDR encap ip local 192.0.2.9 2>&1)
grep -q "not allowed\|not authorized" <<<"$out" && [ "$(count_tunnels b)" = 1 ]
log_test $? "an unaccepted peer is refused over IP at once: $(head -c 120 <<<"$out")"
kill "$MON" 2>/dev/null
it_done
