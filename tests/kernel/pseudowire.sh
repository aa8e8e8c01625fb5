#!/usr/bin/env bash
# Ethernet pseudowires through the kernel data plane over UDP/IPv4,
# UDP/IPv6, IP/IPv4 and IP/IPv6: the l2tpeth interfaces exist with the MTU
# the daemon derived from the path MTU (1500 on veth) minus the
# encapsulation, carry the profile's /30, and ping crosses the pseudowire.
# Also an eth_vlan pseudowire (VLAN sub-interface) and a bridge port.
. "$(dirname "$0")/lib.sh"
kt_setup
A_VLAN=192.0.2.11	# B gives tunnels from this address its "vlan" session profile
ip -n "$NSA" addr add $A_VLAN/24 dev veth0

KT_GLOBAL="listen_ip = true;"
write_conf a $A_ADDR "session_profiles = ( { name = \"default\"; address = \"$PW_A/30\"; },
	{ name = \"vlan\"; pw_type = \"eth_vlan\"; vlan_id = 42; address = \"10.77.42.1/30\"; } );
peer_default = { accept = true; };"
write_conf b $B_ADDR "session_profiles = ( { name = \"default\"; address = \"$PW_B/30\"; },
	{ name = \"vlan\"; pw_type = \"eth_vlan\"; vlan_id = 42; address = \"10.77.42.2/30\"; },
	{ name = \"bridged\"; bridge = \"br0\"; address = \"\"; } );
peers = ( { name = \"vlan\"; match = \"$A_VLAN/32\"; accept = true; session_profile = \"vlan\"; } );
peer_default = { accept = true; };"
listen_both a $A_ADDR $A_ADDR6
listen_both b $B_ADDR $B_ADDR6
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start with the kernel data plane"

# has_ll6 NS IF: the interface has an IPv6 link-local address
has_ll6() { ip -n "$1" -6 -o addr show dev "$2" scope link | grep -q ' fe80::'; }
no_ipv6() { [ -z "$(ip -n "$1" -6 -o addr show dev "$2")" ]; }

# pw ENCAP PEER EXPECTED_MTU: one tunnel + session from A, checks, ping, delete
pw() {
	local encap=$1 peer=$2 want=$3 label=$4 out tid sid ifa ifb psid rc
	out=$(ctlj a tunnel create peer "$peer" encap "$encap"); rc=$?
	tid=$(jq -r .tunnel_id <<<"$out")
	out=$(ctlj a session create tunnel "$tid"); rc=$((rc + $?))
	sid=$(jq -r .session_id <<<"$out"); psid=$(jq -r .peer_session_id <<<"$out")
	ifa=$(jq -r .ifname <<<"$out")
	wait_until 20 session_up b "$psid" || rc=1
	ifb=$(ctlj b session show "$psid" | jq -r .ifname)
	[ $rc = 0 ] && [ -n "$ifa" ] && [ -n "$ifb" ] && [ "$(k_sessions "$NSA")" = 1 ] &&
		[ "$(k_sessions "$NSB")" = 1 ]
	log_test $? "$label: tunnel and session up, kernel sessions $ifa (A) and $ifb (B)"
	[ "$(mtu "$NSA" "$ifa")" = "$want" ] && [ "$(mtu "$NSB" "$ifb")" = "$want" ]
	log_test $? "$label: MTU $want on both ends (A $(mtu "$NSA" "$ifa"), B $(mtu "$NSB" "$ifb"))"
	has_ll6 "$NSA" "$ifa" && has_ll6 "$NSB" "$ifb"
	log_test $? "$label: IPv6 link-local on both (the profile gives an address: a routed pseudowire)"
	pingable "$NSB" $PW_A && pingable "$NSA" $PW_B
	log_test $? "$label: ping $PW_A <-> $PW_B: $PING_SUMMARY"
	ctl a tunnel delete "$tid" >/dev/null &&
		wait_until 10 expect_count 0 count_tunnels a && wait_until 10 expect_count 0 k_tunnels "$NSA" &&
		wait_until 10 expect_count 0 k_tunnels "$NSB" && link_gone "$NSA" "$ifa"
	log_test $? "$label: tunnel delete leaves no kernel tunnel, session or interface"
}

# 1500 - IP (20/40) - UDP 8 - L2TPv3/UDP header 4 - session id 4 - Ethernet 14
# the default session profile asks for an 8-octet cookie: 8 off each MTU
pw udp $B_ADDR 1442 "UDP/IPv4"
pw udp $B_ADDR6 1422 "UDP/IPv6"
# 1500 - IP (20/40) - session id 4 - Ethernet 14
pw ip $B_ADDR 1454 "IP/IPv4"
pw ip $B_ADDR6 1434 "IP/IPv6"

# --- eth_vlan: an l2tpeth with a VLAN 42 sub-interface on each side --------------
out=$(ctlj a tunnel create peer $B_ADDR local $A_VLAN); tid=$(jq -r .tunnel_id <<<"$out")
out=$(ctlj a session create tunnel "$tid" profile vlan)
rc=$?; ifa=$(jq -r .ifname <<<"$out"); psid=$(jq -r .peer_session_id <<<"$out")
wait_until 20 session_up b "$psid" || rc=1
ifb=$(ctlj b session show "$psid" | jq -r .ifname)
[ $rc = 0 ] && [[ $ifa == *.42 ]] && [[ $ifb == *.42 ]] &&
	ip -n "$NSA" -d -j link show dev "$ifa" | jq -e '.[0].linkinfo.info_data.id == 42' >/dev/null &&
	[ "$(mtu "$NSA" "$ifa")" = $((1442 - 4)) ] && [ "$(mtu "$NSA" "${ifa%.42}")" = 1442 ]
log_test $? "eth_vlan: VLAN 42 sub-interface $ifa on the l2tpeth, MTU 1438 (l2tpeth 1442)"
has_ll6 "$NSA" "$ifa" && no_ipv6 "$NSA" "${ifa%.42}"
log_test $? "eth_vlan: IPv6 link-local on the VLAN (it has the address), none on the l2tpeth trunk"
pingable "$NSA" 10.77.42.2
log_test $? "eth_vlan: ping 10.77.42.1 -> .2 via VLAN 42: $PING_SUMMARY"
ctl a tunnel delete "$tid" >/dev/null && wait_until 10 expect_count 0 k_tunnels "$NSA" &&
	link_gone "$NSA" "$ifa"
log_test $? "eth_vlan: delete removes the sub-interface with the session"

# --- bridge: B enslaves its end to br0 --------------------------------------------
ip -n "$NSB" link add br0 type bridge && ip -n "$NSB" link set br0 up
out=$(ctlj b tunnel create peer $A_ADDR); tid=$(jq -r .tunnel_id <<<"$out")
out=$(ctlj b session create tunnel "$tid" profile bridged); rc=$?; ifb=$(jq -r .ifname <<<"$out")
[ $rc = 0 ] && [ "$(ip -n "$NSB" -j link show dev "$ifb" | jq -r '.[0].master')" = br0 ]
log_test $? "bridge profile: $ifb is a port of br0"
no_ipv6 "$NSB" "$ifb"
log_test $? "bridge profile without an address: no IPv6 address on the bridge port (ipv6_link_local auto)"
ctl b tunnel delete "$tid" >/dev/null; wait_until 10 expect_count 0 k_tunnels "$NSB"

kt_done
