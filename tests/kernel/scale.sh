#!/usr/bin/env bash
# N (default 1000) tunnels with one Ethernet session each through the
# kernel data plane of both daemons: all come up (kernel objects and
# interfaces counted with iproute2), all go down, nothing is left.  Prints
# the rates, then the kernel's own limit for the same kernel work measured
# by tests/bench/nl-create-rate (no control protocol: N tunnels + sessions
# in each of two namespaces, just before and just after the daemons; then
# 2N in one process), and the ratio of the daemons' rate to the mean of the
# two-namespace runs.
#
# KT_SCALE_PERF=DIR records a system-wide perf profile (perf record -a -g) of
# the daemons' bring-up and of the raw run's creates into DIR, with reports by process
# and by symbol (doc/benchmarks.md); it needs perf (scripts/deps --kernel).
# KT_SCALE_PERF_HZ sets its sampling rate (499 Hz: lower it for N = 10,000),
# KT_SCALE_PERF_CG its call graphs (fp; dwarf walks user space too).
# KT_SCALE_TIMELINE=DIR writes the bring-up's idle CPU time and the daemons'
# and the batch CLI's CPU time per 100 ms (tests/kernel/cpu-timeline) to DIR.
. "$(dirname "$0")/lib.sh"
kt_setup
N=${KT_SCALE_N:-1000}
BENCH=$top_builddir/tests/bench/nl-create-rate
# stamp_ms VAR: the time in ms into VAR, with no process or subshell (the
# daemons' phase is timed from the shell; under emulation a process start
# costs 50-200 ms)
stamp_ms() { printf -v "$1" '%d' $(( ${EPOCHREALTIME//[.,]/} / 1000 )); }
l2tpeths() { ip -n "$1" -o link show | grep -c ': l2tpeth'; }
# poll SECS CMD...: like wait_until, every 0.5 s (each probe starts processes,
# which under emulation would steal the CPU the measured work needs)
poll() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.5; done
}

KT_GLOBAL="max_half_open = $((N + 100)); log_level = \"info\";"
# a descriptor per tunnel in each daemon (the guest's default limit is 1,024)
ulimit -n $((N + 1024)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
write_conf b $B_ADDR 'peer_default = { accept = true; };'
sed -i 's/log_level = "debug";//' "$W/a.conf" "$W/b.conf"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

# each tunnel followed by its session, as tunnel-storm writes its batch: every
# tunnel first would leave the kernel's RTNL work idle for the whole tunnel
# phase (a fifth of the bring-up at 1,000), which the raw loop, interleaving
# its rounds, never is
write_pw_batch "$N" $B_ADDR "$W/up.batch"
poll_fast() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.1; done
}

# perf_start NAME / perf_stop: a system-wide profile of what runs in between
perf_start() {
	[ -n "${KT_SCALE_PERF:-}" ] || return 0
	mkdir -p "$KT_SCALE_PERF"
	rm -f "$W/perf.ctl" "$W/perf.ack" && mkfifo "$W/perf.ctl" "$W/perf.ack"
	exec {perf_ctl}<>"$W/perf.ctl" {perf_ack}<>"$W/perf.ack"
	# starts disabled; enabled once it is ready (its start-up takes seconds under emulation)
	perf record -q -a --call-graph "${KT_SCALE_PERF_CG:-fp}" -F "${KT_SCALE_PERF_HZ:-499}" -D -1 --control "fd:$perf_ctl,$perf_ack" \
		-o "$KT_SCALE_PERF/$1.data" >/dev/null 2>&1 &
	echo $! > "$W/perf.pid"
	echo enable >&"$perf_ctl" && read -r -t 120 -u "$perf_ack" _
}
perf_stop() {
	[ -n "${KT_SCALE_PERF:-}" ] || return 0
	kill -INT "$(cat "$W/perf.pid")"; wait "$(cat "$W/perf.pid")" 2>/dev/null
	exec {perf_ctl}>&- {perf_ack}>&-
	unset perf_ctl perf_ack
	perf report -i "$KT_SCALE_PERF/$1.data" --no-children --sort comm,dso --stdio -g none \
		> "$KT_SCALE_PERF/$1.by-process.txt" 2>/dev/null
	perf report -i "$KT_SCALE_PERF/$1.data" --no-children --sort comm,sym --stdio -g none \
		--percent-limit 0.5 > "$KT_SCALE_PERF/$1.by-symbol.txt" 2>/dev/null
	echo "profile: $KT_SCALE_PERF/$1.by-process.txt, $KT_SCALE_PERF/$1.by-symbol.txt"
}

# cpu_mark: the guest's idle time and the daemons' CPU time so far (clock ticks)
cpu_mark() {
	local a b
	read -r _ _ _ _ idle _ < /proc/stat
	a=$(awk '{ print $14 + $15 }' "/proc/$(pid_of a)/stat" 2>/dev/null)
	b=$(awk '{ print $14 + $15 }' "/proc/$(pid_of b)/stat" 2>/dev/null)
	echo "$idle ${a:-0} ${b:-0}"
}
# cpu_report LABEL MS MARK0 MARK1: where the phase's CPU time went, in s
cpu_report() {
	local hz; hz=$(getconf CLK_TCK)
	awk -v l="$1" -v ms="$2" -v n="$(nproc)" -v hz="$hz" -v m0="$3" -v m1="$4" 'BEGIN {
		split(m0, x); split(m1, y); wall = ms / 1000
		idle = (y[1] - x[1]) / hz; a = (y[2] - x[2]) / hz; b = (y[3] - x[3]) / hz
		printf "RESULT: %s: %.1f s on %d CPUs = %.1f CPU-s: daemon A %.1f, daemon B %.1f, idle %.1f, the rest (kernel threads, tools) %.1f\n",
			l, wall, n, wall * n, a, b, idle, wall * n - a - b - idle }'
}

# settle: until the guest's CPUs are idle for a second (at most 60 s), so
# that neither phase pays for the kernel's deferred work of the one before
# (a teardown's interfaces and sockets are freed after the dumps are empty)
settle() {
	local i idle0 idle1 quiet=$(($(getconf CLK_TCK) * $(nproc) * 9 / 10))
	for i in $(seq 60); do
		read -r _ _ _ _ idle0 _ < /proc/stat; sleep 1; read -r _ _ _ _ idle1 _ < /proc/stat
		[ $((idle1 - idle0)) -lt "$quiet" ] || return 0
	done
	echo "scale: the guest did not settle in 60 s: measuring anyway" >&2
}

# --- the kernel's own limit for the same work -------------------------------------
# raw_run N NS...: nl-create-rate -n N -l in each namespace at once; prints
# "CREATE_MS DELETE_MS" of the slowest
# (builtins only: under emulation a process start costs ~50 ms of the CPU measured)
# nap SECS: sleep without a process (a read that times out on a FIFO nobody writes)
mkfifo "$W/nap.fifo" && exec {nap_fd}<>"$W/nap.fifo"
nap() { read -r -t "$1" -u "$nap_fd" _ || :; }
stopped() { local st; read -r _ _ st _ < "/proc/$1/stat" 2>/dev/null && [ "$st" = T ]; }
raw_run() {
	local n=$1 ns pids=() p rc=0; shift
	for ns in "$@"; do
		ip netns exec "$ns" "$BENCH" -n "$n" -l -S > "$W/raw${#pids[@]}.out" 2>&1 &
		pids+=($!)
	done
	# all created (each stops itself), then all delete at once
	for p in "${pids[@]}"; do until stopped "$p" || ! kill -0 "$p" 2>/dev/null; do nap 0.2; done; done
	# their CPU time for the creates, to set beside the daemons' (cpu_report)
	local st ticks=0
	for p in "${pids[@]}"; do read -ra st < "/proc/$p/stat" && ticks=$((ticks + st[13] + st[14])); done
	awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="${#pids[@]}" 'BEGIN { printf "raw: the creates took %.1f CPU-s in the %d processes\n", t / hz, n }' >&2
	# the profile covers the creates, as the daemons' covers their bring-up
	# (only the first raw_run is profiled: the one-process run comes after perf_stop)
	[ -z "${perf_ctl:-}" ] || { echo disable >&"$perf_ctl" && read -r -t 120 -u "$perf_ack" _; }
	kill -CONT "${pids[@]}"
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	sed -n 's/^nl-create-rate: /raw: /p' "$W"/raw*.out >&2	# each namespace's own figures
	cat "$W"/raw*.out | sed -n 's/.*created in \([0-9]*\) ms.*deleted in \([0-9]*\) ms.*/\1 \2/p' |
		sort -n -k1 | awk '{ c = $1 > c ? $1 : c; d = $2 > d ? $2 : d } END { print c, d }'
	rm -f "$W"/raw*.out
	return $rc
}
# The raw pair runs just before the daemons and again just after (below):
# the guest's speed drifts by tens of per cent within a boot (emulation on a
# shared host), and the ratio compares the daemons with the mean of the two
before=
if [ -x "$BENCH" ]; then
	R1=l2tpk-bench1-$tag R2=l2tpk-bench2-$tag
	for ns in $R1 $R2; do ip netns add "$ns" && ip -n "$ns" link set lo up; done
	trap 'ip netns del $R1 2>/dev/null; ip netns del $R2 2>/dev/null; kt_cleanup 2>/dev/null' EXIT
	settle
	before=$(raw_run "$N" $R1 $R2) || before=
fi

# The window measured is the daemons' work, as the raw loop times its own
# creates: a process start costs 50-200 ms under emulation, a tenth of this
# bring-up, so the clients are started before it.  A's batch CLI waits on a
# FIFO, and the batch goes in through a shell builtin at t0.  A answers each
# create once it is established, kernel objects included.  B's end is the
# time B itself puts on its last session-up event, which a monitor
# subscribed before t0 (to session-up alone) reads after the window.  Each
# probe is one l2tpv3ctl: a dump of the kernel's sessions would take the CPU
# the work needs.
settle
perf_start daemons-up
mkfifo "$W/up.fifo"
mapfile -t up_lines < "$W/up.batch"
# B's session-up events, read once the bring-up is over: a reader woken by
# each event during it took up to a third of the guest's CPU (a Python
# process woken 4,000 times).  B writes them as they come, with its own
# time, into the socket and then its output buffer (ctl_max_output: 16 MiB).
python3 -c '
import os, signal, socket, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"{\"id\": 1, \"cmd\": \"monitor\", \"args\": {\"events\": [\"session-up\"]}}\n")
out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
signal.sigwait([signal.SIGUSR1])
while True:
    b = s.recv(1 << 16)
    if not b:
        break
    os.write(out, b)
' "$W/b.ctl" "$W/b.mon" & mon_pid=$!
# (bash's time keyword: the CLI's own CPU time, written when it ends.  -q:
# the creates are answered with their status alone, as a provisioning
# script would ask; the objects are counted in the kernel and the daemons.)
{ TIMEFORMAT='%U %S'; time ctl a -j -q -w 256 -b "$W/up.fifo" > "$W/up.out"; } 2> "$W/up.cpu" & cli_pid=$!
# read-write: opens at once; the CLI sees EOF when it is closed (so no process
# started from here on may inherit it: the probes below end before that)
exec {up_w}<>"$W/up.fifo"
# each daemon's clients: the one started above and the probe itself
# (two process starts under emulation, beside whatever else the host runs)
CONNECT_S=120
poll_fast $CONNECT_S expect_count 2 daemon_count a ctl_clients &&
	poll_fast $CONNECT_S expect_count 2 daemon_count b ctl_clients
rc=$?
log_test $rc "the batch CLI (input held back) and a monitor of B are connected before the bring-up (clients: a $(daemon_count a ctl_clients), b $(daemon_count b ctl_clients))"
[ $rc = 0 ] || { kill "$cli_pid" "$mon_pid"; kt_done; exit 1; }
if [ -n "${KT_SCALE_TIMELINE:-}" ]; then
	mkdir -p "$KT_SCALE_TIMELINE"
	rm -f "$W/tl.fifo" && mkfifo "$W/tl.fifo"	# (the guest has no /dev/fd for <(...))
	"$(dirname "$0")/cpu-timeline" "$KT_SCALE_TIMELINE/up-$(date +%H%M%S).txt" \
		"$(pid_of a)" "$(pid_of b)" $(pgrep -f 'l2tpv3ctl.*up.fifo') > "$W/tl.fifo" {up_w}>&- & tl_pid=$!
	exec {tl_out}< "$W/tl.fifo"
	read -r -t 30 -u "$tl_out" _	# "ready": its start-up is over before the window
fi
m0=$(cpu_mark)
stamp_ms t0
[ -z "${tl_pid:-}" ] || kill -USR1 "$tl_pid"
printf '%s\n' "${up_lines[@]}" >&"$up_w"
exec {up_w}>&-
wait "$cli_pid"
stamp_ms t_cli
[ -z "${tl_pid:-}" ] || kill -USR1 "$tl_pid"	# (before cpu_mark's subshell)
m1=$(cpu_mark)
[ -z "${tl_pid:-}" ] || { cat <&"$tl_out"; exec {tl_out}<&-; }
perf_stop daemons-up
kill -USR1 "$mon_pid"
b_ups() { grep -c '"session-up"' "$W/b.mon"; }
poll_fast 120 expect_count "$N" b_ups
log_test $? "B's monitor saw $N session-up events"
b_last=$(jq -s '[.[] | .event? | objects | select(.event == "session-up") | .time] | max * 1000 | floor' "$W/b.mon")
kill "$mon_pid"; wait "$mon_pid" 2>/dev/null
[[ $b_last =~ ^[0-9]+$ ]] || b_last=0
t_up=$(( b_last > t_cli ? b_last : t_cli ))
echo "RESULT: bring-up ends: A's last answer at +$((t_cli - t0)) ms, B's last session up at +$((b_last - t0)) ms; the batch CLI used $(awk '{ printf "%.1f", $1 + $2 }' "$W/up.cpu") CPU-s"
ok=$(jq -r 'select(.summary) | .summary | select(.failed == 0) | .succeeded' "$W/up.out")
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
# each daemon's kernel watch hears every namespace's l2tp notices (the
# family multicasts to all): when they overrun it, the daemon re-checks
# every kernel object of its own
for d in a b; do
	echo "RESULT: daemon $d's kernel watch during the bring-up: $(grep -c 'notifications lost' "$W/$d.log") overruns (each a re-check of every object)"
done
addrs=$(ip -n "$NSB" -6 -o addr show)
ll6=$(grep -c ': l2tpeth' <<<"$addrs")
grep -q "$B_ADDR6" <<<"$addrs" && [ "$ll6" = 0 ]
log_test $? "no IPv6 address on B's $N pseudowires (no address in the profile: ipv6_link_local auto)"

DOWN_S=$((300 + N / 10))	# interfaces go one by one under emulation: ~30/s at 10,000
ctlj a tunnel list | jq -r '.tunnels[].tunnel_id | "tunnel delete \(.)"' > "$W/down.batch"
stamp_ms t1
ctl a -b "$W/down.batch" > /dev/null
# interfaces first: the l2tp family's tunnel dump costs O(tunnels) per
# tunnel (l2tp_tunnel_get_nth walks from the first for each), and at 10,000 a dump
# every half second held the lock the teardown needs
poll "$DOWN_S" expect_count 0 l2tpeths "$NSA" && poll "$DOWN_S" expect_count 0 l2tpeths "$NSB" &&
	poll 60 expect_count 0 k_tunnels "$NSA" && poll 60 expect_count 0 k_tunnels "$NSB"
rc=$?
stamp_ms t_down
log_test $rc "all $N tunnels deleted: no kernel tunnel or l2tpeth left on either side"
wait_until "$DOWN_S" expect_count 0 count_tunnels a && expect_count 0 k_sessions "$NSA" && expect_count 0 k_sessions "$NSB"
log_test $? "A forgot every tunnel (StopCCN acknowledged), no kernel session anywhere"

up_ms=$((t_up - t0)) down_ms=$((t_down - t1))
d_up=$(awk "BEGIN { printf \"%.0f\", $N * 1000 / $up_ms }")
d_down=$(awk "BEGIN { printf \"%.0f\", $N * 1000 / $down_ms }")
echo "RESULT: daemons: $N pseudowires (tunnel + Ethernet session, both ends) up in $up_ms ms = $d_up/s, down in $down_ms ms = $d_down/s"
cpu_report "daemons' bring-up" "$up_ms" "$m0" "$m1"
stop a TERM; stop b TERM

if [ -x "$BENCH" ]; then
	# like the daemons: two namespaces side by side, N ends each (both contend
	# for the kernel's locks as the two daemons do)
	settle
	perf_start raw-create
	m0=$(cpu_mark); stamp_ms t0
	two=$(raw_run "$N" $R1 $R2); rc=$?
	m1=$(cpu_mark); stamp_ms t1
	perf_stop raw-create
	cpu_report "raw netlink, two namespaces (create and delete)" $((t1 - t0)) "$m0" "$m1" |
		sed 's/daemon A .*, idle/idle/'
	# the same ends from one process, for reference (its teardown alone takes
	# minutes under emulation past a few thousand interfaces)
	one="0 0"
	[ "$N" -gt 2000 ] || one=$(raw_run $((2 * N)) $R1) || rc=1
	ip netns del $R1; ip netns del $R2
	[ $rc = 0 ] && [ -n "$before" ] && [ -n "$two" ] && [ -n "$one" ]
	log_test $? "raw netlink: $N tunnels + sessions + links in each of two namespaces, before and after the daemons$([ "$N" -gt 2000 ] || echo ", then $((2 * N)) in one")"
	awk -v n="$N" -v du="$d_up" -v dd="$d_down" -v two="$two" -v one="$one" -v before="$before" 'BEGIN {
		split(two, t); split(one, o); split(before, b)
		bu = n * 1000 / b[1]; bd = n * 1000 / b[2]
		au = n * 1000 / t[1]; ad = n * 1000 / t[2]
		ru = (bu + au) / 2; rd = (bd + ad) / 2
		printf "RESULT: raw netlink, same kernel work (a tunnel, a session and its link at each end), two namespaces side by side: up %.0f/s, down %.0f/s (before the daemons %.0f/s and %.0f/s, after %.0f/s and %.0f/s)\n", ru, rd, bu, bd, au, ad
		if (o[1] > 0)
			printf "RESULT: raw netlink, the same %d ends in one process: up %.0f/s, down %.0f/s\n", 2 * n, n * 1000 / o[1], n * 1000 / o[2]
		printf "RESULT: daemons against raw netlink (two namespaces) for N=%d: up %.0f %%, down %.0f %% (daemon rate / mean raw rate before and after)\n", n, 100 * du / ru, 100 * dd / rd }'
else
	echo "RESULT: $BENCH not built: no raw netlink comparison"
fi

kt_done
