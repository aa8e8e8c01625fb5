# tests/integration/ha-lib.sh - an active/standby pair with keepalived, for
# tests/integration/ha-pair.sh and tests/kernel/ha-pair.sh: sourced after
# their lib.sh (NSA, NSB, W, tag, A_ADDR, C set).
#
#   ns A (LAC) 192.0.2.1 on br0 --+-- veth -- ns B (LNS b1) 192.0.2.11
#                                 +-- veth -- ns NSC (LNS b2) 192.0.2.12
#   service address 192.0.2.2, moved by keepalived (VRRP, unicast)
VIP=192.0.2.2 B1=192.0.2.11 B2=192.0.2.12
NOTIFY=$top_srcdir/etc/keepalived/l2tpv3d-notify

# ha_topology PREFIX: NSC (PREFIX-c-$tag) joins A's bridge; b1 takes B's veth1
ha_topology() {
	NSC=$1-c-$tag
	ip netns add "$NSC" && ip -n "$NSC" link set lo up &&
		ip -n "$NSA" link add br0 type bridge && ip -n "$NSA" addr flush dev veth0 &&
		ip -n "$NSA" link set veth0 master br0 && ip -n "$NSA" addr add $A_ADDR/24 dev br0 &&
		ip -n "$NSA" link set br0 up &&
		ip link add vethc netns "$NSA" type veth peer name veth2 netns "$NSC" &&
		ip -n "$NSA" link set vethc master br0 && ip -n "$NSA" link set vethc up &&
		ip -n "$NSC" link set veth2 up && ip -n "$NSC" addr add $B2/24 dev veth2 &&
		ip -n "$NSB" addr flush dev veth1 && ip -n "$NSB" addr add $B1/24 dev veth1 || return 1
	# both LNS boxes listen on the service address, the standby before it holds it
	for ns in "$NSB" "$NSC"; do ip netns exec "$ns" sysctl -qw net.ipv4.ip_nonlocal_bind=1; done
}

# keepalived_conf NAME IF SELF PEER PRIORITY: as etc/keepalived/keepalived.conf.example
keepalived_conf() {
	cat > "$W/$1.kconf" <<KCONF
global_defs {
	enable_script_security
	script_user root
}
vrrp_instance l2tpv3d {
	state BACKUP
	nopreempt
	interface $2
	virtual_router_id 51
	priority $5
	advert_int 1
	unicast_src_ip $3
	unicast_peer {
		$4
	}
	virtual_ipaddress {
		$VIP/24 dev $2
	}
	notify "$NOTIFY $W/$1.ctl"
}
KCONF
}

# kstart NAME NS: keepalived in NS (VRRP only, in the foreground); the notify
# script finds l2tpv3ctl on PATH
kstart() {
	ip netns exec "$2" env PATH="$(dirname "$C"):$PATH" keepalived -n -l -D -P -f "$W/$1.kconf" \
		-p "$W/k$1.pid" -r "$W/k$1v.pid" >>"$W/k$1.log" 2>&1 &
	echo $! > "$W/k$1.pid.run"
}

# vip_on NS: NS holds the service address
vip_on() { ip -n "$1" -j addr show | jq -e --arg a "$VIP" 'any(.[].addr_info[]?; .local == $a)' >/dev/null; }
