#!/usr/bin/env bash
# Restarts that leave the kernel alone (`l2tpv3ctl restart`: the daemon hands
# its tunnels' sockets and its state to a new process of its own binary).
#
#   restart.sh [N]      N Ethernet pseudowires (default 50, $KT_RESTART_N)
#                       and one Ethernet VLAN pseudowire, over
#                       $KT_RESTART_TUNNELS tunnels (default 5); pings
#                       through $KT_RESTART_PINGS of them (default 5), one
#                       every $KT_RESTART_PING_INTERVAL s (default 0.2) each;
#                       $KT_RESTART_ROUNDS restarts of each side (default 3);
#                       KT_RESTART_DIFF=last compares the whole state only
#                       after the last restart (at 1,000 pseudowires the
#                       comparison, not the restart, takes the guest minutes)
#
#   +--------- ns A (LAC) ---------+                 +--------- ns B (LNS) ---------+
#   | l2tpv3d a          veth0 ----|--- L2TP/UDP ----|---- veth1         l2tpv3d b  |
#   | l2tpeth* (N + 1), one VLAN   |   T tunnels     |   one VLAN, l2tpeth* (N + 1) |
#   | 10.78.K.1/30 on a sample  ===|== ping, all ===|=== 10.78.K.2/30 on the same   |
#   +------------------------------+   the while     +------------------------------+
#
# With pings running through a sample of the pseudowires the whole time,
# B (the LNS), then A (the LAC), is restarted, three times over.  After each restart:
#   - the kernel's tunnels and sessions (iproute2's genl dump: ids, peer ids,
#     cookies, sequencing, interface) are what they were in both namespaces,
#     every l2tpeth has the same index, name, MTU and flags;
#   - both daemons' `tunnel list` and `session list` are what they were
#     (uptimes aside), the restarted one says it adopted every tunnel and
#     session, and its kernel data plane claimed them all (none deleted)
#     and found each session in the kernel; a kernel session put by hand on
#     one of B's tunnels before its first restart, which no session claims,
#     is deleted by that restart;
# then new sessions come up on the old tunnels (from A and from B) and carry
# traffic.  A capture of the control traffic on A's link from after the
# bring-up to then holds no StopCCN, CDN or SCCRQ.  An adopted interface or
# kernel session deleted by hand is still noticed, and the daemons' normal
# stop still deletes every kernel object.  Prints the pings' loss (a figure,
# not a threshold: the kernel's data path is not touched by a restart).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/inspect/lib.sh"
kt_setup
need_inspect
need_capturer

N=${1:-${KT_RESTART_N:-50}}
T=${KT_RESTART_TUNNELS:-5}
P=${KT_RESTART_PINGS:-5}		# pseudowires pinged through
PING_I=${KT_RESTART_PING_INTERVAL:-0.2}
ROUNDS=${KT_RESTART_ROUNDS:-3}
[ "$T" -le "$N" ] || T=$N
[ "$P" -le "$N" ] || P=$N
CTL_T=300			# the CLI's wait: a restart under emulation takes seconds
ulimit -n $((T + 1024)) 2>/dev/null || :

# A's call with Remote End ID "vlan-1" gets B's VLAN profile
vlan='{ name = "vlan"; pw_type = "eth_vlan"; vlan_id = 42; }'
cfg='peer_default = { accept = true; };
tunnel_profiles = ( { name = "default"; hello_interval = 5; } );'
write_conf a $A_ADDR "$cfg session_profiles = ( $vlan );"
write_conf b $B_ADDR "$cfg session_profiles = ( $vlan );
peers = ( { name = \"lac-a\"; match = \"$A_ADDR/32\"; accept = true;
            sessions = ( { remote_end_id = \"vlan-1\"; profile = \"vlan\"; } ); } );"
start b "$NSB" && start a "$NSA"
rc=$?; log_test $rc "both daemons start (kernel data plane)"
[ $rc = 0 ] || { kt_done; exit 1; }

# --- bring-up: T tunnels, N sessions over them ----------------------------------
for t in $(seq 1 "$T"); do echo "tunnel create peer $B_ADDR name t$t"; done > "$W/t.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$(( (i - 1) % T + 1 )) name s$i"; done > "$W/s.batch"
echo "session create tunnel name t1 name v1 profile vlan remote-end-id vlan-1" >> "$W/s.batch"
NS=$((N + 1))	# sessions
ctl a -q -t $CTL_T -b "$W/t.batch" && ctl a -q -t $CTL_T -b "$W/s.batch" &&
	wait_until 60 expect_count "$NS" count_sessions b established &&
	expect_count "$T" count_tunnels a established && expect_count "$NS" count_sessions a established &&
	expect_count "$T" k_tunnels "$NSA" && expect_count "$T" k_tunnels "$NSB" &&
	expect_count "$NS" k_sessions "$NSA" && expect_count "$NS" k_sessions "$NSB"
log_test $? "$T tunnels, $N Ethernet sessions and an Ethernet VLAN one up, in both kernels"
VIF=$(ctlj a session show name v1 | jq -r .ifname)
[[ $VIF == l2tpeth*.42 ]] && ip -n "$NSA" link show dev "$VIF" >/dev/null
log_test $? "the VLAN pseudowire's interface on A is $VIF"

# --- pings through a sample, running the whole time -------------------------------
# sample K: the session s(1 + K*N/P), and the VLAN one last; A's interface
# gets 10.78.K.1, B's 10.78.K.2
SAMPLE=
for k in $(seq 0 $((P - 1))); do SAMPLE="$SAMPLE s$((1 + k * N / P))"; done
SAMPLE="$SAMPLE v1"
P=$((P + 1))
addr_ok=0 k=-1
for name in $SAMPLE; do
	k=$((k + 1))
	out=$(ctlj a session show name "$name") || continue
	ifa=$(jq -r .ifname <<<"$out") psid=$(jq -r .peer_session_id <<<"$out")
	ifb=$(ctlj b session show "$psid" | jq -r .ifname)
	ip -n "$NSA" addr add "10.78.$k.1/30" dev "$ifa" && ip -n "$NSB" addr add "10.78.$k.2/30" dev "$ifb" &&
		wait_until 30 pingable "$NSA" "10.78.$k.2" && addr_ok=$((addr_ok + 1))
done
[ "$addr_ok" = "$P" ]
log_test $? "$P pseudowires of the $NS carry pings ($addr_ok answer: $SAMPLE)"
for k in $(seq 0 $((P - 1))); do
	ip netns exec "$NSA" $PING -i "$PING_I" -W 1 "10.78.$k.2" > "$W/ping$k.out" 2>&1 &
	echo $! > "$W/ping$k.pid"	# kt_cleanup kills it if the test dies
done

start_capture "$NSA" veth0 "$W/rs.pcap"
log_test $? "capture of the control traffic running on A's link (after the bring-up)"

# --- what a restart must not change ----------------------------------------------
# links NS: every l2tpeth, as the kernel lists it
links() {
	ip -n "$1" -j link show | jq -c '[.[] | select(.ifname | startswith("l2tpeth")) |
		[.ifindex, .ifname, .mtu, .operstate, (.flags | sort | join(","))]] | sort'
}
# kernel NS: its L2TP objects per the genl dump (iproute2), every field it shows
kernel() {
	ip -n "$1" -j l2tp show tunnel | jq -cS 'sort_by(.tunnel_id)'
	ip -n "$1" -j l2tp show session | jq -cS 'sort_by(.tunnel_id, .session_id)'
}
# daemon NAME: its lists, what moves by itself (uptimes) left out
daemon() {
	ctlj "$1" tunnel list | jq -S '.tunnels | sort_by(.tunnel_id) |
		walk(if type == "object" then del(.uptime) else . end)'
	ctlj "$1" session list | jq -S '.sessions | sort_by(.session_id) |
		walk(if type == "object" then del(.uptime) else . end)'
}
snap() {	# snap FILE
	{ echo "== kernel A"; kernel "$NSA"; links "$NSA"
	  echo "== kernel B"; kernel "$NSB"; links "$NSB"
	  echo "== daemon a"; daemon a
	  echo "== daemon b"; daemon b; } > "$1"
}
snap "$W/base.snap"
# (the VLAN device on top of its l2tpeth is one more)
NL=$((NS + 1))
grep -q '"l2tpeth' "$W/base.snap" && [ "$(links "$NSA" | jq length)" = "$NL" ] &&
	[ "$(links "$NSB" | jq length)" = "$NL" ]
log_test $? "the reference: $NL l2tpeth and VLAN links in each namespace, the genl dumps, both daemons' lists"

# the kernel data plane's lines once the adoption is over, and once each
# adopted session was looked up and the kernel swept (dp_kernel_handover.c)
claimed="kernel: handover: adopted $T tunnels and $NS sessions; deleting 0 tunnels nobody claimed"
looked="kernel: handover: $NS adopted sessions looked up in the kernel, 0 lost; "
swept_last() { grep "$looked" "$W/$1.log" | tail -n 1 | grep -Eo '[0-9]+ kernel sessions nobody claimed'; }
# an orphan for B's first restart: a kernel session on one of its tunnels
# that no session of B's claims (as a call the old process was clearing)
T1B=$(ctlj a tunnel show name t1 | jq -r .peer_tunnel_id)
ORPHAN=4000000001
n=0 ra=0 rb=0
for who in $(for i in $(seq 1 "$ROUNDS"); do echo b a; done); do
	n=$((n + 1))
	if [ $who = a ]; then ra=$((ra + 1)) peer=b; r=$ra; else rb=$((rb + 1)) peer=a; r=$rb; fi
	pid=$(pid_of $who)
	orphans=0
	if [ $n = 1 ]; then
		ip -n "$NSB" l2tp add session name l2tporphan tunnel_id "$T1B" session_id $ORPHAN \
			peer_session_id 1 && expect_count $((NS + 1)) k_sessions "$NSB"
		log_test $? "before restart 1: a kernel session $ORPHAN on B's tunnel $T1B that no session claims"
		orphans=1
	fi
	t0=$(date +%s%N)
	out=$(ctl $who -j -t $CTL_T restart)
	rc=$?
	echo "RESULT: restart $n ($who #$r): the CLI waited $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	[ $rc = 0 ] && jq -e --argjson t "$T" --argjson s "$NS" \
		'.tunnels_adopted == $t and .sessions_adopted == $s' <<<"$out" >/dev/null &&
		kill -0 "$pid" 2>/dev/null && [ "$(pid_of $who)" = "$pid" ]
	log_test $? "restart $n ($who #$r): answered, same process $pid, $T tunnels and $NS sessions adopted"
	[ $rc = 0 ] || echo "  l2tpv3ctl restart: $out"
	[ "$(grep -c "restart: adopted $T tunnels, $NS sessions" "$W/$who.log")" = "$r" ] &&
		[ "$(grep -c "$claimed" "$W/$who.log")" = "$r" ] &&
		wait_until 60 test "$(grep -c "$looked" "$W/$who.log")" = "$r" &&
		[ "$(swept_last $who)" = "$orphans kernel sessions nobody claimed" ] &&
		! grep -q "not adopted" "$W/$who.log"
	log_test $? "restart $n ($who #$r): its log: all adopted, by the daemon and the kernel data plane, each session found in the kernel, $orphans orphan kernel sessions deleted"
	if [ $orphans = 1 ]; then
		wait_until 20 expect_count "$NS" k_sessions "$NSB" &&
			! ip -n "$NSB" -j l2tp show session | jq -e --argjson s $ORPHAN 'any(.[]; .session_id == $s)' >/dev/null
		log_test $? "restart $n ($who #$r): the orphan kernel session $ORPHAN is gone, the $NS adopted ones are there"
	fi
	if [ "${KT_RESTART_DIFF:-each}" != last ] || [ "$n" = $((2 * ROUNDS)) ]; then
		snap "$W/after.snap"
		diff "$W/base.snap" "$W/after.snap" > "$W/diff.txt"
		rc=$?; log_test $rc "restart $n ($who #$r): kernel objects, l2tpeth indexes and names, both daemons' lists unchanged"
		[ $rc = 0 ] || head -c 1500 "$W/diff.txt"
	fi
	sid=$(ctlj $who session list | jq '.sessions | max_by(.session_id) | .session_id')
	ctlj $who session show "$sid" | jq -e '.dataplane.kernel_state == "up" and .dataplane.programmed' >/dev/null
	log_test $? "restart $n ($who #$r): its data plane has session $sid up (programmed)"
	expect_count "$T" count_tunnels $peer established && expect_count "$NS" count_sessions $peer established
	log_test $? "restart $n ($who #$r): the peer still has all $T tunnels and $NS sessions established"
done

# --- the old tunnels take new sessions ---------------------------------------------
ok=0
for t in $(seq 1 "$T"); do
	out=$(ctlj a session create tunnel name "t$t" name "new$t") &&
		[ "$(jq -r .state <<<"$out")" = established ] && ok=$((ok + 1))
done
out=$(ctlj b session create tunnel "$T1B" name new-b) && [ "$(jq -r .state <<<"$out")" = established ] &&
	ok=$((ok + 1))
NEW=$((T + 1))
[ "$ok" = "$NEW" ] && wait_until 20 expect_count $((NS + NEW)) count_sessions b established &&
	expect_count $((NS + NEW)) k_sessions "$NSA" && expect_count $((NS + NEW)) k_sessions "$NSB"
log_test $? "after the restarts: $NEW new sessions on the old tunnels ($T from A, 1 from B), in both kernels"
# (per namespace: A and B name their interfaces each on its own)
unique_ifnames() { ctlj "$1" session list | jq -e '[.sessions[].ifname] | length == (unique | length)' >/dev/null; }
unique_ifnames a && unique_ifnames b &&
	[ "$(links "$NSA" | jq length)" = $((NL + NEW)) ] && [ "$(links "$NSB" | jq length)" = $((NL + NEW)) ]
log_test $? "their interfaces are new ones: no name taken twice, $((NL + NEW)) links in each namespace"
ifa=$(ctlj a session show name new1 | jq -r .ifname) psid=$(ctlj a session show name new1 | jq -r .peer_session_id)
ifb=$(ctlj b session show "$psid" | jq -r .ifname)
ip -n "$NSA" addr add 10.79.0.1/30 dev "$ifa" && ip -n "$NSB" addr add 10.79.0.2/30 dev "$ifb" &&
	wait_until 30 pingable "$NSA" 10.79.0.2
log_test $? "a new session carries pings ($ifa - $ifb: $PING_SUMMARY)"

# --- the figures, and the wire -----------------------------------------------------
sleep 1
sent=0 recv=0
for k in $(seq 0 $((P - 1))); do
	kill -INT "$(cat "$W/ping$k.pid")" 2>/dev/null
	wait "$(cat "$W/ping$k.pid")" 2>/dev/null
	rm -f "$W/ping$k.pid"
	l=$(grep -Eo '[0-9]+ packets transmitted, [0-9]+ (packets )?received' "$W/ping$k.out")
	[[ $l =~ ^([0-9]+)\ packets\ transmitted,\ ([0-9]+) ]] || continue
	sent=$((sent + BASH_REMATCH[1])) recv=$((recv + BASH_REMATCH[2]))
done
lost=$((sent - recv))
echo "RESULT: pings through $P pseudowires ($SAMPLE) across $n restarts: $sent sent, $lost lost ($(awk -v l=$lost -v s=$sent 'BEGIN { printf "%.2f", s ? 100 * l / s : 0 }')%; the last one of each may still have been in flight)"
[ "$sent" -gt 0 ]
log_test $? "the pings ran the whole time ($sent echo requests)"

stop_capture_when 60 capture_holds "[.[] | select(.type == \"ICCN\")] | length >= $NEW"
log_test $? "the capture holds the new sessions' $NEW ICCNs"
"$INSPECT" -j "$W/rs.pcap" > "$W/rs.json" 2>/dev/null
bad=$(jq_count "$W/rs.json" 'select(.type == "StopCCN" or .type == "CDN" or .type == "SCCRQ")')
[ "$bad" = 0 ] && [ "$(jq_count "$W/rs.json" 'select(.type == "HELLO")')" -gt 0 ]
log_test $? "no StopCCN, CDN or SCCRQ on the wire across the restarts ($bad; HELLOs seen)"

# --- adopted objects are still watched ---------------------------------------------
# (after the capture: these losses are told to the peers with CDNs)
# (an l2tpeth cannot be deleted by hand: its VLAN can, found by its index)
ip -n "$NSA" link del "$VIF" && wait_until 20 expect_count $((NS + NEW - 1)) k_sessions "$NSA" &&
	wait_until 20 expect_count $((NS + NEW - 1)) count_sessions b established &&
	grep -q "interface $VIF deleted outside l2tpv3d" "$W/a.log"
log_test $? "an adopted VLAN interface deleted by hand on A ($VIF): A notices, the session is cleared on both sides"
S3B=$(ctlj a session show name s3 | jq -r .peer_session_id)
T3B=$(ctlj b session show "$S3B" | jq -r .tunnel_id)
ip -n "$NSB" l2tp del session tunnel_id "$T3B" session_id "$S3B" &&
	wait_until 20 expect_count $((NS + NEW - 2)) count_sessions a established &&
	wait_until 20 expect_count $((NS + NEW - 2)) k_sessions "$NSA" &&
	grep -q "kernel session $S3B deleted outside l2tpv3d" "$W/b.log"
log_test $? "an adopted kernel session deleted by hand on B ($S3B): B notices, its session is cleared on both sides"

# --- the usual stop still cleans up ------------------------------------------------
# (deleting each pseudowire takes the emulated kernel a while: the deadline grows with them)
STOP_S=$((20 + NS / 5))
stop a TERM $STOP_S && stop b TERM $STOP_S &&
	wait_until $STOP_S expect_count 0 k_tunnels "$NSA" && wait_until $STOP_S expect_count 0 k_tunnels "$NSB" &&
	no_l2tpeth "$NSA" && no_l2tpeth "$NSB" && [ -z "$(state_file a)" ] && [ -z "$(state_file b)" ]
log_test $? "both daemons stop: every kernel tunnel and l2tpeth is deleted, the state files removed"

kt_done
