#!/usr/bin/env bash
# walk-bench.sh - how long SNMP walks of l2tpv3d's tables take with N tunnels.
# A benchmark, not a pass/fail test.
#
#   tests/snmp/walk-bench.sh [-n TUNNELS] [-c on|off] [-s SESSIONS_PER_TUNNEL] [-S on|off] [-R]
#
# -c: snmp_config_id on both daemons; -S off: no subagent in a (the rate
# without SNMP, to compare); -R: only the bring-up rate, no walks.
#
# Sets up what tests/snmp/snmp.sh does (snmpd as AgentX master, daemons a
# and b on loopback, null data plane), creates N tunnels from a to b
# through one `l2tpv3ctl -b` batch, then times, each through snmpd:
#   - snmpwalk of one column (N GETNEXTs),
#   - snmpwalk of the whole tunnel table (30 x N GETNEXTs),
#   - snmpbulkwalk of the whole tunnel table (GETBULK, 50 per request),
# and prints seconds, microseconds per varbind and the CPU seconds a spent.
# The per-varbind cost staying flat as N grows is the O(log n) GETNEXT.
# Run from a built tree (top_builddir=... for an out-of-tree build).
set -u
N=10000 CFG=on SPT=0 AGENT=on WALKS=1
while getopts "n:c:s:S:Rh" o; do
	case $o in
	n) N=$OPTARG ;;
	c) CFG=$OPTARG ;;
	s) SPT=$OPTARG ;;
	S) AGENT=$OPTARG ;;
	R) WALKS=0 ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
. "$(dirname "$0")/lib.sh"
snmp_setup
ulimit -n "$(ulimit -Hn)" 2>/dev/null	# one socket per tunnel and side
[ "$(ulimit -n)" -gt $((N + 500)) ] || echo "warning: fd limit $(ulimit -n) is low for $N tunnels" >&2

cfg=false; [ "$CFG" = on ] && cfg=true
for n in a b; do
	addr=$A_ADDR snmp=true
	[ "$AGENT" = off ] && snmp=false
	[ $n = b ] && addr=$B_ADDR snmp=false
	write_conf $n $addr $snmp $cfg
	sed -i "s/log_level = \"debug\"/log_level = \"warn\"; max_tunnels = $((N + 1000)); max_half_open = 100000;\
 max_sessions = $((N * (SPT + 1) + 1000))/" "$W/$n.conf"
done
snmpd_start || { echo "snmpd did not start"; exit 1; }
start a && start b || exit 1
[ "$AGENT" = off ] ||
	wait_until 15 sh -c "snmpget ${SNMP[*]} -Oqv l2tpv3dVersion.0 | grep -q '[0-9]'" ||
	{ echo "a did not register with snmpd"; exit 1; }

# cputime PID: user+system seconds so far
cputime() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
now() { date +%s.%N; }

t0=$(now)
for _ in $(seq "$N"); do echo "tunnel create peer $B_ADDR"; done |
	ctl a -b - -w 256 -t 120 >/dev/null
wait_until 120 sh -c "[ \$($C -s $W/a.ctl -j show daemon | jq .tunnels_established) -ge $N ]" ||
	{ echo "only $(ctlj a show daemon | jq .tunnels_established) of $N tunnels came up"; exit 1; }
t1=$(now)
printf "%d tunnels up in %.2f s, %.0f tunnels/s (subagent %s, snmp_config_id %s)\n" "$N" \
	"$(echo "$t1 - $t0" | bc)" "$(echo "$N / ($t1 - $t0)" | bc -l)" "$AGENT" "$CFG"
if [ "$SPT" -gt 0 ]; then
	ctlj a tunnel list | jq -r ".tunnels[].tunnel_id" |
		while read -r t; do for _ in $(seq "$SPT"); do echo "session create tunnel $t"; done; done |
		ctl a -b - -w 256 -t 120 >/dev/null
	echo "$(ctlj a show daemon | jq .sessions_established) sessions up"
fi

[ "$AGENT" = on ] && [ $WALKS = 1 ] || exit 0
apid=$(cat "$W/a.pid")
# bench NAME COMMAND...: runs it, prints time, varbinds, us/varbind, a's CPU
bench() {
	local name=$1 s e c0 c1 n; shift
	c0=$(cputime "$apid"); s=$(now)
	n=$("$@" 2>/dev/null | grep -c .)
	e=$(now); c1=$(cputime "$apid")
	printf '%-34s %8d varbinds %8.2f s %8.1f us/varbind   l2tpv3d cpu %.2f s\n' "$name" "$n" \
		"$(echo "$e - $s" | bc)" "$(echo "($e - $s) * 1000000 / ($n + (0 == $n))" | bc -l)" \
		"$(echo "$c1 - $c0" | bc)"
}
bench "snmpwalk l2tpv3dTunnelLocalId" snmpwalk "${SNMP[@]}" -OQn l2tpv3dTunnelLocalId
bench "snmpbulkwalk l2tpv3dTunnelTable" snmpbulkwalk -Cr50 "${SNMP[@]}" -OQn l2tpv3dTunnelTable
bench "snmpwalk l2tpv3dTunnelTable" snmpwalk "${SNMP[@]}" -OQn l2tpv3dTunnelTable
if [ "$SPT" -gt 0 ]; then
	bench "snmpbulkwalk l2tpv3dSessionTable" snmpbulkwalk -Cr50 "${SNMP[@]}" -OQn l2tpv3dSessionTable
fi
