#!/usr/bin/env bash
# Cookies through the kernel data plane: 4- and 8-byte cookies crossed
# between the daemons reach the kernel as PEER_COOKIE (the one we assigned:
# the kernel expects it on receive) and COOKIE (the peer's: the kernel puts
# it on what it sends), as iproute2 shows them, and traffic flows.  Then a
# wrong cookie, as from a peer that ignores the Assigned Cookie AVP
# (freeRtr): a fresh session's kernel session on B is replaced by hand while
# B's daemon is stopped (ip l2tp, same IDs) sending a wrong COOKIE, so every
# frame B sends carries a cookie A never assigned: A's kernel drops them, the
# cookie-discard counter `session show` reports on A goes up, and A, which
# never received a good frame on that session, says why once in its log and
# in `session show`.
. "$(dirname "$0")/lib.sh"
kt_setup

# A looks at a young session's counters 1, 3, 7, 15, 31 s after it came up, then every 30 s
LOOK_DEADLINE=75

write_conf a $A_ADDR "session_profiles = ( { name = \"default\"; cookie_len = 4; address = \"$PW_A/30\"; } );
peer_default = { accept = true; };"
# B's interfaces have no IPv6 link-local address: they send nothing unasked,
# so the session below receives no good frame before its cookie goes wrong
write_conf b $B_ADDR "session_profiles = ( { name = \"default\"; cookie_len = 8; address = \"$PW_B/30\";
	ipv6_link_local = \"off\"; } );
peer_default = { accept = true; };"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

# kernel_cookies NS SID: "cookie peer_cookie" of that session per iproute2
kernel_cookies() {
	ip -n "$1" -j l2tp show session | jq -r --argjson s "$2" \
		'.[] | select(.session_id == $s) | "\(.cookie // "") \(.peer_cookie // "")"'
}
daemon_cookies() { ctlj "$1" session show "$2" | jq -r '"\(.dataplane.cookie) \(.dataplane.peer_cookie)"'; }
stat_of() { ctlj "$1" session show "$2" | jq -r ".stats.$3 // -1"; }
stat_above() { [ "$(stat_of "$1" "$2" "$3")" -gt "$4" ]; }

out=$(ctlj a tunnel create peer $B_ADDR); TID=$(jq -r .tunnel_id <<<"$out")
out=$(ctlj a session create tunnel "$TID"); rc=$?
SA=$(jq -r .session_id <<<"$out"); SB=$(jq -r .peer_session_id <<<"$out")
wait_until 20 session_up b "$SB" || rc=1
ca=($(daemon_cookies a "$SA")); cb=($(daemon_cookies b "$SB"))
[ $rc = 0 ] && [ ${#ca[0]} = 8 ] && [ ${#ca[1]} = 16 ] && [ "${ca[0]}" = "${cb[1]}" ] && [ "${ca[1]}" = "${cb[0]}" ]
log_test $? "4/8-byte cookies assigned and crossed (A ${ca[0]}/${ca[1]}, B ${cb[0]}/${cb[1]})"
# iproute2's "cookie" is sent, "peer_cookie" expected: the peer's, then ours
[ "$(kernel_cookies "$NSA" "$SA")" = "${ca[1]} ${ca[0]}" ] && [ "$(kernel_cookies "$NSB" "$SB")" = "${cb[1]} ${cb[0]}" ]
log_test $? "iproute2: each kernel sends the peer's cookie, expects its own"
pingable "$NSB" $PW_A && pingable "$NSA" $PW_B
log_test $? "ping across the 4/8-byte cookie pseudowire: $PING_SUMMARY"
stat_of a "$SA" rx_packets >/dev/null	# the first show asks the kernel
wait_until 5 stat_above a "$SA" rx_packets 0 && [ "$(stat_of a "$SA" rx_cookie_discards)" = 0 ]
log_test $? "A counts received packets ($(stat_of a "$SA" rx_packets)), no cookie discards"

out=$(ctlj a session create tunnel "$TID" cookie 8 ifname ck8); rc=$?
S8=$(jq -r .session_id <<<"$out"); c8=($(daemon_cookies a "$S8"))
[ $rc = 0 ] && [ ${#c8[0]} = 16 ] && [ ${#c8[1]} = 16 ] && [ "$(kernel_cookies "$NSA" "$S8")" = "${c8[1]} ${c8[0]}" ] &&
	ip -n "$NSA" link show ck8 >/dev/null
log_test $? "8/8-byte cookies: programmed as negotiated, interface named ck8 as asked"
ctl a session delete "$S8" >/dev/null; wait_until 10 expect_count 1 k_sessions "$NSA"

# --- the wrong cookie --------------------------------------------------------
# A fresh session, its kernel session on B replaced before B sent anything.
# B's daemon sleeps (SIGSTOP) through the wrong-cookie part: awake, it would
# notice its session replaced behind its back and clear it (lost.sh).
out=$(ctlj a session create tunnel "$TID" ifname ckw); rc=$?
SW=$(jq -r .session_id <<<"$out"); SWB=$(jq -r .peer_session_id <<<"$out")
wait_until 20 session_up b "$SWB" || rc=1
cw=($(daemon_cookies b "$SWB"))
IFW=$(ctlj b session show "$SWB" | jq -r .ifname); TB=$(ctlj b session show "$SWB" | jq -r .tunnel_id)
[ $rc = 0 ] && [ ${#cw[0]} = 16 ] && ip -n "$NSB" link show "$IFW" >/dev/null
log_test $? "a second session for the wrong cookie (A $SW, B $SWB on $IFW)"
kill -STOP "$(pid_of b)" &&
ip -n "$NSB" l2tp del session tunnel_id "$TB" session_id "$SWB" &&
ip -n "$NSB" l2tp add session name "$IFW" tunnel_id "$TB" \
	session_id "$SWB" peer_session_id "$SW" cookie 0badc0de peer_cookie "${cw[0]}" l2spec_type none &&
ip -n "$NSB" addr add 10.78.0.2/30 dev "$IFW" && ip -n "$NSB" link set "$IFW" up &&
ip -n "$NSA" addr add 10.78.0.1/30 dev ckw
log_test $? "B's kernel session replaced by hand, sending the wrong cookie 0badc0de"
! pingable "$NSB" 10.78.0.1
log_test $? "ping from B fails: A's kernel drops B's frames"

# the warning, once per session: the session's ID and profile, and the cure
warn_lines() {
	grep -F "session $1 (tunnel $TID, profile default): " "$W/a.log" |
		grep -cF "data frames discarded for their cookie, none received: the peer ignores our Assigned Cookie (or sends another): set cookie_len = 0 for this peer's profile to interoperate"
}
warned() { [ "$(warn_lines "$1")" -ge 1 ]; }
# no `show` of the session before: A looks at its young session unasked
wait_until $LOOK_DEADLINE warned "$SW"
log_test $? "A's log says why, unasked: $(grep -F "session $SW (tunnel" "$W/a.log" | tail -1 | cut -c1-160)..."
st=$(ctlj a session show "$SW")
jq -e '.cookie_mismatch == true and (.warning | contains("set cookie_len = 0 for this peer'"'"'s profile"))' <<<"$st" >/dev/null &&
	ctl a session show "$SW" | grep -Eq '^ *cookie_mismatch: +yes$'
log_test $? "A's session show: cookie_mismatch, the warning (JSON and text)"
jq -e '.stats.rx_packets == 0 and .stats.rx_cookie_discards > 0 and .dataplane.cookie_discards_reported' <<<"$st" >/dev/null
log_test $? "A's counters: rx_packets 0, rx_cookie_discards $(jq .stats.rx_cookie_discards <<<"$st") (the kernel's own, L2TP_ATTR_RX_COOKIE_DISCARDS)"

before=$(stat_of a "$SW" rx_cookie_discards)
! pingable "$NSB" 10.78.0.1 && wait_until 10 stat_above a "$SW" rx_cookie_discards "$before" &&
	[ "$(warn_lines "$SW")" = 1 ]
log_test $? "more frames dropped ($before -> $(stat_of a "$SW" rx_cookie_discards)), counters read again: still one log line"
# the session that received frames says no mismatch: the field is there, false
jq -e '.cookie_mismatch == false and .stats.rx_packets > 0' <<<"$(ctlj a session show "$SA")" >/dev/null &&
	[ "$(warn_lines "$SW")" = 1 ] && [ "$(warn_lines "$SA")" = 0 ]
log_test $? "session $SA, which received frames: cookie_mismatch false, no log line"
kill -CONT "$(pid_of b)"
wait_until 10 grep -q "session \\([^ ]* (\\)\\?$SWB)\\?: interface $IFW deleted outside l2tpv3d" "$W/b.log"
log_test $? "B, woken, notices its replaced session and clears it"

ctl a tunnel delete "$TID" >/dev/null && wait_until 10 expect_count 0 k_tunnels "$NSA" &&
	wait_until 10 expect_count 0 k_tunnels "$NSB" && expect_count 0 k_sessions "$NSB"
log_test $? "tunnel delete removes both kernels' tunnels, the hand-made session with them"

kt_done
