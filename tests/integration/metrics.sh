#!/usr/bin/env bash
# Metrics in the operators' format: `l2tpv3ctl metrics` and the daemon's own
# /metrics (metrics_listen, on its loop) both pass a Prometheus text lint
# (promtool when installed, else promcheck.py), agree with each other and
# with `show daemon` / `stats`, and move with the daemon's state.  Per-object
# series carry the names the operator gave, on both sides (a's static tunnel
# st and session cust-a; b's peers entry lacs and its Remote End ID entry),
# configured objects that are down are series too, flaps are counted per
# name, and monitor events carry the same names.  Sessions in the data plane
# have its counters (the null data plane's: 0) under their identifying
# labels; a session that is not in it has none.
. "$(dirname "$0")/lib.sh"
it_setup
CHECK="python3 $top_srcdir/tests/integration/promcheck.py"
T0=$(date +%s)

write_conf b $B_ADDR "peers = ( { name = \"lacs\"; match = \"192.0.2.0/24\"; accept = true;
            sessions = ( { remote_end_id = \"cust-a\"; ifname = \"cust-a\"; } ); } );"
sed -i 's|ctl_socket|metrics_listen = "127.0.0.1:9724"; ctl_socket|' "$W/b.conf"
# st comes up with its session; dead's peer never answers, so its session never is
write_conf a $A_ADDR "peer_default = { accept = true; };
tunnels = ( { name = \"st\"; peer = \"$B_ADDR\";
              sessions = ( { name = \"cust-a\"; remote_end_id = \"cust-a\"; } ); },
            { name = \"dead\"; peer = \"192.0.2.78\";
              sessions = ( { name = \"never\"; remote_end_id = \"never\"; } ); } );"
start b "$NSB" && start a "$NSA"
log_test $? "daemons start, b with metrics_listen 127.0.0.1:9724"
wait_until 10 expect_count 1 count_sessions a established
log_test $? "a's static session cust-a comes up"

for i in 1 2 3; do ctl a tunnel create peer $B_ADDR name t$i >/dev/null; done
tid=$(ctlj a tunnel show name t1 | jq -r .tunnel_id)
for i in 1 2; do ctl a session create tunnel "$tid" >/dev/null; done
ctl a tunnel create peer 192.0.2.77 no-wait >/dev/null	# nobody there: half-open

ctl b metrics > "$W/b.prom"
$CHECK "$W/b.prom" > "$W/b.json"
log_test $? "l2tpv3ctl metrics passes the exposition-format lint"
if command -v promtool >/dev/null; then
	promtool check metrics < "$W/b.prom"
	log_test $? "promtool check metrics is clean"
fi
v() { jq -r --arg k "$1" '.[$k] // "absent"' "$2"; }
d=$(ctlj b show daemon)
[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/b.json")" = "$(jq .tunnels_established <<<"$d")" ] &&
	[ "$(v 'l2tpv3d_sessions{state="established"}' "$W/b.json")" = "$(jq .sessions_established <<<"$d")" ] &&
	[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/b.json")" = 4 ] &&
	[ "$(v 'l2tpv3d_sessions{state="established"}' "$W/b.json")" = 3 ]
log_test $? "tunnels and sessions by state match show daemon (4 tunnels, 3 sessions)"
[ "$(v 'l2tpv3d_peer_tunnels{peer="192.0.2.1"}' "$W/b.json")" = 4 ]
log_test $? "per-peer tunnel count: 4 from 192.0.2.1"
s=$(ctlj b stats)
[ "$(v 'l2tpv3d_messages_received_total{type="SCCRQ"}' "$W/b.json")" = "$(jq '.global.msgs_in.SCCRQ // 0' <<<"$s")" ] &&
	[ "$(v 'l2tpv3d_messages_received_total{type="ICRQ"}' "$W/b.json")" = 3 ] &&
	[ "$(v 'l2tpv3d_ctl_requests_total' "$W/b.json")" != absent ]
log_test $? "messages by type match stats (SCCRQ, ICRQ)"

ctl a metrics > "$W/a.prom"; $CHECK "$W/a.prom" > "$W/a.json"
[ "$(v 'l2tpv3d_half_open_tunnels' "$W/a.json")" = 2 ] &&
	[ "$(v 'l2tpv3d_tunnels{state="wait-ctl-reply"}' "$W/a.json")" = 2 ]
log_test $? "a's half-open tunnels (dead and the CLI's) show as half-open and wait-ctl-reply"

# the daemon's own endpoint
http() { ip netns exec "$NSB" python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
method, path = sys.argv[1], sys.argv[2]
req = urllib.request.Request("http://127.0.0.1:9724" + path, method=method,
                             data=b"x" if method == "POST" else None)
try:
    r = urllib.request.urlopen(req, timeout=5)
    print(r.status, r.headers.get("Content-Type"))
    sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
http GET /metrics > "$W/http.out"
head -1 "$W/http.out" | grep -q '^200 text/plain; version=0.0.4' &&
	tail -n +2 "$W/http.out" | $CHECK - > "$W/h.json"
log_test $? "GET /metrics: 200, text/plain version 0.0.4, lint clean"
[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/h.json")" = 4 ] &&
	[ "$(v 'l2tpv3d_metrics_scrapes_total' "$W/h.json")" = 1 ]
log_test $? "the HTTP scrape agrees with the CLI and counts itself"
[ "$(http GET /other | head -1)" = 404 ] && [ "$(http POST /metrics | head -1)" = 405 ]
log_test $? "other paths 404, POST 405"

# --- per-object series ----------------------------------------------------------
# one (the only) series of FAMILY whose labels include every LABEL="VALUE" given
series() {
	local file=$1 fam=$2; shift 2
	jq -r --arg f "$fam" '[to_entries[] | select(.key | startswith($f + "{")) |
		select(.key as $k | all($ARGS.positional[]; . as $l | $k | contains($l)))] |
		if length == 1 then .[0].value else "\(length) series" end' --args "$@" < "$file"
}
a_st=$(ctlj a tunnel show name st | jq -r .tunnel_id)
a_sid=$(ctlj a session show name cust-a | jq -r .session_id)
[ "$(series "$W/a.json" l2tpv3d_tunnel_up "tunnel=\"st\"" "tunnel_id=\"$a_st\"" \
	'peer="192.0.2.2"' 'peer_entry=""')" = 1 ] &&
	[ "$(series "$W/a.json" l2tpv3d_session_up 'tunnel="st"' 'session="cust-a"' \
		"session_id=\"$a_sid\"" 'remote_end_id="cust-a"' 'pw_type="eth"')" = 1 ]
rc=$?; log_test $rc "a: tunnel st and session cust-a are up, named as configured"
[ $rc = 0 ] || grep '_up{' "$W/a.prom"
[ "$(series "$W/a.json" l2tpv3d_tunnel_up 'tunnel="dead"')" = 0 ] &&
	[ "$(v 'l2tpv3d_static_not_up{object="tunnel"}' "$W/a.json")" = 1 ] &&
	[ "$(v 'l2tpv3d_static_not_up{object="session"}' "$W/a.json")" = 1 ]
log_test $? "a: the configured tunnel dead (and its session) are series at 0, and counted as configured but not up"
b_sid=$(ctlj b session list | jq -r '.sessions[] | select(.remote_end_id == "cust-a") | .session_id')
[ "$(series "$W/b.json" l2tpv3d_session_up 'remote_end_id="cust-a"' 'peer_entry="lacs"' \
	'ifname="cust-a"' "session_id=\"$b_sid\"")" = 1 ] &&
	[ "$(jq '[to_entries[] | select(.key | startswith("l2tpv3d_tunnel_up{")) |
		select(.key | contains("peer_entry=\"lacs\""))] | length' "$W/b.json")" = 4 ]
rc=$?; log_test $rc "b: the session by its Remote End ID, its peers entry and interface; 4 tunnels from lacs"
[ $rc = 0 ] || grep '_up{' "$W/b.prom"
now=$(date +%s)
ch=$(series "$W/a.json" l2tpv3d_session_last_change_timestamp_seconds 'session="cust-a"')
awk -v c="$ch" -v a="$T0" -v b="$now" 'BEGIN { exit !(c >= a && c <= b + 1) }'
log_test $? "a: cust-a's last change is a Unix time since the test began ($ch)"

# data-plane counters: one family per counter, each session in the data plane
# under exactly the labels of its last change (the null data plane's: all 0)
CTRS="rx_packets rx_bytes rx_errors tx_packets tx_bytes tx_errors rx_seq_discards rx_oos_packets rx_cookie_discards"
# ctrs FILE LABELS: each counter family's value for the series {LABELS}, on one line
ctrs() { local c; for c in $CTRS; do printf '%s ' "$(v "l2tpv3d_session_${c}_total{$2}" "$1")"; done; }
a_ids="session=\"cust-a\",session_id=\"$a_sid\",tunnel=\"st\""	# promcheck.py sorts labels
[ "$(v "l2tpv3d_session_last_change_timestamp_seconds{$a_ids}" "$W/a.json")" != absent ] &&
	[ "$(ctrs "$W/a.json" "$a_ids")" = "0 0 0 0 0 0 0 0 0 " ]
rc=$?; log_test $rc "a: cust-a has the 9 counter families, labelled as its last change, at 0"
[ $rc = 0 ] || { echo "$a_ids: $(ctrs "$W/a.json" "$a_ids")"; grep '^l2tpv3d_session_[rt]x_' "$W/a.prom"; }
for c in $CTRS; do grep -qx "# TYPE l2tpv3d_session_${c}_total counter" "$W/a.prom" || break; done
log_test $? "a: they are typed counter"
[ "$(v l2tpv3d_dataplane_stats_age_seconds "$W/a.json")" = 0 ]
log_test $? "a: the counters' age is 0 (the null data plane's are always fresh)"
[ "$(series "$W/a.json" l2tpv3d_session_up 'tunnel="dead"' 'session="never"')" = 0 ] &&
	[ "$(jq '[keys[] | select(startswith("l2tpv3d_session_rx_packets_total{"))] | length' "$W/a.json")" = 3 ] &&
	[ "$(jq '[keys[] | select(test("^l2tpv3d_session_[rt]x_") and contains("session=\"never\""))] |
		length' "$W/a.json")" = 0 ]
rc=$?; log_test $rc "a: the session never, waiting for its tunnel (not in the data plane), has an _up series but no counters"
[ $rc = 0 ] || grep 'never' "$W/a.prom"
b_ids=$(jq -r --arg id "session_id=\"$b_sid\"" 'keys[] | select(startswith("l2tpv3d_session_last_change_timestamp_seconds{") and
	contains($id)) | sub("^[^{]*[{]"; "") | sub("[}]$"; "")' "$W/b.json")
[ -n "$b_ids" ] && [ "$(ctrs "$W/b.json" "$b_ids")" = "0 0 0 0 0 0 0 0 0 " ] &&
	[ "$(jq '[keys[] | select(startswith("l2tpv3d_session_tx_bytes_total{"))] | length' "$W/b.json")" = 3 ]
log_test $? "b: its sessions have them too (the Remote End ID's: {$b_ids})"
# metrics_session_counters = false, applied by a reload: the same scrape without them
sed -i 's|ctl_socket|metrics_session_counters = false; ctl_socket|' "$W/b.conf"
ctl b reload >/dev/null && ctl b metrics | $CHECK - > "$W/b-off.json"
rc=$?
[ $rc = 0 ] && [ "$(series "$W/b-off.json" l2tpv3d_session_up 'remote_end_id="cust-a"')" = 1 ] &&
	[ "$(jq '[keys[] | select(test("^l2tpv3d_session_[rt]x_|^l2tpv3d_dataplane_stats_age"))] | length' \
		"$W/b-off.json")" = 0 ]
log_test $? "b: metrics_session_counters = false and a reload: sessions still listed, no counters, no age"
sed -i 's|metrics_session_counters = false; ||' "$W/b.conf"
ctl b reload >/dev/null && ctl b metrics | $CHECK - > "$W/b-on.json" &&
	[ "$(ctrs "$W/b-on.json" "$b_ids")" = "0 0 0 0 0 0 0 0 0 " ]
log_test $? "b: back to the default: the counters are back"

# flaps: b clears the session; a's static session comes back (5 s backoff)
ctlj a monitor >"$W/a.mon" 2>&1 & MA=$!
ctlj b monitor >"$W/b.mon" 2>&1 & MB=$!
wait_until 5 grep -q monitoring "$W/a.mon" && wait_until 5 grep -q monitoring "$W/b.mon"
ctl b session delete "$b_sid" >/dev/null
a_flapped() {
	ctl a metrics | $CHECK - > "$W/a3.json" &&
		[ "$(series "$W/a3.json" l2tpv3d_session_flaps_total 'tunnel="st"' 'session="cust-a"')" = 1 ] &&
		[ "$(series "$W/a3.json" l2tpv3d_session_up 'session="cust-a"')" = 1 ]
}
wait_until 20 a_flapped
rc=$?; log_test $rc "a: cust-a cleared by b and back: one flap, up again"
[ $rc = 0 ] || grep 'cust-a' "$W/a3.json"
[ "$(series "$W/a3.json" l2tpv3d_tunnel_flaps_total 'tunnel="st"')" = 0 ]
log_test $? "a: its tunnel st did not flap"

# monitor events name their objects, deleted ones included
wait_until 5 grep -q '"session-up"' "$W/a.mon"
kill $MA $MB; wait $MA $MB 2>/dev/null
jq -se --arg id "$b_sid" '[.[] | objects | select(.session_id? == ($id | tonumber))] as $e |
	($e | map(.event)) == ["session-down", "session-deleted"] and
	all($e[]; .remote_end_id == "cust-a" and .peer_entry == "lacs" and .ifname == "cust-a" and
		.pw_type == "eth" and .tunnel_name == "lacs/a" and .session_name == "lacs/cust-a")' "$W/b.mon" >/dev/null
rc=$?; log_test $rc "b: session-down and session-deleted carry the Remote End ID, peers entry, interface"
[ $rc = 0 ] || cat "$W/b.mon"
jq -se '[.[] | objects | select(.session_name? == "cust-a")] as $e |
	($e | map(.event)) == ["session-down", "session-deleted", "session-created", "session-up"] and
	all($e[]; .tunnel_name == "st" and .remote_end_id == "cust-a" and .peer_entry == "")' \
	"$W/a.mon" >/dev/null
rc=$?; log_test $rc "a: cust-a's events, down to up again, carry its name and its tunnel's"
[ $rc = 0 ] || cat "$W/a.mon"

# b deletes t2's tunnel: a holds it (stopping) for a while, not a tunnel the peer has
ctl b tunnel delete "$(ctlj a tunnel show name t2 | jq -r .peer_tunnel_id)" >/dev/null
ctl b metrics | $CHECK - > "$W/b2.json"
[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/b2.json")" = 3 ]
log_test $? "the gauges follow a deletion"
a_holds() { ctl a metrics > "$W/a4.prom" && $CHECK "$W/a4.prom" > "$W/a4.json" &&
	[ "$(v 'l2tpv3d_tunnels{state="stopping"}' "$W/a4.json")" = 1 ]; }
wait_until 5 a_holds &&
	[ "$(v 'l2tpv3d_peer_tunnels{peer="192.0.2.2"}' "$W/a4.json")" = 3 ] &&
	[ "$(series "$W/a4.json" l2tpv3d_tunnel_up 'tunnel="t1"')" = 1 ] &&
	[ "$(series "$W/a4.json" l2tpv3d_tunnel_up 'tunnel="t2"')" = "0 series" ]
rc=$?; log_test $rc "a: the held tunnel t2 counts as stopping, not in peer_tunnels nor as a tunnel_up series"
[ $rc = 0 ] || grep 'tunnel' "$W/a4.prom" | grep -v '^#' | head -30

# the start time stays put: scrapes over more than two seconds' rollovers give one value
# (an alert on its changes is how a restart is noticed)
# (at least 5 scrapes and 3 s, however slow a scrape is; 60 s at most)
start_times=$W/start-times
t0=$(date +%s)
: > "$start_times"
while { [ "$(wc -l < "$start_times")" -lt 5 ] || [ "$(date +%s)" -lt $((t0 + 3)) ]; } &&
	[ "$(date +%s)" -lt $((t0 + 60)) ]; do
	ctl a metrics | sed -n 's/^l2tpv3d_start_time_seconds \([0-9]*\)$/\1/p' >> "$start_times"
done
[ "$(wc -l < "$start_times")" -ge 5 ] && [ "$(sort -u "$start_times" | wc -l)" = 1 ]
log_test $? "l2tpv3d_start_time_seconds: one value in $(wc -l < "$start_times") scrapes over 3 s"
it_done
