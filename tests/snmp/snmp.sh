#!/usr/bin/env bash
# L2TPV3D-MIB through a real snmpd: the subagent survives a missing master
# and finds it later, serves tunnels and sessions in index order (config_id
# indexing, lowest free id reused; CCID indexing), counters move, deleted
# objects disappear, tunnel up/down notifications reach a trap receiver, and
# a killed and restarted snmpd gets the subagent back.
. "$(dirname "$0")/lib.sh"
snmp_setup

PEER_IDX="1.4.${B_ADDR//./.}"	# ipv4(1), 4 octets: the peer part of a tunnel index
TUN_COLS=30 SESS_COLS=20 SCALARS=12

# --- the MIB itself ----------------------------------------------------------
# (a first net-snmp run on a fresh host says "Created directory: /var/lib/snmp/...")
out=$(snmptranslate "${MIBARGS[@]}" -Tp 2>&1 >/dev/null | grep -v '^Created directory: ')
[ -z "$out" ] && snmptranslate "${MIBARGS[@]}" -On L2TPV3D-MIB::l2tpv3dTunnelUp | grep -qx '.1.3.6.1.4.1.99999.0.1'
log_test $? "snmptranslate loads L2TPV3D-MIB without a complaint"
if command -v smilint >/dev/null; then
	out=$(SMIPATH="$top_srcdir/tests/snmp/mibs" smilint -l 3 -s "$top_srcdir/mibs/L2TPV3D-MIB.txt" 2>&1)
	[ -z "$out" ] || echo "$out"
	[ -z "$out" ]
	log_test $? "smilint -l 3: L2TPV3D-MIB is clean"
fi

# --- no master at start ----------------------------------------------------
"$D" --version | grep -qx "snmp: AgentX subagent (snmp.enabled)"
log_test $? "l2tpv3d --version says this build has the SNMP subagent"
write_conf a $A_ADDR true true
write_conf b $B_ADDR false true
start a && start b
log_test $? "daemons start while no snmpd runs"
wait_until 2 grep -q "not reachable yet" "$W/a.log"
log_test $? "a logs that the AgentX master is not there yet"

snmptrapd_start && HAVE_TRAPD=1
snmpd_start
log_test $? "snmpd starts as AgentX master on a private socket and port"
wait_until 15 sh -c "snmpget ${SNMP[*]} -Oqv l2tpv3dVersion.0 | grep -qx '[0-9][0-9.]*'"
log_test $? "a connects to snmpd once it appears (version answered)"
[ "$(sget l2tpv3dHostName.0)" = a ] && [ "$(sget l2tpv3dConfigIdIndexing.0)" = true ] &&
	[ "$(sget l2tpv3dDataPlane.0)" = null ] && [ "$(sget l2tpv3dTunnels.0)" = 0 ]
log_test $? "scalars: host name, config_id indexing on, null data plane, no tunnel"

# --- three tunnels to one peer, then the 2nd deleted and one more created -----
for n in 1 2 3; do
	T[$n]=$(ctlj a tunnel create peer $B_ADDR name t$n hello 1 | jq -r .tunnel_id)
done
[ "$(sindexes l2tpv3dTunnelLocalId | tr '\n' ' ')" = "$PEER_IDX.1 $PEER_IDX.2 $PEER_IDX.3 " ]
log_test $? "tunnel table: three rows (ipv4, $B_ADDR, config_id 1..3)"
ok=0
for n in 1 2 3; do
	show=$(ctlj a tunnel show "${T[$n]}")
	[ "$(svalue l2tpv3dTunnelLocalId.$PEER_IDX.$n)" = "${T[$n]}" ] &&
	[ "$(svalue l2tpv3dTunnelRemoteId.$PEER_IDX.$n)" = "$(jq -r .peer_tunnel_id <<<"$show")" ] &&
	[ "$(svalue l2tpv3dTunnelConfigId.$PEER_IDX.$n)" = "$n" ] &&
	[ "$(svalue l2tpv3dTunnelName.$PEER_IDX.$n)" = "t$n" ] &&
	[ "$(svalue l2tpv3dTunnelState.$PEER_IDX.$n)" = tunnelEstablished ] &&
	[ "$(svalue l2tpv3dTunnelInitiated.$PEER_IDX.$n)" = locally ] &&
	[ "$(svalue l2tpv3dTunnelRemoteHostName.$PEER_IDX.$n)" = b ] &&
	[ "$(svalue l2tpv3dTunnelEncapsulation.$PEER_IDX.$n)" = udp ] &&
	[ "$(svalue l2tpv3dTunnelRemoteAddressType.$PEER_IDX.$n)" = ipv4 ] || ok=1
done
log_test $ok "tunnel columns match l2tpv3ctl: ids, config_id, name, state, peer host name"

ctl a tunnel delete "${T[2]}" >/dev/null &&
	wait_until 5 sh -c "! snmpget ${SNMP[*]} -Oqv l2tpv3dTunnelLocalId.$PEER_IDX.2 | grep -q '^[0-9]'"
log_test $? "a deleted tunnel disappears from the table"
[ "$(sindexes l2tpv3dTunnelLocalId | tr '\n' ' ')" = "$PEER_IDX.1 $PEER_IDX.3 " ] &&
	[ "$(sget l2tpv3dTunnels.0)" = 2 ]
log_test $? "the walk skips it: rows 1 and 3 left, l2tpv3dTunnels = 2"
T[4]=$(ctlj a tunnel create peer $B_ADDR name t4 | jq -r .tunnel_id)
[ "$(ctlj a tunnel show "${T[4]}" | jq -r .config_id)" = 2 ] &&
	[ "$(svalue l2tpv3dTunnelLocalId.$PEER_IDX.2)" = "${T[4]}" ] &&
	[ "$(svalue l2tpv3dTunnelName.$PEER_IDX.2)" = t4 ]
log_test $? "the next tunnel to the peer takes the lowest free config_id, 2"

# --- sessions ------------------------------------------------------------------
S1=$(ctlj a session create tunnel "${T[1]}" name s1 cookie 4 remote-end-id pw1 | jq -r .session_id)
S2=$(ctlj a session create tunnel "${T[1]}" name s2 cookie 8 | jq -r .session_id)
want=$(printf '%s\n' "${T[1]}.$S1" "${T[1]}.$S2" | sort -t. -k2,2n | tr '\n' ' ')
[ "$(sindexes l2tpv3dSessionState | tr '\n' ' ')" = "$want" ] && [ "$(sget l2tpv3dSessions.0)" = 2 ]
log_test $? "session table: two rows (tunnel CCID, session id), in id order"
ss=$(ctlj a session show "$S1")
[ "$(svalue l2tpv3dSessionState.${T[1]}.$S1)" = sessionEstablished ] &&
	[ "$(svalue l2tpv3dSessionRemoteId.${T[1]}.$S1)" = "$(jq -r .peer_session_id <<<"$ss")" ] &&
	[ "$(svalue l2tpv3dSessionInterface.${T[1]}.$S1)" = "$(jq -r .ifname <<<"$ss")" ] &&
	[ "$(svalue l2tpv3dSessionCookieLength.${T[1]}.$S1)" = 4 ] &&
	[ "$(svalue l2tpv3dSessionCookieLength.${T[1]}.$S2)" = 8 ] &&
	[ "$(svalue l2tpv3dSessionRemoteEndId.${T[1]}.$S1)" = '"pw1"' ] &&
	[ "$(svalue l2tpv3dSessionPwType.${T[1]}.$S1)" = 5 ] &&
	[ "$(svalue l2tpv3dSessionCallType.${T[1]}.$S1)" = lacIncoming ] &&
	[ "$(svalue l2tpv3dSessionCountersValid.${T[1]}.$S1)" = true ] &&
	[ "$(svalue l2tpv3dTunnelSessions.$PEER_IDX.1)" = 2 ]
log_test $? "session columns match l2tpv3ctl: peer id, interface, cookies, pw type, call type"

# --- counters move --------------------------------------------------------------
tx=$(svalue l2tpv3dTunnelControlTxPkts.$PEER_IDX.1) rx=$(svalue l2tpv3dTunnelControlRxPkts.$PEER_IDX.1)
wait_until 5 sh -c "[ \$(snmpget ${SNMP[*]} -Oqv l2tpv3dTunnelControlTxPkts.$PEER_IDX.1) -gt $tx ] &&
	[ \$(snmpget ${SNMP[*]} -Oqv l2tpv3dTunnelControlRxPkts.$PEER_IDX.1) -gt $rx ]"
log_test $? "messages in/out of t1 grow with its 1 s HELLOs ($tx/$rx before)"
tx=$(svalue l2tpv3dTunnelControlTxPkts.$PEER_IDX.3)
ctl a session create tunnel "${T[3]}" >/dev/null &&
	[ "$(svalue l2tpv3dTunnelControlTxPkts.$PEER_IDX.3)" -ge $((tx + 2)) ]
log_test $? "a new session on t3 adds its ICRQ and ICCN to t3's messages out"

# --- the whole subtree, in order, with GETNEXT and GETBULK -------------------
nt=$(ctlj a tunnel list | jq '.tunnels | length') ns=$(ctlj a session list | jq '.sessions | length')
walk=$(snmpwalk "${SNMP[@]}" -On l2tpv3dMIB 2>&1) bulk=$(snmpbulkwalk "${SNMP[@]}" -On l2tpv3dMIB 2>&1)
[ "$(grep -c '^\.1\.3\.6\.1\.4\.1\.99999\.' <<<"$walk")" = $((SCALARS + TUN_COLS * nt + SESS_COLS * ns)) ] &&
	! grep -qi "error\|not increasing" <<<"$walk"
log_test $? "snmpwalk: $SCALARS scalars + $TUN_COLS x $nt tunnels + $SESS_COLS x $ns sessions, OIDs increasing"
[ "$(cut -d' ' -f1 <<<"$walk")" = "$(cut -d' ' -f1 <<<"$bulk")" ]
log_test $? "snmpbulkwalk returns the same instances as snmpwalk"
last=$(tail -1 <<<"$walk" | cut -d' ' -f1)
nxt=$(snmpgetnext "${SNMP[@]}" -On "$last" 2>&1 | cut -d' ' -f1)
[ -n "$nxt" ] && [[ "$nxt" != .1.3.6.1.4.1.99999.* ]]
log_test $? "GETNEXT past the last session leaves the subtree ($nxt)"
[[ "$(sget l2tpv3dTunnelName.$PEER_IDX.9)" == *"No Such Instance"* ]] &&
	[[ "$(sget l2tpv3dTunnelName.0)" == *"No Such Instance"* ]] &&
	[[ "$(sget .1.3.6.1.4.1.99999.1.2.1.99.$PEER_IDX.1)" == *"No Such Object"* ]]
log_test $? "GET of absent rows: noSuchInstance; of an unknown column: noSuchObject"

# --- notifications ----------------------------------------------------------------
if [ -n "${HAVE_TRAPD:-}" ]; then
	T5=$(ctlj a tunnel create peer $B_ADDR name t5 | jq -r .tunnel_id)
	# the trap's lines reach the file one by one: wait for all of what is asserted
	trap_up() { grep -q "99999\.0\.1" "$W/traps.log" && grep -q "$T5" "$W/traps.log"; }
	wait_until 10 trap_up
	log_test $? "l2tpv3dTunnelUp reaches the trap receiver with the tunnel's id"
	ctl a tunnel delete "$T5" >/dev/null
	wait_until 5 grep -q "99999\.0\.2" "$W/traps.log"
	log_test $? "l2tpv3dTunnelDown follows its deletion"
fi

# --- snmpd killed and restarted --------------------------------------------------
snmpd_kill
T6=$(ctlj a tunnel create peer $B_ADDR name t6 | jq -r .tunnel_id)
[ -n "$T6" ] && [ "$T6" != null ] && kill -0 "$(cat "$W/a.pid")" && ctl a show daemon >/dev/null
log_test $? "snmpd killed: a goes on (creates a tunnel, answers l2tpv3ctl)"
snmpd_start && wait_until 15 sh -c "snmpget ${SNMP[*]} -Oqv l2tpv3dTunnels.0 | grep -qx '[0-9]*'"
log_test $? "snmpd restarted: a registers again"
[ "$(sget l2tpv3dTunnels.0)" = "$(ctlj a show daemon | jq .tunnels)" ] &&
	sindexes l2tpv3dTunnelName | grep -q . && swalk l2tpv3dTunnelName | grep -q "= t6$"
log_test $? "the reconnected subagent serves the current tables (t6 included)"

# --- CCID indexing (snmp_config_id off) -------------------------------------------
stop a && write_conf a $A_ADDR true false && start a &&
	wait_until 15 sh -c "snmpget ${SNMP[*]} -Oqv l2tpv3dConfigIdIndexing.0 | grep -qx false"
log_test $? "a restarted with snmp_config_id off: l2tpv3dConfigIdIndexing = false"
for n in 1 2 3; do ctl a tunnel create peer $B_ADDR >/dev/null; done
want=$(ctlj a tunnel list | jq -r '.tunnels[].tunnel_id' | sort -n | sed 's/^/0.0./' | tr '\n' ' ')
[ "$(sindexes l2tpv3dTunnelLocalId | tr '\n' ' ')" = "$want" ] &&
	[ "$(sindexes l2tpv3dTunnelConfigId | wc -l)" = 3 ] &&
	! swalk l2tpv3dTunnelConfigId | grep -qv "= 0$"
log_test $? "tunnel rows indexed (unknown, \"\", CCID) in CCID order, config_id 0"

# --- a storm of tunnel-ups: notifications limited, the daemon never stalls ---------
# One notification per tunnel would fill the AgentX socket (net-snmp writes
# it blocking); 800 tunnels in one batch must come up with a answering, and
# the excess notifications be counted as suppressed.
ulimit -n 4096 2>/dev/null
for _ in $(seq 800); do echo "tunnel create peer $B_ADDR"; done |
	ctl a -b - -w 256 -t 60 >/dev/null
wait_until 30 sh -c "[ \$($C -s $W/a.ctl -j show daemon | jq .tunnels_established) -ge 803 ]" &&
	grep -q "notifications suppressed" "$W/a.log"
log_test $? "800 tunnels at once: all up, a responsive, notifications beyond the rate suppressed"
if [ -n "${HAVE_TRAPD:-}" ]; then
	sleep 1
	n=$(grep -c "99999\.0\.1" "$W/traps.log")
	[ "$n" -lt 700 ]
	log_test $? "the trap receiver got $n tunnel-up notifications in all, not one per tunnel"
fi

kill -0 "$(cat "$W/a.pid")" && kill -0 "$(cat "$W/b.pid")"
log_test $? "both daemons still running"
grep -q "snmp: AgentX master" "$W/a.log" && ! grep -i "assert\|lock in" "$W/a.log"
log_test $? "no net-snmp assertion or lock warning in a's log"
snmp_done
