#!/usr/bin/env bash
# What the LNS ("b") says about malformed and stale messages from a scripted
# peer (peer.py): each line must say what happened.
#  - a HELLO whose last AVP header is cut short (length 4, and 2 octets left):
#    acknowledged and answered with StopCCN 2/2 naming "AVP header", not
#    "AVP 0" (the Message Type AVP, which is fine), and logged as answered,
#    not as a dropped message;
#  - the session of the connection that StopCCN closes: "tunnel ... closed,
#    no CDN", not "CDN result 2" (no CDN was sent or received);
#  - the peer's CDN answering ours (freeRtr echoes it) for a session already
#    cleared: acknowledged, no "unknown session" warning.
#
#   +------ ns A -------------+          +------ ns B --------+
#   | peer.py 192.0.2.1:1701  |--veth----| l2tpv3d "b"        |
#   +-------------------------+          +--------------------+
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
it_setup

write_conf b $B_ADDR 'peer_default = { accept = true; };'
start b "$NSB" || exit 1
peer_start $A_ADDR
up() { P connect && P acked && wait_until 3 expect_count 1 count_tunnels b established; }
sess_up() { P icrq && [ "$(J .reply.type)" = ICRP ] && LSID=$(J .session.lsid) && P acked; }

# --- an AVP header cut short ------------------------------------------------
up && sess_up
log_test $? "a connection and a session up"
for tail in 80040000000a 8000; do	# too short (length 4); overrun (2 octets)
	P send HELLO tail=$tail && P wait StopCCN timeout=3 &&
		[ "$(J .msg.result)" = 2 ] && [ "$(J .msg.error)" = 2 ] &&
		text=$(J .msg.text) && [[ $text == *"(AVP header)"* ]] && [[ $text != *"AVP 0"* ]]
	log_test $? "HELLO with tail $tail: StopCCN 2/2 \"$text\""
	wait_until 5 expect_count 0 count_tunnels b established
	up || break
	[ $tail = 8000 ] || sess_up
done
grep -q "malformed HELLO: avp-too-short (AVP header): acknowledged, answered with StopCCN" "$W/b.log" &&
	grep -q "malformed HELLO: avp-overrun (AVP header): acknowledged, answered with StopCCN" "$W/b.log" &&
	! grep -q "dropped message from .*avp-" "$W/b.log"
log_test $? "logged as acknowledged and answered, not as dropped messages"
grep -q "session .*: down: tunnel .* closed, no CDN" "$W/b.log" && ! grep -q "CDN result 2 .*control connection down" "$W/b.log"
log_test $? "the session of a tunnel closed by StopCCN: \"tunnel ... closed, no CDN\""

# --- the peer's CDN echo --------------------------------------------------------
sess_up && P set cdn_echo=1 && SID=$(ctlj b session list | jq --argjson l "$LSID" \
	'[.sessions[] | select(.peer_session_id == $l)][0].session_id') &&
	ctl b session delete "$SID" >/dev/null && P wait CDN lsid="$LSID" && P acked &&
	wait_until 3 expect_count 0 count_sessions b
log_test $? "session delete: CDN sent, the peer answers with a CDN of its own, acknowledged"
# the HELLO's acknowledgement comes after B handled the echo: then its log is complete
P set cdn_echo=0 && P send HELLO && P acked && grep -q "session $SID" "$W/b.log" &&
	! grep -q "unknown-session\|unknown session" "$W/b.log"
log_test $? "the echo for a session already cleared: no warning, the tunnel goes on"
peer_stop
it_done
