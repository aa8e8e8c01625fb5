#!/usr/bin/env bash
# 200 tunnels with 2 sessions each, created through one batch connection,
# all established on both sides; then all deleted.
. "$(dirname "$0")/lib.sh"
it_setup
N=${IT_SCALE_TUNNELS:-200}

write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/tunnels.batch"
ctl a -j -b "$W/tunnels.batch" > "$W/tunnels.out"
rc=$?
[ $rc = 0 ] && [ "$(jq -s '[.[] | select(.status == 0)] | length' "$W/tunnels.out")" = "$N" ]
log_test $? "$N tunnel creates in one batch all succeed"

for i in $(seq 1 "$N"); do
	echo "session create tunnel name t$i name t$i-a"
	echo "session create tunnel name t$i name t$i-b"
done > "$W/sessions.batch"
ctl a -j -b "$W/sessions.batch" > "$W/sessions.out"
rc=$?
[ $rc = 0 ] && [ "$(jq -s '[.[] | select(.status == 0)] | length' "$W/sessions.out")" = $((2 * N)) ]
log_test $? "$((2 * N)) session creates succeed"

expect_count "$N" count_tunnels a established && expect_count "$N" count_tunnels b established
log_test $? "$N tunnels established on both sides"
expect_count $((2 * N)) count_sessions a established &&
	wait_until 30 expect_count $((2 * N)) count_sessions b established
log_test $? "$((2 * N)) sessions established on both sides"
d=$(ctlj b show daemon)
[ "$(jq .tunnels_established <<<"$d")" = "$N" ] && [ "$(jq .sessions_established <<<"$d")" = $((2 * N)) ]
log_test $? "show daemon counts match"

ctlj a tunnel list | jq -r '.tunnels[].tunnel_id | "tunnel delete \(.)"' > "$W/delete.batch"
ctl a -b "$W/delete.batch" >/dev/null
wait_until 20 expect_count 0 count_tunnels a && wait_until 20 expect_count 0 count_tunnels b established
log_test $? "all tunnels deleted on A (StopCCN acknowledged), none up on B"
expect_count 0 count_sessions b
log_test $? "no session left"

it_done
