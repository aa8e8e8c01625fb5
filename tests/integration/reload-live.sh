#!/usr/bin/env bash
# A reload that changes settings a live connection can take applies them to
# it: the static tunnel keeps its ID and its session (no StopCCN, no CDN),
# `tunnel show` shows the new values, the reload's summary lists the tunnel
# under "updated" with the settings, and the new HELLO interval is what the
# connection now keeps to.  A change that needs a new connection (the
# digest) restarts it, and the summary says which setting.
. "$(dirname "$0")/lib.sh"
it_setup

a_conf() {	# a_conf HELLO DIGEST
	write_conf a $A_ADDR "
tunnel_profiles = ( { name = \"p\"; hello_interval = $1; max_retries = 5; digest = \"$2\";
                      secret = \"s\"; } );
tunnels = ( { name = \"st\"; peer = \"192.0.2.2\"; profile = \"p\";
              sessions = ( { name = \"s1\"; } ); } );"
}
write_conf b $B_ADDR '
tunnel_profiles = ( { name = "default"; digest = "md5"; secret = "s"; } );
peer_default = { accept = true; };'
a_conf 60 md5
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
up() { state_is a established session show name s1; }
wait_until 20 up
log_test $? "st and s1 up (hello 60 s)"
TID=$(ctlj a tunnel show name st | jq .tunnel_id)
SID=$(ctlj a session show name s1 | jq .session_id)
hellos() { ctlj a tunnel show name st | jq '(.counters.msgs_out.HELLO // 0) + (.counters.msgs_in.HELLO // 0)'; }
h0=$(hellos)

a_conf 1 md5
sed -i 's/max_retries = 5;/max_retries = 7;/' "$W/a.conf"
out=$(ctlj a reload)
jq -e --argjson t "$TID" '.tunnels_updated == 1 and .tunnels_restarted == 0 and .tunnels_kept == 1 and
	(.updated[0] | .tunnel == "st" and (.settings | startswith("hello_interval, max_retries")))' \
	<<<"$out" >/dev/null
log_test $? "hello 60 -> 1, max_retries 5 -> 7: the summary lists st updated with both ($(jq -c .updated <<<"$out"))"
ctlj a tunnel show name st | jq -e --argjson t "$TID" '.tunnel_id == $t and .hello_interval_ms == 1000 and
	.max_retries == 7 and .state == "established"' >/dev/null &&
	[ "$(ctlj a session show name s1 | jq .session_id)" = "$SID" ]
log_test $? "same tunnel and session IDs; tunnel show has the new values"
more_hellos() { [ "$(hellos)" -ge $((h0 + 3)) ]; }
wait_until 20 more_hellos
log_test $? "the connection now keeps to a 1 s HELLO interval ($h0 -> $(hellos) HELLOs)"
grep -q "reload: tunnel st ($TID): hello_interval, max_retries.* applied to the live connection" "$W/a.log" &&
	! grep -q "tunnel st ($TID): down\|session s1 ($SID): down" "$W/a.log"
log_test $? "the log says what was applied, and neither the tunnel nor the session went down"

a_conf 1 sha1
out=$(ctlj a reload)
jq -e '.tunnels_restarted == 1 and .restarted_because[0].tunnel == "st" and
	.restarted_because[0].setting == "digest"' <<<"$out" >/dev/null
log_test $? "the digest changed: st restarted, the summary says it was for 'digest'"

it_done
