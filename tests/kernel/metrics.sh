#!/usr/bin/env bash
# The sessions' data-plane counters in the metrics, from the kernel: a
# pseudowire between the daemons, pings across it, and each side's scrape
# (`l2tpv3ctl metrics`, the text /metrics serves) shows its session's
# kernel counters at least as high as the pings it sent and received.
# A daemon's first scrape has none (nothing dumped yet: the session is
# listed, its counters left out, not 0) and starts the one dump that
# refreshes every session's counters; the later scrapes answer from it
# and keep it refreshed (every 10 s), stating its age.
. "$(dirname "$0")/lib.sh"
kt_setup
CHECK="python3 $top_srcdir/tests/integration/promcheck.py"
PINGS=5
# a dump every 10 s while scraped, its answer, and emulation's slowness
STATS_S=60
# the counters a scrape shows are at most one interval (10 s) and a dump old
AGE_MAX_S=30

write_conf a $A_ADDR "session_profiles = ( { name = \"default\"; address = \"$PW_A/30\"; } );
peer_default = { accept = true; };"
write_conf b $B_ADDR "session_profiles = ( { name = \"default\"; address = \"$PW_B/30\"; } );
peer_default = { accept = true; };"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start with the kernel data plane"

# poll SECS CMD...: like wait_until, once a second (each probe starts a few
# processes, which under emulation would take the CPU the daemons need)
poll() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 1; done
}
# scrape NAME: the daemon's metrics, linted, as {"series": value} in $W/NAME.json
scrape() { ctl "$1" metrics > "$W/$1.prom" && $CHECK "$W/$1.prom" > "$W/$1.json"; }
# val NAME FAMILY SID: the value of FAMILY's series of session SID in the last scrape, or absent
val() {
	jq -r --arg f "$2{" --arg id "session_id=\"$3\"" '[to_entries[] |
		select((.key | startswith($f)) and (.key | contains($id)))] |
		if length == 1 then .[0].value else "absent" end' "$W/$1.json"
}
# ctr_at_least NAME SID COUNTER N: a new scrape shows session SID's COUNTER >= N
ctr_at_least() {
	local v
	scrape "$1" && v=$(val "$1" "l2tpv3d_session_$3_total" "$2") && [ "$v" != absent ] &&
		jq -en --argjson v "$v" --argjson n "$4" '$v >= $n' >/dev/null
}
age() { jq -r '.l2tpv3d_dataplane_stats_age_seconds // "absent"' "$W/$1.json"; }

out=$(ctlj a tunnel create peer $B_ADDR); TID=$(jq -r .tunnel_id <<<"$out")
out=$(ctlj a session create tunnel "$TID"); rc=$?
SA=$(jq -r .session_id <<<"$out"); SB=$(jq -r .peer_session_id <<<"$out")
[ $rc = 0 ] && wait_until 20 session_up b "$SB" && [ "$(k_sessions "$NSA")" = 1 ] && [ "$(k_sessions "$NSB")" = 1 ]
log_test $? "a pseudowire: session $SA on A, $SB on B, in both kernels"

# A's first scrape: the session is there, up; its counters are not known yet
scrape a && [ "$(val a l2tpv3d_session_up "$SA")" = 1 ] &&
	[ "$(val a l2tpv3d_session_rx_packets_total "$SA")" = absent ] &&
	[ "$(val a l2tpv3d_session_tx_packets_total "$SA")" = absent ] && [ "$(age a)" = absent ]
rc=$?; log_test $rc "A's first scrape: session $SA up, its counters left out (none dumped yet), no age"
[ $rc = 0 ] || grep -E "session_(up|[rt]x_packets_total)|stats_age" "$W/a.prom"
poll $STATS_S ctr_at_least a "$SA" tx_packets 0 && [ "$(age a)" != absent ]
rc=$?; log_test $rc "A's counters come with a later scrape (the dump it started), aged $(age a) s"
[ $rc = 0 ] || grep -E "session_[rt]x_packets_total|stats_age" "$W/a.prom"

out=$(ip netns exec "$NSA" $PING -c $PINGS -i 0.2 -W 2 $PW_B 2>&1)
REPLIES=$(grep -Eo '[0-9]+ (packets )?received' <<<"$out" | grep -Eo '^[0-9]+')
[ "${REPLIES:-0}" -ge 1 ]
log_test $? "A pings B's end of the pseudowire: $PINGS sent, ${REPLIES:-0} answered"

# each echo request is a frame A sends and B receives, each reply the other way
poll $STATS_S ctr_at_least a "$SA" tx_packets $PINGS && ctr_at_least a "$SA" rx_packets "$REPLIES"
rc=$?; log_test $rc "A's scrape: tx_packets $(val a l2tpv3d_session_tx_packets_total "$SA") >= $PINGS, rx_packets $(val a l2tpv3d_session_rx_packets_total "$SA") >= $REPLIES"
[ $rc = 0 ] || grep -E "session_[rt]x_|stats_age" "$W/a.prom"
jq -en --argjson a "$(age a)" --argjson max $AGE_MAX_S '$a >= 0 and $a <= $max' >/dev/null
log_test $? "A's counters are $(age a) s old (at most $AGE_MAX_S)"
poll $STATS_S ctr_at_least b "$SB" rx_packets $PINGS && ctr_at_least b "$SB" tx_packets "$REPLIES"
rc=$?; log_test $rc "B's scrape: rx_packets $(val b l2tpv3d_session_rx_packets_total "$SB") >= $PINGS, tx_packets $(val b l2tpv3d_session_tx_packets_total "$SB") >= $REPLIES"
[ $rc = 0 ] || grep -E "session_[rt]x_|stats_age" "$W/b.prom"
[ "$(val a l2tpv3d_session_rx_bytes_total "$SA")" != absent ] &&
	jq -en --argjson b "$(val a l2tpv3d_session_rx_bytes_total "$SA")" --argjson n "$REPLIES" \
		'$b >= $n * 84' >/dev/null &&
	[ "$(val a l2tpv3d_session_rx_errors_total "$SA")" = 0 ] &&
	[ "$(val a l2tpv3d_session_rx_cookie_discards_total "$SA")" = 0 ]
log_test $? "A's rx_bytes $(val a l2tpv3d_session_rx_bytes_total "$SA") (>= 84 an echo reply), no errors, no cookie discards"

# a session deleted: its series go with it
ctl a session delete "$SA" >/dev/null && wait_until 10 expect_count 0 k_sessions "$NSA" &&
	scrape a && [ "$(val a l2tpv3d_session_tx_packets_total "$SA")" = absent ] &&
	[ "$(val a l2tpv3d_session_up "$SA")" = absent ] && [ "$(age a)" != absent ]
log_test $? "session $SA deleted: no series of it in A's next scrape (the age still there)"

kt_done
