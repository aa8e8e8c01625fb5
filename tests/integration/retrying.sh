#!/usr/bin/env bash
# Static objects that are down are listed, not hidden: a static tunnel whose
# local address is not on the box cannot start, and a static session whose
# Remote End ID the LNS refuses is cleared by its CDN; both wait for their
# next try (5 s, doubling), and `tunnel list` / `session list` show them as
# "retrying" with the attempt, the seconds to the next try and the last
# error, in JSON and in text.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR "peers = ( { name = \"lac\"; match = \"$A_ADDR/32\"; accept = true;
            refuse_unknown_sessions = true; sessions = ( { remote_end_id = \"ok\"; } ); } );
peer_default = { accept = false; };"
write_conf a $A_ADDR "peer_default = { accept = true; };
tunnels = ( { name = \"st\"; peer = \"$B_ADDR\";
              sessions = ( { name = \"good\"; remote_end_id = \"ok\"; },
                           { name = \"bad\"; remote_end_id = \"nope\"; } ); },
            { name = \"nowhere\"; peer = \"$B_ADDR\"; local = \"192.0.2.66\"; } );"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
wait_until 10 expect_count 1 count_sessions a established
log_test $? "static tunnel st with its session good up"

# retried JSON-LIST NAME: the list's retrying entry for NAME, once it has failed at least once
retried() {
	ctlj a "$1" list | jq -e --arg n "$2" '[.retrying[] | select(.name == $n and .state == "retrying" and
		.attempt >= 1 and .next_try_s >= 0 and .last_error != "")] | length == 1' >/dev/null
}
wait_until 20 retried session bad
log_test $? "session list: bad is retrying ($(ctlj a session list | jq -c '.retrying[] | select(.name == "bad")'))"
ctlj a session list | jq -e '.retrying[] | select(.name == "bad") | .tunnel == "st" and
	(.last_error | test("Remote End ID .*nope.* is not configured"))' >/dev/null
log_test $? "its last error is the LNS's CDN, naming the Remote End ID"
wait_until 20 retried tunnel nowhere &&
	ctlj a tunnel list | jq -e '.retrying[] | select(.name == "nowhere") | .last_error | test("192.0.2.66")' >/dev/null
log_test $? "tunnel list: nowhere is retrying, its last error names the address ($(ctlj a tunnel list | jq -c '.retrying[0].last_error'))"
ctlj a tunnel list | jq -e '[.tunnels[] | select(.name == "nowhere")] | length == 0' >/dev/null
log_test $? "and it is not among the live tunnels"
ctl a tunnel list > "$W/t.txt" && ctl a session list > "$W/s.txt"
grep -q "^nowhere: retrying (attempt [0-9]*) in [0-9]* s, after: .*192.0.2.66" "$W/t.txt" &&
	grep -q "^bad: retrying (attempt [0-9]*) in [0-9]* s, after: .*not configured" "$W/s.txt" &&
	grep -q " nowhere  *retrying " "$W/t.txt" && grep -q " bad  *retrying " "$W/s.txt"
rc=$?; log_test $rc "text output: a row in the table and a line with when and why"
[ $rc = 0 ] || cat "$W/t.txt" "$W/s.txt"
it_done
