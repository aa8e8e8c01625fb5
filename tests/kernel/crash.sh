#!/usr/bin/env bash
# A crash (SIGKILL) of either daemon with the kernel data plane and RFC 4951
# failover: the crashed side's kernel objects die with its sockets; the next
# process makes them again under the same IDs and recovers every control
# connection, and the pseudowires carry traffic again.
#
#   crash.sh [N]        N Ethernet pseudowires (default 20, $KT_CRASH_N)
#                       over $KT_CRASH_TUNNELS tunnels (default 4)
#
# B (the LNS), then A (the LAC), is killed and started again.  After each:
#   - both daemons hold every tunnel and session established, with the IDs
#     they had (none re-created on the wire), and so does each kernel (the
#     genl dump: tunnel and session IDs, peer IDs);
#   - the survivor's l2tpeth interfaces are the ones it had (same index);
#   - a sample of pseudowires carries pings again once their addresses are
#     set on the crashed side's new interfaces (the addresses were the
#     interfaces', gone with them).
# Prints the time from the kill to all recovered (a figure).
. "$(dirname "$0")/lib.sh"
kt_setup

N=${1:-${KT_CRASH_N:-20}}
T=${KT_CRASH_TUNNELS:-4}
P=3				# pseudowires pinged through
[ "$T" -le "$N" ] || T=$N
CTL_T=300

cfg='peer_default = { accept = true; };
tunnel_profiles = ( { name = "default"; hello_interval = 5; failover = true; recovery_time = 60; } );'
write_conf a $A_ADDR "$cfg"
write_conf b $B_ADDR "$cfg"
start b "$NSB" && start a "$NSA"
rc=$?; log_test $rc "both daemons start (kernel data plane, failover)"
[ $rc = 0 ] || { kt_done; exit 1; }

for t in $(seq 1 "$T"); do echo "tunnel create peer $B_ADDR name t$t"; done > "$W/t.batch"
for i in $(seq 1 "$N"); do echo "session create tunnel name t$(( (i - 1) % T + 1 )) name s$i"; done > "$W/s.batch"
ctl a -q -t $CTL_T -b "$W/t.batch" && ctl a -q -t $CTL_T -b "$W/s.batch" &&
	wait_until 60 expect_count "$N" count_sessions b established &&
	expect_count "$N" k_sessions "$NSA" && expect_count "$N" k_sessions "$NSB"
log_test $? "$T tunnels and $N sessions up, in both kernels"

# sample K: s(1 + K*N/P); A's interface gets 10.77.K.1, B's 10.77.K.2
SAMPLE=
for k in $(seq 0 $((P - 1))); do SAMPLE="$SAMPLE s$((1 + k * N / P))"; done
address_sample() {	# address_sample: (again) on both sides, then ping each
	local k=-1 ok=0 name out ifa ifb psid
	for name in $SAMPLE; do
		k=$((k + 1))
		out=$(ctlj a session show name "$name") || continue
		ifa=$(jq -r .ifname <<<"$out") psid=$(jq -r .peer_session_id <<<"$out")
		ifb=$(ctlj b session show "$psid" | jq -r .ifname)
		ip -n "$NSA" addr replace "10.77.$k.1/30" dev "$ifa" &&
			ip -n "$NSB" addr replace "10.77.$k.2/30" dev "$ifb" &&
			wait_until 60 pingable "$NSA" "10.77.$k.2" && ok=$((ok + 1))
	done
	[ "$ok" = "$P" ]
}
address_sample
log_test $? "$P pseudowires carry pings ($SAMPLE)"

recorded_all() {
	ctlj "$1" show daemon | jq -e --argjson n "$T" \
		'.failover.recorded_tunnels == $n and .failover.write_pending == false' >/dev/null
}
links() {
	ip -n "$1" -j link show | jq -c '[.[] | select(.ifname | startswith("l2tpeth")) | [.ifindex, .ifname]] | sort'
}
all_up() {	# all_up NAME NS: the daemon's and the kernel's objects, all there
	expect_count "$T" count_tunnels "$1" established && expect_count "$N" count_sessions "$1" established &&
		ctlj "$1" tunnel list | jq -e '[.tunnels[] | select(.recovery_of == null and
			.failover != "none")] | length == 0' >/dev/null &&
		expect_count "$T" k_tunnels "$2" && expect_count "$N" k_sessions "$2"
}
for victim in b a; do
	survivor=a ns=$NSB sns=$NSA; [ $victim = a ] && survivor=b ns=$NSA sns=$NSB
	wait_until 30 recorded_all $victim
	log_test $? "$victim records its $T tunnels for a crash"
	for x in a b; do d_tunnel_ids $x > "$W/$x.dt"; d_session_ids $x | jq -c 'map(.[0:3])' > "$W/$x.ds"; done
	k_tunnel_ids "$NSA" > "$W/ka.t"; k_tunnel_ids "$NSB" > "$W/kb.t"
	links "$sns" > "$W/survivor.links"
	t0=$(date +%s%N)
	stop $victim KILL
	log_test $? "$victim is killed (SIGKILL)"
	wait_until 30 expect_count 0 k_tunnels "$ns"
	log_test $? "its kernel tunnels went with its sockets"
	start $victim "$ns"
	log_test $? "$victim starts again"
	wait_until 120 all_up $victim "$ns" && wait_until 60 all_up $survivor "$sns"
	rc=$?
	log_test $rc "after the crash of $victim: $T tunnels and $N sessions in both daemons and both kernels"
	[ $rc = 0 ] && echo "RESULT: crash of $victim to all $T tunnels and $N sessions recovered (daemons and kernels): $(( ($(date +%s%N) - t0) / 1000000 )) ms under emulation"
	ok=0
	for x in a b; do
		d_tunnel_ids $x | diff -q - "$W/$x.dt" >/dev/null &&
			d_session_ids $x | jq -c 'map(.[0:3])' | diff -q - "$W/$x.ds" >/dev/null && ok=$((ok + 1))
	done
	k_tunnel_ids "$NSA" | diff -q - "$W/ka.t" >/dev/null && k_tunnel_ids "$NSB" | diff -q - "$W/kb.t" >/dev/null &&
		[ $ok = 2 ]
	log_test $? "the same tunnel and session IDs in both daemons and both kernels"
	links "$sns" | diff -q - "$W/survivor.links" >/dev/null
	log_test $? "$survivor's interfaces are the ones it had (same indexes)"
	address_sample
	log_test $? "after the crash of $victim: the $P pseudowires carry pings again"
done

kt_done
