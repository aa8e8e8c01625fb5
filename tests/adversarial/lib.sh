# tests/adversarial/lib.sh - an LNS under attack, a legitimate LAC beside it.
#
#   +------ ns A ---------------------+          +------ ns B (LNS, victim) --+
#   | 192.0.2.1  LAC daemon "a"       |--veth----| 192.0.2.2  daemon "b"      |
#   | forge.py: raw socket, any       |          | nft counts what b sends    |
#   | source in 192.0.2.0/24, any port|          | to anyone but the LAC      |
#   +---------------------------------+          +----------------------------+
#
# Each attack script sources this, writes b's config (adv_conf_b), starts
# both daemons (adv_start), brings up the victim tunnel (adv_victim) and then
# asserts what the brief asks of every attack: the daemon is alive, its
# tunnel and descriptor counts are back to the baseline, the victim tunnel is
# established and passing HELLOs, and the replies it sent stay within the
# documented bound (doc/security.md).
. "$(dirname "$0")/../integration/lib.sh"
FORGE="python3 $top_srcdir/tests/adversarial/forge.py"

adv_setup() {
	it_setup
	command -v nft >/dev/null || skip "needs nft (nftables)"
	command -v python3 >/dev/null || skip "needs python3"
	# count every datagram b sends to an address other than the LAC's
	ip netns exec "$NSB" nft -f - <<NFT || skip "nftables not usable here"
table inet adv {
	counter to_others { }
	chain out { type filter hook output priority 0; ip daddr != $A_ADDR meta l4proto udp counter name to_others; }
}
NFT
}

# adv_conf_b EXTRA: the LNS, HELLO every second on the default profile.
adv_conf_b() {
	write_conf b $B_ADDR "
tunnel_profiles = ( { name = \"default\"; hello_interval = 1; $ADV_PROFILE } );
$*"
}

adv_start() {
	write_conf a $A_ADDR "tunnel_profiles = ( { name = \"default\"; hello_interval = 1; $ADV_PROFILE } );
peer_default = { accept = true; };"
	start b "$NSB" && start a "$NSA"
	log_test $? "LNS and LAC start"
}

# adv_victim [tunnel create args]: the legitimate tunnel, A to B.
adv_victim() {
	local out
	out=$(ctlj a tunnel create peer $B_ADDR name victim "$@")
	VTID=$(jq -r .tunnel_id <<<"$out") VPTID=$(jq -r .peer_tunnel_id <<<"$out")
	# A's create returns once A sent its SCCCN: b's side is up (and the
	# baseline below settled) when b has read it
	[ "$(jq -r .state <<<"$out")" = established ] && wait_until 20 victim_up_at_b
	log_test $? "victim tunnel established (a $VTID, b $VPTID)"
	BASE_FDS=$(nfds b) BASE_TUNNELS=$(count_tunnels b)
}

victim_up_at_b() { state_is b established tunnel show "$VPTID"; }
nfds() { ls /proc/"$(pid_of "$1")"/fd | wc -l; }
alive() { kill -0 "$(pid_of "$1")" 2>/dev/null && ctl "$1" show daemon >/dev/null; }
replies_to_others() {
	ip netns exec "$NSB" nft -j list counter inet adv to_others |
		jq '.nftables[] | select(.counter) | .counter.packets'
}
# HELLOs on the victim tunnel, either way: only the side whose (jittered)
# timer fires first sends one, the other's silence is broken by it.
HELLOS_JQ='(.counters.msgs_in.HELLO // 0) + (.counters.msgs_out.HELLO // 0)'
hellos() { ctlj b tunnel show "$VPTID" | jq "$HELLOS_JQ"; }

# adv_victim_ok: established on both sides and HELLOs still flowing.
adv_victim_ok() {
	local h0
	h0=$(hellos)
	wait_until 4 sh -c "[ \$($C -s $W/b.ctl -j tunnel show $VPTID | jq '$HELLOS_JQ') -gt $h0 ]"
	local rc=$?
	[ $rc = 0 ] && [ "$(ctlj a tunnel show "$VTID" | jq -r .state)" = established ] &&
		[ "$(ctlj b tunnel show "$VPTID" | jq -r .state)" = established ]
}

# adv_baseline_ok [SECONDS]: b back to the victim tunnel alone, and its fds.
adv_baseline_ok() {
	wait_until "${1:-10}" sh -c "[ \$($C -s $W/b.ctl -j tunnel list | jq '.tunnels | length') -le $BASE_TUNNELS ] &&
		[ \$(ls /proc/$(pid_of b)/fd | wc -l) -le $BASE_FDS ]"
}

adv_forge() { ip netns exec "$NSA" $FORGE "$@"; }

# adv_forge_seen N FORGE-ARGS...: forges (to b), then waits until b has read
# N more datagrams: b handles each datagram as it reads it, so what it did
# with them shows in the next reply of its control socket.  A datagram the
# kernel dropped for a full receive buffer is counted with them.
FORGE_SEEN_S=30	# seconds for b to read what was forged, on a loaded machine
rx_seen() {	# rx_seen: datagrams b read, plus those its kernel dropped for a full buffer
	ctlj b stats | jq -e '.global.rx_datagrams + .global.udp_rcvbuf_errors'
}
rx_seen_at_least() { local n; n=$(rx_seen) && [ "$n" -ge "$1" ]; }
# (the count includes the victim tunnel's HELLOs and ZLBs: a check that
# counts the forged datagrams exactly waits for its own counter too)
drops() { ctlj b stats | jq ".global.drops[\"$1\"] // 0"; }
rcvbuf_errors() { ctlj b stats | jq '.global.udp_rcvbuf_errors'; }
# drops_reach KIND N [RB0]: b's drops of KIND, plus the datagrams its kernel
# dropped for a full buffer since it counted RB0, reach N
drops_reach() { [ $(( $(drops "$1") + $(rcvbuf_errors) - ${3:-$(rcvbuf_errors)} )) -ge "$2" ]; }
adv_forge_seen() {
	local n=$1 r0; shift
	r0=$(rx_seen) || return 1
	adv_forge "$@" >/dev/null || return 1
	wait_until "$FORGE_SEEN_S" rx_seen_at_least $((r0 + n))
}
