#!/usr/bin/env bash
# SIGHUP with a changed profile leaves existing tunnels untouched; a new
# static tunnel starts; a removed one is deleted; an invalid file at reload
# keeps the running config; a listen address that cannot be bound refuses
# the reload and keeps the old listener; `l2tpv3d -n` reports bad files.
. "$(dirname "$0")/lib.sh"
it_setup
T_START=$(date +%s)
# metric NAME: its value in a's metrics
metric() { ctl a metrics | awk -v n="$1" '$1 == n { print $2 }'; }

write_conf b $B_ADDR 'peer_default = { accept = true; };'
conf_a() {	# conf_a HELLO_OF_P2 STATIC_TUNNELS
	write_conf a $A_ADDR "
tunnel_profiles = ( { name = \"p1\"; hello_interval = 60; },
                    { name = \"p2\"; hello_interval = $1; } );
peer_default = { accept = true; };
tunnels = ( $2 );"
}
ST1="{ name = \"st1\"; peer = \"$B_ADDR\"; profile = \"p1\";
       sessions = ( { name = \"st1-s1\"; remote_end_id = \"x1\"; } ); }"
ST2="{ name = \"st2\"; peer = \"$B_ADDR\"; profile = \"p1\"; }"
conf_a 60 "$ST1"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

wait_until 5 expect_count 1 count_tunnels a established && wait_until 5 expect_count 1 count_sessions a established
log_test $? "static tunnel st1 and its session come up at start"
CT=$(ctlj a tunnel create peer $B_ADDR profile p2 | jq -r .tunnel_id)
ST1ID=$(ctlj a tunnel show name st1 | jq -r .tunnel_id)
[ -n "$CT" ] && [ "$CT" != null ]
log_test $? "CLI tunnel with profile p2 up ($CT)"

conf_a 30 "$ST1, $ST2"
kill -HUP "$(pid_of a)"
wait_until 5 expect_count 3 count_tunnels a established
log_test $? "SIGHUP: new static tunnel st2 comes up"
[ "$(ctlj a tunnel show "$CT" | jq -r .state)" = established ] &&
	[ "$(ctlj a tunnel show name st1 | jq -r .tunnel_id)" = "$ST1ID" ] &&
	expect_count 1 count_sessions a established
log_test $? "SIGHUP with changed profile p2: CLI tunnel and st1 untouched (same ids, still up)"

conf_a 30 "$ST2"
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq .tunnels_deleted <<<"$out")" = 1 ] && [ "$(jq .tunnels_kept <<<"$out")" = 1 ]
log_test $? "reload removing st1: one deleted, one kept ($(jq -c . <<<"$out"))"
wait_until 5 expect_count 2 count_tunnels b established
log_test $? "st1 down on the peer too"

# the summary counts each static tunnel once, also one deleted from the CLI
# and one that was down waiting for its retry
ctl a tunnel delete name st2 >/dev/null
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq -c '[.tunnels_kept, .tunnels_started, .tunnels_restarted, .tunnels_deleted]' <<<"$out")" = "[0,1,0,0]" ] &&
	wait_until 5 sh -c "[ \"\$($C -s $W/a.ctl -j tunnel show name st2 | jq -r .state)\" = established ]"
log_test $? "reload after a CLI delete of st2: started 1 ($(jq -c . <<<"$out")), st2 up again"
ST3="{ name = \"st3\"; peer = \"192.0.2.77\"; profile = \"p2\"; }"
conf_a 30 "$ST2, $ST3"
sed -i 's|hello_interval = 30; }|hello_interval = 30; retransmit_initial = 0.2; retransmit_cap = 0.2; max_retries = 1; }|' "$W/a.conf"
ctl a reload >/dev/null
wait_until 5 grep -q "static tunnel st3: down, retrying in" "$W/a.log"
log_test $? "st3 to an address no one answers: down, waiting for its retry"
conf_a 30 "$ST2, ${ST3/192.0.2.77/$B_ADDR}"
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq -c '[.tunnels_kept, .tunnels_started, .tunnels_restarted, .tunnels_deleted]' <<<"$out")" = "[1,1,0,0]" ] &&
	wait_until 5 sh -c "[ \"\$($C -s $W/a.ctl -j tunnel show name st3 | jq -r .state)\" = established ]"
log_test $? "its peer fixed: the reload starts it at once ($(jq -c . <<<"$out"))"
[ "$(metric l2tpv3d_last_reload_success)" = 1 ]
log_test $? "metrics: the last reload applied (l2tpv3d_last_reload_success 1)"

echo 'global = { listen = ["192.0.2.1"]; bogus_setting = 1; };' > "$W/a.conf"
out=$(ctl a reload 2>&1); rc=$?
[ $rc = 1 ] && grep -q "a.conf:1" <<<"$out" && grep -q bogus_setting <<<"$out"
log_test $? "invalid config at reload: error names file, line and setting"
expect_count 3 count_tunnels a established && kill -0 "$(pid_of a)"
log_test $? "invalid config: daemon keeps running with its tunnels"
[ "$(metric l2tpv3d_last_reload_success)" = 0 ] && [ "$(metric l2tpv3d_last_reload_timestamp_seconds)" -ge "$((T_START - 1))" ]
log_test $? "metrics: the last reload refused (l2tpv3d_last_reload_success 0), and when"

# a listen address not on the box: the reload is refused, the old listener
# stays (the LNS is never deaf); once the address exists, the same reload works
listens() { ip netns exec "$NSB" ss -Hulnp "sport = :1701" | awk '{print $4}' | sort | tr '\n' ' '; }
cp "$W/b.conf" "$W/b.conf.orig"
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"192.0.2.99\"]|" "$W/b.conf"
out=$(ctl b reload 2>&1); rc=$?
[ $rc != 0 ] && grep -q "192.0.2.99" <<<"$out" && [ "$(listens)" = "$B_ADDR:1701 " ] &&
	ctlj a tunnel create peer $B_ADDR >/dev/null
log_test $? "reload to an address not on the box: refused ($(head -c 80 <<<"$out")), still listening on $(listens)"
ip -n "$NSB" addr add 192.0.2.99/24 dev veth1
out=$(ctl b reload 2>&1); rc=$?
[ $rc = 0 ] && [ "$(listens)" = "192.0.2.99:1701 " ]
log_test $? "the same reload once the address exists: now listening on $(listens)"
cp "$W/b.conf.orig" "$W/b.conf"
ctl b reload >/dev/null && [ "$(listens)" = "$B_ADDR:1701 " ]
log_test $? "and back: listening on $(listens)"

# settings read only at start: the reload says a restart is needed for
# each and keeps running on the old values (the metrics endpoint stays put)
scrape() {	# scrape PORT: B answers /metrics there
	ip netns exec "$NSB" python3 -c 'import sys, urllib.request
urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read()' "$1" 2>/dev/null
}
pb=$(pid_of b)
kill "$pb" && wait_until 10 sh -c "! kill -0 $pb 2>/dev/null"
sed -i 's|ctl_socket|metrics_listen = "127.0.0.1:19724"; ctl_socket|' "$W/b.conf"
start b "$NSB" && scrape 19724
log_test $? "B restarted with metrics_listen 127.0.0.1:19724 serves /metrics there"
cp "$W/b.conf" "$W/b.conf.metrics"
sed -i 's|127.0.0.1:19724|127.0.0.1:19725|; s|ctl_socket|state_dir = "'"$W"'/b-other-state"; ctl_socket|' "$W/b.conf"
out=$(ctlj b reload); rc=$?
[ $rc = 0 ] && jq -e '.restart_required | index("global.metrics_listen") != null and
	index("global.state_dir") != null' <<<"$out" >/dev/null && scrape 19724 && ! scrape 19725
log_test $? "metrics_listen and state_dir changed: reported as needing a restart ($(jq -c .restart_required <<<"$out")), the endpoint stays"
cp "$W/b.conf.metrics" "$W/b.conf"

out=$("$D" -n -f "$W/a.conf" 2>&1); rc=$?
[ $rc = 1 ] && grep -q bogus_setting <<<"$out"
log_test $? "l2tpv3d -n on a bad file: exit 1 naming the setting"
out=$("$D" -n -f "$W/b.conf" 2>&1); rc=$?
[ $rc = 0 ]
log_test $? "l2tpv3d -n on a good file: exit 0"

it_done
