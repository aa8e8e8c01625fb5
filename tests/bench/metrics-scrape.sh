#!/usr/bin/env bash
# tests/bench/metrics-scrape.sh [N] - what one scrape of /metrics costs with
# N sessions up (default 100,000): N/1000 tunnels of 1000 named sessions
# each, brought up through one `l2tpv3ctl -q -b` between two daemons in
# namespaces (null data plane), then the LAC, whose objects are named (so
# that it also has a flaps series per session), scraped five times over
# HTTP and five times through `l2tpv3ctl metrics`, with the sessions'
# data-plane counters and again without (metrics_session_counters = false,
# applied by a reload).  Prints, per scrape, the wall time, the LAC's CPU
# time for it (from /proc/PID/stat) and the size; then the medians.  Every session has its per-object series, its nine
# data-plane counters among them (the null data plane's are 0, so each
# value is one digit: a busy kernel's are up to 20), so the scrape grows
# with N: this is the figure to hold under a second.
# A benchmark: it fails only if the bring-up or a scrape does.
#   sudo tests/bench/metrics-scrape.sh 100000
set -u
N=${1:-100000}
PER=1000			# sessions per tunnel
[ "$N" -ge "$PER" ] || PER=$N
T=$(( (N + PER - 1) / PER ))
. "$(dirname "$0")/../integration/lib.sh"
command -v curl >/dev/null || skip "needs curl"
it_setup
write_bench_confs "$T"
for d in a b; do
	sed -i "s/max_half_open/max_sessions = $((N + 1000)); max_sessions_per_tunnel = $PER; max_half_open/" "$W/$d.conf"
done
sed -i 's|ctl_socket|metrics_listen = "127.0.0.1:9724"; ctl_socket|' "$W/a.conf"
start b "$NSB" && start a "$NSA" || { echo "FAIL: daemons"; exit 1; }

for t in $(seq 1 "$T"); do
	echo "tunnel create peer $B_ADDR name t$t"
	for s in $(seq 1 "$PER"); do
		[ $(( (t - 1) * PER + s )) -le "$N" ] && echo "session create tunnel name t$t name s$t-$s"
	done
done > "$W/up.batch"
t0=$(date +%s%N)
ctl a -j -q -w 256 -b "$W/up.batch" > "$W/up.out" || { echo "FAIL: bring-up"; exit 1; }
wait_until 600 expect_count "$N" daemon_count b sessions_established ||
	{ echo "FAIL: B has $(daemon_count b sessions_established) of $N sessions up"; exit 1; }
echo "RESULT: $N sessions in $T tunnels up in $(( ($(date +%s%N) - t0) / 1000000 )) ms"

# cpu_ms PID: the process's user+system CPU time so far, in ms
HZ=$(getconf CLK_TCK)
cpu_ms() { awk -v hz="$HZ" '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"; }
# the daemon itself, not `ip netns exec`'s shell: the child of the pid file's process
apid=$(pgrep -P "$(pid_of a)" -x l2tpv3d || pid_of a)

# scrape HOW: one scrape; prints "wall_ms cpu_ms bytes lines"
scrape() {
	local c0 c1 w0 w1
	c0=$(cpu_ms "$apid"); w0=$(date +%s%N)
	if [ "$1" = http ]; then
		ip netns exec "$NSA" curl -sf -o "$W/scrape.prom" http://127.0.0.1:9724/metrics || return 1
	else
		ctl a metrics > "$W/scrape.prom" || return 1
	fi
	w1=$(date +%s%N); c1=$(cpu_ms "$apid")
	echo "$(( (w1 - w0) / 1000000 )) $((c1 - c0)) $(stat -c %s "$W/scrape.prom") $(wc -l < "$W/scrape.prom")"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# counters on (the default), then off (metrics_session_counters = false, a reload)
for ctr in on off; do
	if [ $ctr = off ]; then
		cp "$W/scrape.prom" "$W/scrape-on.prom"
		sed -i 's|ctl_socket|metrics_session_counters = false; ctl_socket|' "$W/a.conf"
		ctl a reload >/dev/null || { echo "FAIL: reload"; exit 1; }
	fi
	for how in http cli; do
		: > "$W/$how.runs"
		for i in 1 2 3 4 5; do
			r=$(scrape $how) || { echo "FAIL: $how scrape"; exit 1; }
			echo "$r" >> "$W/$how.runs"
			set -- $r
			echo "RESULT: counters $ctr: $how scrape $i: ${1} ms wall, ${2} ms daemon CPU, $3 bytes, $4 lines"
		done
		echo "RESULT: counters $ctr: $how median: $(cut -d' ' -f1 "$W/$how.runs" | median) ms wall," \
			"$(cut -d' ' -f2 "$W/$how.runs" | median) ms daemon CPU"
	done
done
# PATTERN FILE: its lines that match
lines() { grep -c "$1" "$2"; }
ups=$(lines '^l2tpv3d_session_up{.*} 1$' "$W/scrape-on.prom")
flaps=$(lines '^l2tpv3d_session_flaps_total{' "$W/scrape-on.prom")
ctrs=$(lines '^l2tpv3d_session_[rt]x_[a-z_]*_total{' "$W/scrape-on.prom")
[ "$ups" = "$N" ] && [ "$flaps" = "$N" ] && [ "$ctrs" = $((9 * N)) ]
log_test $? "counters on: $N sessions up ($ups session_up series at 1, $flaps flaps series, $ctrs counter series)"
echo "RESULT: of that scrape, the data-plane counters are $ctrs lines," \
	"$(grep '^l2tpv3d_session_[rt]x_[a-z_]*_total{' "$W/scrape-on.prom" | wc -c) bytes"
[ "$(lines '^l2tpv3d_session_up{.*} 1$' "$W/scrape.prom")" = "$N" ] &&
	[ "$(lines '^l2tpv3d_session_[rt]x_' "$W/scrape.prom")" = 0 ]
log_test $? "counters off: the $N sessions up, no counter series"
[ -n "${BENCH_KEEP:-}" ] && cp "$W/scrape-on.prom" "$BENCH_KEEP"
it_done
