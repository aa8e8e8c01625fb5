#!/usr/bin/env bash
# PPP pseudowires: the kernel session (PW_TYPE PPP) plus pppd with its
# pppol2tp plugin on each side; IPCP gives both ends an address and ping
# crosses the link.  pppd exiting takes the session down (CDN to the peer);
# without pppd a PPP session is refused with an error naming the problem.
. "$(dirname "$0")/lib.sh"
kt_setup
command -v pppd >/dev/null || [ -x /usr/sbin/pppd ] || skip "pppd not installed (Debian package ppp)"

OPTS="noauth nodefaultroute noipdefault nodeflate nobsdcomp noccp novj lcp-echo-interval 0"
write_conf a $A_ADDR "session_profiles = ( { name = \"default\"; pw_type = \"ppp\";
	pppd_options = \"$OPTS 10.88.0.1:10.88.0.2\"; } );
peer_default = { accept = true; session_profile = \"default\"; };"
write_conf b $B_ADDR "session_profiles = ( { name = \"default\"; pw_type = \"ppp\";
	pppd_options = \"$OPTS 10.88.0.2:10.88.0.1\"; } );
peer_default = { accept = true; session_profile = \"default\"; };"

# --- no pppd: refused, and the CLI says why --------------------------------------
start b "$NSB" && L2TPV3D_PPPD=/nonexistent/pppd start a "$NSA"
log_test $? "both daemons start (A told pppd is /nonexistent/pppd)"
TID=$(ctlj a tunnel create peer $B_ADDR | jq -r .tunnel_id)
out=$(ctl a session create tunnel "$TID" pw ppp 2>&1); rc=$?
[ $rc != 0 ] && grep -q "pppd" <<<"$out" && expect_count 0 k_sessions "$NSA" &&
	wait_until 5 expect_count 0 count_sessions b
log_test $? "PPP session without pppd refused: \"$(tr '\n' ' ' <<<"$out" | cut -c1-90)\""
stop a TERM; wait_until 10 expect_count 0 count_tunnels b

# --- the real thing ------------------------------------------------------------
start a "$NSA"
TID=$(ctlj a tunnel create peer $B_ADDR | jq -r .tunnel_id)
out=$(ctlj a session create tunnel "$TID" pw ppp); rc=$?
SA=$(jq -r .session_id <<<"$out"); SB=$(jq -r .peer_session_id <<<"$out"); IFA=$(jq -r .ifname <<<"$out")
wait_until 20 session_up b "$SB" || rc=1
IFB=$(ctlj b session show "$SB" | jq -r .ifname)
[ $rc = 0 ] && ip -n "$NSA" -j l2tp show session | jq -e --argjson s "$SA" 'any(.[]; .session_id == $s)' >/dev/null
log_test $? "PPP session up: kernel session $SA on A, pppd interfaces $IFA / $IFB"
has_addr() { ip -n "$1" -j addr show dev "$2" 2>/dev/null | jq -e --arg a "$3" 'any(.[0].addr_info[]; .local == $a)' >/dev/null; }
wait_until 20 has_addr "$NSA" "$IFA" 10.88.0.1 && wait_until 20 has_addr "$NSB" "$IFB" 10.88.0.2
log_test $? "IPCP done: $IFA has 10.88.0.1, $IFB has 10.88.0.2"
pingable "$NSA" 10.88.0.2
log_test $? "ping 10.88.0.1 -> 10.88.0.2 over PPP over L2TPv3: $PING_SUMMARY"
PID=$(ctlj a session show "$SA" | jq -r '.dataplane.pppd_pid // empty')
[ -n "$PID" ] && kill "$PID" && wait_until 15 expect_count 0 count_sessions a &&
	wait_until 15 expect_count 0 count_sessions b && wait_until 10 expect_count 0 k_sessions "$NSA" &&
	wait_until 10 expect_count 0 k_sessions "$NSB"
log_test $? "pppd $PID killed on A: the session goes on both sides, kernels included"
wait_until 10 sh -c "! pgrep -x pppd >/dev/null"
log_test $? "B stopped its pppd with the session"

stop a TERM; stop b TERM
kt_done
