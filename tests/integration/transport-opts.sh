#!/usr/bin/env bash
# A tunnel profile's transport settings on the wire: the control packets of
# a tunnel whose profile sets dscp 46, ttl 7 and df "on" carry TOS 0xb8, TTL
# 7 and DF (IPv6: class 0xb8, hop limit 7), another tunnel's (df "off")
# do not.  A
# reload changing dscp to 10 re-marks the live tunnel (TOS 0x28, same ID).
# bind_device naming a missing device fails tunnel create naming it (and a
# static tunnel logs it and retries); naming a device binds the tunnel to
# it, and naming a VRF (where the kernel has them) puts the tunnel in it: a
# peer only the VRF routes to is reached through it, and not without it.
#
#   +---------- ns A ----------+             +---------- ns B ----------+
#   | veth0 192.0.2.1 db8::1   |-------------| veth1 192.0.2.2 db8::2   |
#   | [vrf-blue:] veth2        |             |                          |
#   |   198.51.100.1           |-------------| veth3 198.51.100.2       |
#   +--------------------------+             +--------------------------+
. "$(dirname "$0")/lib.sh"
it_setup
command -v tcpdump >/dev/null || skip "needs tcpdump (reads the TOS, TTL and DF of captured packets)"

VRF_A=198.51.100.1 VRF_B=198.51.100.2
a_conf() {	# a_conf DSCP
	write_conf a $A_ADDR "
tunnel_profiles = ( { name = \"default\"; hello_interval = 1; df = \"off\"; },
                    { name = \"marked\"; hello_interval = 1; dscp = $1; ttl = 7; df = \"on\"; },
                    { name = \"nodev\"; bind_device = \"nosuch0\"; },
                    { name = \"fast\"; retransmit_initial = 0.2; retransmit_cap = 0.4; max_retries = 2; },
                    { name = \"bound\"; bind_device = \"$DEV\"; } );
tunnels = ( { name = \"st\"; peer = \"$B_ADDR\"; profile = \"marked\"; },
            { name = \"plain\"; peer = \"$B_ADDR\"; },
            { name = \"st6\"; peer = \"$B_ADDR6\"; profile = \"marked\"; },
            { name = \"broken\"; peer = \"$B_ADDR\"; profile = \"nodev\"; } );"
	sed -i "s|listen = \[\"$A_ADDR\"\]|listen = [\"$A_ADDR\", \"$A_ADDR6\"]|" "$W/a.conf"
}
write_conf b $B_ADDR 'peer_default = { accept = true; };'
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"$B_ADDR\", \"$B_ADDR6\", \"$VRF_B\"]|" "$W/b.conf"

# the second link: A's end in VRF vrf-blue (table 10) when the kernel has
# VRFs, else in the main table; B's in its main table
ip link add veth2 netns "$NSA" type veth peer name veth3 netns "$NSB" &&
	ip -n "$NSA" addr add $VRF_A/24 dev veth2 && ip -n "$NSA" link set veth2 up &&
	ip -n "$NSB" addr add $VRF_B/24 dev veth3 && ip -n "$NSB" link set veth3 up
log_test $? "a second link from A to B"
vrf=0 DEV=veth2
if ip -n "$NSA" link add vrf-blue type vrf table 10 2>/dev/null; then
	ip -n "$NSA" link set veth2 master vrf-blue && ip -n "$NSA" link set vrf-blue up &&
		ip -n "$NSA" addr replace $VRF_A/24 dev veth2 && vrf=1 DEV=vrf-blue
	log_test $? "A's end of it in VRF vrf-blue"
else
	echo "(no VRFs in this kernel: bind_device names veth2 instead)"
fi
a_conf 46

start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
up() { ctlj a tunnel show name "$1" 2>/dev/null | jq -e '.state == "established"' >/dev/null; }
wait_until 20 up st && wait_until 20 up plain && wait_until 20 up st6
log_test $? "static tunnels st, st6 (profile marked) and plain (default) established"
TID=$(ctlj a tunnel show name st | jq .tunnel_id)
port() { ctlj a tunnel show name "$1" | jq -r .local | sed 's/.*://'; }
P_ST=$(port st) P_PLAIN=$(port plain) P_ST6=$(port st6)

ctlj a tunnel show name st | jq -e '.transport == {dscp: 46, ttl: 7, df: "on", bind_device: "",
	socket: "own"}' >/dev/null &&
	ctlj a tunnel show name plain | jq -e '.transport | .dscp == 0 and .ttl == 64 and
		.df == "off" and .bind_device == ""' >/dev/null
log_test $? "tunnel show: st's socket runs with dscp 46, ttl 7, df on; plain's with 0, 64, off"

# --- the wire ------------------------------------------------------------------
CAP=$W/a.pcap
start_cap() {
	ip netns exec "$NSA" tcpdump -i veth0 -nn --immediate-mode -U -w "$CAP" udp 2>"$CAP.log" &
	CAP_PID=$!
	wait_until 10 grep -q "listening on" "$CAP.log"
}
stop_cap() { kill -INT "$CAP_PID" 2>/dev/null; wait "$CAP_PID" 2>/dev/null; }
# hdrs PORT: the IP header lines (tcpdump -v) of A's packets from its port PORT
hdrs() { tcpdump -nn -v -r "$CAP" "udp and src port $1" 2>/dev/null | grep -E '^[0-9:.]+ IP6? \('; }
hdr_count() { hdrs "$1" | wc -l; }

start_cap
log_test $? "capture on A's veth0 running"
wait_until 20 at_least 3 hdr_count "$P_ST" && wait_until 20 at_least 3 hdr_count "$P_PLAIN" &&
	wait_until 20 at_least 3 hdr_count "$P_ST6"
log_test $? "captured at least 3 control packets (HELLOs, ZLBs) of each tunnel"
stop_cap
hdrs "$P_ST" > "$W/st" && hdrs "$P_PLAIN" > "$W/plain" && hdrs "$P_ST6" > "$W/st6"
[ -s "$W/st" ] && ! grep -v 'tos 0xb8, ttl 7,.*flags \[DF\]' "$W/st"
log_test $? "every packet of st: tos 0xb8, ttl 7, DF ($(wc -l < "$W/st") packets; $(head -1 "$W/st" | sed 's/^[^(]*//'))"
[ -s "$W/plain" ] && ! grep -q 'tos 0xb8\|ttl 7,\|DF' "$W/plain" && grep -q 'tos 0x0, ttl 64,' "$W/plain"
log_test $? "no packet of plain has them: tos 0x0, ttl 64, no DF ($(head -1 "$W/plain" | sed 's/^[^(]*//'))"
[ -s "$W/st6" ] && ! grep -v 'IP6 (class 0xb8, .*hlim 7,' "$W/st6"
log_test $? "every packet of st6: class 0xb8, hop limit 7 ($(head -1 "$W/st6" | sed 's/^[^(]*//' | cut -c1-60))"

# --- a reload re-marks the live tunnel -----------------------------------------
a_conf 10
out=$(ctlj a reload)
jq -e '.tunnels_restarted == 0 and any(.updated[]; .tunnel == "st" and .settings == "dscp") and
	any(.updated[]; .tunnel == "st6" and .settings == "dscp")' <<<"$out" >/dev/null
log_test $? "reload, dscp 46 -> 10: st and st6 updated live ($(jq -c .updated <<<"$out"))"
ctlj a tunnel show name st | jq -e --argjson t "$TID" '.tunnel_id == $t and .state == "established" and
	.transport.dscp == 10 and .transport.ttl == 7' >/dev/null
log_test $? "same tunnel ID $TID, its socket now runs with dscp 10"
start_cap
wait_until 20 at_least 3 hdr_count "$P_ST"
log_test $? "captured 3 more packets of st"
stop_cap
hdrs "$P_ST" > "$W/st"
[ -s "$W/st" ] && ! grep -v 'tos 0x28, ttl 7,' "$W/st"
log_test $? "every later packet of st: tos 0x28 ($(head -1 "$W/st" | sed 's/^[^(]*//'))"

# --- bind_device ---------------------------------------------------------------
out=$(ctl a tunnel create peer $B_ADDR profile nodev 2>&1); rc=$?
[ $rc != 0 ] && grep -q 'bind_device "nosuch0": No such device' <<<"$out"
log_test $? "tunnel create with bind_device naming a missing device: refused, naming it ($out)"
grep -q 'static tunnel broken: .*bind_device "nosuch0": No such device' "$W/a.log" &&
	wait_until 20 grep -q "static tunnel broken: starting again" "$W/a.log"
log_test $? "static tunnel broken (same profile): logged with the reason, and retried"

out=$(ctlj a tunnel create peer $VRF_B profile bound name bound); rc=$?
[ $rc = 0 ] && jq -e '.state == "established"' <<<"$out" >/dev/null &&
	ctlj a tunnel show name bound | jq -e --arg a "$VRF_A" --arg d "$DEV" '.transport.bind_device == $d and
		(.local | startswith($a + ":"))' >/dev/null
log_test $? "bind_device $DEV: a tunnel to $VRF_B established through it, from $VRF_A"
if [ $vrf = 1 ]; then
	out=$(ctl a tunnel create peer $VRF_B profile fast 2>&1); rc=$?
	[ $rc != 0 ]
	log_test $? "without it the main table has no route to $VRF_B: refused ($out)"
fi
it_done
