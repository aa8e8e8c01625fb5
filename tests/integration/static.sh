#!/usr/bin/env bash
# Static objects always come back:
#  - a static session the LNS deletes is started again by the LAC after
#    its backoff (5 s), and the log says so;
#  - a restarted LNS (StopCCN "shutting down", then a new daemon) costs the
#    LAC's static tunnel a reconnection, not the 31 s StopCCN hold plus a
#    5 s backoff: the old connection is held under its old CCID while a
#    new one opens at once.
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR "peer_default = { accept = true; };
tunnels = ( { name = \"st1\"; peer = \"$B_ADDR\";
              sessions = ( { name = \"st1-s1\"; remote_end_id = \"x1\"; } ); } );"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
wait_until 5 expect_count 1 count_sessions a established && wait_until 5 expect_count 1 count_sessions b established
log_test $? "static tunnel st1 and session st1-s1 up"

# one line per transition, with names, peer and reason
[ "$(grep -c "info: tunnel st1 ([0-9]*): up: peer $B_ADDR, host \"b\"" "$W/a.log")" = 1 ] &&
	[ "$(grep -c "info: session st1-s1 ([0-9]*): up: tunnel st1 ([0-9]*), remote end id \"x1\"" "$W/a.log")" = 1 ] &&
	[ "$(grep -c "info: session default/x1 ([0-9]*): up: tunnel default/a ([0-9]*), remote end id \"x1\"" "$W/b.log")" = 1 ] &&
	! grep -q "info: .*state change" "$W/a.log" "$W/b.log"
log_test $? "tunnel and session up: logged once each, with names (the LNS's made from its peers entry, the peer's host name and the Remote End ID) and the remote end id"

sid=$(ctlj b session list | jq -r '.sessions[0].session_id')
ctl b session delete "$sid" >/dev/null
wait_until 3 expect_count 0 count_sessions a
gone=$?
wait_until 10 expect_count 1 count_sessions a established && wait_until 3 expect_count 1 count_sessions b established
rc=$?
[ $gone = 0 ] && [ $rc = 0 ] && grep -q "static session st1-s1 (tunnel st1): down, retrying in 5 s" "$W/a.log"
log_test $? "a static session the LNS deleted comes back after its backoff, logged"
grep -q "info: session st1-s1 ([0-9]*): down: tunnel st1 ([0-9]*), CDN result 3 (administrative)" "$W/a.log"
log_test $? "its end logged with names and the CDN's reason"

sleep 5	# up long enough to reopen at once (REOPEN_MIN_UP_S)
old=$(ctlj a tunnel show name st1 | jq -r .tunnel_id)
kill -TERM "$(pid_of b)"
wait_until 5 sh -c "! kill -0 $(pid_of b) 2>/dev/null"
t0=$(date +%s%N)
start b "$NSB"
wait_until 15 expect_count 1 count_sessions a established
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
new=$(ctlj a tunnel show name st1 | jq -r .tunnel_id)
# (at once: the log says so; a retry would say "retrying in N s")
[ $rc = 0 ] && [ "$new" != "$old" ] &&
	grep -q "static tunnel st1: closed by its peer, opening a new connection now" "$W/a.log"
log_test $? "LNS restarted: st1 back with its session in $ms ms (new CCID $new, old $old held)"
# the old connection, held for the StopCCN, is marked so it is not taken for st1
held_marked() {
	ctlj a tunnel list | jq -e --argjson old "$old" '[.tunnels[] | select(.name == "st1")] |
		(map(select(.held != true and .tunnel_id != $old)) | length == 1) and
		(map(select(.held == true and .tunnel_id == $old)) | length == 1)' >/dev/null &&
		ctl a tunnel list | grep -q "st1 .*stopping (held)"
}
wait_until 5 held_marked
log_test $? "tunnel list: one live st1, and the old one marked held"

# the LNS stops for good: st1 reopens at once towards no one; the LAC's own
# shutdown then has no one to tell about that SCCRQ and exits at once
sleep 5
kill -TERM "$(pid_of b)"
wait_until 5 grep -q "static tunnel st1: closed by its peer, opening a new connection now" "$W/a.log"
t0=$(date +%s%N)
kill -TERM "$(pid_of a)"
# the deadline: short of the SCCRQ's ~31 s of retransmissions it would otherwise wait out
wait_until 10 sh -c "! kill -0 $(pid_of a) 2>/dev/null"
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log_test $rc "LAC shut down with an unanswered SCCRQ: exits in $ms ms (deadline 10 s)"
it_done
