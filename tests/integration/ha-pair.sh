#!/usr/bin/env bash
# An active/standby LNS pair with keepalived (null data plane): the active
# box dies, the standby takes its service address and its tunnels.
#
#   ns A (LAC) 192.0.2.1 on br0 --+-- veth -- ns B (LNS b1) 192.0.2.11
#                                 +-- veth -- ns C (LNS b2) 192.0.2.12
#   service address 192.0.2.2, moved by keepalived (VRRP, unicast)
#
# A opens N tunnels of one session each to the service address, held by b1.
# b1 sends every failover record it writes to b2 (ha_peer, authenticated).
# Then b1's daemon is killed (SIGKILL) and its keepalived stopped: b2's
# keepalived takes the address and runs the shipped notify script, which
# runs `l2tpv3ctl failover takeover`: b2 restores b1's tunnels and sessions
# on the service address and recovers each with A (RFC 4951).  Checked:
# every tunnel and session established on A under the IDs it had (none
# re-created), and on b2; a record with another key is refused.  Prints the
# time from the failure to all resumed.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/integration/ha-lib.sh"
it_setup
command -v keepalived >/dev/null || skip "needs keepalived (scripts/deps installs it)"
N=${HA_N:-1000}

# A's veth0 into a bridge that b2 joins too; b1 takes B's veth1
ha_topology l2tpit
log_test $? "three boxes on one segment: A, b1 and b2"
trap 'kill_pidfiles TERM "$W"/k*.pid.run; ip netns del "$NSC" 2>/dev/null; it_cleanup' EXIT

keepalived_conf b1 veth1 $B1 $B2 150
keepalived_conf b2 veth2 $B2 $B1 100
SECRET=0123456789abcdef-ha-test
ha_conf() {	# ha_conf NAME SELF PEER
	write_conf $1 $VIP "
tunnel_profiles = ( { name = \"default\"; failover = true; recovery_time = 60; } );
peer_default = { accept = true; };"
	sed -i "s|log_level = \"debug\";|log_level = \"info\"; state_dir = \"$W/$1-state\"; max_half_open = $((N + 100)); ha_listen = \"$2:1710\"; ha_peer = \"$3:1710\"; ha_secret = \"$SECRET\";|" "$W/$1.conf"
}
ha_conf b1 $B1 $B2
ha_conf b2 $B2 $B1
write_conf a $A_ADDR 'tunnel_profiles = ( { name = "default"; failover = true; recovery_time = 60; } );'
sed -i "s|log_level = \"debug\";|log_level = \"info\"; state_dir = \"$W/a-state\"; max_half_open = $((N + 100));|" "$W/a.conf"

start b1 "$NSB" && start b2 "$NSC" && start a "$NSA"
log_test $? "A, b1 and b2 start (b1 and b2 on the service address $VIP)"
kstart b1 "$NSB"
wait_until 30 vip_on "$NSB"
log_test $? "b1's keepalived is master: b1 holds $VIP"
kstart b2 "$NSC"

for i in $(seq 1 "$N"); do echo "tunnel create peer $VIP name t$i"; done > "$W/t.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$i name s$i remote-end-id s$i"; done > "$W/s.batch"
ctl a -q -b "$W/t.batch" && ctl a -q -b "$W/s.batch" && wait_until 60 expect_count "$N" count_sessions b1 established
log_test $? "$N tunnels of one session each from A, up on b1"
b2_has_record() {
	ctlj b2 show daemon | jq -e --argjson n "$N" '.ha.record_tunnels == $n' >/dev/null &&
		ctlj b1 show daemon | jq -e '.failover.write_pending == false' >/dev/null
}
wait_until 30 b2_has_record
log_test $? "b2 keeps b1's record of the $N tunnels (sent over ha_peer, verified)"
ids() {
	{ ctlj "$1" tunnel list | jq -r '.tunnels[] | select(.recovery_of == null) | "t \(.tunnel_id) \(.peer_tunnel_id)"'
	  ctlj "$1" session list | jq -r '.sessions[] | "s \(.session_id) \(.peer_session_id)"'; } | sort
}
ids a > "$W/a.before"

t0=$(date +%s%N)
kill -KILL "$(pid_of b1)"
kill -TERM "$(cat "$W/kb1.pid.run")"
wait_until 10 sh -c "! kill -0 $(pid_of b1) 2>/dev/null"
log_test $? "b1's daemon killed (SIGKILL), its keepalived stopped"
wait_until 30 vip_on "$NSC"
log_test $? "b2's keepalived took $VIP"
all_up() {	# all_up NAME
	ctlj "$1" tunnel list | jq -e --argjson n "$N" '[.tunnels[] | select(.recovery_of == null)] as $t |
		($t | length) == $n and ([$t[] | select(.state == "established" and .failover == "none")] |
		length) == $n' >/dev/null && expect_count "$N" count_sessions "$1" established
}
wait_until 120 all_up b2 && wait_until 60 all_up a
rc=$?
log_test $rc "b2 took over: $N tunnels and $N sessions established on b2 and on A"
[ $rc = 0 ] && echo "figure: b1 killed to $N pseudowires resumed through b2: $(( ($(date +%s%N) - t0) / 1000000 )) ms (VRRP takeover included)"
ids a > "$W/a.after"
diff "$W/a.before" "$W/a.after" >/dev/null
log_test $? "A's tunnels and sessions are the ones it had: none re-created"
ctlj a stats | jq -e --argjson n "$N" '.global.msgs_out.StopCCN // 0 == 0 and (.global.msgs_out.CDN // 0) == 0' >/dev/null
log_test $? "A sent no StopCCN and no CDN"

# a record under another key changes nothing
printf 'l2tpha\000\001%s' "$(head -c 200 /dev/zero | tr '\0' 'x')" |
	ip netns exec "$NSA" timeout 5 bash -c "cat > /dev/tcp/$B2/1710" 2>/dev/null
refused() { ctlj b2 show daemon | jq -e '.ha.records_refused >= 1' >/dev/null; }
wait_until 10 refused && all_up b2
log_test $? "a forged record is refused and counted; b2's tunnels stay"

it_done
