#!/usr/bin/env bash
# Lost netlink answers: A's netlink receive buffer is shrunk to a few ACKs
# (L2TPV3D_NL_RCVBUF, a test knob), so a storm of creates overruns it
# (ENOBUFS).  The daemon must settle every request anyway - re-checking
# creates with a GET, repeating deletes - and end with exactly the kernel
# objects it reports, up and down.
. "$(dirname "$0")/lib.sh"
kt_setup
N=${KT_OVERRUN_N:-200}

KT_GLOBAL="max_half_open = $((N + 100));"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
write_conf b $B_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && L2TPV3D_NL_RCVBUF=2048 start a "$NSA"
log_test $? "both daemons start, A with a 2 KiB netlink receive buffer"

for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/up.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$i"; done >> "$W/up.batch"
ctl a -j -b "$W/up.batch" > "$W/up.out"
[ "$(jq -s '[.[] | select(.status == 0)] | length' "$W/up.out")" = $((2 * N)) ]
log_test $? "$N tunnels and $N sessions created through the overrun"
grep -q "receive buffer overrun" "$W/a.log"
log_test $? "A saw the overrun (ENOBUFS) and re-checked: $(grep -c 'receive buffer overrun' "$W/a.log") times"
expect_count "$N" k_tunnels "$NSA" && expect_count "$N" k_sessions "$NSA" &&
	[ "$(d_tunnel_ids a)" = "$(k_tunnel_ids "$NSA")" ] && [ "$(d_session_ids a)" = "$(k_session_ids "$NSA")" ]
log_test $? "A's kernel holds exactly the $N tunnels and sessions A reports"

ctlj a tunnel list | jq -r '.tunnels[].tunnel_id | "tunnel delete \(.)"' > "$W/down.batch"
ctl a -b "$W/down.batch" > /dev/null
wait_until 120 expect_count 0 k_tunnels "$NSA" && wait_until 120 expect_count 0 k_sessions "$NSA" &&
	wait_until 60 expect_count 0 count_tunnels a
log_test $? "all deleted: nothing left in A's kernel"
stop a TERM && [ -z "$(state_file a)" ]
log_test $? "A exits cleanly; every delete confirmed (state file removed)"

kt_done
