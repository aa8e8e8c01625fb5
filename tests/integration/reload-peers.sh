#!/usr/bin/env bash
# A reload makes the tunnels and sessions peers opened agree with the new
# file: the LNS (B) clears a session whose Remote End ID its peers entry no
# longer lists, a tunnel whose secret changed, and a tunnel its entry no
# longer accepts, each with a CDN or StopCCN that says why and a line in the
# reload's summary; with reload_peers = "report" it only lists them.
. "$(dirname "$0")/lib.sh"
it_setup

b_conf() {	# b_conf ACCEPT SECRET "PW LIST" [extra global]
	write_conf b $B_ADDR "
tunnel_profiles = ( { name = \"default\"; digest = \"md5\"; secret = \"profile-secret\"; } );
peers = ( { name = \"lacs\"; match = \"192.0.2.0/24\"; accept = $1; secret = \"$2\";
            refuse_unknown_sessions = true; sessions = ( $3 ); } );"
	[ -z "${4:-}" ] || sed -i "s|^global = { |global = { $4 |" "$W/b.conf"
}
b_conf true s1 '{ remote_end_id = "pw1"; }, { remote_end_id = "pw2"; }'
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; digest = "md5"; secret = "s1"; } );'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

tunnel_up() {	# tunnel_up NAME: A's tunnel NAME is established
	ctlj a tunnel show name "$1" 2>/dev/null | jq -e '.state == "established"' >/dev/null
}
ctl a tunnel create peer $B_ADDR name t1 >/dev/null &&
	ctl a session create tunnel name t1 name s1 remote-end-id pw1 >/dev/null &&
	ctl a session create tunnel name t1 name s2 remote-end-id pw2 >/dev/null &&
	wait_until 20 expect_count 2 count_sessions b established
log_test $? "t1 with pw1 and pw2 up"

# --- a Remote End ID no longer listed: its session is cleared -----------------
b_conf true s1 '{ remote_end_id = "pw1"; }'
out=$(ctlj b reload)
jq -e '.peer_sessions_cleared == 1 and .peer_tunnels_cleared == 0 and
	(.peer_changes[0] | .action == "cleared" and .session_id > 0 and
	 (.why | test("Remote End ID \"pw2\" is not configured")))' <<<"$out" >/dev/null
log_test $? "reload without pw2: the summary says its session is cleared, and why"
wait_until 10 expect_count 1 count_sessions a established &&
	[ "$(ctlj a session show name s1 | jq -r .state)" = established ]
log_test $? "A's s2 is gone (CDN), s1 stays"

# --- reload_peers = "report": listed, not cleared ------------------------------
b_conf false s1 '{ remote_end_id = "pw1"; }' 'reload_peers = "report";'
out=$(ctlj b reload)
jq -e '.peer_tunnels_not_accepted == 1 and .peer_changes[0].action == "reported" and
	(.peer_changes[0].why | test("does not accept it any more"))' <<<"$out" >/dev/null &&
	tunnel_up t1
log_test $? "accept = false with reload_peers = report: listed, the tunnel left up"

# --- a changed secret clears the tunnel ------------------------------------------
b_conf true s2 '{ remote_end_id = "pw1"; }'
out=$(ctlj b reload)
jq -e '.peer_tunnels_cleared == 1 and (.peer_changes[0].why | test("secret of peers entry lacs changed"))' \
	<<<"$out" >/dev/null
log_test $? "a changed secret: the tunnel is cleared, the summary says why"
gone() { ! ctl a tunnel show name "$1" >/dev/null 2>&1 || ! tunnel_up "$1"; }
wait_until 10 gone t1 && grep -q "secret of peers entry lacs changed" "$W/a.log"
log_test $? "A's t1 is closed by a StopCCN naming the reason"

# --- accept = false clears the tunnel (the default, reload_peers = "clear") -----
b_conf true s1 '{ remote_end_id = "pw1"; }'
ctl b reload >/dev/null
ctl a tunnel create peer $B_ADDR name t2 >/dev/null && tunnel_up t2
log_test $? "a new tunnel t2 with the old secret again"
b_conf false s1 '{ remote_end_id = "pw1"; }'
out=$(ctlj b reload)
jq -e '.peer_tunnels_cleared == 1 and (.peer_changes[0].why | test("peers entry lacs does not accept it any more"))' \
	<<<"$out" >/dev/null && wait_until 10 gone t2
log_test $? "accept = false: t2 cleared (StopCCN), the summary says why"
expect_count 0 count_tunnels b established
log_test $? "B holds no established tunnel"

it_done
