#!/usr/bin/env bash
# tests/bench/cli-quiet.sh [N] [ROUNDS] - what a batch's replies cost: N
# tunnels with a session each, brought up through one `l2tpv3ctl -j -b` and
# taken down again, alternately with full replies and with -q (statuses
# alone), ROUNDS times each, between two daemons in namespaces (null data
# plane).  Prints, per round, the time and the CPU seconds of the CLI and of
# each daemon for the bring-up.  A benchmark, not a test: it prints figures
# and fails only if a bring-up does.
#   sudo tests/bench/cli-quiet.sh 5000 3
set -u
N=${1:-5000} ROUNDS=${2:-3}
. "$(dirname "$0")/../integration/lib.sh"
it_setup
write_bench_confs "$N"
start b "$NSB" && start a "$NSA" || exit 1

write_pw_batch "$N" $B_ADDR "$W/up.batch"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

round() {	# round LABEL CLI-OPTIONS...
	local label=$1; shift
	local a0 b0 t0 t1 rc
	a0=$(ticks "$(pid_of a)") b0=$(ticks "$(pid_of b)")
	t0=$(date +%s%N)
	{ TIMEFORMAT='%U %S'; time ctl a -j -w 256 "$@" -b "$W/up.batch" > "$W/up.out"; } 2> "$W/cli.cpu"
	rc=$?
	t1=$(date +%s%N)
	[ $rc = 0 ] && [ "$(count_tunnels b established)" = "$N" ] || { echo "FAIL: $label: bring-up rc $rc"; exit 1; }
	awk -v l="$label" -v n="$N" -v ms=$(( (t1 - t0) / 1000000 )) -v hz="$hz" \
		-v a=$(( $(ticks "$(pid_of a)") - a0 )) -v b=$(( $(ticks "$(pid_of b)") - b0 )) \
		-v cli="$(awk '{ print $1 + $2 }' "$W/cli.cpu")" -v bytes="$(wc -c < "$W/up.out")" 'BEGIN {
		printf "RESULT: %-13s %d pseudowires up in %5d ms (%5.0f/s): CPU-s CLI %.2f, daemon A %.2f, daemon B %.2f; %d bytes of output\n",
			l, n, ms, n * 1000 / ms, cli, a / hz, b / hz, bytes }'
	ctlj a tunnel list | jq -r '.tunnels[].tunnel_id | "tunnel delete \(.)"' > "$W/down.batch"
	ctl a -q -b "$W/down.batch" > /dev/null
	wait_until 60 expect_count 0 count_tunnels b established || { echo "FAIL: teardown"; exit 1; }
}

for r in $(seq 1 "$ROUNDS"); do
	round "full replies" && round "-q" -q
done
it_done
