#!/usr/bin/env bash
# Forged SCCRQs cannot keep every half-open slot busy: an SCCRP is retried
# 4 times (5 in all), a half-open connection ends by its deadline, and when
# the table is full the peers' oldest half-open connection makes room, so a
# real LAC still gets in; their failures are a few log lines and a count.
. "$(dirname "$0")/lib.sh"
adv_setup

adv_conf_b 'peer_default = { accept = true; };'
sed -i 's|ctl_socket|max_half_open = 50; ctl_socket|' "$W/b.conf"
adv_start
adv_victim

r0=$(replies_to_others)
adv_forge sccrq --dst $B_ADDR --src-net 192.0.2.0/24 --exclude $A_ADDR --count 1500 --rate 300 >/dev/null &
fp=$!
sleep 1
max=0
for i in 1 2 3; do
	n=$(count_tunnels b); [ "$n" -gt "$max" ] && max=$n
	sleep 0.3
done
out=$(ctlj a tunnel create peer $B_ADDR name during)
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "during a flood of 300 forged SCCRQs/s, a real LAC gets its tunnel"
[ "$max" -le $((50 + BASE_TUNNELS)) ]
log_test $? "half-open connections never exceed max_half_open (at most $max tunnels seen)"
wait $fp
alive b
log_test $? "b alive after 1,500 forged SCCRQs"
n=$(( $(replies_to_others) - r0 ))
[ "$n" -le $((1500 * 5)) ]
log_test $? "at most 5 SCCRPs per forged SCCRQ ($n datagrams for 1,500)"
[ "$(ctlj b stats | jq '.global.half_open_evicted // 0')" -gt 0 ] 2>/dev/null ||
	[ "$(grep -c 'max_half_open (50) reached' "$W/b.log")" -gt 0 ]
log_test $? "evictions counted and logged"
BASE_TUNNELS=$((BASE_TUNNELS + 1)) BASE_FDS=$((BASE_FDS + 1))
adv_baseline_ok 35
log_test $? "every forged half-open connection ends by its deadline: $(count_tunnels b) tunnels, $(nfds b) fds"
# each forged connection failed, but the log has a few lines per 10 s and a
# count, not a line each (the flood lasted 5 s: one window, two at most)
failed=$(( $(ctlj b stats | jq '.global.half_open_evicted // 0') ))
lines=$(grep -c "half-open connection from .* failed" "$W/b.log")
[ "$failed" -ge 1000 ] && [ "$lines" -ge 1 ] && [ "$lines" -le 10 ]
log_test $? "$failed forged connections failed: $lines log lines for them"
adv_victim_ok
log_test $? "the victim tunnel is established and passing HELLOs"
it_done
