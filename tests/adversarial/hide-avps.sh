#!/usr/bin/env bash
# With md5 and hide_avps on, Assigned Cookie and Remote End ID go hidden
# behind a fresh Random Vector (RFC 3931 5.3), never in clear: our own
# capture, read with the secret, shows the cookie unhidden; without it,
# hidden; no byte of it holds the Remote End ID in clear.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/inspect/lib.sh"
adv_setup
need_inspect 2>/dev/null || true
I=$top_builddir/src/inspect/l2tpv3-inspect
[ -x "$I" ] || skip "l2tpv3-inspect not built"
command -v tcpdump >/dev/null || command -v dumpcap >/dev/null || skip "needs tcpdump or dumpcap"

ADV_PROFILE='digest = "md5"; secret = "s3cret"; hide_avps = true;'
adv_conf_b 'session_profiles = ( { name = "default"; cookie_len = 8; } );
peer_default = { accept = true; };'
adv_start
start_capture "$NSB" veth1 "$W/hide.pcap"
log_test $? "capture running"
adv_victim
out=$(ctlj a session create tunnel "$VTID" remote-end-id customer-42)
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "session with an 8-octet cookie and a Remote End ID established"
# the session's three messages (and the ZLB after them) in the file
stop_capture_when 20 capture_has_types ICRQ ICRP ICCN
log_test $? "the capture holds the session's ICRQ, ICRP and ICCN"
cookie=$(ctlj b session list | jq -r '.sessions[0].session_id' | xargs -I{} $C -s $W/b.ctl -j session show {} | jq -r .dataplane.cookie)
with=$("$I" -j --secret s3cret "$W/hide.pcap" 2>/dev/null)
without=$("$I" -j "$W/hide.pcap" 2>/dev/null)
icrp_with=$(jq -c 'select(.type == "ICRP")' <<<"$with" | head -1)
icrp_without=$(jq -c 'select(.type == "ICRP")' <<<"$without" | head -1)
jq -e '.avps.random_vector != null' <<<"$icrp_with" >/dev/null &&
	[ "$(jq -r '.avps.cookie' <<<"$icrp_with" | tr -d ':' | tr A-F a-f)" = "$(tr -d ':' <<<"$cookie" | tr A-F a-f)" ]
log_test $? "with --secret: ICRP carries a Random Vector and the cookie unhides to the session's ($cookie)"
[ -n "$icrp_without" ] && jq -e '.avps.cookie == null' <<<"$icrp_without" >/dev/null &&
	grep -q "hidden AVPs: not decoded" <<<"$(jq -r '.notes[]?' <<<"$icrp_without")"
log_test $? "without the secret the cookie is not readable"
# the ICRQ carries the Remote End ID (unhidden with the secret), and no
# byte of the capture holds it in clear
jq -s -e 'any(.[]; .type == "ICRQ" and .avps.remote_end_id == "customer-42")' <<<"$with" >/dev/null &&
	! grep -qa "customer-42" "$W/hide.pcap"
log_test $? "the ICRQ's Remote End ID unhides with the secret and is nowhere in clear"
it_done
