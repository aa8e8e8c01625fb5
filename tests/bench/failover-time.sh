#!/usr/bin/env bash
# tests/bench/failover-time.sh [N] - what losing an LNS costs N pseudowires
# (default 1000) on a LAC, with and without pseudowire redundancy: two
# LNSs (b1 the primary, b2 the backup, both in ns B), the LAC's N static
# sessions on its tunnel to b1, keepalive HELLO 1 s with two 0.2-0.4 s
# retransmissions.  Prints, from the SIGKILL of b1:
#   backup:   N sessions naming b2's tunnel as backup: until all N are up
#             through it
#   rebuild:  the same sessions without a backup: until all N are up again
#             on b1, restarted at once (what a LAC without redundancy waits
#             for: its LNS back, its static retry)
# Timings, not a pass/fail test: compare the two lines of one run.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
N=${1:-1000}
it_setup
B2_ADDR=192.0.2.3
ip -n "$NSB" addr add $B2_ADDR/24 dev veth1 || exit 1
ms() { date +%s%3N; }

lac_conf() {	# lac_conf BACKUP(0|1)
	local i sessions=
	for i in $(seq 1 "$N"); do
		if [ "$1" = 1 ]; then
			sessions="$sessions{ name = \"c$i\"; backup = \"to-b2\"; },"
		else
			sessions="$sessions{ name = \"c$i\"; },"
		fi
	done
	write_conf a $A_ADDR "
tunnel_profiles = ( { name = \"default\"; hello_interval = 1; retransmit_initial = 0.2;
                      retransmit_cap = 0.4; max_retries = 2; } );
tunnels = ( { name = \"to-b1\"; peer = \"192.0.2.2\"; sessions = ( ${sessions%,} ); },
            { name = \"to-b2\"; peer = \"192.0.2.3\"; } );"
	sed -i 's/log_level = "debug";/log_level = "info"; max_sessions = 200000;/' "$W/a.conf"
}
for b in b1 b2; do
	addr=$B_ADDR; [ $b = b2 ] && addr=$B2_ADDR
	write_conf $b $addr 'peer_default = { accept = true; };'
	sed -i 's/log_level = "debug";/log_level = "info"; max_sessions = 200000;/' "$W/$b.conf"
done
up_on() {	# up_on DAEMON N: N sessions established
	[ "$(count_sessions "$1" established)" = "$2" ]
}

run() {	# run NAME BACKUP
	local t0
	lac_conf "$2"
	start b1 "$NSB" && start b2 "$NSB" && start a "$NSA" || exit 1
	wait_until 120 up_on b1 "$N" || { echo "$1: not all up on b1"; exit 1; }
	t0=$(ms)
	kill -KILL "$(pid_of b1)"
	if [ "$2" = 1 ]; then
		wait_until 300 up_on b2 "$N" || { echo "$1: not all up on b2"; exit 1; }
	else
		start b1 "$NSB" && wait_until 300 up_on b1 "$N" || { echo "$1: not all back"; exit 1; }
	fi
	printf '%-8s %6d pseudowires back in %6d ms\n' "$1:" "$N" $(( $(ms) - t0 ))
	kill_pidfiles KILL "$W"/*.pid
	rm -f "$W"/*.ctl
}
run backup 1
run rebuild 0
