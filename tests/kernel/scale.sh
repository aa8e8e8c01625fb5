#!/usr/bin/env bash
# N (default 1000) tunnels with one Ethernet session each through the
# kernel data plane of both daemons: all come up (kernel objects and
# interfaces counted with iproute2), all go down, nothing is left.  Prints
# the rates, then the kernel's own limit for the same kernel work measured
# by tests/bench/nl-create-rate (2N tunnels + sessions, one process, no
# control protocol), and the ratio between the two.
#
# KT_SCALE_PERF=DIR records a system-wide perf profile (perf record -a -g) of
# the daemons' bring-up and of the raw run into DIR, with reports by process
# and by symbol (doc/benchmarks.md); it needs perf (scripts/deps --kernel).
. "$(dirname "$0")/lib.sh"
kt_setup
N=${KT_SCALE_N:-1000}
BENCH=$top_builddir/tests/bench/nl-create-rate
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
l2tpeths() { ip -n "$1" -o link show | grep -c ': l2tpeth'; }
# poll SECS CMD...: like wait_until, every 0.5 s (each probe starts processes,
# which under emulation would steal the CPU the measured work needs)
poll() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.5; done
}

KT_GLOBAL="max_half_open = $((N + 100)); log_level = \"info\";"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
write_conf b $B_ADDR 'peer_default = { accept = true; };'
sed -i 's/log_level = "debug";//' "$W/a.conf" "$W/b.conf"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/up.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$i name s$i"; done >> "$W/up.batch"
# perf_start NAME / perf_stop: a system-wide profile of what runs in between
perf_start() {
	[ -n "${KT_SCALE_PERF:-}" ] || return 0
	mkdir -p "$KT_SCALE_PERF"
	perf record -q -a -g -F 499 -o "$KT_SCALE_PERF/$1.data" >/dev/null 2>&1 &
	echo $! > "$W/perf.pid"
	sleep 2	# perf is recording before the work starts (slow under emulation)
}
perf_stop() {
	[ -n "${KT_SCALE_PERF:-}" ] || return 0
	kill -INT "$(cat "$W/perf.pid")"; wait "$(cat "$W/perf.pid")" 2>/dev/null
	perf report -i "$KT_SCALE_PERF/$1.data" --no-children --sort comm,dso --stdio \
		> "$KT_SCALE_PERF/$1.by-process.txt" 2>/dev/null
	perf report -i "$KT_SCALE_PERF/$1.data" --no-children --sort comm,sym --stdio -g none \
		--percent-limit 0.5 > "$KT_SCALE_PERF/$1.by-symbol.txt" 2>/dev/null
	echo "profile: $KT_SCALE_PERF/$1.by-process.txt, $KT_SCALE_PERF/$1.by-symbol.txt"
}

perf_start daemons-up
t0=$(now_ms)
ctl a -j -b "$W/up.batch" > "$W/up.out"
ok=$(jq -s '[.[] | select(.status == 0)] | length' "$W/up.out")
poll 120 expect_count "$N" k_sessions "$NSB" && poll 60 expect_count "$N" k_sessions "$NSA"
t_up=$(now_ms)
perf_stop daemons-up
[ "$ok" = $((2 * N)) ]
log_test $? "$N tunnel + $N session creates through one batch: $ok of $((2 * N)) succeed"
expect_count "$N" k_tunnels "$NSA" && expect_count "$N" k_tunnels "$NSB" &&
	expect_count "$N" k_sessions "$NSA" && expect_count "$N" k_sessions "$NSB"
log_test $? "kernel: $N tunnels and $N sessions in each namespace"
expect_count "$N" l2tpeths "$NSA" && expect_count "$N" l2tpeths "$NSB" &&
	expect_count "$N" count_sessions a established && expect_count "$N" count_sessions b established
log_test $? "$N l2tpeth interfaces on each side, $N sessions established in each daemon"
[ "$(ip -n "$NSA" -j link show | jq '[.[] | select(.ifname | startswith("l2tpeth")) | select(.mtu == 1442 and (.flags | index("UP")))] | length')" = "$N" ]
log_test $? "all $N interfaces of A are up with MTU 1442 (8-octet cookies)"

ctlj a tunnel list | jq -r '.tunnels[].tunnel_id | "tunnel delete \(.)"' > "$W/down.batch"
t1=$(now_ms)
ctl a -b "$W/down.batch" > /dev/null
poll 300 expect_count 0 k_tunnels "$NSA" && poll 300 expect_count 0 k_tunnels "$NSB" &&
	poll 300 expect_count 0 l2tpeths "$NSA" && poll 300 expect_count 0 l2tpeths "$NSB"
rc=$?
t_down=$(now_ms)
log_test $rc "all $N tunnels deleted: no kernel tunnel or l2tpeth left on either side"
wait_until 60 expect_count 0 count_tunnels a && expect_count 0 k_sessions "$NSA" && expect_count 0 k_sessions "$NSB"
log_test $? "A forgot every tunnel (StopCCN acknowledged), no kernel session anywhere"

up_ms=$((t_up - t0)) down_ms=$((t_down - t1))
d_up=$(awk "BEGIN { printf \"%.0f\", $N * 1000 / $up_ms }")
d_down=$(awk "BEGIN { printf \"%.0f\", $N * 1000 / $down_ms }")
echo "RESULT: daemons: $N pseudowires (tunnel + Ethernet session, both ends) up in $up_ms ms = $d_up/s, down in $down_ms ms = $d_down/s"
stop a TERM; stop b TERM

# --- the kernel's own limit for the same work -------------------------------------
if [ -x "$BENCH" ]; then
	ip netns add "l2tpk-bench-$tag" && ip -n "l2tpk-bench-$tag" link set lo up
	trap 'ip netns del "l2tpk-bench-$tag" 2>/dev/null; kt_cleanup 2>/dev/null' EXIT
	perf_start raw
	out=$(ip netns exec "l2tpk-bench-$tag" "$BENCH" -n $((2 * N)) -l); rc=$?
	perf_stop raw
	ip netns del "l2tpk-bench-$tag"
	echo "$out" | head -1
	r_up=$(sed -n 's/^RATE create=\([0-9]*\) .*/\1/p' <<<"$out")
	r_down=$(sed -n 's/^RATE .*delete=\([0-9]*\)$/\1/p' <<<"$out")
	[ $rc = 0 ] && [ -n "$r_up" ]
	log_test $? "raw netlink: $((2 * N)) tunnels + sessions + link setup, no control protocol"
	awk -v n="$N" -v du="$d_up" -v dd="$d_down" -v ru="$r_up" -v rd="$r_down" 'BEGIN {
		printf "RESULT: raw netlink, same kernel work (2 tunnels + 2 sessions + 2 links per pseudowire): up %.0f/s, down %.0f/s\n", ru / 2, rd / 2
		printf "RESULT: daemon overhead over the kernel for N=%d: up x%.2f, down x%.2f (raw rate / daemon rate)\n", n, ru / 2 / du, rd / 2 / dd }'
else
	echo "RESULT: $BENCH not built: no raw netlink comparison"
fi

kt_done
