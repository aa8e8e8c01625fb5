#!/usr/bin/env bash
# Metrics in the operators' format: `l2tpv3ctl metrics` and the daemon's own
# /metrics (metrics_listen, evhttp on its loop) both pass a Prometheus text
# lint (promtool when installed, else promcheck.py), agree with each other
# and with `show daemon` / `stats`, and move with the daemon's state.
. "$(dirname "$0")/lib.sh"
it_setup
CHECK="python3 $top_srcdir/tests/integration/promcheck.py"

write_conf b $B_ADDR 'peer_default = { accept = true; };'
sed -i 's|ctl_socket|metrics_listen = "127.0.0.1:9724"; ctl_socket|' "$W/b.conf"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "daemons start, b with metrics_listen 127.0.0.1:9724"

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
	[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/b.json")" = 3 ] &&
	[ "$(v 'l2tpv3d_sessions{state="established"}' "$W/b.json")" = 2 ]
log_test $? "tunnels and sessions by state match show daemon (3 tunnels, 2 sessions)"
[ "$(v 'l2tpv3d_peer_tunnels{peer="192.0.2.1"}' "$W/b.json")" = 3 ]
log_test $? "per-peer tunnel count: 3 from 192.0.2.1"
s=$(ctlj b stats)
[ "$(v 'l2tpv3d_messages_received_total{type="SCCRQ"}' "$W/b.json")" = "$(jq '.global.msgs_in.SCCRQ // 0' <<<"$s")" ] &&
	[ "$(v 'l2tpv3d_messages_received_total{type="ICRQ"}' "$W/b.json")" = 2 ] &&
	[ "$(v 'l2tpv3d_ctl_requests_total' "$W/b.json")" != absent ]
log_test $? "messages by type match stats (SCCRQ, ICRQ)"

ctl a metrics > "$W/a.prom"; $CHECK "$W/a.prom" > "$W/a.json"
[ "$(v 'l2tpv3d_half_open_tunnels' "$W/a.json")" = 1 ] &&
	[ "$(v 'l2tpv3d_tunnels{state="wait-ctl-reply"}' "$W/a.json")" = 1 ]
log_test $? "a's half-open tunnel shows as half-open and wait-ctl-reply"

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
[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/h.json")" = 3 ] &&
	[ "$(v 'l2tpv3d_metrics_scrapes_total' "$W/h.json")" = 1 ]
log_test $? "the HTTP scrape agrees with the CLI and counts itself"
[ "$(http GET /other | head -1)" = 404 ] && [ "$(http POST /metrics | head -1)" = 405 ]
log_test $? "other paths 404, POST 405"

ctl b tunnel delete name "$(ctlj b tunnel list | jq -r '.tunnels[0].tunnel_id')" >/dev/null 2>&1 ||
	ctl b tunnel delete "$(ctlj b tunnel list | jq -r '.tunnels[0].tunnel_id')" >/dev/null
ctl b metrics | $CHECK - > "$W/b2.json"
[ "$(v 'l2tpv3d_tunnels{state="established"}' "$W/b2.json")" = 2 ]
log_test $? "the gauges follow a deletion"
it_done
