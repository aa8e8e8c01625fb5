#!/usr/bin/env bash
# tests/bench/daemon-instr.sh [N] - what the daemons' own code costs per
# pseudowire, in instructions (valgrind's callgrind), which no noise on a
# shared machine changes from one run to the next: N tunnels with a session
# each, brought up through one `l2tpv3ctl -q -b` between two daemons in
# namespaces (null data plane), both daemons under callgrind, counted from
# the first request to the last answer.  Prints what the first
# pseudowire cost each daemon (anything left for it to pay once), then,
# per daemon, the instructions per pseudowire of the N after it and the ten
# functions that cost the most (inclusive).
# Under emulation (the kernel tests' guest) user-space instructions are what
# the daemons spend outside the kernel; this is the figure to compare
# before and after a change to that code.  A benchmark: it fails only if
# the bring-up does.  CG_OUT=DIR keeps the two profiles there (cg.a, cg.b)
# for callgrind_annotate.
#   sudo tests/bench/daemon-instr.sh 500
set -u
N=${1:-500}
. "$(dirname "$0")/../integration/lib.sh"
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || skip "needs valgrind"
it_setup
write_bench_confs "$N"
# start_cg NAME NS: the daemon under callgrind (start-up is not counted: -z below)
start_cg() {
	ip netns exec "$2" valgrind -q --tool=callgrind --callgrind-out-file="$W/cg.$1" \
		"$D" -F -f "$W/$1.conf" >>"$W/$1.log" 2>&1 &
	echo $! > "$W/$1.pid"
	wait_until 60 "$C" -s "$W/$1.ctl" show daemon || { echo "$1 did not start"; tail "$W/$1.log"; exit 1; }
}
start_cg b "$NSB" && start_cg a "$NSA"
write_pw_batch "$N" $B_ADDR "$W/up.batch"
# (B is measured while its sessions are polled: `show daemon` costs it a
# few hundred instructions)
cg() { callgrind_control "$@" >/dev/null 2>&1; }
# dump NAME: NAME's counts so far into a new file, whose name it prints
dump() {
	cg -d "$(pid_of "$1")" && ls -t "$W/cg.$1".* 2>/dev/null | head -1
}
total() { callgrind_annotate --threshold=100 --auto=no "$1" | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,; }

# The first pseudowire alone: what the daemons left for it to pay once
# (a library's first use) shows against the ones after it.
cg -z "$(pid_of a)" && cg -z "$(pid_of b)" || { echo "FAIL: callgrind_control"; exit 1; }
ctl a -q tunnel create peer $B_ADDR name first && ctl a -q session create tunnel name first name first ||
	{ echo "FAIL: the first pseudowire"; exit 1; }
wait_until 30 expect_count 1 daemon_count b sessions_established || { echo "FAIL: the first pseudowire on B"; exit 1; }
fa=$(dump a) && fb=$(dump b) || { echo "FAIL: no callgrind dump"; exit 1; }
echo "RESULT: the first pseudowire: daemon a $(total "$fa"), daemon b $(total "$fb") instructions"

cg -z "$(pid_of a)" && cg -z "$(pid_of b)"
ctl a -j -q -w 256 -b "$W/up.batch" > "$W/up.out" || { echo "FAIL: bring-up"; exit 1; }
fa=$(dump a)
wait_until 60 expect_count $((N + 1)) daemon_count b sessions_established || { echo "FAIL: B has not all up"; exit 1; }
fb=$(dump b)
for f in "$fa" "$fb"; do
	[ -n "$f" ] || { echo "FAIL: no callgrind dump"; exit 1; }
	d=${f##*/cg.}; d=${d%%.*}
	t=$(total "$f")
	echo "RESULT: daemon $d: $((t / N)) instructions per pseudowire ($t for $N)"
	[ -z "${CG_OUT:-}" ] || cp "$f" "$CG_OUT/cg.$d" || echo "note: cannot keep $f in $CG_OUT"
	# (callgrind names some functions twice, by a relative and an absolute path;
	# a build configured by an absolute path names them so only)
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$f" |
		sed -nE 's|^( *[0-9,]+ +\( *[0-9.]+%\)) +[^ ]*/((src\|usl)/[^ ]*).*|\1 \2|p' |
		grep -vE 'main\.c:main|loop\.c:usl_loop_run|loop\.c:fd_cb' | awk '!seen[$3]++' | head -10 | sed 's/^/    /'
done
it_done
