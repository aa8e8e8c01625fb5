#!/usr/bin/env bash
# Many tunnels share the LNS's port 1701, end to end and on the
# wire.  Two l2tpv3d in namespaces (null data plane, tests/integration/lib.sh):
#
#   A (LAC) 192.0.2.1:<one ephemeral port per tunnel> ==veth== 192.0.2.2:1701 B (LNS)
#                                                          responder_port = "listener"
#
# A opens IT_SHARED_TUNNELS tunnels (default 2000) in one batch and a session
# on each; B answers every one from its listener's port, each tunnel on a
# socket of its own connected to A's address and port.  HELLOs every ~2 s
# cross while they are up; then A deletes half and B the other half (B's
# StopCCNs leave through the shared port).  Checked through l2tpv3ctl -j on
# both sides, and on a capture of A's veth taken for the whole run, which
# l2tpv3-inspect must split into one connection per tunnel and lint clean.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/inspect/lib.sh"
need_inspect
need_capturer
it_setup
N=${IT_SHARED_TUNNELS:-2000}
H=$((N / 2))	# A deletes t1..tH, B the rest
HELLO=2		# seconds; the daemon jitters it by 25%
WAIT=30		# seconds to wait for a state change on a busy machine
T0=$(date +%s)
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nfd() { ls "/proc/$(pid_of "$1")/fd" | wc -l; }
jbatch_ok() { jq -s '[.[] | select(.status == 0)] | length' "$1"; }	# FILE: requests that succeeded

# Both sides: every SCCRQ of the batch may be half-open at once.
CONF="tunnel_profiles = ( { name = \"default\"; hello_interval = $HELLO; } );
peer_default = { accept = true; };"
write_conf b $B_ADDR "$CONF"
sed -i "s|ctl_socket|responder_port = \"listener\"; max_half_open = $((N + 100)); ctl_socket|" "$W/b.conf"
write_conf a $A_ADDR "$CONF"
sed -i "s|ctl_socket|max_half_open = $((N + 100)); ctl_socket|" "$W/a.conf"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start; B answers from its listener's port"
base=$(nfd b)

start_capture "$NSA" veth0 "$W/cap.pcapng"
log_test $? "capturing on A's veth0"

# a_batch IN OUT: A runs a batch; sets rc and ms (its duration)
a_batch() {
	local t; t=$(date +%s%N)
	ctl a -j -b "$1" > "$2"
	rc=$? ms=$(ms_since "$t")
}

# --- 1: the tunnels ------------------------------------------------------------------------
for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/t.batch"
a_batch "$W/t.batch" "$W/t.out"
[ $rc = 0 ] && [ "$(jbatch_ok "$W/t.out")" = "$N" ] &&
	wait_until "$WAIT" expect_count "$N" count_tunnels b established &&
	expect_count "$N" count_tunnels a established
log_test $? "1: $N tunnel creates succeed ($ms ms), $N established on both sides"

# --- 2: one port on B, N on A -----------------------------------------------------------------
ctlj a tunnel list > "$W/a.tunnels"
ctlj b tunnel list > "$W/b.tunnels"
jq -e --arg l "$B_ADDR:1701" --argjson n "$N" '.tunnels | length == $n and all(.local == $l)' \
	"$W/b.tunnels" >/dev/null
log_test $? "2: every tunnel on B is local $B_ADDR:1701 ($(nfd b) descriptors, $base before)"
jq -e --arg a "$A_ADDR:" --arg p "$B_ADDR:1701" --argjson n "$N" '.tunnels |
	all(.local | startswith($a)) and ([.[].local] | unique | length == $n) and all(.peer == $p)' \
	"$W/a.tunnels" >/dev/null &&
	[ "$(jq -c '[.tunnels[].local] | sort' "$W/a.tunnels")" = \
	  "$(jq -c '[.tunnels[].peer] | sort' "$W/b.tunnels")" ]
log_test $? "2: on A $(jq '[.tunnels[].local] | unique | length' "$W/a.tunnels") distinct local ports, all to $B_ADDR:1701, B's peers"

# --- 3: a session on each ---------------------------------------------------------------------
for i in $(seq 1 "$N"); do echo "session create tunnel name t$i name t$i-s"; done > "$W/s.batch"
a_batch "$W/s.batch" "$W/s.out"
[ $rc = 0 ] && [ "$(jbatch_ok "$W/s.out")" = "$N" ] &&
	wait_until "$WAIT" expect_count "$N" count_sessions b established &&
	expect_count "$N" count_sessions a established &&
	ctlj b tunnel list | jq -e 'all(.tunnels[]; .sessions == 1)' >/dev/null
log_test $? "3: $N session creates succeed ($ms ms), one per tunnel, established on both"

# --- 4: HELLOs --------------------------------------------------------------------------------
# Each side sends a HELLO after its jittered interval without a message, so
# on each tunnel the side with the shorter timer speaks and the other, hearing
# it, stays silent: count both directions together.
hellos_in() {	# HELLOs received by A and B together
	echo $(( $(ctlj a stats | jq '.global.msgs_in.HELLO // 0') +
		 $(ctlj b stats | jq '.global.msgs_in.HELLO // 0') ))
}
t=$(date +%s%N)
sleep $((HELLO + 1))
wait_until "$WAIT" eval '[ "$(hellos_in)" -ge "$N" ]'
rc=$?
ha=$(ctlj a stats | jq -c '.global | [.msgs_in.HELLO // 0, .msgs_out.HELLO // 0]')
hb=$(ctlj b stats | jq -c '.global | [.msgs_in.HELLO // 0, .msgs_out.HELLO // 0]')
[ $rc = 0 ] && [ "$(jq '.[0]' <<<"$ha")" -gt 0 ] && [ "$(jq '.[0]' <<<"$hb")" -gt 0 ]
log_test $? "4: HELLOs after $(ms_since "$t") ms, [in, out]: A $ha, B $hb (>= $N received)"
for i in $(seq 1 "$N"); do echo "tunnel show name t$i"; done > "$W/show.batch"
all_helloed() {	# every tunnel on A sent or received a HELLO
	ctl a -j -b "$W/show.batch" > "$W/show.out" &&
	jq -s -e --argjson n "$N" '[.[] | select(.status == 0 and
		(.data.counters.msgs_in.HELLO // 0) + (.data.counters.msgs_out.HELLO // 0) > 0)] |
		length == $n' "$W/show.out" >/dev/null
}
wait_until "$WAIT" all_helloed
log_test $? "4: every tunnel exchanged a HELLO (tunnel show on A)"
expect_count "$N" count_tunnels a established && expect_count "$N" count_tunnels b established &&
	expect_count "$N" count_sessions b established
log_test $? "4: all $N tunnels and sessions still established"

# --- 5: teardown from both sides at once ------------------------------------------------------
for i in $(seq 1 "$H"); do echo "tunnel delete name t$i"; done > "$W/da.batch"
jq -r --argjson h "$H" '.tunnels[] | select((.name[1:] | tonumber) > $h) |
	"tunnel delete \(.peer_tunnel_id)"' "$W/a.tunnels" > "$W/db.batch"
jq -c --argjson h "$H" '[.tunnels[] | select((.name[1:] | tonumber) <= $h) | .peer_tunnel_id] | sort' \
	"$W/a.tunnels" > "$W/held-b"	# B's IDs of the tunnels A deletes: B holds them
jq -c --argjson h "$H" '[.tunnels[] | select((.name[1:] | tonumber) > $h) | .tunnel_id] | sort' \
	"$W/a.tunnels" > "$W/held-a"
t=$(date +%s%N)
ctl a -j -b "$W/da.batch" > "$W/da.out" & pa=$!
ctl b -j -b "$W/db.batch" > "$W/db.out"
rb=$?
wait $pa
ra=$?
[ $ra = 0 ] && [ $rb = 0 ] && [ "$(jbatch_ok "$W/da.out")" = "$H" ] &&
	[ "$(jbatch_ok "$W/db.out")" = $((N - H)) ]
log_test $? "5: $H deletes on A and $((N - H)) on B succeed"
# The side that deletes a tunnel forgets it once its StopCCN is acknowledged;
# the other holds it, stopping, for RFC 3931 4.2's retransmission cycle (31 s).
only_held() {	# NAME: the daemon has nothing but the tunnels its peer closed, all stopping
	ctlj "$1" tunnel list | jq -e --slurpfile h "$W/held-$1" \
		'([.tunnels[] | select(.state == "stopping") | .tunnel_id] | sort) == $h[0] and
		 (.tunnels | all(.state == "stopping"))' >/dev/null
}
wait_until "$WAIT" only_held a && wait_until "$WAIT" only_held b
log_test $? "5: every StopCCN acknowledged ($(ms_since "$t") ms): each side holds only the $H its peer closed"
expect_count 0 count_sessions a established && expect_count 0 count_sessions b established
log_test $? "5: no session established on either side"
wait_until "$WAIT" expect_count "$base" nfd b
rc=$?
closed=$(ctlj b stats | jq .global.hold_sockets_closed)
[ $rc = 0 ] && [ "$closed" = "$H" ]
log_test $? "5: B's descriptors back to $base (now $(nfd b)), $closed held tunnels without a socket"

stop_capture_when "$WAIT" capture_closed "$N"
log_test $? "5: the capture holds every StopCCN's acknowledgement"
sed -n 's/^/capture: /; /dropped/Ip' "$W/cap.pcapng.log"	# the capturer's own losses, if any

# --- 6: the capture ---------------------------------------------------------------------------
t=$(date +%s%N)
"$INSPECT" -j "$W/cap.pcapng" > "$W/lint.json"
rc=$? ms=$(ms_since "$t")
[ $rc = 0 ] || "$INSPECT" "$W/cap.pcapng" | grep ' !! ' | head -20
jq_check "$W/lint.json" "select(.summary) | .summary | .connections == $N and .not_decoded == 0 and
	.violations == 0" && [ $rc = 0 ]
log_test $? "6: the capture lints clean in $ms ms (exit $rc): $(summary "$W/lint.json" |
	jq -c '{connections, messages, violations, by_kind}')"
jq_check "$W/lint.json" 'select(.summary) | .summary.connection_list[] | .from_start and
	(.state | startswith("closed by")) and .sessions == 1 and (.loose | not)'
log_test $? "6: each connection from its SCCRQ to an acknowledged StopCCN, one session"
# told apart though they share B's address and port: one A port per connection,
# each its own, and every message of B's from port 1701
jq -s -e --arg b "$B_ADDR:1701" --argjson n "$N" '[.[] | select(.type != null)] |
	(map(select(.dir == "B>A")) | all(.src == $b)) and (map(select(.dir == "A>B")) | all(.dst == $b)) and
	(map(select(.dir == "A>B")) | group_by(.conn) | map([.[].src] | unique) |
	 length == $n and all(length == 1) and (map(.[0]) | unique | length == $n))' \
	"$W/lint.json" >/dev/null
log_test $? "6: $N connections on $N ports of A, all to and from $B_ADDR:1701"
[ "$(jq -s '[.[] | select(.type == "HELLO") | .conn] | unique | length' "$W/lint.json")" = "$N" ]
log_test $? "6: a HELLO on every connection ($(jq_count "$W/lint.json" 'select(.type == "HELLO")') in all)"

# --- the hold ends ----------------------------------------------------------------------------
wait_until 45 expect_count 0 count_tunnels a && wait_until 5 expect_count 0 count_tunnels b
log_test $? "after the 31 s hold no tunnel left on either side ($(($(date +%s) - T0)) s in all)"

[ "$TESTS_FAIL" = 0 ] && [ -z "${INSPECT_KEEP:-}" ] || { cp "$W/cap.pcapng" "/tmp/l2tpv3-inspect-shared-port-$$.pcapng" &&
	echo "capture kept in /tmp/l2tpv3-inspect-shared-port-$$.pcapng"; }
it_done
