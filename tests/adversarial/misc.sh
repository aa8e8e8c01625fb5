#!/usr/bin/env bash
# Finding 10, the rest: a datagram longer than any control message was
# parsed truncated; a zero-length Nonce was accepted; drops that belong to no
# tunnel were logged as "0dropped message ...".
. "$(dirname "$0")/lib.sh"
adv_setup
ADV_PROFILE='digest = "md5"; secret = "s3cret";'
adv_conf_b 'peer_default = { accept = true; };'
adv_start
adv_victim

adv_forge big --dst $B_ADDR --size 5000 >/dev/null
sleep 0.2
alive b && [ "$(ctlj b stats | jq '.global.drops["too-long"] // 0')" = 1 ]
log_test $? "a 5,000-octet datagram is counted as too-long, not parsed cut short"

# an authenticated peer's SCCRQ, correctly signed: accepted (the forger signs right) ...
adv_forge sccrq --dst $B_ADDR --src 192.0.2.50 --nonce 16 --secret s3cret >/dev/null
wait_until 3 sh -c "[ \$($C -s $W/b.ctl -j tunnel list | jq '[.tunnels[] | select(.state == \"wait-ctl-conn\")] | length') = 1 ]"
log_test $? "a signed SCCRQ with a 16-octet nonce is accepted"
# ... and the same with an empty nonce: refused, nothing made
n0=$(count_tunnels b)
adv_forge sccrq --dst $B_ADDR --src 192.0.2.51 --nonce 0 --secret s3cret >/dev/null
sleep 0.3
[ "$(count_tunnels b)" = "$n0" ] && grep -q "SCCRQ from 192.0.2.51 refused: .*nonce of 0 octets" "$W/b.log"
log_test $? "a signed SCCRQ with a zero-length nonce is refused"

adv_forge ccid0-zlb --dst $B_ADDR >/dev/null
adv_forge stopccn --dst $B_ADDR --ccid 12345 --sports 40000 --ns 0 --nr 0 >/dev/null
sleep 0.2
! grep -q "0dropped" "$W/b.log" && grep -q "dropped message from $A_ADDR: unknown-ccid" "$W/b.log"
log_test $? "drops of no tunnel are logged without a stray '0' (and a zero-CCID ZLB only counted)"
adv_victim_ok
log_test $? "the victim tunnel is established and passing HELLOs"
it_done
