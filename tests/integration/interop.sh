#!/usr/bin/env bash
# Interoperability: the LNS ("b", ns B) against a scripted peer (peer.py, ns A)
# that behaves the way deployed implementations do (doc INTEROP notes):
# v2-era AVPs with M=1 in SCCRQ, an ICRQ without Serial Number, CableLabs
# vendor AVPs with M=1 (refused per RFC 3931 5.2, connection kept), a CDN
# answered with a CDN, a peer that vanishes, a simultaneous open from port
# 1701, a burst of 30 lost messages with a window of 1024; then every message
# type malformed once.  Each case asserts on the wire (what the peer got:
# acknowledgement, CDN/StopCCN with result and error codes) and in the daemon
# (l2tpv3ctl -j) that the connection is cleared or goes on, never wedged: a
# well-formed message afterwards is acknowledged and processed.
#
#   +------ ns A --------------+          +------ ns B --------+
#   | peer.py 192.0.2.1:1701   |--veth----| l2tpv3d "b"        |
#   |         192.0.2.3:1701   |          | 192.0.2.2:1701     |
#   +--------------------------+          +--------------------+
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
it_setup
BURST_ADDR=192.0.2.3
ip -n "$NSA" addr add $BURST_ADDR/24 dev veth0

# Short timers: a silent peer is cleared in about 8 s (HELLO after 1 s,
# retransmitted at +1, +3, +5 s); not shorter, for the scripted peer, driven
# from the shell, must answer the daemon's SCCRQ on a loaded machine before
# the daemon gives it up (0.2 s doubling to 0.4 s gave it 1.4 s, which three
# checks at once exceeded).  The burst peer gets
# the default retransmission timers (1 s doubling to 8 s, 10 retries), as
# deployed: with them, recovering 30 lost messages one timeout at a time
# would take minutes.
write_conf b $B_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 1; retransmit_initial = 1;
                      retransmit_cap = 2; max_retries = 3; },
                    { name = "burst"; hello_interval = 60; } );
peers = ( { name = "burst"; match = "'$BURST_ADDR'"; tunnel_profile = "burst"; } );
peer_default = { accept = true; };'
start b "$NSB" || exit 1

# got TYPE RESULT ERROR [timeout]: the peer receives TYPE with these codes
got() {
	P wait "$1" ${4:+timeout=$4} || return 1
	[ "$(J .msg.result)" = "$2" ] && [ "$(J .msg.error)" = "$3" ]
}
# alive: a HELLO is acknowledged and the tunnel is still established (not wedged)
alive() { P send HELLO && P acked && tunnel_state_is established; }
tunnel_state_is() {
	[ "$(ctlj b tunnel list | jq -r --argjson c "$PEER_CCID" \
		'[.tunnels[] | select(.peer_tunnel_id == $c)][0].state')" = "$1" ]
}
tunnel_gone() {
	[ "$(ctlj b tunnel list | jq --argjson c "$PEER_CCID" \
		'[.tunnels[] | select(.peer_tunnel_id == $c)] | length')" = 0 ]
}
# bye: the peer closes its connection (StopCCN, acknowledged)
bye() { P send StopCCN && P acked; }
TID=
# up [connect args]: a new control connection; $TID is the daemon's tunnel id
up() {
	P connect "$@" && [ "$(J .reply.type)" = SCCRP ] || return 1
	PEER_CCID=$(J .ccid)
	P acked && wait_until 10 tunnel_state_is established || return 1
	TID=$(ctlj b tunnel list | jq -r --argjson c "$PEER_CCID" \
		'[.tunnels[] | select(.peer_tunnel_id == $c)][0].tunnel_id')
}
sessions_in() {	# sessions_in [STATE]: sessions of tunnel $TID (in STATE)
	ctlj b session list | jq --argjson t "$TID" --arg s "${1:-}" \
		'[.sessions[] | select(.tunnel_id == $t and ($s == "" or .state == $s))] | length'
}
# sess_up: a well-formed ICRQ is answered, the session comes up; $LSID, $RSID
sess_up() {
	P icrq "$@" && [ "$(J .reply.type)" = ICRP ] || return 1
	LSID=$(J .session.lsid) RSID=$(J .session.rsid)
	P acked
}
# daemon_icrq: the daemon opens a session (the peer must answer); $RSID its id
daemon_icrq() {
	P set auto_icrp=0 && ctl b session create tunnel "$TID" no-wait >/dev/null &&
		P wait ICRQ || return 1
	RSID=$(J .msg.lsid) LSID=$RANDOM$RANDOM
}

peer_start $A_ADDR
log_test $? "scripted peer started"

# ---- how deployed peers behave ---------------------------------------------

# Cisco IOS: Protocol Version, Framing/Bearer Capabilities, Firmware Revision
# with M=1 in its SCCRQ: ignored, the connection comes up
up v2=1 rws=1024
log_test $? "SCCRQ with L2TPv2-era AVPs (M=1): accepted, established"
alive
log_test $? "  HELLO acknowledged, tunnel established"

# open-source LACs: no Serial Number in ICRQ
sess_up serial=0 && [ "$(sessions_in established)" = 1 ]
log_test $? "ICRQ without Serial Number: ICRP, session established"

# CableLabs DEPI AVP (vendor 4491) with M=1: refused per 5.2, tunnel kept
P icrq extra=4491:1:1:0001 && [ "$(J .reply.type)" = CDN ] &&
	[ "$(J .reply.result)/$(J .reply.error)" = 2/8 ] && P acked
log_test $? "ICRQ with vendor 4491 AVP M=1: CDN result 2 error 8"
alive && sess_up && [ "$(sessions_in established)" = 2 ]
log_test $? "  tunnel goes on: HELLO acked, next ICRQ answered"

daemon_icrq && P send ICRP lsid="$LSID" rsid="$RSID" extra=4491:2:1:00000001 &&
	got CDN 2 8 && P acked && wait_until 10 expect_count 2 sessions_in
log_test $? "ICRP with vendor 4491 AVP M=1: CDN result 2 error 8, session gone"
P set auto_icrp=1 && alive && sess_up && [ "$(sessions_in established)" = 3 ]
log_test $? "  tunnel goes on: HELLO acked, next ICRQ answered"

# freeRtr: answers our CDN with a CDN of its own
P set cdn_echo=1 && SID=$(ctlj b session list | jq --argjson l "$LSID" \
	'.sessions[] | select(.peer_session_id == $l).session_id') &&
	ctl b session delete "$SID" >/dev/null && P wait CDN lsid="$LSID" && P acked &&
	wait_until 10 expect_count 2 sessions_in
log_test $? "CDN answered with a CDN: acknowledged, session gone"
P set cdn_echo=0 && alive && sess_up && [ "$(sessions_in established)" = 3 ]
log_test $? "  tunnel goes on: HELLO acked, next ICRQ answered"

# unknown vendor AVP with M=1 in SCCRQ: refused (StopCCN 2/8), nothing kept
bye
P connect extra=4491:1:1:0001 && [ "$(J .reply.type)" = StopCCN ] &&
	[ "$(J .reply.result)/$(J .reply.error)" = 2/8 ] && PEER_CCID=$(J .ccid) && tunnel_gone
log_test $? "SCCRQ with vendor 4491 AVP M=1: StopCCN result 2 error 8"

# a peer that disappears without StopCCN: HELLO/retransmission clear it
up && sess_up || log_test 1 "setup: tunnel and session for the vanishing peer"
P disappear
t0=$(date +%s%N)
wait_until 30 tunnel_gone
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log_test $rc "peer vanishes without StopCCN: tunnel cleared (${ms} ms)"
wait_until 10 expect_count 0 sessions_in
log_test $? "  its session with it"
peer_stop
peer_start $A_ADDR

# Simultaneous open from port 1701: the daemon opens a tunnel to the peer from
# 1701 while the peer opens one to it from 1701, so the peer's SCCRQ (CCID 0)
# lands on the daemon's tunnel socket.  The tie break (5.4.3: lower wins)
# leaves one connection, which the waiting `tunnel create` gets.
simopen() {	# simopen NAME: the daemon starts opening; $SIMPID waits for it
	ctl b tunnel create peer $A_ADDR src-port 1701 name "$1" > "$W/$1.out" 2>&1 &
	SIMPID=$!
	P wait SCCRQ peek=1 && DCCID=$(J .msg.assigned_ccid)
}
simopen_done() {	# simopen_done NAME: one tunnel of that name, established, ours
	wait "$SIMPID" && [ "$(cat "$W/$1.out")" = "tunnel $TID established" ] &&
		[ "$(ctlj b tunnel show name "$1" | jq -r .state)" = established ] &&
		[ "$(ctlj b tunnel list | jq --arg n "$1" '[.tunnels[] | select(.name == $n)] | length')" = 1 ]
}
simopen simw && up tb=0000000000000001 && simopen_done simw
log_test $? "simultaneous open, peer wins the tie break: its tunnel takes over"
P clear && bye
simopen simh && P send StopCCN ccid="$DCCID" ns=0 nr=1 set=1:0003 omit=61 to=$B_ADDR:1701 &&
	up tb=0000000000000001 && simopen_done simh
log_test $? "simultaneous open, peer wins and refuses ours first (StopCCN 3)"
P clear && bye
LOSER=0badcafe
simopen siml && P send SCCRQ ccid=0 ns=0 nr=0 set=61:$LOSER extra=0:5:1:ffffffffffffffff &&
	P wait StopCCN any=1 && [ "$(J .msg.ccid)" = $((0x$LOSER)) ] && [ "$(J .msg.result)" = 3 ] &&
	P accept && PEER_CCID=$(J .ccid) && P acked &&
	TID=$(ctlj b tunnel show name siml | jq -r .tunnel_id) && simopen_done siml && alive
log_test $? "simultaneous open, daemon wins: StopCCN 3 to ours, its tunnel up"
bye
peer_stop

# Cisco-like peer: window 1024, loses a burst of 30 of our messages and keeps
# nothing out of order.  Warm up first (slow start), then lose 30 ICRQs.
peer_start $BURST_ADDR --rws 1024
up rws=1024 || log_test 1 "setup: burst peer connected"
batch() {	# batch N: the daemon opens N sessions at once
	for i in $(seq "$1"); do echo "session create tunnel $TID no-wait"; done |
		ctl b -b - >/dev/null
}
batch 40 && P count ICRQ 40 timeout=10 && wait_until 5 expect_count 40 sessions_in established
log_test $? "burst peer: 40 sessions opened by the daemon (warm-up)"
P drop 30 && t0=$(date +%s%N) && batch 30 && P count ICRQ 70 timeout=10
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
P state && [ "$(J .dropped)" = 30 ] || rc=1
echo "    burst: $(J '"lost \(.dropped), out of order \(.ooo), duplicates \(.dup)"'), retransmitted $(ctlj b tunnel show "$TID" | jq .counters.retransmits)"
log_test $rc "burst of 30 lost (window 1024): all delivered within 10 s (${ms} ms)"
wait_until 5 expect_count 70 sessions_in established && alive
log_test $? "  all 70 sessions established, tunnel goes on"
bye
peer_stop
peer_start $A_ADDR

# ---- every message type wrongly formed once ---------------------------------
# Each is acknowledged (Nr advances) first.  A session message clears its
# session (CDN result 2, error 2 bad length / 3 bad value) and the tunnel goes
# on; a connection message clears the connection (StopCCN result 2).
Z25=00000000000000000000000000000000000000000000000000	# 25 octets
sess_gone() { [ "$(ctlj b session list | jq --argjson l "$LSID" --argjson r "${RSID:-0}" \
	'[.sessions[] | select(.peer_session_id == $l or .session_id == $r)] | length')" = 0 ]; }
# the CDN names our session, or (when it never learnt our ID: ICRP) only its own
cdn_names_it() { [ "$(J .msg.rsid)" = "$LSID" ] || { [ "$(J .msg.rsid)" = 0 ] && [ "$(J .msg.lsid)" = "$RSID" ]; }; }
# bad_sess DESC ERR SEND-ARGS...: a malformed message for session $LSID/$RSID
bad_sess() {
	local desc=$1 err=$2; shift 2
	P send "$@" && got CDN 2 "$err" && cdn_names_it && P acked &&
		wait_until 10 sess_gone
	log_test $? "malformed $desc: CDN result 2 error $err, session cleared"
	alive && sess_up
	log_test $? "  tunnel goes on: HELLO acked, next ICRQ answered"
}
# bad_req DESC ERR MODS...: a malformed ICRQ/OCRQ: refused by its Local Session ID
bad_req() {
	local desc=$1 err=$2 type=$3; shift 3
	LSID=$RANDOM$RANDOM RSID=0
	bad_sess "$desc" "$err" "$type" lsid="$LSID" "$@"
}
up || log_test 1 "setup: connection for the malformed session messages"
sess_up || log_test 1 "setup: a session"

bad_req "ICRQ (Pseudowire Type of 3 octets)" 2 ICRQ pad=68:1
bad_req "ICRQ (Pseudowire Type missing)" 3 ICRQ omit=68
bad_req "ICRQ (truncated AVP header)" 2 ICRQ tail=8000
bad_req "OCRQ (Remote End ID missing)" 3 OCRQ omit=66
daemon_icrq || log_test 1 "setup: daemon's ICRQ"
bad_sess "ICRP (Assigned Cookie of 3 octets)" 3 ICRP lsid="$LSID" rsid="$RSID" extra=0:65:1:010203
P set auto_icrp=1
P icrq iccn=0 && LSID=$(J .session.lsid) RSID=$(J .session.rsid) || log_test 1 "setup: ICRQ/ICRP"
bad_sess "ICCN (L2-Specific Sublayer of 3 octets)" 2 ICCN lsid="$LSID" extra=0:69:1:000000
bad_sess "OCRP (Circuit Status of 3 octets)" 2 OCRP lsid="$LSID" pad=71:1
bad_sess "OCCN (Data Sequencing of 1 octet)" 2 OCCN lsid="$LSID" extra=0:70:1:00
bad_sess "WEN (Circuit Errors of 25 octets)" 2 WEN lsid="$LSID" set=34:$Z25
bad_sess "SLI (Circuit Status of 3 octets)" 2 SLI lsid="$LSID" pad=71:1
# a malformed CDN still clears its session, without a CDN back
P clear && P send CDN lsid="$LSID" set=1:03 && P acked && wait_until 10 sess_gone &&
	! P wait CDN timeout=0.5
log_test $? "malformed CDN (Result Code of 1 octet): session cleared, no CDN back"
alive && sess_up
log_test $? "  tunnel goes on: HELLO acked, next ICRQ answered"

not_established() { ! tunnel_state_is established; }
# bad_conn DESC ERR: after the malformed message sent, a StopCCN 2/ERR ends it
bad_conn() {
	got StopCCN 2 "$2" && P acked && wait_until 10 not_established
	log_test $? "malformed $1: StopCCN result 2 error $2, connection cleared"
}
bye
P connect pad=60:1 && [ "$(J .reply.type)/$(J .reply.result)/$(J .reply.error)" = StopCCN/2/2 ] &&
	PEER_CCID=$(J .ccid) && tunnel_gone
log_test $? "malformed SCCRQ (Router ID of 5 octets): StopCCN result 2 error 2"
P connect omit=7 && [ "$(J .reply.type)/$(J .reply.result)/$(J .reply.error)" = StopCCN/2/3 ] &&
	PEER_CCID=$(J .ccid) && tunnel_gone
log_test $? "malformed SCCRQ (Host Name missing): StopCCN result 2 error 3"

ctl b tunnel create peer $A_ADDR name badrp > "$W/badrp.out" 2>&1 &
SIMPID=$!
P accept pad=60:1 && PEER_CCID=$(J .ccid) && bad_conn "SCCRP (Router ID of 5 octets)" 2
! wait "$SIMPID" && ! ctlj b tunnel show name badrp >/dev/null 2>&1
log_test $? "  the waiting tunnel create fails, the tunnel is gone"

P connect scccn=0 && PEER_CCID=$(J .ccid) &&
	P send SCCCN extra=0:10:1:000000 && bad_conn "SCCCN (Receive Window Size of 3 octets)" 2
up && P send HELLO tail=800000 && bad_conn "HELLO (truncated AVP header)" 2
up && P send StopCCN set=1:01 && P acked && wait_until 10 not_established
log_test $? "malformed StopCCN (Result Code of 1 octet): acknowledged, connection closed"
up && alive && sess_up
log_test $? "after all that: a new connection and session come up"
bye
peer_stop
it_done
