#!/usr/bin/env bash
# tests/bench/restart-time.sh [N [RUNS]] - what a restart costs with N
# tunnels of one session each (default 1000, 3 runs): two daemons in
# network namespaces (null data plane), the LNS restarted with
# `l2tpv3ctl restart` RUNS times.  Prints per run:
#   cli_ms      the CLI's whole wait: request to the new process answering
#   settle_ms   the old process settling work under way
#   resume_ms   state saved to every tunnel adopted (exec, reading, rebuilding)
#   restart_ms  request to every tunnel adopted (the daemon's own figure)
#   answer_ms   after the CLI returns: a new session on an old tunnel, up
#   state_kb    the handed-over state
#   rss_kb      the new process's resident memory
# and checks that all N tunnels and sessions are still established on both
# sides after each run (a restart that loses any is not a figure).
#
# Timings, not a pass/fail test: compare runs on one machine.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
N=${1:-1000} RUNS=${2:-3}
it_setup
write_bench_confs "$N"
sed -i 's/max_half_open = [0-9]*;/& max_tunnels = 200000; max_sessions = 200000;/' "$W/a.conf" "$W/b.conf"
start b "$NSB" && start a "$NSA" || exit 1
ms() { date +%s%3N; }

for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/t.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$i name s$i"; done > "$W/s.batch"
t0=$(ms)
ctl a -q -w 256 -b "$W/t.batch" && ctl a -q -w 256 -b "$W/s.batch" || { echo "bring-up failed"; exit 1; }
echo "bring-up of $N tunnels and $N sessions: $(( $(ms) - t0 )) ms"
wait_until 60 expect_count "$N" count_tunnels b established && wait_until 60 expect_count "$N" count_sessions b established ||
	{ echo "not all up on B"; exit 1; }

printf '%-4s %8s %10s %10s %11s %10s %9s %9s\n' run cli_ms settle_ms resume_ms restart_ms \
	answer_ms state_kb rss_kb
for r in $(seq 1 "$RUNS"); do
	t0=$(ms)
	ctl b -t 600 restart >/dev/null || { echo "run $r: restart failed"; tail "$W/b.log"; exit 1; }
	cli=$(( $(ms) - t0 ))
	t0=$(ms)
	ctl a session create tunnel name t1 name "probe-$r" >/dev/null || { echo "run $r: no answer"; exit 1; }
	answer=$(( $(ms) - t0 ))
	st=$(ctlj b show daemon | jq -c .start)
	settle=$(grep -o "settled in [0-9]* ms" "$W/b.log" | tail -1 | grep -o "[0-9]*")
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$(pid_of b)/status")
	printf '%-4s %8s %10s %10s %11s %10s %9s %9s\n' "$r" "$cli" "$settle" \
		"$(jq .resume_ms <<<"$st")" "$(jq .restart_ms <<<"$st")" "$answer" \
		"$(( $(jq .state_bytes <<<"$st") / 1024 ))" "$rss"
	[ "$(jq .tunnels_adopted <<<"$st")" = "$N" ] &&
		expect_count "$N" count_tunnels a established &&
		expect_count $((N + r)) count_sessions a established ||
		{ echo "run $r: not every tunnel and session kept"; exit 1; }
done
echo "all $N tunnels and their sessions kept across $RUNS restarts"
