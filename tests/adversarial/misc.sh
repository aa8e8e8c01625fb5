#!/usr/bin/env bash
# A datagram longer than any control message is counted as too-long, not
# parsed truncated; a zero-length Nonce is refused; drops that belong to no
# tunnel are logged without a stray "0".
. "$(dirname "$0")/lib.sh"
adv_setup
ADV_PROFILE='digest = "md5"; secret = "s3cret";'
adv_conf_b 'peer_default = { accept = true; };'
adv_start
adv_victim

# (adv_forge_seen counts every datagram b reads, the victim tunnel's HELLOs
# and ZLBs too: what a check counts exactly is waited for itself)
adv_forge_seen 1 big --dst $B_ADDR --size 5000
alive b && wait_until 10 expect_count 1 drops too-long
log_test $? "a 5,000-octet datagram is counted as too-long, not parsed cut short"

# an authenticated peer's SCCRQ, correctly signed: accepted (the forger signs right) ...
adv_forge sccrq --dst $B_ADDR --src 192.0.2.50 --nonce 16 --secret s3cret >/dev/null
wait_until 3 sh -c "[ \$($C -s $W/b.ctl -j tunnel list | jq '[.tunnels[] | select(.state == \"wait-ctl-conn\")] | length') = 1 ]"
log_test $? "a signed SCCRQ with a 16-octet nonce is accepted"
# ... and the same with an empty nonce: refused, nothing made
n0=$(count_tunnels b)
adv_forge_seen 1 sccrq --dst $B_ADDR --src 192.0.2.51 --nonce 0 --secret s3cret
wait_until 10 grep -q "SCCRQ from 192.0.2.51 refused: .*nonce of 0 octets" "$W/b.log" && [ "$(count_tunnels b)" = "$n0" ]
log_test $? "a signed SCCRQ with a zero-length nonce is refused"

adv_forge_seen 1 ccid0-zlb --dst $B_ADDR
adv_forge_seen 1 stopccn --dst $B_ADDR --ccid 12345 --sports 40000 --ns 0 --nr 0
wait_until 10 grep -q "dropped message from $A_ADDR: unknown-ccid" "$W/b.log" && ! grep -q "0dropped" "$W/b.log"
log_test $? "drops of no tunnel are logged without a stray '0' (and a zero-CCID ZLB only counted)"
# data frames on a tunnel's socket: for a session that came
# up moments ago (its kernel session not there yet) they are routine, counted
# at debug; for a session no one knows, a warning
vt=$(ctlj a tunnel list | jq -r '[.tunnels[] | select(.state == "established")][0].tunnel_id')
ctl a session create tunnel "$vt" >/dev/null
bt=$(ctlj b tunnel list | jq -c --arg a "$A_ADDR:" \
	'[.tunnels[] | select(.state == "established" and (.peer | startswith($a)))][0]')
bl=$(jq -r .local <<<"$bt") bp=$(jq -r .peer <<<"$bt")
bsid=$(ctlj b session list | jq -r '.sessions[0].session_id')
# A's create returns once A sent its ICCN: b's session is up (what the
# check below is about, and its log line) when b has read it
wait_until 20 expect_count 1 count_sessions b established
notctl() { ctlj b stats | jq '.global.drops["not-control"] // 0'; }
n0=$(notctl)
adv_forge_seen 5 data --src "${bp%:*}" --sport "${bp##*:}" --dst "${bl%:*}" --dport "${bl##*:}" \
	--session "$bsid" --count 5
not_control_5() { [ $(($(notctl) - n0)) = 5 ]; }
wait_until 10 not_control_5 && grep -q "session $bsid: up" "$W/b.log" && ! grep -q "warning: .*not-control" "$W/b.log"
log_test $? "5 data frames for a session just up ($bsid): counted, no warning"
adv_forge_seen 1 data --src "${bp%:*}" --sport "${bp##*:}" --dst "${bl%:*}" --dport "${bl##*:}" \
	--session 12345
wait_until 10 grep -q "warning: tunnel [^ ]* ([0-9]*): dropped message from .*: not-control" "$W/b.log"
log_test $? "a data frame for an unknown session: a warning"

adv_victim_ok
log_test $? "the victim tunnel is established and passing HELLOs"
it_done
