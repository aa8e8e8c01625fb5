#!/usr/bin/env bash
# The active/standby pair with keepalived and the kernel data plane: the
# active LNS box dies, the standby takes the service address, makes the
# kernel tunnels and sessions again under the same IDs and recovers each
# control connection with the LAC (RFC 4951); pseudowires carry pings again.
#
#   ha-pair.sh [N]      N Ethernet pseudowires (default 12, $KT_HA_N) over
#                       $KT_HA_TUNNELS tunnels (default 3)
#
#   ns A (LAC) 192.0.2.1 on br0 --+-- veth -- ns B (LNS b1) 192.0.2.11
#                                 +-- veth -- ns C (LNS b2) 192.0.2.12
#   service address 192.0.2.2, moved by keepalived (VRRP, unicast)
#
# Checked: A's tunnels and sessions, and A's kernel objects and interfaces,
# are the ones they were (same IDs, same interface indexes); b2 has every
# kernel tunnel and session; a sample of pseudowires answers pings once the
# addresses are set on b2's new interfaces.  Prints the time from the
# failure to all resumed (a figure).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/integration/ha-lib.sh"
kt_setup
command -v keepalived >/dev/null || skip "needs keepalived (scripts/deps installs it)"

N=${1:-${KT_HA_N:-12}}
T=${KT_HA_TUNNELS:-3}
P=3
[ "$T" -le "$N" ] || T=$N
CTL_T=300

ha_topology l2tpk
log_test $? "three boxes on one segment: A, b1 and b2"
trap 'kill_pidfiles TERM "$W"/k*.pid.run; ip netns del "$NSC" 2>/dev/null; kt_cleanup' EXIT
keepalived_conf b1 veth1 $B1 $B2 150
keepalived_conf b2 veth2 $B2 $B1 100

prof='tunnel_profiles = ( { name = "default"; hello_interval = 5; failover = true; recovery_time = 60; } );
peer_default = { accept = true; };'
for b in b1 b2; do
	self=$B1 peer=$B2; [ $b = b2 ] && self=$B2 peer=$B1
	KT_GLOBAL="ha_listen = \"$self:1710\"; ha_peer = \"$peer:1710\"; ha_secret = \"0123456789abcdef-ha-kt\";" \
		write_conf $b $VIP "$prof"
done
write_conf a $A_ADDR "$prof"
start b1 "$NSB" && start b2 "$NSC" && start a "$NSA"
rc=$?; log_test $rc "A, b1 and b2 start (kernel data plane; b1 and b2 on $VIP)"
[ $rc = 0 ] || { kt_done; exit 1; }
kstart b1 "$NSB"
wait_until 60 vip_on "$NSB"
log_test $? "b1's keepalived is master: b1 holds $VIP"
kstart b2 "$NSC"

for t in $(seq 1 "$T"); do echo "tunnel create peer $VIP name t$t"; done > "$W/t.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$(( (i - 1) % T + 1 )) name s$i"; done > "$W/s.batch"
ctl a -q -t $CTL_T -b "$W/t.batch" && ctl a -q -t $CTL_T -b "$W/s.batch" &&
	wait_until 60 expect_count "$N" count_sessions b1 established &&
	expect_count "$N" k_sessions "$NSA" && expect_count "$N" k_sessions "$NSB"
log_test $? "$T tunnels and $N sessions from A to b1, in both kernels"

SAMPLE=
for k in $(seq 0 $((P - 1))); do SAMPLE="$SAMPLE s$((1 + k * N / P))"; done
address_sample() {	# address_sample LNS: addresses on A's and the LNS's ends, then ping
	local k=-1 ok=0 name out ifa ifb psid
	for name in $SAMPLE; do
		k=$((k + 1))
		out=$(ctlj a session show name "$name") || continue
		ifa=$(jq -r .ifname <<<"$out") psid=$(jq -r .peer_session_id <<<"$out")
		ifb=$(ctlj "$1" session show "$psid" | jq -r .ifname)
		ip -n "$NSA" addr replace "10.76.$k.1/30" dev "$ifa" &&
			ip -n "$2" addr replace "10.76.$k.2/30" dev "$ifb" &&
			wait_until 60 pingable "$NSA" "10.76.$k.2" && ok=$((ok + 1))
	done
	[ "$ok" = "$P" ]
}
address_sample b1 "$NSB"
log_test $? "$P pseudowires through b1 carry pings ($SAMPLE)"
b2_has_record() {
	ctlj b2 show daemon | jq -e --argjson n "$T" '.ha.record_tunnels == $n' >/dev/null &&
		ctlj b1 show daemon | jq -e '.failover.write_pending == false' >/dev/null
}
wait_until 60 b2_has_record
log_test $? "b2 keeps b1's record of the $T tunnels"
d_tunnel_ids a > "$W/a.dt"; d_session_ids a | jq -c 'map(.[0:3])' > "$W/a.ds"; k_tunnel_ids "$NSA" > "$W/ka.t"
links() { ip -n "$1" -j link show | jq -c '[.[] | select(.ifname | startswith("l2tpeth")) | [.ifindex, .ifname]] | sort'; }
links "$NSA" > "$W/a.links"

t0=$(date +%s%N)
stop b1 KILL
kill -TERM "$(cat "$W/kb1.pid.run")"
log_test $? "b1's daemon killed (SIGKILL), its keepalived stopped"
wait_until 60 vip_on "$NSC"
log_test $? "b2's keepalived took $VIP"
all_up() {	# all_up NAME NS
	expect_count "$T" count_tunnels "$1" established && expect_count "$N" count_sessions "$1" established &&
		ctlj "$1" tunnel list | jq -e '[.tunnels[] | select(.recovery_of == null and
			.failover != "none")] | length == 0' >/dev/null &&
		expect_count "$T" k_tunnels "$2" && expect_count "$N" k_sessions "$2"
}
wait_until 180 all_up b2 "$NSC" && wait_until 60 all_up a "$NSA"
rc=$?
log_test $rc "b2 took over: $T tunnels and $N sessions in b2, A and both kernels"
[ $rc = 0 ] && echo "RESULT: b1 killed to all $N pseudowires resumed through b2 (daemons and kernels): $(( ($(date +%s%N) - t0) / 1000000 )) ms under emulation"
d_tunnel_ids a | diff -q - "$W/a.dt" >/dev/null && d_session_ids a | jq -c 'map(.[0:3])' | diff -q - "$W/a.ds" >/dev/null &&
	k_tunnel_ids "$NSA" | diff -q - "$W/ka.t" >/dev/null && links "$NSA" | diff -q - "$W/a.links" >/dev/null
log_test $? "A's tunnels, sessions, kernel objects and interfaces are the ones it had"
address_sample b2 "$NSC"
log_test $? "the $P pseudowires carry pings again, now through b2"

kt_done
