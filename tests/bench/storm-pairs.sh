#!/usr/bin/env bash
# tests/bench/storm-pairs.sh BINDIR_A BINDIR_B [RUNS] [-- TUNNEL-STORM ARGS...] -
# two builds side by side: RUNS alternating pairs of scripts/tunnel-storm
# (A B, B A, A B, ...: neither always runs first on a warm machine), each
# with the same arguments (default -n 10000).  Prints each run's summary
# line, then per build the median time and CPU, and the median of the
# pair-by-pair time ratios B / A.  The machine's load is printed before and
# after: compare ratios of one sitting, not figures of different ones.
# A benchmark: it fails only if a run does not bring everything up.
#   sudo tests/bench/storm-pairs.sh build ../e4dd7dc/build 5 -- -n 10000
set -u
[ $# -ge 2 ] || { echo "usage: $0 BINDIR_A BINDIR_B [RUNS] [-- TUNNEL-STORM ARGS...]" >&2; exit 2; }
A=$1 B=$2 RUNS=5
shift 2
if [ $# -gt 0 ] && [ "$1" != -- ]; then RUNS=$1; shift; fi
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- -n 10000
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d /tmp/storm-pairs.XXXXXX)
trap 'rm -rf "$out"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {	# run LABEL BINDIR K: one tunnel-storm run, its summary line kept
	"$top/scripts/tunnel-storm" "${@:4}" --bindir "$2" --out "$out/$1.$3" > "$out/$1.$3.log" 2>&1 ||
		{ echo "FAIL: $1 run $3:"; tail -5 "$out/$1.$3.log"; exit 1; }
	echo "$1 $3: $(head -1 "$out/$1.$3.log")"
}
for k in $(seq 1 "$RUNS"); do
	if [ $((k % 2)) = 1 ]; then run A "$A" "$k" "$@"; run B "$B" "$k" "$@"
	else run B "$B" "$k" "$@"; run A "$A" "$k" "$@"; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# the summary's "N s," and the two daemons' "cpu U+S s"
for k in $(seq 1 "$RUNS"); do
	for x in A B; do
		head -1 "$out/$x.$k.log" | awk -v x=$x -v k=$k -F', ' '{
			t = $3; sub(/ s$/, "", t); cpu = 0
			for (i = 1; i <= NF; i++) if ($i ~ /cpu [0-9.]+\+[0-9.]+ s/) {
				c = $i; sub(/.*cpu /, "", c); sub(/ s$/, "", c); split(c, p, "+"); cpu += p[1] + p[2] }
			print x, k, t, cpu }'
	done
done > "$out/figures"
awk -v a="$A" -v b="$B" '
	function median(arr, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
		return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
	{ t[$1, $2] = $3; c[$1, $2] = $4; n = $2 > n ? $2 : n }
	END {
		for (k = 1; k <= n; k++) { ta[k] = t["A", k]; tb[k] = t["B", k]; ca[k] = c["A", k]; cb[k] = c["B", k]; r[k] = t["B", k] / t["A", k] }
		printf "RESULT: A (%s): median %.2f s, daemons CPU %.2f s\n", a, median(ta, n), median(ca, n)
		printf "RESULT: B (%s): median %.2f s, daemons CPU %.2f s\n", b, median(tb, n), median(cb, n)
		printf "RESULT: B / A, pair by pair: median %.2f (", median(r, n)
		for (k = 1; k <= n; k++) printf "%s%.2f", (k > 1 ? " " : ""), t["B", k] / t["A", k]
		print ")" }' "$out/figures"
