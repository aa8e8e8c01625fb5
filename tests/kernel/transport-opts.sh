#!/usr/bin/env bash
# A tunnel profile's transport settings on the kernel's DATA packets: a
# pseudowire whose tunnel profile sets dscp 46, ttl 7 and df "on" carries
# its Ethernet frames (pings across it) in UDP datagrams with TOS 0xb8 and
# TTL 7; B's tunnel, opened by the peer, takes its own from its peers
# entry's profile (dscp 26, ttl 9: TOS 0x68).  DF is on A's control packets
# and not on the data packets: the kernel's L2TP transmit path sends them
# fragmentable whatever the socket says (doc/kernel-dataplane.md).  A reload
# changing dscp to 10 re-marks the live pseudowire's data packets.  A tunnel
# bound to a VRF (bind_device) carries a pseudowire over a link only the VRF
# routes to.
#
#   +----------- ns A -------------+              +----------- ns B -------------+
#   | veth0 192.0.2.1              |--------------| veth1 192.0.2.2              |
#   | l2tpethN 10.77.0.1/30 (pw)   |     L2TP     | l2tpethN 10.77.0.2/30        |
#   | vrf-blue: veth2 198.51.100.1 |--------------| veth3 198.51.100.2           |
#   | l2tpethM 10.77.9.1/30 (pwv)  |     L2TP     | l2tpethM 10.77.9.2/30        |
#   +------------------------------+              +------------------------------+
. "$(dirname "$0")/lib.sh"
kt_setup
command -v tcpdump >/dev/null || skip "needs tcpdump (reads TOS, TTL and DF of the data packets)"
VRF_A=198.51.100.1 VRF_B=198.51.100.2

vrf=0
ip link add veth2 netns "$NSA" type veth peer name veth3 netns "$NSB" &&
	ip -n "$NSB" addr add $VRF_B/24 dev veth3 && ip -n "$NSB" link set veth3 up &&
	ip -n "$NSA" link add vrf-blue type vrf table 10 2>/dev/null &&
	ip -n "$NSA" link set veth2 master vrf-blue && ip -n "$NSA" link set vrf-blue up &&
	ip -n "$NSA" addr add $VRF_A/24 dev veth2 && ip -n "$NSA" link set veth2 up && vrf=1
[ $vrf = 1 ] || echo "(no VRFs in this kernel: the VRF pseudowire is left out)"

a_conf() {	# a_conf DSCP
	write_conf a $A_ADDR "
tunnel_profiles = ( { name = \"marked\"; dscp = $1; ttl = 7; df = \"on\"; hello_interval = 1; },
                    { name = \"blue\"; bind_device = \"vrf-blue\"; } );
session_profiles = ( { name = \"default\"; address = \"$PW_A/30\"; },
                     { name = \"v9\"; address = \"10.77.9.1/30\"; } );
tunnels = ( { name = \"pw\"; peer = \"$B_ADDR\"; profile = \"marked\"; sessions = ( { name = \"s\"; } ); }
            $([ $vrf = 1 ] && echo ", { name = \"pwv\"; peer = \"$VRF_B\"; profile = \"blue\";
                sessions = ( { name = \"sv\"; profile = \"v9\"; } ); }") );"
}
a_conf 46
write_conf b $B_ADDR "
tunnel_profiles = ( { name = \"back\"; dscp = 26; ttl = 9; } );
session_profiles = ( { name = \"default\"; address = \"$PW_B/30\"; },
                     { name = \"v9\"; address = \"10.77.9.2/30\"; } );
peers = ( { name = \"a\"; match = \"$A_ADDR/32\"; accept = true; tunnel_profile = \"back\"; },
          { name = \"blue\"; match = \"$VRF_A/32\"; accept = true; session_profile = \"v9\"; } );"
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"$B_ADDR\", \"$VRF_B\"]|" "$W/b.conf"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start with the kernel data plane"
up() { state_is a established session show name "$1"; }
wait_until 30 up s
log_test $? "static pseudowire pw (tunnel profile marked: dscp 46, ttl 7, df on) established"
TID=$(ctlj a tunnel show name pw | jq .tunnel_id)
ctlj a tunnel show name pw | jq -e '.transport | .dscp == 46 and .ttl == 7 and .df == "on"' >/dev/null &&
	BTID=$(ctlj b tunnel list | jq --arg a "$A_ADDR:" '.tunnels[] | select(.peer | startswith($a)) |
		.tunnel_id') && [ -n "$BTID" ] &&
	ctlj b tunnel show "$BTID" |
		jq -e '.profile == "back" and .transport.dscp == 26 and .transport.ttl == 9' >/dev/null
log_test $? "A's tunnel socket runs with 46/7/on; B's (opened by A) with its peers entry's back: 26/9"

# --- the data packets on the underlay ----------------------------------------------
CAP=$W/a.pcap
start_cap() {	# start_cap IF
	ip netns exec "$NSA" tcpdump -i "$1" -nn --immediate-mode -U -w "$CAP" udp 2>"$CAP.log" &
	CAP_PID=$!
	wait_until 30 grep -q "listening on" "$CAP.log"
}
stop_cap() { kill -INT "$CAP_PID" 2>/dev/null; wait "$CAP_PID" 2>/dev/null; }
# hdrs KIND HOST: IP header lines (tcpdump -v) of HOST's L2TP data (T bit 0) or control packets
hdrs() {
	local t='= 0'; [ "$1" = control ] && t='!= 0'
	tcpdump -nn -v -r "$CAP" "udp and src host $2 and udp[8] & 0x80 $t" 2>/dev/null |
		grep -E '^[0-9:.]+ IP \('
}
at_least() { [ "$(hdrs "$2" "$3" | wc -l)" -ge "$1" ]; }
# pings from A across the pseudowire until both directions' data is captured
pinged() { at_least 3 data $A_ADDR && at_least 3 data $B_ADDR || { pingable "$NSA" $PW_B; false; }; }

start_cap veth0
log_test $? "capture on A's veth0 running"
pingable "$NSA" $PW_B
log_test $? "ping $PW_A -> $PW_B across pw: $PING_SUMMARY"
wait_until 60 pinged && ip netns exec "$NSA" ip l2tp show tunnel | grep -q "Tunnel $TID"
log_test $? "captured at least 3 data packets each way"
# A's HELLOs (every second): control packets, for the DF bit the data go without
wait_until 30 at_least 2 control $A_ADDR
log_test $? "captured A's control packets (HELLOs) too"
stop_cap
hdrs data $A_ADDR > "$W/a-data"; hdrs data $B_ADDR > "$W/b-data"; hdrs control $A_ADDR > "$W/a-ctl"
echo "A data: $(head -1 "$W/a-data" | sed 's/^[^(]*//')"
echo "B data: $(head -1 "$W/b-data" | sed 's/^[^(]*//')"
echo "A control: $(head -1 "$W/a-ctl" | sed 's/^[^(]*//')"
[ -s "$W/a-data" ] && ! grep -v 'tos 0xb8, ttl 7,' "$W/a-data"
log_test $? "every data packet of A's: tos 0xb8, ttl 7 ($(wc -l < "$W/a-data") packets)"
[ -s "$W/b-data" ] && ! grep -v 'tos 0x68, ttl 9,' "$W/b-data"
log_test $? "every data packet of B's (peers entry a, profile back): tos 0x68, ttl 9"
[ -s "$W/a-ctl" ] && ! grep -v 'tos 0xb8, ttl 7,.*flags \[DF\]' "$W/a-ctl" &&
	! grep -q 'flags \[DF\]' "$W/a-data"
log_test $? "DF: on every control packet of A's ($(wc -l < "$W/a-ctl")), on none of its data packets"

# --- a reload re-marks the live pseudowire's data --------------------------------
a_conf 10
out=$(ctlj a reload)
jq -e '.tunnels_restarted == 0 and any(.updated[]; .tunnel == "pw" and .settings == "dscp")' <<<"$out" >/dev/null &&
	[ "$(ctlj a tunnel show name pw | jq .tunnel_id)" = "$TID" ] && up s
log_test $? "reload, dscp 46 -> 10: pw updated live, same tunnel $TID, session still up"
start_cap veth0
pinged_a() { at_least 3 data $A_ADDR || { pingable "$NSA" $PW_B; false; }; }
wait_until 60 pinged_a
log_test $? "captured 3 more of A's data packets"
stop_cap
hdrs data $A_ADDR > "$W/a-data"
[ -s "$W/a-data" ] && ! grep -v 'tos 0x28, ttl 7,' "$W/a-data"
log_test $? "every later data packet of A's: tos 0x28 ($(head -1 "$W/a-data" | sed 's/^[^(]*//' | cut -c1-40))"

# --- a pseudowire through a VRF ------------------------------------------------------
if [ $vrf = 1 ]; then
	wait_until 30 up sv
	log_test $? "pwv (bind_device vrf-blue) to $VRF_B established: only the VRF routes there"
	ctlj a tunnel show name pwv | jq -e --arg a "$VRF_A" '.transport.bind_device == "vrf-blue" and
		(.local | startswith($a + ":"))' >/dev/null
	log_test $? "its socket is bound to vrf-blue, from $VRF_A"
	start_cap veth2
	pinged_v() { at_least 3 data $VRF_A || { pingable "$NSA" 10.77.9.2; false; }; }
	wait_until 60 pinged_v
	log_test $? "ping 10.77.9.1 -> .2 across pwv: its data packets leave through veth2 (in the VRF)"
	stop_cap
fi
kt_done
