#!/usr/bin/env bash
# A short tunnel storm (500 tunnels, one session each) through
# scripts/tunnel-storm: asserts that every tunnel and session comes up on
# both sides and that the script writes its CSV, summary and plot.  How
# fast is for the benchmark (doc/benchmarks.md), not for this test.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v python3 >/dev/null || skip "needs python3"
[ -x "$D" ] || skip "daemon not built"
OUT=$(mktemp -d /tmp/storm-smoke.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
N=${STORM_SMOKE_TUNNELS:-500}

"$top_srcdir/scripts/tunnel-storm" -n "$N" -s 1 --bindir "$top_builddir" --out "$OUT" > "$OUT/stdout" 2>&1
rc=$?
cat "$OUT/stdout"
log_test $rc "tunnel-storm -n $N exits 0"
grep -q "^$N tunnels, 1 sessions each" "$OUT/stdout"
log_test $? "summary line printed"
grep -q "established: LAC $N tunnels / $N sessions, LNS $N tunnels / $N sessions; failed requests 0" "$OUT/stdout"
log_test $? "all $N tunnels and sessions established on both sides"
[ "$(tail -n 1 "$OUT/samples.csv" | cut -d, -f2)" = "$N" ] && [ -s "$OUT/summary.txt" ]
log_test $? "samples.csv ends with $N tunnels on the LNS"
# the same over L2TP/IP (protocol 115): on a host without l2tp_ip the null
# data plane carries the control channel over raw IP sockets
mkdir "$OUT/ip"
"$top_srcdir/scripts/tunnel-storm" -n 200 -s 1 --encap ip --timeout 60 --bindir "$top_builddir" \
	--out "$OUT/ip" > "$OUT/ip/stdout" 2>&1 &&
	grep -q "established: LAC 200 tunnels / 200 sessions, LNS 200 tunnels / 200 sessions; failed requests 0" \
	"$OUT/ip/stdout"
log_test $? "tunnel-storm --encap ip: 200 tunnels and sessions over IP on both sides"
# --restart: the LNS handed over twice; the LAC, the witness, saw nothing
mkdir "$OUT/restart"
"$top_srcdir/scripts/tunnel-storm" -n 100 -s 1 --restart 2 --timeout 60 --bindir "$top_builddir" \
	--out "$OUT/restart" > "$OUT/restart/stdout" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(grep -c "^restart [12] of the LNS: the CLI waited .* (adopted 100 tunnels, 100 sessions; its own figures: request to all adopted [0-9]* ms, .*); its established counts as before" "$OUT/restart/stdout")" = 2 ] &&
	grep -q "^across 2 restart(s): the LAC received 0 StopCCN and 0 CDN, sent 0 SCCRQ; its established 100 tunnels / 100 sessions (before 100 / 100)" "$OUT/restart/stdout"
log_test $? "tunnel-storm --restart 2: the LNS adopted 100 tunnels and sessions each time, the LAC saw no StopCCN, CDN or SCCRQ"
[ $rc = 0 ] || cat "$OUT/restart/stdout"
if command -v gnuplot >/dev/null; then
	[ -s "$OUT/storm.png" ]
	log_test $? "storm.png written"
fi
it_done
