#!/usr/bin/env bash
# Pseudowire redundancy on the LAC: static sessions of tunnel "to-b1" (the
# primary LNS, b1 at 192.0.2.2) name "to-b2" (the backup LNS, b2 at
# 192.0.2.3, a second daemon in ns B) as their backup.
#   - b1 killed: every session comes up through to-b2 within the detection
#     time (HELLO 1 s, retransmissions 0.2-0.4 s, 2 retries);
#   - b1 back: c1 (revert_delay 3 s) returns to to-b1, c2 (revert = false)
#     stays, c3 (revert_delay 1000 s) stays;
#   - b1 flapping (killed again, started, killed before c3's delay): c3
#     moved once, not once per flap;
#   - c4, refused by b1 (not in its list of Remote End IDs), comes up
#     through to-b2 while to-b1 is up;
#   - session show and the metrics say which path each is on and why.
. "$(dirname "$0")/lib.sh"
it_setup

B2_ADDR=192.0.2.3
ip -n "$NSB" addr add $B2_ADDR/24 dev veth1 || { echo "cannot add $B2_ADDR"; exit 1; }
write_conf b1 $B_ADDR '
peers = ( { name = "lac"; match = "192.0.2.1/32"; accept = true; refuse_unknown_sessions = true;
            sessions = ( { remote_end_id = "c1"; }, { remote_end_id = "c2"; },
                         { remote_end_id = "c3"; } ); } );'
write_conf b2 $B2_ADDR 'peer_default = { accept = true; };'
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 1; retransmit_initial = 0.2;
                      retransmit_cap = 0.4; max_retries = 2; } );
tunnels = ( { name = "to-b1"; peer = "192.0.2.2";
              sessions = ( { name = "c1"; backup = "to-b2"; revert_delay = 3; },
                           { name = "c2"; backup = [ "to-b2" ]; revert = false; },
                           { name = "c3"; backup = [ "to-b2" ]; revert_delay = 1000; },
                           { name = "c4"; backup = [ "to-b2" ]; revert_delay = 3; } ); },
            { name = "to-b2"; peer = "192.0.2.3"; } );'
start b1 "$NSB" && start b2 "$NSB" && start a "$NSA"
log_test $? "the LAC and two LNSs start"

# path SESSION: "primary to-b1", "backup to-b2", or "none" (redundancy of session show)
path() {
	ctlj a session show name "$1" 2>/dev/null |
		jq -r 'select(.state == "established") | .redundancy | "\(.path) \(.tunnel)"' |
		grep . || echo none
}
on() { [ "$(path "$1")" = "$2" ]; }
all_on() { local s want=$1; shift; for s in "$@"; do on "$s" "$want" || return 1; done; }
switches() { ctlj a session show name "$1" | jq '.redundancy.switches'; }

wait_until 20 all_on "primary to-b1" c1 c2 c3
log_test $? "c1, c2, c3 come up through their own tunnel to-b1"
# (on a loaded machine c4 may first go to to-b2 because to-b1 is not up yet,
# then try to-b1 once it is, be refused there and come back: the end is waited for)
c4_refused() { on c4 "backup to-b2" &&
	ctlj a session show name c4 | jq -e '.redundancy.why | test("refused on to-b1")' >/dev/null; }
wait_until 30 c4_refused
log_test $? "c4, refused by b1, is up through to-b2, and says why ($(ctlj a session show name c4 | jq -c .redundancy.why))"
expect_count 1 count_sessions b2 established
log_test $? "b2 carries c4 alone"

# --- the primary LNS dies ---------------------------------------------------
t0=$(date +%s%3N)
kill -KILL "$(pid_of b1)"
wait_until 30 all_on "backup to-b2" c1 c2 c3 c4
log_test $? "b1 killed: c1-c4 up through to-b2 in $(( $(date +%s%3N) - t0 )) ms"
expect_count 4 count_sessions b2 established
log_test $? "b2 carries all four"
ctlj a session show name c1 | jq -e '.redundancy.why | test("tunnel to-b1 down")' >/dev/null
log_test $? "c1 says its primary is down ($(ctlj a session show name c1 | jq -c .redundancy.why))"

# --- the primary comes back: c1 reverts after 3 s, c2 never, c3 not yet ------------
start b1 "$NSB"
wait_until 60 on c1 "primary to-b1"
log_test $? "b1 back: c1 returns to to-b1 after its revert delay"
on c2 "backup to-b2" && on c3 "backup to-b2"
log_test $? "c2 (revert = false) and c3 (revert_delay 1000 s) stay on to-b2"
[ "$(switches c1)" = 2 ] && [ "$(switches c2)" = 1 ]
log_test $? "switch counts: c1 2 (there and back), c2 1"

# --- a flapping primary: c3 does not follow it ---------------------------------
tunnel_up() { ctlj a tunnel show name to-b1 2>/dev/null | jq -e '.state == "established"' >/dev/null; }
for i in 1 2; do
	kill -KILL "$(pid_of b1)"
	wait_until 30 on c1 "backup to-b2" || break
	start b1 "$NSB" && wait_until 60 tunnel_up || break
done
kill -KILL "$(pid_of b1)"
wait_until 30 on c1 "backup to-b2" && on c3 "backup to-b2" && [ "$(switches c3)" = 1 ]
log_test $? "b1 flapping twice: c3 moved once ($(switches c3) switches), c1 is on to-b2 again"

ctl a metrics > "$W/a.prom"
grep -qx 'l2tpv3d_session_on_backup{session="c2",primary="to-b1",tunnel="to-b2"} 1' "$W/a.prom" &&
	grep -qx 'l2tpv3d_session_path_switches_total{session="c3"} 1' "$W/a.prom"
log_test $? "metrics: c2 on its backup, c3 switched once"

# --- a reload and a restart keep sessions where they are ------------------------
ctl a reload >/dev/null && on c2 "backup to-b2" && on c3 "backup to-b2"
log_test $? "a reload leaves the sessions on their backup tunnel"
ctl a restart >/dev/null && on c2 "backup to-b2" && on c3 "backup to-b2" &&
	ctlj a show daemon | jq -e '.start.sessions_adopted == 4' >/dev/null
log_test $? "a restart of the LAC carries all four, and they know their path"

it_done
