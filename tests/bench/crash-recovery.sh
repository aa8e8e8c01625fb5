#!/usr/bin/env bash
# tests/bench/crash-recovery.sh [N] - what a crash of the LNS costs N
# pseudowires (default 1000: N static tunnels of one session each on the
# LAC), with RFC 4951 failover and without.  Both runs: keepalive HELLO 1 s
# with two 0.2-0.4 s retransmissions.  Prints, from the SIGKILL of the LNS
# (which is started again at once):
#   failover: until all N sessions are established on both sides again,
#             every tunnel and session under the IDs it had
#   rebuild:  the same without failover: until the LAC noticed, cleared and
#             built all N again (new IDs)
# Timings, not a pass/fail test: compare the two lines of one run
# (CRASH_MODES="true" or "false" runs one of them).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
N=${1:-1000}
it_setup
ms() { date +%s%3N; }

confs() {	# confs FAILOVER(true|false)
	local i tunnels= prof
	prof="{ name = \"default\"; hello_interval = 1; retransmit_initial = 0.2;
	        retransmit_cap = 0.4; max_retries = 2; failover = $1; recovery_time = 30; }"
	for i in $(seq 1 "$N"); do
		tunnels="$tunnels{ name = \"t$i\"; peer = \"$B_ADDR\"; sessions = ( { name = \"s$i\"; } ); },"
	done
	write_conf a $A_ADDR "tunnel_profiles = ( $prof ); tunnels = ( ${tunnels%,} );"
	write_conf b $B_ADDR "tunnel_profiles = ( $prof ); peer_default = { accept = true; };"
	for d in a b; do
		sed -i "s|log_level = \"debug\";|log_level = \"info\"; state_dir = \"$W/$d-state-$1\"; max_half_open = $((N + 100)); reserved_tunnels = 1;|" "$W/$d.conf"
	done
}
ids() { ctlj "$1" session list | jq -r '.sessions[] | select(.state == "established") | "\(.tunnel_id) \(.session_id)"' | sort; }
up_on() { expect_count "$N" count_sessions "$1" established; }
recorded() { ctlj b show daemon | jq -e --argjson n "$N" '.failover.recorded_tunnels == $n and .failover.write_pending == false' >/dev/null; }

for fo in ${CRASH_MODES:-true false}; do
	confs $fo
	start b "$NSB" && start a "$NSA" || exit 1
	wait_until 300 up_on b || { echo "bring-up of $N failed"; exit 1; }
	[ $fo = true ] && { wait_until 30 recorded || { echo "no record"; exit 1; }; }
	ids a > "$W/ids.before"
	t0=$(ms)
	kill -KILL "$(pid_of b)"
	wait_until 10 sh -c "! kill -0 $(pid_of b) 2>/dev/null"
	start b "$NSB" || exit 1
	wait_until 600 up_on b && wait_until 600 up_on a || { echo "not all $N back"; exit 1; }
	t=$(( $(ms) - t0 ))
	ids a > "$W/ids.after"
	same=$(comm -12 "$W/ids.before" "$W/ids.after" | wc -l)
	if [ $fo = true ]; then
		echo "failover: $N pseudowires established again ${t} ms after the SIGKILL ($same of $N under the same IDs)"
	else
		echo "rebuild:  $N pseudowires established again ${t} ms after the SIGKILL ($same of $N under the same IDs)"
	fi
	kill_pidfiles TERM "$W"/*.pid
	for d in a b; do wait_until 60 sh -c "! kill -0 $(pid_of $d) 2>/dev/null"; done
done
