#!/usr/bin/env bash
# Configuration for many customers: a main file and a directory of
# per-customer files (global.include_dir) that add peers entries and static
# tunnels; a name repeated across two files is refused naming both; a reload
# reads the directory again.  Descriptions show in list, show, the metrics
# and monitor events; shutdown = true takes a static tunnel (or session) down
# with "administratively down" and keeps it so; secret_file authenticates the
# tunnels end to end, and a file every user can read is refused at start and
# at reload (the running configuration kept).  The CLI's secret-file and
# `secret -` keep the secret out of argv.
#
#   +------ ns A (LAC) --------------------+          +------ ns B (LNS) ---------------+
#   | a.conf: digest md5, secret_file      |--veth----| peers lac-a: digest md5,        |
#   | conf.d/cust-a.conf: ta (2 sessions)  |          |   secret_file, "LAC A"          |
#   | conf.d/cust-b.conf: tb (1 session)   |          |                                 |
#   +--------------------------------------+          +---------------------------------+
. "$(dirname "$0")/lib.sh"
it_setup

SECRET=s3cret-from-a-file
printf '%s\n' "$SECRET" >"$W/a.secret"
printf '%s\n' "$SECRET" >"$W/b.secret"
chmod 600 "$W/a.secret" "$W/b.secret"

write_conf b $B_ADDR "tunnel_profiles = ( { name = \"secure\"; digest = \"md5\"; } );
peers = ( { name = \"lac-a\"; match = \"$A_ADDR/32\"; tunnel_profile = \"secure\";
            secret_file = \"$W/b.secret\"; description = \"LAC A\"; } );
peer_default = { accept = false; };"
# relative: include_dir and secret_file are read from a.conf's directory
write_conf a $A_ADDR 'tunnel_profiles = ( { name = "default"; digest = "md5"; secret_file = "a.secret"; },
                    { name = "wrong"; digest = "md5"; secret = "not-the-secret"; } );'
sed -i 's|^global = { |global = { include_dir = "conf.d"; |' "$W/a.conf"
mkdir "$W/conf.d"
cust_a() {	# cust_a [SESSION-2 EXTRA]
	cat >"$W/conf.d/cust-a.conf" <<CONF
# customer A
peers = ( { name = "cust-a"; match = "198.51.100.0/26"; description = "Customer A"; } );
tunnels = (
  { name = "ta"; peer = "$B_ADDR"; description = "Customer A \"HQ\"";
    sessions = ( { name = "ta-s1"; description = "A port 1"; },
                 { name = "ta-s2"; $1 } ); }
);
CONF
}
cust_b() {	# cust_b [TUNNEL EXTRA]
	cat >"$W/conf.d/cust-b.conf" <<CONF
# customer B
peers = ( { name = "cust-b"; match = "198.51.100.64/26"; } );
tunnels = (
  { name = "tb"; peer = "$B_ADDR"; description = "Customer B"; $1
    sessions = ( { name = "tb-s1"; } ); }
);
CONF
}
cust_a ""
cust_b ""
chmod 644 "$W/conf.d"/*.conf

start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (A: a.conf and conf.d/cust-a.conf, cust-b.conf)"

tunnel_state() { ctlj a tunnel show name "$1" 2>/dev/null | jq -r .state; }
session_state() { ctlj a session show name "$1" 2>/dev/null | jq -r .state; }
is_state() { [ "$("$1" "$2")" = "$3" ]; }
wait_until 10 expect_count 2 count_tunnels a established &&
	wait_until 10 expect_count 3 count_sessions a established
log_test $? "both customers' tunnels and their 3 sessions come up"
[ "$(ctlj a tunnel show name ta | jq -r .auth)" = md5 ] &&
	[ "$(ctlj a tunnel show name tb | jq -r .auth)" = md5 ]
log_test $? "authenticated (digest md5) with the secrets of secret_file on both sides"

# --- descriptions -----------------------------------------------------------
[ "$(ctlj a tunnel list | jq -r '.tunnels[] | select(.name == "ta") | .description')" = 'Customer A "HQ"' ] &&
	[ "$(ctlj a tunnel show name tb | jq -r .description)" = "Customer B" ] &&
	[ "$(ctlj a session list | jq -r '.sessions[] | select(.name == "ta-s1") | .description')" = "A port 1" ] &&
	[ "$(ctlj a session show name ta-s2 | jq -r .description)" = "" ]
log_test $? "description in tunnel list/show and session list/show (-j)"
ctl a tunnel list >"$W/list.txt" && grep -q "DESCRIPTION" "$W/list.txt" &&
	grep "^[0-9].* ta " "$W/list.txt" | grep -q 'Customer A "HQ"'
log_test $? "tunnel list (text): a DESCRIPTION column"
[ "$(ctlj b tunnel list | jq -r '[.tunnels[].description] | unique | join(",")')" = "LAC A" ]
log_test $? "B: the tunnels its peers entry accepted carry the entry's description"
ctl a metrics >"$W/metrics.txt" && python3 "$top_srcdir/tests/integration/promcheck.py" "$W/metrics.txt" >/dev/null &&
	grep -q '^l2tpv3d_tunnel_up{tunnel="ta",.*description="Customer A \\"HQ\\""} 1' "$W/metrics.txt" &&
	grep -q '^l2tpv3d_session_up{tunnel="ta",session="ta-s1",.*description="A port 1"} 1' "$W/metrics.txt"
log_test $? "metrics: description label on the per-object series, escaped, valid exposition"

"$C" -s "$W/a.ctl" -j monitor >"$W/mon-a.out" 2>&1 &
MONA=$!
"$C" -s "$W/b.ctl" -j monitor events tunnel-down,tunnel-deleted,session-down,session-deleted \
	>"$W/mon-b.out" 2>&1 &
MONB=$!
monitors_connected() { [ "$(ctlj a show daemon | jq .ctl_clients)" -ge 2 ] && [ "$(ctlj b show daemon | jq .ctl_clients)" -ge 2 ]; }
wait_until 5 monitors_connected
log_test $? "monitors on A and B connected"

# --- a name in two files ----------------------------------------------------
cat >"$W/conf.d/cust-dup.conf" <<CONF
# not customer A, but its tunnel's name
tunnels = ( { name = "ta"; peer = "$B_ADDR"; } );
CONF
out=$(ctl a reload 2>&1); rc=$?
[ $rc = 1 ] && grep -q "conf.d/cust-dup.conf:2: setting 'tunnels.name': duplicate name 'ta' (first at $W/conf.d/cust-a.conf:4)" <<<"$out"
log_test $? "a tunnel name in two files: the reload is refused naming both places"
[ $rc = 1 ] || echo "  $out"
expect_count 2 count_tunnels a established && expect_count 3 count_sessions a established
log_test $? "refused reload: the running configuration and tunnels kept"
rm "$W/conf.d/cust-dup.conf"

# --- a new customer's file --------------------------------------------------
cat >"$W/conf.d/cust-c.conf" <<CONF
tunnels = ( { name = "tc"; peer = "$B_ADDR"; description = "Customer C";
              sessions = ( { name = "tc-s1"; } ); } );
CONF
chmod o+w "$W/conf.d/cust-c.conf"
out=$(ctl a reload 2>&1); rc=$?
[ $rc = 1 ] && grep -q "$W/conf.d/cust-c.conf is writable by every user" <<<"$out"
log_test $? "an included file every user may write is refused as the main one would be"
chmod o-w "$W/conf.d/cust-c.conf"
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq -c '[.tunnels_kept, .tunnels_started]' <<<"$out")" = "[2,1]" ] &&
	wait_until 10 is_state tunnel_state tc established && wait_until 10 is_state session_state tc-s1 established
log_test $? "reload after adding cust-c.conf: its tunnel and session come up ($(jq -c '[.tunnels_kept, .tunnels_started]' <<<"$out"))"
# mon_has FILE JQ-FILTER: some event of the monitor's output matches
mon_has() { jq -se "map(select($2)) | length >= 1" "$1" >/dev/null; }
wait_until 5 mon_has "$W/mon-a.out" '.event == "tunnel-up" and .tunnel_name == "tc" and .description == "Customer C"' 
log_test $? "monitor: tc's tunnel-up event carries its description"

# --- shutdown ---------------------------------------------------------------
TB=$(ctlj a tunnel show name tb | jq -r .tunnel_id)
cust_b "shutdown = true;"
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq .tunnels_shutdown <<<"$out")" = 1 ]
log_test $? "shutdown = true on tb: the reload shuts it down ($(jq -c . <<<"$out"))"
wait_until 10 mon_has "$W/mon-b.out" '(.event == "tunnel-down" or .event == "tunnel-deleted") and .result.message == "administratively down"' 
log_test $? "B got a StopCCN saying \"administratively down\""
wait_until 10 sh -c "! $C -s $W/a.ctl tunnel show $TB >/dev/null 2>&1"
[ "$(ctlj a tunnel list | jq -r '.shutdown[] | select(.name == "tb") | .state')" = shutdown ] &&
	[ "$(ctlj a tunnel list | jq '[.tunnels[] | select(.name == "tb")] + .retrying | length')" = 0 ] &&
	! grep -q "static tunnel tb: down, retrying" "$W/a.log"
log_test $? "tunnel list: tb in state \"shutdown\", not retrying"
ctl a tunnel list | grep -E "^ .*tb +shutdown|[[:space:]]tb[[:space:]]+shutdown" >/dev/null
log_test $? "tunnel list (text): tb shutdown"
ctl a metrics | grep -q '^l2tpv3d_static_not_up{object="tunnel"} 0'
log_test $? "metrics: a tunnel shut down is not counted as a static tunnel not up"
cust_b ""
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq .tunnels_started <<<"$out")" = 1 ] &&
	wait_until 10 is_state tunnel_state tb established && wait_until 10 is_state session_state tb-s1 established &&
	[ "$(ctlj a tunnel list | jq '.shutdown | length')" = 0 ]
log_test $? "shutdown = false: tb and its session come back at the next reload"

cust_a "shutdown = true;"
out=$(ctlj a reload); rc=$?
[ $rc = 0 ] && [ "$(jq .sessions_shutdown <<<"$out")" = 1 ] &&
	wait_until 10 sh -c "! $C -s $W/a.ctl session show name ta-s2 >/dev/null 2>&1" &&
	[ "$(ctlj a session list | jq -r '.shutdown[] | select(.name == "ta-s2") | .state')" = shutdown ] &&
	[ "$(session_state ta-s1)" = established ]
log_test $? "shutdown = true on session ta-s2: closed, listed \"shutdown\", ta-s1 untouched"
wait_until 5 mon_has "$W/mon-b.out" '(.event == "session-down" or .event == "session-deleted") and .result.message == "administratively down"'
log_test $? "B got a CDN saying \"administratively down\""

# --- secret_file ------------------------------------------------------------
chmod 644 "$W/a.secret"
out=$(ctl a reload 2>&1); rc=$?
[ $rc = 1 ] && grep -q "a.conf:[0-9]*: setting 'tunnel_profiles.secret_file': $W/a.secret is readable by every user (mode 0644)" <<<"$out"
log_test $? "a secret_file every user can read: the reload is refused, naming file and mode"
[ $rc = 1 ] || echo "  $out"
expect_count 3 count_tunnels a established && kill -0 "$(pid_of a)"
log_test $? "refused: the running configuration and tunnels kept"
out=$(ip netns exec "$NSA" timeout 10 "$D" -F -f "$W/a.conf" --ctl "$W/a2.ctl" 2>&1); rc=$?
[ $rc = 78 ] && grep -q "a.secret is readable by every user (mode 0644)" <<<"$out"
log_test $? "the same file at start: refused (exit $rc)"
chmod 600 "$W/a.secret"
out=$("$D" -nv -f "$W/a.conf" 2>&1)
grep -q 'secret_file = "a.secret";' <<<"$out" && ! grep -q "$SECRET" <<<"$out" &&
	! "$D" -nv --show-secrets -f "$W/a.conf" 2>&1 | grep -q "$SECRET"
log_test $? "-nv prints secret_file, never the secret (not even with --show-secrets)"

# the CLI: the secret read from a file, or from standard input, never in argv
printf '%s\n' "$SECRET" >"$W/cli.secret"
chmod 640 "$W/cli.secret"
out=$(ctlj a tunnel create peer $B_ADDR profile wrong secret-file "$W/cli.secret" name cli1 description "by hand")
[ "$(jq -r .state <<<"$out")" = established ] && [ "$(ctlj a tunnel show name cli1 | jq -r .auth)" = md5 ] &&
	[ "$(ctlj a tunnel show name cli1 | jq -r .description)" = "by hand" ]
log_test $? "tunnel create secret-file PATH: authenticated with the file's secret, described"
out=$(printf '%s\n' "$SECRET" | ctlj a tunnel create peer $B_ADDR profile wrong secret - name cli2)
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "tunnel create secret -: the secret from standard input"
chmod 644 "$W/cli.secret"
out=$(ctl a tunnel create peer $B_ADDR secret-file "$W/cli.secret" name cli3 2>&1); rc=$?
[ $rc = 2 ] && grep -q "cli.secret is readable by every user (mode 0644)" <<<"$out"
log_test $? "tunnel create secret-file: a file every user can read is refused (exit $rc)"

kill -TERM $MONA $MONB; wait $MONA $MONB 2>/dev/null
it_done
