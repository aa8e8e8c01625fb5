#!/usr/bin/env bash
# Log lines an operator can alert on: an outage is a warning, what is planned
# is info, and one misconfigured peer is one warning a minute.
#   - the LNS killed: the LAC's static tunnel "down" is a warning (result 7,
#     no answer), and so is its retry once a retry failed; the LNS stopped
#     (StopCCN result 6, shutting down): the same "down" line at info;
#   - a static session the LNS refuses: "failed" is a warning, and so is
#     its retry once a retry was refused too;
#   - a LAC with the wrong secret: its SCCRQ and every retransmission are
#     dropped, one warning with the hint, the drops all counted.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR '
peers = ( { name = "lacs"; match = "192.0.2.1/32"; accept = true; refuse_unknown_sessions = true;
            sessions = ( { remote_end_id = "ok"; } ); } );'
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 1; retransmit_initial = 0.2;
                      retransmit_cap = 0.4; max_retries = 2; } );
tunnels = ( { name = "st"; peer = "192.0.2.2";
              sessions = ( { name = "ok"; }, { name = "nope"; } ); } );'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
up() {	# up [NOT_TUNNEL_ID]: st established (not as that tunnel), ok up on it
	local t
	t=$(ctlj a tunnel show name st 2>/dev/null | jq -r 'select(.state == "established") | .tunnel_id')
	[ -n "$t" ] && [ "$t" != "${1:-}" ] &&
		ctlj a session show name ok 2>/dev/null | jq -e --argjson t "$t" \
			'.state == "established" and .tunnel_id == $t' >/dev/null
}
wait_until 20 up
log_test $? "static tunnel st and session ok up"

wait_until 20 grep -q "warning: session nope ([0-9]*): failed: tunnel st ([0-9]*), CDN result" "$W/a.log" &&
	wait_until 30 grep -q "warning: static session nope (tunnel st): down, retrying in" "$W/a.log"
log_test $? "a static session the LNS refuses: 'failed' is a warning, and so is the retry once one failed"

T0=$(ctlj a tunnel show name st | jq -r .tunnel_id)
kill -KILL "$(pid_of b)"
wait_until 20 grep -q "warning: tunnel st ([0-9]*): down: peer 192.0.2.2, result" "$W/a.log" &&
	wait_until 30 grep -q "warning: static tunnel st: down, retrying in" "$W/a.log"
log_test $? "the LNS killed: the tunnel's 'down' is a warning, and so is the retry once one failed"

start b "$NSB" && wait_until 60 up "$T0"
log_test $? "the LNS back: st and ok up again"
n=$(grep -c "tunnel st ([0-9]*): down" "$W/a.log")
kill -TERM "$(pid_of b)"
more_downs() { [ "$(grep -c "tunnel st ([0-9]*): down" "$W/a.log")" -gt "$n" ]; }
wait_until 30 more_downs &&
	grep "tunnel st ([0-9]*): down" "$W/a.log" | tail -1 | grep -q "info: .*result 6 (requester shutting down)"
log_test $? "the LNS stopped (StopCCN result 6): the same 'down' line is info"

# --- a LAC with the wrong secret ---------------------------------------------------
write_conf b $B_ADDR '
tunnel_profiles = ( { name = "default"; digest = "md5"; secret = "right"; } );
peer_default = { accept = true; };'
start b "$NSB" || exit 1
ip netns exec "$NSA" "$C" -s "$W/a.ctl" -t 15 tunnel create peer $B_ADDR digest md5 secret wrong \
	>/dev/null 2>&1
drops() { ctlj b stats | jq '[.. | objects | .["digest-mismatch"]? // empty] | max // 0'; }
[ "$(drops)" -ge 3 ] &&
	[ "$(grep -c "warning: peers entry default: dropped message from 192.0.2.1: digest-mismatch: check that both ends have the same secret and digest" "$W/b.log")" = 1 ]
log_test $? "wrong secret: $(drops) SCCRQs dropped, one warning with the hint"

it_done
