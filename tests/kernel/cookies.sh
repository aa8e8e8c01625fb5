#!/usr/bin/env bash
# Cookies through the kernel data plane: 4- and 8-byte cookies crossed
# between the daemons reach the kernel as PEER_COOKIE (the one we assigned:
# the kernel expects it on receive) and COOKIE (the peer's: the kernel puts
# it on what it sends), as iproute2 shows them, and traffic flows.  Then a
# wrong cookie: B's kernel session is replaced by hand while B's daemon is
# stopped (ip l2tp, same IDs) sending a wrong COOKIE, so every frame B sends
# carries a cookie A never assigned: A's kernel drops them and the
# cookie-discard counter `session show` reports on A goes up.
. "$(dirname "$0")/lib.sh"
kt_setup

write_conf a $A_ADDR "session_profiles = ( { name = \"default\"; cookie_len = 4; address = \"$PW_A/30\"; } );
peer_default = { accept = true; };"
write_conf b $B_ADDR "session_profiles = ( { name = \"default\"; cookie_len = 8; address = \"$PW_B/30\"; } );
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
# B's daemon sleeps (SIGSTOP) through the wrong-cookie part: awake, it would
# notice its session replaced behind its back and clear it (lost.sh).
IFB=$(ctlj b session show "$SB" | jq -r .ifname); TB=$(ctlj b session show "$SB" | jq -r .tunnel_id)
before=$(stat_of a "$SA" rx_cookie_discards)
kill -STOP "$(pid_of b)" &&
ip -n "$NSB" l2tp del session tunnel_id "$TB" session_id "$SB" &&
ip -n "$NSB" l2tp add session name "$IFB" tunnel_id "$TB" \
	session_id "$SB" peer_session_id "$SA" cookie 0badc0de peer_cookie "${cb[0]}" l2spec_type none &&
ip -n "$NSB" addr add $PW_B/30 dev "$IFB" && ip -n "$NSB" link set "$IFB" up
log_test $? "B's kernel session replaced by hand, sending the wrong cookie 0badc0de"
! pingable "$NSB" $PW_A
log_test $? "ping from B fails: A's kernel drops B's frames"
wait_until 5 stat_above a "$SA" rx_cookie_discards "$before"
log_test $? "A's session show: rx_cookie_discards $before -> $(stat_of a "$SA" rx_cookie_discards)"
[ "$(ctlj a session show "$SA" | jq -r .dataplane.cookie_discards_reported)" = true ]
log_test $? "the counter is the kernel's own (L2TP_ATTR_RX_COOKIE_DISCARDS)"
kill -CONT "$(pid_of b)"
wait_until 10 grep -q "session $SB: interface $IFB deleted outside l2tpv3d" "$W/b.log"
log_test $? "B, woken, notices its replaced session and clears it"

ctl a tunnel delete "$TID" >/dev/null && wait_until 10 expect_count 0 k_tunnels "$NSA" &&
	wait_until 10 expect_count 0 k_tunnels "$NSB" && expect_count 0 k_sessions "$NSB"
log_test $? "tunnel delete removes both kernels' tunnels, the hand-made session with them"

kt_done
