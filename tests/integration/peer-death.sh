#!/usr/bin/env bash
# The peer daemon is killed (SIGKILL): the survivor notices through HELLO
# and cleans up within the configured timeout; the peer restarts and new
# tunnels come up.
. "$(dirname "$0")/lib.sh"
it_setup

# hello every 1 s, retransmit 1 s doubling to 2 s, 3 retries: dead in ~8 s
# (HELLO at 1 s, retransmissions at +1, +3, +5, given up at +7), against
# minutes with the defaults.  Not shorter: a live peer on a loaded machine
# must answer within a timer (the restart probe's verdict comes after the
# first one and its retransmission, 3 s here; 0.6 s at 0.2 s misjudged a
# live peer busy beside three test runs).
PROFILE='tunnel_profiles = ( { name = "default"; hello_interval = 1; retransmit_initial = 1;
                               retransmit_cap = 2; max_retries = 3; } );
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

hellos() { echo $(( $(ctlj a stats | jq '.global.msgs_out.HELLO // 0') + $(ctlj b stats | jq '.global.msgs_out.HELLO // 0') )); }
# nine rounds of HELLOs on each of the 3 idle tunnels (one a second each):
# longer than the ~8 s in which unanswered ones would end a tunnel
wait_until 60 at_least 27 hellos
log_test $? "HELLOs are sent while idle ($(hellos))"
expect_count 3 count_tunnels a established && expect_count 3 count_tunnels b established
log_test $? "idle tunnels stay up (HELLOs answered)"

kill -9 "$(pid_of b)"
t0=$(date +%s%N)
# the deadline: the profile's ~8 s and a loaded machine's slack, far short
# of the defaults' minutes (a profile not applied would miss it)
DEAD_S=25
wait_until $DEAD_S expect_count 0 count_tunnels a
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log_test $rc "peer SIGKILLed: A detects it through HELLO and removes its tunnels (${ms} ms, deadline $DEAD_S s)"
expect_count 0 count_sessions a
log_test $? "the session went with its tunnel"

start b "$NSB"
log_test $? "peer restarted"
# (its own answer: the static tunnel may be back already beside it)
out=$(ctlj a tunnel create peer $B_ADDR) && [ "$(jq -r .state <<<"$out")" = established ]
log_test $? "a new tunnel comes up with the restarted peer"
wait_until 20 expect_count 2 count_tunnels b established &&
	[ "$(ctlj a tunnel show name st | jq -r .state)" = established ]
log_test $? "the static tunnel came back by itself (retry with backoff)"

it_done
