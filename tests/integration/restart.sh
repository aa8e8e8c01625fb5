#!/usr/bin/env bash
# A restarted peer leaves no duplicates (issue 17, item 4): the LAC is
# SIGKILLed with 20 tunnels up and restarted; its first new tunnel makes the
# LNS probe a sample of the old, silent connections (a HELLO with one
# retransmission), then, unanswered, all of them, and they are cleared
# within 5 s, not after minutes of HELLO retransmissions (hello 60 s).  A
# live peer answers the sample and nothing more is probed.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (hello 60 s)"
for i in $(seq 1 20); do echo "tunnel create peer $B_ADDR"; done > "$W/c.batch"
ctl a -b "$W/c.batch" >/dev/null
expect_count 20 count_tunnels b established
log_test $? "20 tunnels up"

sleep 4.5	# past the sweeps of the bring-up (one per PROBE_EVERY_S)
hb=$(ctlj b stats | jq '.global.msgs_out.HELLO // 0') ha=$(ctlj a stats | jq '.global.msgs_out.HELLO // 0')
[ "$hb" -le 4 ] && [ "$ha" -le 4 ]
log_test $? "a bring-up of 20 tunnels probes at most a sample (HELLOs: LNS $hb, LAC $ha)"
kill -9 "$(pid_of a)"
wait_until 5 sh -c "! kill -0 $(pid_of a) 2>/dev/null"
start a "$NSA"
ctl a tunnel create peer $B_ADDR >/dev/null
t0=$(date +%s%N)
wait_until 5 expect_count 1 count_tunnels b established
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc = 0 ] && grep -q "new connection .*, and its older connections are silent: it restarted? probing 16 more" "$W/b.log"
log_test $? "LAC restarted: its 20 dead connections cleared $ms ms after its new one came up"
expect_count 0 count_sessions b && [ "$(count_tunnels a established)" = 1 ]
log_test $? "nothing of the old ones left established"

sleep 2.5	# the next probe of this peer, its one connection silent by now
ctl a tunnel create peer $B_ADDR >/dev/null
sleep 4
expect_count 2 count_tunnels b established && expect_count 2 count_tunnels a established &&
	[ "$(grep -c "restarted? probing" "$W/b.log")" = 1 ]
log_test $? "a live peer's silent connection answers the sampled probe and stays; no sweep"
it_done
