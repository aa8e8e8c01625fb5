#!/usr/bin/env bash
# A live peer slow to answer is not judged restarted.  A new connection
# from a peer silent on its older ones makes B probe a sample of them with
# a HELLO; the verdict waits for the sample's first timeout and one
# retransmission, and never less than 3 s, whatever the timer: with a
# 0.2 s timer it came after 0.6 s, and a live peer busy for longer (a
# loaded machine) had its older connections cut and cleared.  Here A's
# answers to the sample are lost twice each: the third copy goes out at
# 0.6 s (0.2 + 0.4), when the verdict used to come, and its answer gets
# through: B hears A before the verdict, says it did not restart, and both
# older tunnels stay up.  (10 retries: a HELLO is given up after 4.2 s, not
# before the verdict.)
. "$(dirname "$0")/lib.sh"
it_setup
PROFILE='tunnel_profiles = ( { name = "default"; hello_interval = 60; retransmit_initial = 0.2;
                               retransmit_cap = 0.4; max_retries = 10; } );
peer_default = { accept = true; };'
write_conf b $B_ADDR "$PROFILE"
write_conf a $A_ADDR "$PROFILE"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (retransmission timer 0.2 s, capped at 0.4 s)"

ctl a tunnel create peer $B_ADDR name old1 >/dev/null && ctl a tunnel create peer $B_ADDR name old2 >/dev/null &&
	wait_until 20 expect_count 2 count_tunnels b established
log_test $? "two idle tunnels up"

# A's answers on the two older connections, from their ports: the first 2 of each lost
ports=$(ctlj a tunnel list | jq -r '[.tunnels[].local | capture(":(?<p>[0-9]+)$").p] | join(", ")')
nft_drop_first "$NSA" zlbdrop output 2 "ip daddr $B_ADDR udp sport { $ports }"
log_test $? "A's first 2 answers on each older connection (ports $ports) are dropped"

out=$(ctlj a tunnel create peer $B_ADDR name new) && [ "$(jq -r .state <<<"$out")" = established ]
log_test $? "a new tunnel from A comes up: B samples the older, silent ones"
wait_until 20 at_least 4 nft_dropped "$NSA" zlbdrop
log_test $? "A's answers to the sample were lost twice each ($(nft_dropped "$NSA" zlbdrop) dropped)"
# the verdict: A was heard on an older connection since the sample
wait_until 20 grep -q "new connection .*: it answered on an older connection since the sample, it did not restart" "$W/b.log"
log_test $? "B's verdict: A answered, it did not restart"
! grep -q "it restarted?" "$W/b.log"
log_test $? "no older connection of A's was cut as a restarted peer's"
expect_count 3 count_tunnels b established && expect_count 3 count_tunnels a established
log_test $? "all three tunnels up on both sides"
it_done
