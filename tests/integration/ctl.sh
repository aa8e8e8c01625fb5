#!/usr/bin/env bash
# The control interface as an operator uses it:
# tunnels and sessions named wherever an ID is accepted, not-found errors
# that say what exists, `stats reset`, and `monitor --reconnect` across a
# daemon restart.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR '
peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; } );
peer_default = { accept = false; };'
write_conf a $A_ADDR 'peer_default = { accept = false; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

# a second daemon on A's control socket exits at once and says why; its log
# is checked like the others' (it_cleanup: no sanitizer report at that exit)
ip netns exec "$NSA" "$D" -F -f "$W/a.conf" > "$W/a-second.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "control socket $W/a.ctl is in use: is another l2tpv3d running?" "$W/a-second.log" &&
	[ "$(ctlj a show daemon | jq .tunnels)" = 0 ]
log_test $? "a second daemon on the same control socket exits 1 naming it; the first carries on"

T1=$(ctlj a tunnel create peer $B_ADDR name lac1 | jq -r .tunnel_id)
T2=$(ctlj a tunnel create peer $B_ADDR name lac2 | jq -r .tunnel_id)
ctl a session create tunnel name lac1 name s1 remote-end-id pw1 >/dev/null &&
	ctl a session create tunnel name lac2 name s2 remote-end-id pw2 >/dev/null &&
	expect_count 2 count_sessions a established
log_test $? "two named tunnels, one named session on each"

# jtrue NAME FILTER ARGS...: the command succeeds and its -j output satisfies
# FILTER (jq -e alone is satisfied by no output at all)
jtrue() {
	local name=$1 filter=$2 out; shift 2
	out=$(ctlj "$name" "$@") && [ -n "$out" ] && jq -e "$filter" <<<"$out" >/dev/null
}

# --- names wherever IDs are accepted ----------------------------------------
jtrue a '[.sessions[].name] == ["s1"] and .sessions[0].tunnel_id == '"$T1" \
	session list tunnel name lac1
log_test $? "session list tunnel name lac1: only lac1's session"
jtrue a '.tunnel.msgs_in.SCCRP == 1' stats tunnel name lac2
log_test $? "stats tunnel name lac2: that tunnel's counters"
[ "$(ctlj a tunnel show name lac2 | jq -r .tunnel_id)" = "$T2" ] &&
	[ "$(ctlj a session show name s2 | jq -r .remote_end_id)" = pw2 ]
log_test $? "tunnel show name, session show name"

out=$(ctl a session list)
head -1 <<<"$out" | grep -q "NAME .*REMOTE-END-ID" && grep -q "^[0-9].* s1 .* pw1 " <<<"$out"
log_test $? "session list shows NAME and REMOTE-END-ID"
out=$(ctl b tunnel list)
head -1 <<<"$out" | grep -q "PEER-HOST" && [ "$(grep -c " a  " <<<"$out")" = 2 ]
log_test $? "the LNS's tunnel list shows the peer's host name"
B_T1=$(ctlj a tunnel show name lac1 | jq -r .peer_tunnel_id)
jtrue b '.peer_entry == "lacs"' tunnel show "$B_T1" &&
	jtrue a 'has("peer_entry") | not' tunnel show name lac1
log_test $? "the LNS's tunnel show names the peers entry that matched (the LAC's has none)"

# --- not found: say what exists ------------------------------------------------
notfound() {	# notfound EXPECTED-TEXT ARGS...
	local want=$1; shift
	local o; o=$(ctl a "$@" 2>&1); local r=$?
	[ $r = 1 ] && grep -qF -- "$want" <<<"$o" || { echo "  '$*' -> rc $r: $o"; return 1; }
}
notfound "no tunnel named 'lac3' (did you mean 'lac1'? valid: lac1, lac2)" tunnel show name lac3 &&
	notfound "no tunnel named 'nope' (valid: lac1, lac2)" session list tunnel name nope &&
	notfound "no tunnel with id 12345 (valid: lac1, lac2)" stats tunnel 12345 &&
	notfound "no session named 's3' (did you mean 's1'? valid: s1, s2)" session delete name s3 &&
	notfound "no tunnel named 'lac' (did you mean 'lac1'?" session create tunnel name lac
log_test $? "not-found errors list the valid names, and the closest"

for i in $(seq 1 11); do echo "session create tunnel name lac2 name x$i no-wait"; done |
	ctl a -b - >/dev/null && wait_until 10 expect_count 13 count_sessions a established
log_test $? "eleven more sessions"
notfound "no session named 'y' (valid: s1, s2, x1, x2, x3, x4, x5, x6, x7, x8 and 3 more)" \
	session show name y
log_test $? "the list stops at ten names: 'and 3 more'"

# --- stats reset ---------------------------------------------------------------
sccrp() { ctlj a stats "$@" | jq '.tunnel.msgs_in.SCCRP // 0'; }
global_sccrp() { ctlj a stats | jq '.global.msgs_in.SCCRP // 0'; }
[ "$(sccrp tunnel name lac1)" = 1 ] && [ "$(global_sccrp)" = 2 ]
log_test $? "counters before the reset: one SCCRP per tunnel, two in all"
[ "$(ctl a stats reset tunnel name lac1)" = "tunnel lac1 counters reset" ] &&
	[ "$(sccrp tunnel name lac1)" = 0 ] && [ "$(sccrp tunnel name lac2)" = 1 ] &&
	[ "$(global_sccrp)" = 2 ]
log_test $? "stats reset tunnel name lac1: lac1's counters only"
# the first request after the reset is the only one counted
[ "$(ctl a stats reset)" = "counters reset" ] &&
	jtrue a '.global.ctl_requests == 1 and .global.retransmits == 0 and
		.global.msgs_in.SCCRP == null and .global.msgs_out.SCCRQ == null' stats &&
	[ "$(sccrp tunnel name lac2)" = 1 ]
log_test $? "stats reset: the daemon-wide counters, not the tunnels'"
grep -q "info: control: tunnel $T1 (lac1) counters reset" "$W/a.log" &&
	grep -q "info: control: counters reset" "$W/a.log"
log_test $? "each reset logged at info"
notfound "no tunnel named 'lac9'" stats reset tunnel name lac9
log_test $? "stats reset of an unknown tunnel: not-found"

# --- monitor events: only the kinds asked for ---------------------------------
"$C" -s "$W/a.ctl" -j monitor events session-up,tunnel-deleted >"$W/mon-f.out" 2>&1 &
MONF=$!
monitor_connected() { [ "$(ctlj a show daemon | jq .ctl_clients)" -ge 2 ]; }
wait_until 5 monitor_connected &&
	ctl a tunnel create peer $B_ADDR name lac3 >/dev/null &&
	ctl a session create tunnel name lac3 name s3 >/dev/null &&
	ctl a tunnel delete name lac3 >/dev/null &&
	wait_until 5 grep -q '"tunnel-deleted"' "$W/mon-f.out"
rc=$?
kill -TERM $MONF; wait $MONF
# created, up, session-created, session-down... were not sent
[ $rc = 0 ] && jq -se '[.[].event] == ["session-up", "tunnel-deleted"]' "$W/mon-f.out" >/dev/null
log_test $? "monitor events session-up,tunnel-deleted: only those two of the tunnel's eight events"
# the daemon checks what it is sent, whatever the client
out=$(ip netns exec "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"{\"id\": 7, \"cmd\": \"monitor\", \"args\": {\"events\": [\"tunnel-up\", \"tunnel-gone\"]}}\n")
print(s.makefile().readline(), end="")' "$W/a.ctl")
jq -e '.status_name == "invalid-argument" and (.error | startswith("unknown event '"'"'tunnel-gone'"'"' in '"'"'events'"'"' (valid: tunnel-created, tunnel-up,"))' <<<"$out" >/dev/null
log_test $? "a monitor request naming an unknown event is refused, with the valid names"

# --- -q: a success is its status alone; failures and the counts are printed ---
raw_reply() {	# raw_reply JSON: the daemon's reply line to one raw request
	ip netns exec "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline(), end="")' "$W/a.ctl" "$1"
}
out=$(raw_reply '{"id": 3, "cmd": "tunnel create", "args": {"peer": "'$B_ADDR'", "name": "q0"}, "quiet": true}')
jq -e '.id == 3 and .status == 0 and (has("data") | not)' <<<"$out" >/dev/null &&
	[ "$(ctlj a tunnel show name q0 | jq -r .state)" = established ]
log_test $? "a quiet tunnel create is answered with its status alone, the tunnel made ($out)"
out=$(raw_reply '{"id": 4, "cmd": "tunnel show", "args": {"name": "nosuch"}, "quiet": true}')
jq -e '.status_name == "not-found" and (.error | startswith("no tunnel named"))' <<<"$out" >/dev/null
log_test $? "a quiet request that fails still says why"
out=$(raw_reply '{"id": 5, "cmd": "tunnel list", "quiet": "yes"}')
jq -e '.status_name == "invalid-argument" and .error == "'"'"'quiet'"'"' must be true or false"' <<<"$out" >/dev/null
log_test $? "'quiet' that is not a boolean: invalid-argument"
n_before=$(ctlj a tunnel list | jq length)
bad_request() {	# bad_request JSON ID ERROR-PREFIX WHAT: refused with that error, under that id
	local out
	out=$(raw_reply "$1")
	jq -e --argjson id "$2" --arg e "$3" '.id == $id and .status_name == "invalid-argument" and
		(.error | startswith($e))' <<<"$out" >/dev/null
	log_test $? "$4 ($out)"
}
bad_request '{"id": 6, "cmd": "tunnel list",}' 0 \
	"request is not a JSON object: trailing comma in an object at offset 31" \
	"a request that is not JSON: where it goes wrong"
bad_request '[{"id": 7, "cmd": "tunnel list"}]' 0 "request is not a JSON object" \
	"a request that is JSON but not an object"
bad_request '{"id": 8, "cmd": ["tunnel list"]}' 8 "'cmd' must be a string" \
	"a 'cmd' that is a list"
bad_request '{"id": 9, "cmd": "tunnel create", "args": {"peer": ["'$B_ADDR'"], "name": "q9"}}' 9 \
	"'peer' must be a single value, not a list" "an argument given a list"
bad_request '{"id": 10, "cmd": "tunnel show", "args": {"name\u0000x": "q0"}}' 10 \
	"unknown argument 'name\\x00x'" "an argument name holding a NUL is no argument"
bad_request '{"id": 14, "cmd": "tunnel show", "args": {"name": "q0\u0000x"}}' 14 \
	"'name' holds a NUL character" "a value holding a NUL is refused, not cut short"
bad_request '{"id": 11, "cmd": "tunnel show", "args": {"tunnel_id": "12x"}}' 11 \
	"'tunnel_id' must be an unsigned 32-bit integer" "a tunnel_id string that is not a number"
bad_request "$(python3 -c 'print("{\"id\": 12, \"cmd\": \"tunnel list\", \"args\": " + "[" * 40 + "]" * 40 + "}")')" 0 \
	"request is not a JSON object: nested deeper than 32" "a request nested 41 deep"
out=$(raw_reply '{"id": 13, "cmd": "tunnel show", "args": {"name": "q0", "name": "nosuch"}}')
jq -e '.id == 13 and .status_name == "not-found"' <<<"$out" >/dev/null
log_test $? "an argument given twice: the last counts, as json-c had it ($out)"
n_after=$(ctlj a tunnel list | jq length)
[ -n "$n_before" ] && [ "$n_before" -ge 1 ] && [ "$n_after" = "$n_before" ]
log_test $? "the bad requests changed nothing ($n_before tunnels before, $n_after after)"
printf '%s\n' "tunnel create peer $B_ADDR name q1" "session create tunnel name q1 name qs1" \
	"tunnel frobnicate" "session create tunnel name nosuch" "tunnel create peer $B_ADDR name q2" > "$W/q.batch"
out=$(ctl a -q -b "$W/q.batch" 2>"$W/q.err"); rc=$?
[ $rc = 2 ] && [ "$(tail -1 <<<"$out")" = "5 commands: 3 succeeded, 2 failed" ] &&
	[ "$(wc -l <<<"$out")" = 2 ] && grep -q "^4: not-found: no tunnel named 'nosuch'" <<<"$out" &&
	grep -q "line 3:" "$W/q.err" &&
	[ "$(ctlj a session show name qs1 | jq -r .state)" = established ] &&
	[ "$(ctlj a tunnel show name q2 | jq -r .state)" = established ]
log_test $? "-q -b: successes print nothing, the failure and the counts do, exit 2 for the bad line ($rc)"
printf '%s\n' "tunnel delete name q1" "tunnel delete name q2" "tunnel delete name q0" > "$W/q2.batch"
out=$(ctl a -j -q -b "$W/q2.batch"); rc=$?
# (a deleted tunnel is listed, stopping, until its StopCCN is acknowledged)
no_q() { [ "$(ctlj a tunnel list | jq '[.tunnels[] | select(.name | startswith("q"))] | length')" = 0 ]; }
[ $rc = 0 ] && jq -e '.summary == {"commands": 3, "succeeded": 3, "failed": 0}' <<<"$out" >/dev/null &&
	wait_until 20 no_q
log_test $? "-j -q -b: one summary object, nothing else ($out)"
out=$(ctl a -q tunnel create peer $B_ADDR name q3); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ctl a -q tunnel delete name q3 && ! ctl a -q tunnel show name q3 2>/dev/null
log_test $? "-q on one command: no output on success, exit status as usual"

# --- monitor --reconnect across a restart ------------------------------------
# clients connected: this one and the monitor
"$C" -s "$W/a.ctl" -j monitor --reconnect >"$W/mon.out" 2>"$W/mon.err" &
MON=$!
wait_until 5 monitor_connected
log_test $? "monitor --reconnect subscribed"
kill -TERM "$(pid_of a)"
wait_until 10 sh -c "! kill -0 $(pid_of a) 2>/dev/null" &&
	wait_until 5 grep -q "reconnecting" "$W/mon.err" && kill -0 $MON
log_test $? "the daemon exits: monitor says so on stderr and keeps running"
start a "$NSA" && wait_until 5 grep -q '"event":"reconnected"' "$W/mon.out"
log_test $? "the daemon restarts: monitor reconnects and prints {\"event\":\"reconnected\"}"
ctl a tunnel create peer $B_ADDR name again >/dev/null &&
	wait_until 5 sh -c "sed -n '/\"reconnected\"/,\$p' '$W/mon.out' | grep -q '\"tunnel-up\"'"
log_test $? "events after the restart reach the monitor"
kill -TERM $MON; wait $MON
log_test $? "SIGTERM ends monitor --reconnect with 0"

it_done
