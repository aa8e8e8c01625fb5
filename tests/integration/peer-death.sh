#!/usr/bin/env bash
# The peer daemon is killed (SIGKILL): the survivor notices through HELLO
# and cleans up within the configured timeout; the peer restarts and new
# tunnels come up.
. "$(dirname "$0")/lib.sh"
it_setup

# hello every 1 s, retransmit 0.2 s doubling to 0.4 s, 3 retries: dead in ~2.5 s
PROFILE='tunnel_profiles = ( { name = "default"; hello_interval = 1; retransmit_initial = 0.2;
                               retransmit_cap = 0.4; max_retries = 3; } );
peer_default = { accept = true; };'
write_conf b $B_ADDR "$PROFILE"
# A also has a static tunnel: it must come back by itself after the peer does
write_conf a $A_ADDR "$PROFILE
tunnels = ( { name = \"st\"; peer = \"$B_ADDR\"; } );"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
wait_until 5 expect_count 1 count_tunnels b established
log_test $? "static tunnel st up"

for i in 1 2; do ctl a tunnel create peer $B_ADDR >/dev/null || break; done
T=$(ctlj a tunnel list | jq -r '[.tunnels[] | select(.name == "")][0].tunnel_id')
ctl a session create tunnel "$T" >/dev/null
wait_until 20 expect_count 3 count_tunnels b established &&
	wait_until 20 expect_count 1 count_sessions b established
log_test $? "3 tunnels and a session up"

sleep 2.5
expect_count 3 count_tunnels a established && expect_count 3 count_tunnels b established
log_test $? "idle tunnels stay up (HELLOs answered)"
hello=$(( $(ctlj a stats | jq '.global.msgs_out.HELLO // 0') + $(ctlj b stats | jq '.global.msgs_out.HELLO // 0') ))
[ "$hello" -ge 3 ]
log_test $? "HELLOs were sent while idle ($hello)"

kill -9 "$(pid_of b)"
t0=$(date +%s%N)
wait_until 15 expect_count 0 count_tunnels a
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log_test $rc "peer SIGKILLed: A detects it through HELLO and removes its tunnels (${ms} ms)"
[ $rc = 0 ] && [ "$ms" -lt 10000 ]
log_test $? "detection within the configured timeout (< 10 s)"
expect_count 0 count_sessions a
log_test $? "the session went with its tunnel"

start b "$NSB"
log_test $? "peer restarted"
ctl a tunnel create peer $B_ADDR >/dev/null && expect_count 1 count_tunnels a established
log_test $? "a new tunnel comes up with the restarted peer"
wait_until 20 expect_count 2 count_tunnels b established &&
	[ "$(ctlj a tunnel show name st | jq -r .state)" = established ]
log_test $? "the static tunnel came back by itself (retry with backoff)"

it_done
