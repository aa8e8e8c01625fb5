#!/usr/bin/env bash
# tests/bench/daemon-syscalls.sh [N] - the system calls each daemon makes
# per pseudowire: N tunnels with a session each, brought up through one
# `l2tpv3ctl -q -b` between two daemons in namespaces (null data plane),
# both daemons under `strace -c -f` from the first request to the last
# pseudowire up on B.  Counts, unlike times, do not move with the load of a
# shared machine (strace slows the daemons, which may change how many
# datagrams one wake-up finds, so compare builds at the same N).  Prints,
# per daemon, the calls per pseudowire and the ten most frequent.
# A benchmark: it fails only if the bring-up does.
#   sudo tests/bench/daemon-syscalls.sh 1000
set -u
N=${1:-1000}
. "$(dirname "$0")/../integration/lib.sh"
command -v strace >/dev/null || skip "needs strace"
it_setup
write_bench_confs "$N"
start b "$NSB" && start a "$NSA" || exit 1
write_pw_batch "$N" $B_ADDR "$W/up.batch"

traced() { [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status")" != 0 ]; }
for d in a b; do
	strace -c -f -qq -o "$W/sc.$d" -p "$(pid_of $d)" &
	echo $! > "$W/strace.$d.pid"
	wait_until 10 traced "$(pid_of $d)" || { echo "FAIL: strace did not attach to $d"; exit 1; }
done
ctl a -j -q -w 256 -b "$W/up.batch" > "$W/up.out" || { echo "FAIL: bring-up"; exit 1; }
wait_until 120 expect_count "$N" daemon_count b sessions_established || { echo "FAIL: B has not all up"; exit 1; }
for d in a b; do
	kill -INT "$(cat "$W/strace.$d.pid")"
	wait "$(cat "$W/strace.$d.pid")"
done
for d in a b; do
	[ -s "$W/sc.$d" ] || { echo "FAIL: no strace summary for $d"; exit 1; }
	awk -v d=$d -v n="$N" '
		$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { calls[$NF] = $4 }
		$NF == "total" { total = $4 }
		END {
			printf "RESULT: daemon %s: %.1f system calls per pseudowire (%d for %d)\n", d, total / n, total, n
			for (c in calls) printf "%10.2f %s\n", calls[c] / n, c | "sort -rn | head -10 | sed \"s/^/    /\""
		}' "$W/sc.$d"
done
it_done
