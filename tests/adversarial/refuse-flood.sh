#!/usr/bin/env bash
# Refused SCCRQs (accept = false, max_tunnels reached) allocate nothing and
# are answered by at most one StopCCN each, at most 50 a second in all (+ a
# burst of 50), so 10,000 forged SCCRQs reflect almost nothing.
. "$(dirname "$0")/lib.sh"
adv_setup

adv_conf_b 'peers = ( { name = "lac"; match = "192.0.2.1/32"; accept = true; } );
peer_default = { accept = false; };'
adv_start
adv_victim

r0=$(replies_to_others) rb0=$(rcvbuf_errors)
t0=$(date +%s%N)
adv_forge_seen 10000 sccrq --dst $B_ADDR --src-net 192.0.2.0/24 --exclude $A_ADDR --count 10000 --rate 5000
secs=$(( ($(date +%s%N) - t0) / 1000000000 + 1 ))
n=$(( $(replies_to_others) - r0 ))
alive b
log_test $? "b alive after 10,000 SCCRQs from forged sources (accept = false)"
[ "$(count_tunnels b)" = "$BASE_TUNNELS" ] && [ "$(nfds b)" -le "$BASE_FDS" ]
log_test $? "nothing allocated: $(count_tunnels b) tunnels, $(nfds b) fds (baseline $BASE_TUNNELS/$BASE_FDS)"
[ "$n" -le $(( 50 * secs + 50 )) ] && [ "$n" -ge 1 ]
log_test $? "replies bounded by the refusal rate: $n StopCCNs in ${secs} s for 10,000 SCCRQs"
wait_until 10 drops_reach peer-refused 10000 "$rb0"
log_test $? "every refusal counted (peer-refused $(drops peer-refused), and $(( $(rcvbuf_errors) - rb0 )) dropped by a full socket buffer)"

# max_tunnels reached: the LAC itself is refused with one StopCCN, no state
sed -i 's|ctl_socket|max_tunnels = 1; ctl_socket|' "$W/b.conf"
ctl b reload >/dev/null
out=$(ctlj a tunnel create peer $B_ADDR name second 2>&1)
grep -q "max_tunnels reached" <<<"$out" && [ "$(count_tunnels b)" = "$BASE_TUNNELS" ]
log_test $? "over max_tunnels the LAC hears why at once: $(head -1 <<<"$out")"
adv_victim_ok
log_test $? "the victim tunnel is established and passing HELLOs"
it_done
