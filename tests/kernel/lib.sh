# tests/kernel/lib.sh - two l2tpv3d daemons with the KERNEL data plane, in
# two network namespaces joined by veth, inside the vm-run guest (or on any
# host whose kernel has L2TP).  Driven through l2tpv3ctl -j, jq, iproute2.
#
#   +------------ ns A (LAC) ------------+        +------------ ns B (LNS) ------------+
#   | l2tpv3d a, state $W/a.state         |        | l2tpv3d b, state $W/b.state         |
#   | veth0 192.0.2.1/24 2001:db8::1/64  |--veth--| veth1 192.0.2.2/24 2001:db8::2/64  |
#   | l2tpethN 10.77.0.1/30 (profiles)   |  L2TP  | l2tpethN 10.77.0.2/30 (profiles)   |
#   +------------------------------------+        +------------------------------------+
#
# Each test sources this, calls kt_setup, ends with kt_done.  Namespaces get
# random suffixes and are removed on exit, also when the test fails.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
. "$top_srcdir/scripts/lib.sh"
# Under emulation, beside whatever else the host runs, everything takes
# several times longer than the deadlines written for a host: scale them.
DEADLINE_SCALE=${DEADLINE_SCALE:-3}

D=$top_builddir/src/l2tpv3d
C=$top_builddir/src/cli/l2tpv3ctl
A_ADDR=192.0.2.1 B_ADDR=192.0.2.2 A_ADDR6=2001:db8::1 B_ADDR6=2001:db8::2
PW_A=10.77.0.1 PW_B=10.77.0.2
PING=ping; command -v ping >/dev/null || PING="busybox ping"

skip() { echo "SKIP: $*"; exit 77; }

kt_setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
	command -v jq >/dev/null || skip "needs jq"
	[ -x "$D" ] && [ -x "$C" ] || skip "daemon or CLI not built ($D)"
	ip netns add "l2tpv3d-probe-$$" 2>/dev/null || skip "cannot create network namespaces"
	ip netns exec "l2tpv3d-probe-$$" ip l2tp show tunnel >/dev/null 2>&1 ||
		{ ip netns del "l2tpv3d-probe-$$"; skip "this kernel has no L2TP netlink (run under tests/kernel/vm-run)"; }
	ip netns del "l2tpv3d-probe-$$"
	tag=$(rand_suffix)
	NSA=l2tpk-a-$tag NSB=l2tpk-b-$tag
	W=$(mktemp -d /tmp/l2tpv3d-kt.XXXXXX)
	trap kt_cleanup EXIT
	setup_ns_pair "$NSA" "$NSB" $A_ADDR $B_ADDR $A_ADDR6 $B_ADDR6 || { echo "netns setup failed"; exit 1; }
}

# The EXIT trap, also on SIGINT/SIGTERM: a second Ctrl-C does not cut it short,
# and nothing in it fails when a daemon or namespace is already gone.
kt_cleanup() {
	local l
	trap '' INT TERM HUP
	kill_pidfiles KILL "$W"/*.pid
	cleanup_ns "$NSA" "$NSB"
	if [ "$TESTS_FAIL" != 0 ] || [ -n "${KEEP_LOGS:-}" ]; then
		for l in "$W"/*.log; do [ -f "$l" ] && { echo "--- $l (last 60 lines)"; tail -60 "$l"; }; done
	fi
	rm -rf "$W"
}

# write_conf NAME ADDR [libconfig text appended]: kernel data plane, own state
# dir; $KT_GLOBAL goes into the global group.
write_conf() {
	local name=$1 addr=$2; shift 2
	cat > "$W/$name.conf" <<CONF
global = { listen = ["$addr"]; hostname = "$name"; dataplane = "kernel"; log_level = "debug";
           ctl_socket = "$W/$name.ctl"; router_id = "$addr"; state_dir = "$W/$name.state";
           ${KT_GLOBAL:-} };
$*
CONF
}

# listen on both families
listen_both() { sed -i "s|listen = \[\"$2\"\]|listen = [\"$2\", \"$3\"]|" "$W/$1.conf"; }

# start NAME NS [daemon args...]: starts l2tpv3d and waits for its control socket
# How long a daemon may take to answer after its start: a second on a quiet
# host, far more under emulation beside a loaded one (a wait on a condition).
START_S=${START_S:-60}
start() {
	local name=$1 ns=$2; shift 2
	ip netns exec "$ns" "$D" -F -f "$W/$name.conf" "$@" >>"$W/$name.log" 2>&1 &
	echo $! > "$W/$name.pid"
	disown $!	# killed in kt_cleanup: no "Killed" job message
	wait_until "$START_S" "$C" -s "$W/$name.ctl" show daemon ||
		{ echo "$name did not start"; tail "$W/$name.log"; return 1; }
}

pid_of() { cat "$W/$1.pid"; }
ctl() { local name=$1; shift; "$C" -s "$W/$name.ctl" "$@"; }
ctlj() { local name=$1; shift; "$C" -s "$W/$name.ctl" -j "$@"; }

# stop NAME SIGNAL: signals the daemon and waits until it is gone
stop() {	# stop NAME SIGNAL [SECONDS: how long it may take to exit, default 20]
	local pid; pid=$(pid_of "$1")
	kill -"$2" "$pid" 2>/dev/null
	wait_until "${3:-20}" sh -c "! kill -0 $pid 2>/dev/null"
}

count_tunnels() {
	ctlj "$1" tunnel list | jq --arg s "${2:-}" '[.tunnels[] | select($s == "" or .state == $s)] | length'
}
count_sessions() {
	ctlj "$1" session list | jq --arg s "${2:-}" '[.sessions[] | select($s == "" or .state == $s)] | length'
}
expect_count() { local n=$1; shift; [ "$("$@")" = "$n" ]; }

# What the kernel has in NS, per iproute2 (not our code).
k_tunnels() { ip -n "$1" -j l2tp show tunnel | jq 'length'; }
k_sessions() { ip -n "$1" -j l2tp show session | jq 'length'; }
k_tunnel_ids() { ip -n "$1" -j l2tp show tunnel | jq -c '[.[] | [.tunnel_id, .peer_tunnel]] | sort'; }
k_session_ids() { ip -n "$1" -j l2tp show session | jq -c '[.[] | [.tunnel_id, .session_id, .peer_session_id, .interface]] | sort'; }
# (a tunnel holding after StopCCN has no kernel object: established ones only)
d_tunnel_ids() { ctlj "$1" tunnel list | jq -c '[.tunnels[] | select(.state == "established") | [.tunnel_id, .peer_tunnel_id]] | sort'; }
# session_up NAME SID: NAME's session SID is established, its kernel session
# made ("established" is the data plane's answer).  A's create returns once A
# sent its ICCN; B's side follows a moment later: wait on this before
# looking at B's session or kernel.
session_up() { state_is "$1" established session show "$2"; }
d_session_ids() { ctlj "$1" session list | jq -c '[.sessions[] | select(.state == "established") | [.tunnel_id, .session_id, .peer_session_id, .ifname]] | sort'; }

# state_file NAME: the daemon's kernel tunnel record (not its .lock)
state_file() { ls "$W/$1.state"/kernel-tunnels.* 2>/dev/null | grep -E '\.[0-9]+$'; }

# link_gone NS IFNAME: NS lists its links (lo among them) and IFNAME is not
# one of them; a failed listing is not an absence
link_gone() {
	ip -n "$1" -j link show | jq -e --arg i "$2" 'any(.[]; .ifname == "lo") and
		all(.[]; .ifname != $i)' >/dev/null
}
# no_l2tpeth NS: NS lists its links (lo among them) and none is an l2tpeth
no_l2tpeth() {
	ip -n "$1" -j link show | jq -e 'any(.[]; .ifname == "lo") and
		all(.[]; .ifname | startswith("l2tpeth") | not)' >/dev/null
}

# mtu NS IFNAME
mtu() { ip -n "$1" -j link show dev "$2" | jq '.[0].mtu'; }

# pingable NS ADDR: a few pings across, one must answer (ARP first);
# PING_SUMMARY keeps "3 packets transmitted, 3 received ... rtt avg" for the log
pingable() {
	local out rc
	out=$(ip netns exec "$1" $PING -c 3 -i 0.2 -W 2 "$2" 2>&1); rc=$?
	PING_SUMMARY=$(grep -Eo '[0-9]+ packets transmitted, [0-9]+ (packets )?received|= [0-9.]+/[0-9.]+/[0-9.]+' <<<"$out" |
		sed 's|^= [0-9.]*/\([0-9.]*\)/.*|avg \1 ms|' | tr '\n' ' ')
	return $rc
}

kt_done() {
	echo "$TESTS_OK passed, $TESTS_FAIL failed"
	[ "$TESTS_FAIL" = 0 ]
}
