#!/usr/bin/env bash
# A restart that keeps every tunnel and session (`l2tpv3ctl restart`: the
# daemon hands its state and sockets to a new process of its binary).
#
# A (the LAC) holds a static tunnel with two static sessions and opens 20
# more tunnels of 2 sessions each to B (the LNS); HELLOs every 2 s.  B, then
# A, then B again restart (3 restarts each side in all).  After each one:
#   - `tunnel list` and `session list` are what they were (IDs, names,
#     states, peers, interfaces), `show daemon` says how it started;
#   - the peer's tunnels and sessions are all still established;
#   - counters that survive (per tunnel: messages sent and received) did;
# and over the whole run a capture on B's link holds no StopCCN, CDN or
# SCCRQ (after the initial bring-up), while holding the ICRQ/ICRP/ICCN of
# sessions brought up on the old tunnels after the restarts, and HELLOs
# acknowledged across them.  A state that is corrupt or of another version
# is refused whole, the start a fresh one, the reason logged and shown.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/inspect/lib.sh"
it_setup
need_inspect
need_capturer

write_conf b $B_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 2; } );
peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; } );'
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 2; } );
tunnels = ( { name = "st"; peer = "192.0.2.2";
              sessions = ( { name = "st-1"; remote_end_id = "st-1"; },
                           { name = "st-2"; remote_end_id = "st-2"; } ); } );'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"
wait_until 20 expect_count 2 count_sessions a established
log_test $? "the static tunnel and its 2 sessions come up"

for i in $(seq 1 20); do echo "tunnel create peer $B_ADDR name t$i description customer-$i"; done > "$W/t.batch"
for i in $(seq 1 20); do
	echo "session create tunnel name t$i name t$i-a remote-end-id t$i-a"
	echo "session create tunnel name t$i name t$i-b remote-end-id t$i-b"
done > "$W/s.batch"
ctl a -q -b "$W/t.batch" && ctl a -q -b "$W/s.batch" &&
	wait_until 20 expect_count 21 count_tunnels b established &&
	wait_until 20 expect_count 42 count_sessions b established
log_test $? "20 more tunnels of 2 sessions each: 21 tunnels and 42 sessions on B"

start_capture "$NSB" veth1 "$W/ho.pcap"
log_test $? "capture running on B's link"

# A monitor on B that follows it across the restarts
"$C" -s "$W/b.ctl" monitor --reconnect > "$W/mon.txt" 2>&1 &
MON=$!
# it subscribes a moment after it starts: one probe session per try until it reports one
np=0
probe_mon() {
	np=$((np + 1))
	ctl a session create tunnel name st name "probe-$np" remote-end-id "probe-$np" >/dev/null
	grep -q "session-up" "$W/mon.txt"
}
wait_until 20 probe_mon
log_test $? "a monitor of B's events is subscribed"
NS=$(count_sessions b established)

# What must not move across a restart: everything but the counters.
snapshot() {	# snapshot NAME FILE
	{ ctlj "$1" tunnel list | jq -S '.tunnels | sort_by(.tunnel_id)'
	  ctlj "$1" session list | jq -S '.sessions | sort_by(.session_id)'
	  for t in $(ctlj "$1" tunnel list | jq -r '.tunnels[].tunnel_id' | sort); do
		ctlj "$1" tunnel show "$t" | jq -S 'del(.counters)'
	  done; } | jq -S 'walk(if type == "object" then del(.uptime) else . end)' > "$2"
}
# HELLOs of tunnel T so far, sent and received: counters that survive a
# restart (either side may be the one whose keepalive fires first).
tx_hellos() {
	ctlj "$1" tunnel show "$2" | jq '(.counters.msgs_out.HELLO // 0) + (.counters.msgs_in.HELLO // 0)'
}
hellos_past() { [ "$(tx_hellos b "$ST_B")" -gt "$1" ]; }
restarts_of() { ctlj "$1" show daemon | jq '.start.restarts'; }

ST_B=$(ctlj a tunnel show name st | jq -r .peer_tunnel_id)
n=0
for who in b a b a b a; do
	n=$((n + 1))
	peer=a; [ $who = a ] && peer=b
	snapshot $who "$W/before.json"
	r0=$(restarts_of $who)
	hello0=$(tx_hellos b "$ST_B")
	out=$(ctl $who restart)
	log_test $? "restart $n of $who: $out"
	snapshot $who "$W/after.json"
	diff "$W/before.json" "$W/after.json" > "$W/diff.txt"
	log_test $? "restart $n of $who: tunnels and sessions as they were $(head -c 400 "$W/diff.txt")"
	ctlj $who show daemon | jq -e --argjson r "$r0" '.start | .start == "restarted" and
		.restarts == $r + 1 and .tunnels_adopted == 21 and .sessions_adopted >= 43 and
		.via == "exec"' >/dev/null
	log_test $? "restart $n of $who: show daemon says restarted, 21 tunnels and all sessions adopted"
	expect_count 21 count_tunnels $peer established && expect_count "$NS" count_sessions $peer established
	log_test $? "restart $n of $who: the peer still has all 21 tunnels and $NS sessions"
	# the keepalive on the static tunnel goes on
	wait_until 10 hellos_past "$hello0" &&
		ctlj b tunnel show "$ST_B" | jq -e '.state == "established"' >/dev/null
	log_test $? "restart $n of $who: B's HELLO count went on from $hello0 (it survives the restart)"
done

ctl b metrics > "$W/b.prom"
grep -qx 'l2tpv3d_start_info{kind="restarted"} 1' "$W/b.prom" &&
	grep -qx 'l2tpv3d_restarts_total 3' "$W/b.prom" &&
	grep -qx 'l2tpv3d_restart_adopted{object="tunnel"} 21' "$W/b.prom" &&
	grep -qx 'l2tpv3d_restart_dropped_tunnels 0' "$W/b.prom"
log_test $? "B's metrics: started by a restart, 3 in a row, 21 tunnels adopted, none dropped"

# New work on the old tunnels, both ways
# A's create returns once A sent its ICCN: B's session is up when B has read it
b_has_new_a() { ctlj b session show "$NEWB" | jq -e '.state == "established" and .remote_end_id == "new-a"'; }
out=$(ctlj a session create tunnel name t1 name new-a remote-end-id new-a)
[ "$(jq -r .state <<<"$out")" = established ] && NEWB=$(ctlj a session show name new-a | jq -r .peer_session_id) &&
	wait_until 20 b_has_new_a
log_test $? "a session from A on an old tunnel after 6 restarts"
T1B=$(ctlj a tunnel show name t1 | jq -r .peer_tunnel_id)
out=$(ctlj b session create tunnel "$T1B" name new-b)
[ "$(jq -r .state <<<"$out")" = established ]
log_test $? "a session from B on the same tunnel"
# a new interface name does not take an adopted one's
ctlj b session list | jq -e '[.sessions[].ifname] | length == (unique | length)' >/dev/null
log_test $? "interface names stay unique after the restarts"

last_is_up() { tail -n 1 "$W/mon.txt" | grep -q "session-up"; }
wait_until 10 last_is_up
kill "$MON" 2>/dev/null; wait "$MON" 2>/dev/null
[ "$(grep -c ' daemon-restarting$' "$W/mon.txt")" = 3 ] && [ "$(grep -c 'reconnected' "$W/mon.txt")" = 3 ] &&
	tail -n 3 "$W/mon.txt" | grep -q "session-up"
log_test $? "the monitor heard 3 restarts of B, reconnected 3 times, and saw the new sessions come up"

stop_capture_when 20 capture_has_types ICRQ ICRP ICCN HELLO
log_test $? "the capture holds the new sessions' ICRQ, ICRP, ICCN and HELLOs"
"$INSPECT" -j "$W/ho.pcap" > "$W/ho.json" 2>/dev/null
[ "$(jq_count "$W/ho.json" 'select(.type == "StopCCN" or .type == "CDN" or .type == "SCCRQ")')" = 0 ]
log_test $? "no StopCCN, CDN or SCCRQ on the wire across the restarts"

# --- a restart in the middle of a bring-up ---------------------------------------
# 5,000 more tunnels from A, B restarted once a tenth of them are up: what is
# up is carried over, what is being set up finishes first, and SCCRQs that
# arrive meanwhile are repeated by A to the new process.  Every request of
# the batch gets its outcome, and all of them end up established.
M=5000
for i in $(seq 1 $M); do echo "tunnel create peer $B_ADDR"; done > "$W/m.batch"
ctl a -w 256 -b "$W/m.batch" > "$W/m.out" 2>&1 &
BATCH=$!
tenth_up() { [ "$(count_tunnels b established)" -ge $((21 + M / 10)) ]; }
wait_until 60 tenth_up
out=$(ctlj b restart)
log_test $? "B restarted during a bring-up of $M tunnels ($(jq -r .tunnels_adopted <<<"$out") tunnels carried over)"
wait "$BATCH"
rc=$?
[ $rc = 0 ] && [ "$(grep -c ': tunnel [0-9]* established$' "$W/m.out")" = $M ] &&
	expect_count $((21 + M)) count_tunnels a established &&
	expect_count $((21 + M)) count_tunnels b established
log_test $? "the batch reports all $M established; both sides have $((21 + M)) tunnels (rc $rc)"

# --- a configuration the next binary refuses: no restart at all ----------------
cp "$W/b.conf" "$W/b.conf.good"
echo 'global = { no_such_setting = 1; };' >> "$W/b.conf"
pid=$(pid_of b)
nt=$(count_tunnels b established)
out=$(ctl b restart 2>&1)
rc=$?
cp "$W/b.conf.good" "$W/b.conf"
[ $rc != 0 ] && grep -q "does not load" <<<"$out" && kill -0 "$pid" &&
	[ "$(restarts_of b)" = "$(ctlj b show daemon | jq '.start.restarts')" ] &&
	expect_count "$nt" count_tunnels b established && grep -q "restart refused: " "$W/b.log"
log_test $? "a restart with a file the binary refuses is refused, its reason said; B keeps its $nt tunnels ($out)"

# --- refused states: a fresh start, the reason said --------------------------
ctl b tunnel list >/dev/null
kill "$(pid_of a)"; wait_until 20 sh -c "! kill -0 $(pid_of a) 2>/dev/null"
log_test $? "A stops (its tunnels closed the usual way)"
printf 'l2tpv3d\001\143\000\000\000\000\000\000\000\004\000\000\000\000\000\000\000abcd\000\000\000\000' > "$W/v99.state"
: > "$W/empty.bundle"
ip netns exec "$NSA" env L2TPV3D_HANDOVER=7,8 "$D" -F -f "$W/a.conf" 7<"$W/v99.state" 8<"$W/empty.bundle" \
	>>"$W/a.log" 2>&1 &
echo $! > "$W/a.pid"
wait_until 20 ctl a show daemon >/dev/null &&
	ctlj a show daemon | jq -e '.start.start == "fell-back" and
		(.start.reason | test("state format version 99, this binary reads 1 to 3"))' >/dev/null &&
	grep -q "restart: the handed-over state is not used (state format version 99" "$W/a.log" &&
	ctl a metrics | grep -qx 'l2tpv3d_start_info{kind="fell-back"} 1'
log_test $? "a state of another version: refused, the start a fresh one, the reason logged and shown"
wait_until 20 expect_count 2 count_sessions a established
log_test $? "the fresh start brings the static tunnel and sessions up again"
kill "$(pid_of a)"; wait_until 20 sh -c "! kill -0 $(pid_of a) 2>/dev/null"
printf 'l2tpv3d\001\001\000\000\000\000\000\000\000\004\000\000\000\000\000\000\000abcd\000\000\000\000' > "$W/crc.state"
ip netns exec "$NSA" env L2TPV3D_HANDOVER=7,8 "$D" -F -f "$W/a.conf" 7<"$W/crc.state" 8<"$W/empty.bundle" \
	>>"$W/a.log" 2>&1 &
echo $! > "$W/a.pid"
wait_until 20 ctl a show daemon >/dev/null &&
	ctlj a show daemon | jq -e '.start.start == "fell-back" and .start.reason == "state checksum mismatch"' >/dev/null
log_test $? "a state with a bad checksum: refused, a fresh start"

it_done
