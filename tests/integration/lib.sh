# tests/integration/lib.sh - two l2tpv3d daemons in two network namespaces
# joined by veth, null data plane, driven only through l2tpv3ctl and the wire.
#
#   +------ ns A (LAC) ------+          +------ ns B (LNS) ------+
#   | 192.0.2.1  2001:db8::1 |--veth----| 192.0.2.2  2001:db8::2 |
#   +------------------------+          +------------------------+
#
# Each test sources this, calls it_setup, and ends with it_done.  Namespaces
# get random suffixes and are removed on exit, also when the test fails.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
. "$top_srcdir/scripts/lib.sh"

D=$top_builddir/src/l2tpv3d
C=$top_builddir/src/cli/l2tpv3ctl
A_ADDR=192.0.2.1 B_ADDR=192.0.2.2 A_ADDR6=2001:db8::1 B_ADDR6=2001:db8::2

skip() { echo "SKIP: $*"; exit 77; }

it_setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
	command -v jq >/dev/null || skip "needs jq"
	[ -x "$D" ] && [ -x "$C" ] || skip "daemon or CLI not built"
	ip netns add "l2tpv3d-probe-$$" 2>/dev/null || skip "cannot create network namespaces"
	ip netns del "l2tpv3d-probe-$$"
	tag=$(rand_suffix)
	NSA=l2tpit-a-$tag NSB=l2tpit-b-$tag
	W=$(mktemp -d /tmp/l2tpv3d-it.XXXXXX)
	trap it_cleanup EXIT
	setup_ns_pair "$NSA" "$NSB" $A_ADDR $B_ADDR $A_ADDR6 $B_ADDR6 || { echo "netns setup failed"; exit 1; }
}

# The EXIT trap, also on SIGINT/SIGTERM: a second Ctrl-C does not cut it short,
# and nothing in it fails when a daemon or namespace is already gone.
it_cleanup() {
	local l san=0
	trap '' INT TERM HUP
	kill_pidfiles KILL "$W"/*.pid
	cleanup_ns "$NSA" "$NSB"
	if [ "$TESTS_FAIL" != 0 ] || [ -n "${KEEP_LOGS:-}" ]; then
		for l in "$W"/*.log; do [ -f "$l" ] && { echo "--- $l (last 40 lines)"; tail -40 "$l"; }; done
		# again after the logs: CI shows a failure's last lines
		for l in "${TESTS_FAILED[@]}"; do echo "FAILED: $l"; done
	fi
	# a sanitizer's report in a daemon's log (ASan/UBSan builds: an error, or
	# a leak found when a daemon exited) fails the test, whatever it checked
	for l in "$W"/*.log; do
		[ -f "$l" ] && grep -qE "$SANITIZER_REPORT" "$l" || continue
		echo "FAIL: sanitizer report in $l:"; grep -A24 -E "$SANITIZER_REPORT" "$l" | head -60
		san=1
	done
	rm -rf "$W"
	[ $san = 0 ] || exit 1
}
SANITIZER_REPORT='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: '

# write_conf NAME ADDR [extra libconfig text appended]
write_conf() {
	local name=$1 addr=$2; shift 2
	cat > "$W/$name.conf" <<CONF
global = { listen = ["$addr"]; hostname = "$name"; dataplane = "null"; log_level = "debug";
           ctl_socket = "$W/$name.ctl"; router_id = "$addr"; };
$*
CONF
}

# write_bench_confs N: a.conf and b.conf for a benchmark of N tunnels: both
# accept any peer, log at info (debug lines would be most of the work) and
# let N tunnels be half-open at once
write_bench_confs() {
	local d addr
	for d in a b; do
		addr=$A_ADDR; [ $d = b ] && addr=$B_ADDR
		write_conf $d $addr 'peer_default = { accept = true; };'
		sed -i "s/log_level = \"debug\";/log_level = \"info\"; max_half_open = $(($1 + 100));/" "$W/$d.conf"
	done
}

# start NAME NS [daemon args...]: starts l2tpv3d and waits for its socket
START_S=20	# seconds for a daemon to answer on its socket (sanitizers, a loaded machine)
start() {
	local name=$1 ns=$2; shift 2
	ip netns exec "$ns" "$D" -F -f "$W/$name.conf" "$@" >>"$W/$name.log" 2>&1 &
	echo $! > "$W/$name.pid"
	wait_until "$START_S" "$C" -s "$W/$name.ctl" show daemon || { echo "$name did not start"; tail "$W/$name.log"; return 1; }
}

pid_of() { cat "$W/$1.pid"; }

ctl() { local name=$1; shift; "$C" -s "$W/$name.ctl" "$@"; }
ctlj() { local name=$1; shift; "$C" -s "$W/$name.ctl" -j "$@"; }

# count_tunnels NAME [STATE]: tunnels (in STATE) the daemon reports
count_tunnels() {
	ctlj "$1" tunnel list | jq --arg s "${2:-}" '[.tunnels[] | select($s == "" or .state == $s)] | length'
}
count_sessions() {
	ctlj "$1" session list | jq --arg s "${2:-}" '[.sessions[] | select($s == "" or .state == $s)] | length'
}
# at_least N CMD...: true when CMD prints a number of N or more
at_least() { [ "$("${@:2}")" -ge "$1" ]; }
# expect_count N CMD...: true when CMD prints N
expect_count() { local n=$1; shift; [ "$("$@")" = "$n" ]; }

# nft_drop NS TABLE HOOK MATCH...: drops (and counts) the UDP datagrams that
# MATCH (nft expressions) in namespace NS, at hook input or output.  The L2TP
# Message Type AVP's value is at @th,208,16 (1 SCCRQ ... 4 StopCCN, 6 HELLO),
# the Control Connection ID at @th,96,32; a ZLB is "udp length 20".
nft_drop() {
	local ns=$1 table=$2 hook=$3; shift 3
	ip netns exec "$ns" nft -f - <<NFT
table inet $table {
	chain c { type filter hook $hook priority 0; meta l4proto udp $* counter drop; }
}
NFT
}
# nft_drop_first NS TABLE HOOK N MATCH...: drops the first N datagrams of
# MATCH of each UDP port pair (a connection, one way), lets the rest pass:
# "the first copy is lost, its retransmission gets through", whatever the
# time between them (a drop ended by the test is late on a loaded machine)
nft_drop_first() {
	local ns=$1 table=$2 hook=$3 n=$4 i sets= rules=; shift 4
	for i in $(seq 1 "$n"); do
		sets="$sets
	set s$i { typeof udp sport . udp dport; flags dynamic; }"
		rules="$rules
		meta l4proto udp $* udp sport . udp dport != @s$i add @s$i { udp sport . udp dport } counter drop"
	done
	ip netns exec "$ns" nft -f - <<NFT
table inet $table {$sets
	chain c { type filter hook $hook priority 0;$rules
	}
}
NFT
}
# nft_dropped NS TABLE: how many datagrams the table has dropped so far (all its rules)
nft_dropped() {
	ip netns exec "$1" nft list table inet "$2" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}
# nft_dropped_at_least N NS TABLE
nft_dropped_at_least() { local n; n=$(nft_dropped "$2" "$3") && [ "${n:-0}" -ge "$1" ]; }
# nft_undrop NS TABLE: removes the table; prints how many datagrams it dropped
nft_undrop() {
	nft_dropped "$1" "$2"
	ip netns exec "$1" nft delete table inet "$2"
}

# a scripted peer (peer.py serve) in ns A: peer_start, peer_stop, P, J
. "$top_srcdir/tests/integration/peer-lib.sh"

it_done() {
	echo "$TESTS_OK passed, $TESTS_FAIL failed"
	[ "$TESTS_FAIL" = 0 ]
}
