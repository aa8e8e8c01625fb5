#!/usr/bin/env bash
# RFC 4951 failover between two of our daemons (null data plane): a crash
# (SIGKILL) of either side costs no tunnel and no session.
#
# A (the LAC) opens N tunnels of one session each to B (the LNS), both with
# `failover = true`.  B is killed and started again: it restores the tunnels
# it had recorded, opens one recovery connection per tunnel (Tunnel Recovery
# AVP), takes A's Suggested Control Sequence, resets, and both reconcile the
# sessions with FSQ/FSR.  Then the same with A killed.  After each crash:
#   - every tunnel and session is established on both sides, under the IDs
#     it had (none re-created: A's and B's tunnel and session IDs, and the
#     peers' IDs for them, are what they were);
#   - the survivor counted N recoveries and sent no StopCCN nor CDN for them;
#   - a HELLO round trip works on every recovered connection (the reset took).
# Then what must change nothing: forged recovery SCCRQs (unknown IDs, IDs
# of a tunnel of another peer address), and a tunnel whose peer did not
# negotiate failover, which a crash clears as before.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/inspect/lib.sh"
it_setup
need_inspect
need_capturer
N=${FAILOVER_N:-1000}

write_conf b $B_ADDR "
tunnel_profiles = ( { name = \"default\"; failover = true; recovery_time = 60; } );
peers = ( { name = \"lacs\"; match = \"192.0.2.0/24\"; accept = true; } );"
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; failover = true; recovery_time = 60; },
                    { name = "plain"; failover = false; hello_interval = 2; max_retries = 3;
                      retransmit_cap = 2; } );'
for d in a b; do
	sed -i "s|log_level = \"debug\";|log_level = \"info\"; state_dir = \"$W/$d-state\"; max_half_open = $((N + 100));|" "$W/$d.conf"
done
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start with failover = true"

for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/t.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$i name s$i remote-end-id s$i"; done > "$W/s.batch"
ctl a -q -b "$W/t.batch" && ctl a -q -b "$W/s.batch"
wait_until 60 expect_count "$N" count_sessions b established
log_test $? "$N tunnels of one session each are up on B"
failover_on() { ctlj "$1" tunnel list | jq -e --argjson n "$N" '[.tunnels[] | select(.failover == "none")] | length == $n' >/dev/null; }
failover_on a && failover_on b
log_test $? "failover is negotiated on all $N tunnels, both sides"

# IDs that a recovery keeps: (tunnel, peer tunnel) and (session, peer session)
ids() {
	{ ctlj "$1" tunnel list | jq -r '.tunnels[] | select(.recovery_of == null) |
		"t \(.tunnel_id) \(.peer_tunnel_id) \(.state)"'
	  ctlj "$1" session list | jq -r '.sessions[] | "s \(.session_id) \(.peer_session_id) \(.state)"'
	} | sort
}
all_recovered() {	# all_recovered NAME: N tunnels, no resync left, N sessions, all established
	local j
	j=$(ctlj "$1" tunnel list) || return 1
	echo "$j" | jq -e --argjson n "$N" '[.tunnels[] | select(.recovery_of == null)] as $t |
		($t | length) == $n and
		([$t[] | select(.state == "established" and .failover == "none")] | length) == $n' \
		>/dev/null && expect_count "$N" count_sessions "$1" established
}
stat_of() { ctlj "$1" stats | jq ".global.$2 // 0"; }
tx_of() { ctlj "$1" stats | jq ".global.msgs_out.$2 // 0"; }
# the snapshot holds all N tunnels and nothing is waiting to be written
recorded_all() {
	ctlj "$1" show daemon | jq -e --argjson n "$N" \
		'.failover.recorded_tunnels == $n and .failover.write_pending == false' >/dev/null &&
		[ -s "$W/$1-state/failover.state" ]
}

for victim in b a; do
	survivor=a; [ $victim = a ] && survivor=b
	ns=$NSB; [ $victim = a ] && ns=$NSA
	wait_until 20 recorded_all $victim
	log_test $? "$victim records its $N tunnels in its state_dir"
	ids a > "$W/a.before"; ids b > "$W/b.before"
	[ "$(grep -c '^t' "$W/a.before")" = "$N" ]
	log_test $? "the snapshot of IDs holds $N tunnels"
	rec0=$(stat_of $survivor failover_recovered)
	stop0=$(tx_of $survivor StopCCN); cdn0=$(tx_of $survivor CDN)

	if [ $victim = b ]; then
		start_capture "$NSB" veth1 "$W/fo.pcap"
		log_test $? "capture running on B's link"
	fi
	t0=$(date +%s%N)
	kill -KILL "$(pid_of $victim)"
	wait_until 10 sh -c "! kill -0 $(pid_of $victim) 2>/dev/null"
	log_test $? "$victim is killed (SIGKILL)"
	start $victim "$ns"
	log_test $? "$victim starts again"
	wait_until 90 all_recovered $victim && wait_until 30 all_recovered $survivor
	log_test $? "after the crash of $victim: $N tunnels and $N sessions established on both sides"
	echo "figure: crash of $victim to $N tunnels recovered on both sides: $(( ($(date +%s%N) - t0) / 1000000 )) ms (restart included)"
	ctlj $victim show daemon | jq -e --argjson n "$N" \
		'.failover.restored_after_crash == $n and .failover.not_restored == 0' >/dev/null
	log_test $? "$victim says it restored $N tunnels after a crash"
	if [ $victim = b ]; then
		stop_capture_when 30 capture_has_types SCCRQ SCCRP SCCCN StopCCN FSQ FSR
		log_test $? "the capture holds the recovery connections and the FSQ/FSR exchange"
		"$INSPECT" -j "$W/fo.pcap" > "$W/fo.json" 2>/dev/null
		# one per tunnel, each counted once: a retransmission under load is a copy
		rq=$(jq_distinct "$W/fo.json" 'select(.type == "SCCRQ" and .avps.tunnel_recovery != null) |
			.avps.tunnel_recovery.ccid')
		rp=$(jq_distinct "$W/fo.json" 'select(.type == "SCCRP" and .avps.suggested_seq != null) | .ccid')
		copies=$(jq_count "$W/fo.json" 'select(.type == "SCCRQ" or .type == "SCCRP")')
		[ "$rq" = "$N" ] && [ "$rp" = "$N" ] &&
			[ "$(jq_count "$W/fo.json" 'select(.type == "CDN")')" = 0 ] &&
			[ "$(jq_count "$W/fo.json" 'select(.type == "FSR" and (.avps.session_state.sid // 0) == 0)')" = 0 ]
		log_test $? "on the wire: $N recovery SCCRQs, $N SCCRPs with a suggested sequence ($rq and $rp; $copies packets of both), no CDN, no session unknown in an FSR"
		summary "$W/fo.json" | jq -e '.violations == 0' >/dev/null
		log_test $? "l2tpv3-inspect finds no protocol violation in the capture"
		if command -v tshark >/dev/null; then
			# the old connections' ports are ephemeral: decode one of them as L2TP
			port=$(jq -r 'select(.type == "FSQ") | .src' "$W/fo.json" | head -1 | sed 's/.*://')
			# one per connection (its Assigned CCID): a retransmission is a copy
			[ "$(tshark -r "$W/fo.pcap" -Y 'l2tp.avp.type == 77' -T fields -e l2tp.avp.assigned_control_conn_id 2>/dev/null |
				sort -u | wc -l)" = "$N" ] &&
				tshark -r "$W/fo.pcap" -d "udp.port==$port,l2tp" -V \
					-Y 'l2tp.avp.message_type == 21 || l2tp.avp.message_type == 22' 2>/dev/null |
				grep -c "Failover Session State AVP" | grep -qx "[1-9][0-9]*"
			log_test $? "tshark reads the $N Tunnel Recovery AVPs and the FSQ/FSR of a connection"
		fi
	fi
	ids a > "$W/a.after"; ids b > "$W/b.after"
	diff "$W/a.before" "$W/a.after" >/dev/null && diff "$W/b.before" "$W/b.after" >/dev/null
	log_test $? "no tunnel nor session was re-created: IDs on both sides are what they were"
	[ "$(( $(stat_of $survivor failover_recovered) - rec0 ))" = "$N" ]
	log_test $? "$survivor reset $N control channels through recovery connections"
	grep -q "the recovery connection for tunnel [0-9]* from .* closed" "$W/$survivor.log" &&
		! grep -q "half-open connection from .*recovered" "$W/$survivor.log"
	log_test $? "$survivor logs its recovery connections' end as such, not as failed half-open connections"
	[ "$(tx_of $survivor StopCCN)" = "$stop0" ] && [ "$(tx_of $survivor CDN)" = "$cdn0" ]
	log_test $? "$survivor sent no StopCCN and no CDN"

	# the reset took: a new session on a recovered tunnel goes through (both Ns/Nr in step)
	ctl a session create tunnel name t1 name extra-$victim remote-end-id extra-$victim >/dev/null
	wait_until 20 expect_count 1 sh -c "$C -s $W/b.ctl -j session list | jq '[.sessions[] | select(.remote_end_id == \"extra-$victim\" and .state == \"established\")] | length'"
	log_test $? "a session opened on a recovered tunnel after the crash of $victim comes up"
	ctl a session delete name extra-$victim >/dev/null
	wait_until 20 expect_count "$N" count_sessions b
	log_test $? "and goes away again"
done

# A peer without the capability: cleared as before a crash of ours.
ctl a tunnel create peer $B_ADDR profile plain name plain >/dev/null &&
	ctl a session create tunnel name plain name plain-s remote-end-id plain-s >/dev/null
log_test $? "a tunnel from a profile without failover, and a session on it"
ctlj a tunnel show name plain | jq -e 'has("failover") | not' >/dev/null
log_test $? "failover is not negotiated on it"
wait_until 20 recorded_all b
log_test $? "B's record still holds the $N failover tunnels, not this one"
kill -KILL "$(pid_of b)"
wait_until 10 sh -c "! kill -0 $(pid_of b) 2>/dev/null"
start b "$NSB"
log_test $? "B killed and started again"
wait_until 60 all_recovered b
log_test $? "B recovered the $N failover tunnels again, and did not restore the other"
plain_gone() { ! ctl a tunnel show name plain >/dev/null 2>&1 && [ "$(count_tunnels b)" -ge "$N" ]; }
wait_until 60 plain_gone && wait_until 30 all_recovered a
log_test $? "the tunnel without failover is cleared on A (its HELLO met a B that forgot it); the others are up"
ids a > "$W/a.after"; ids b > "$W/b.after"

# Forged recovery SCCRQs change nothing: a scripted peer beside A (another
# port: A holds 1701), and from an address of A's namespace that is not A's.
ip -n "$NSA" addr add 192.0.2.3/24 dev veth0
recovery_avp() { printf '0:77:1:0000%08x%08x' "$1" "$2"; }	# recovery_avp THEIR_CCID OUR_CCID
refused0=$(stat_of b failover_refused)
TID=$(ctlj b tunnel list | jq -r '.tunnels[0].tunnel_id')
PTID=$(ctlj b tunnel show "$TID" | jq -r .peer_tunnel_id)
peer_start_at $A_ADDR 1799
P connect extra="$(recovery_avp $((PTID ^ 1)) "$TID")" && [ "$(J .reply.type)" = StopCCN ]
log_test $? "a recovery SCCRQ with the wrong peer ID for B's tunnel is refused (StopCCN)"
P connect extra="$(recovery_avp "$PTID" $((TID ^ 1)))" && [ "$(J .reply.type)" = StopCCN ]
log_test $? "a recovery SCCRQ naming no tunnel of B's is refused"
peer_stop
peer_start_at 192.0.2.3 1701
P connect extra="$(recovery_avp "$PTID" "$TID")" && [ "$(J .reply.type)" = StopCCN ]
log_test $? "a recovery SCCRQ with the right IDs from another address is refused"
peer_stop
[ "$(stat_of b failover_refused)" = "$((refused0 + 3))" ]
log_test $? "B counted the 3 refused recovery SCCRQs"
all_recovered b && all_recovered a && ids b > "$W/b.forged" && diff "$W/b.after" "$W/b.forged" >/dev/null
log_test $? "and nothing changed on either side"

it_done
