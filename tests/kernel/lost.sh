#!/usr/bin/env bash
# Kernel objects deleted behind the daemons' backs :
# `ip l2tp del session`, `ip link del` of a pseudowire interface and
# `ip l2tp del tunnel`, over UDP and IP encapsulation, on the side that
# opened them (A, static tunnels and sessions) and on the other (B).  Each
# time the daemon that lost the object logs it and tells the peer (CDN or
# StopCCN with result 2 and its reason), the monitor gets the event, the
# static objects come back by themselves, and `l2tpv3ctl -j` and
# `ip -j l2tp show` agree again on both sides.
. "$(dirname "$0")/lib.sh"
kt_setup

KT_GLOBAL="listen_ip = true;"
VLAN_PROFILE='session_profiles = ( { name = "vlan"; pw_type = "eth_vlan"; vlan_id = 42; } );'
write_conf a $A_ADDR "tunnel_profiles = ( { name = \"ip\"; encap = \"ip\"; } );
$VLAN_PROFILE
peer_default = { accept = true; };
tunnels = ( { name = \"u\"; peer = \"$B_ADDR\";
              sessions = ( { name = \"u1\"; }, { name = \"u2\"; profile = \"vlan\"; } ); },
            { name = \"i\"; peer = \"$B_ADDR\"; profile = \"ip\";
              sessions = ( { name = \"i1\"; } ); } );"
write_conf b $B_ADDR "$VLAN_PROFILE
peer_default = { accept = true; session_profile = \"vlan\"; };"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start with the kernel data plane"

# The daemon's established objects are exactly the kernel's, on both sides
# (the daemon names a VLAN pseudowire by its VLAN, the kernel by its l2tpeth).
agree() {
	local n
	for n in a b; do
		local ns=$NSA; [ $n = b ] && ns=$NSB
		[ "$(d_tunnel_ids $n)" = "$(k_tunnel_ids "$ns")" ] &&
			[ "$(d_session_ids $n | sed 's/\.42"/"/g')" = "$(k_session_ids "$ns")" ] || return 1
	done
}
all_up() { expect_count 2 count_tunnels a established && expect_count 3 count_sessions a established &&
	expect_count 3 count_sessions b established && agree; }
show_state() {
	echo "  A: $(d_tunnel_ids a) $(d_session_ids a)"; echo "  A kernel: $(k_tunnel_ids "$NSA") $(k_session_ids "$NSA")"
	echo "  B: $(d_tunnel_ids b) $(d_session_ids b)"; echo "  B kernel: $(k_tunnel_ids "$NSB") $(k_session_ids "$NSB")"
}
wait_until 20 all_up
rc=$?; log_test $rc "static tunnels u (UDP) and i (IP) with 3 sessions up; daemons and kernels agree"
[ $rc = 0 ] || show_state

"$C" -s "$W/a.ctl" -j monitor >"$W/mon.a" 2>/dev/null &
MON=$!
wait_until 5 sh -c "[ \$(\"$C\" -s '$W/a.ctl' -j show daemon | jq .ctl_clients) -ge 2 ]"

# sess NAME: "tid sid ifname" of A's session NAME
sess() { ctlj a session show name "$1" | jq -r '"\(.tunnel_id) \(.session_id) \(.ifname)"'; }
tun() { ctlj a tunnel show name "$1" | jq -r .tunnel_id; }
# replaced KIND NAME OLD_ID: A's static tunnel or session NAME is up again under a new id
replaced() { [ "$(ctlj a "$1" show name "$2" | jq -r ".$1_id")" != "$3" ]; }
# peer_of_a_session SID: B's session id for A's session SID
peer_sid() { ctlj a session show "$1" | jq -r .peer_session_id; }

# --- a kernel session deleted on A (UDP) -----------------------------------------------
read -r T S IF <<<"$(sess u1)"; PS=$(peer_sid "$S")
ip -n "$NSA" l2tp del session tunnel_id "$T" session_id "$S"
wait_until 5 grep -q "warning: session u1 ($S): kernel session $S deleted outside l2tpv3d: clearing it" "$W/a.log"
log_test $? "A: ip l2tp del session (UDP) is noticed and logged"
wait_until 5 sh -c "! '$C' -s '$W/b.ctl' session show $PS >/dev/null 2>&1" &&
	grep -q "session [^ ]* ($PS): down: .*result 2 .*kernel session $S deleted outside l2tpv3d" "$W/b.log"
rc=$?; log_test $rc "B is told: its session $PS cleared by a CDN with result 2 and the reason"
[ $rc = 0 ] || grep "session $PS" "$W/b.log"
wait_until 5 grep -q "\"event\":\"session-down\",\"tunnel_id\":$T,\"session_id\":$S,.*deleted outside" "$W/mon.a"
log_test $? "A's monitor gets session-down with the reason"
wait_until 20 replaced session u1 "$S" &&
	wait_until 10 all_up
rc=$?; log_test $rc "static session u1 comes back (new id), daemons and kernels agree"
[ $rc = 0 ] || show_state

# --- a pseudowire's interface deleted on A (its VLAN: l2tpeth has no rtnl delete) ------
read -r T S IF <<<"$(sess u2)"
ip -n "$NSA" link del "$IF"
wait_until 5 grep -q "warning: session u2 ($S): interface $IF deleted outside l2tpv3d: clearing it" "$W/a.log" &&
	wait_until 5 sh -c "! ip -n $NSA l2tp show session | grep -q 'Session ID: $S\$'"
log_test $? "A: ip link del $IF (eth_vlan): logged, its kernel session deleted too"
wait_until 20 replaced session u2 "$S" &&
	wait_until 10 all_up
rc=$?; log_test $rc "static session u2 comes back with a new interface, all agree"
[ $rc = 0 ] || show_state

# --- a kernel session deleted on B (IP encapsulation, B not static) ---------------------
read -r T S IF <<<"$(sess i1)"; PS=$(peer_sid "$S"); PT=$(ctlj b session show "$PS" | jq -r .tunnel_id)
ip -n "$NSB" l2tp del session tunnel_id "$PT" session_id "$PS"
wait_until 5 grep -q "warning: session [^ ]* ($PS): kernel session $PS deleted outside l2tpv3d" "$W/b.log" &&
	wait_until 5 grep -q "session i1 ($S): down: .*result 2 .*kernel session $PS deleted outside" "$W/a.log"
rc=$?; log_test $rc "B: ip l2tp del session (IP) is noticed; A's i1 cleared by B's CDN"
[ $rc = 0 ] || grep "session" "$W/a.log" | tail -5
wait_until 20 replaced session i1 "$S" &&
	wait_until 10 all_up
rc=$?; log_test $rc "A's static session i1 comes back over IP, all agree"
[ $rc = 0 ] || show_state

# --- a kernel tunnel deleted on A (UDP) ------------------------------------------------
T=$(tun u); PT=$(ctlj a tunnel show name u | jq -r .peer_tunnel_id)
ip -n "$NSA" l2tp del tunnel tunnel_id "$T"
wait_until 5 grep -q "warning: tunnel u ($T): kernel tunnel $T deleted outside l2tpv3d: clearing it (StopCCN to $B_ADDR)" "$W/a.log"
log_test $? "A: ip l2tp del tunnel (UDP) is noticed and logged"
wait_until 5 grep -q "tunnel [^ ]* ($PT): down: peer $A_ADDR, result 2 .*kernel tunnel $T deleted outside l2tpv3d" "$W/b.log"
rc=$?; log_test $rc "B is told: StopCCN with result 2 and the reason"
[ $rc = 0 ] || grep "tunnel $PT" "$W/b.log"
wait_until 5 grep -q "\"event\":\"tunnel-down\",\"tunnel_id\":$T,.*deleted outside" "$W/mon.a"
log_test $? "A's monitor gets tunnel-down with the reason"
wait_until 20 replaced tunnel u "$T" &&
	wait_until 20 all_up
rc=$?; log_test $rc "static tunnel u comes back with its sessions, all agree"
[ $rc = 0 ] || show_state

# --- a kernel tunnel deleted on B (IP encapsulation) -----------------------------------
T=$(tun i); PT=$(ctlj a tunnel show name i | jq -r .peer_tunnel_id)
ip -n "$NSB" l2tp del tunnel tunnel_id "$PT"
wait_until 5 grep -q "warning: tunnel [^ ]* ($PT): kernel tunnel $PT deleted outside l2tpv3d" "$W/b.log" &&
	wait_until 5 grep -q "tunnel i ($T): down: peer $B_ADDR, result 2 " "$W/a.log"
rc=$?; log_test $rc "B: ip l2tp del tunnel (IP) is noticed; A's tunnel i cleared by B's StopCCN"
[ $rc = 0 ] || grep "tunnel" "$W/a.log" | tail -5
wait_until 20 replaced tunnel i "$T" &&
	wait_until 20 all_up
rc=$?; log_test $rc "static tunnel i comes back (peer's StopCCN), all agree"
[ $rc = 0 ] || show_state

# nothing of ours was "lost": our own deletes above raised no false alarm on either side
[ "$(grep -c "deleted outside l2tpv3d: clearing it" "$W/a.log")" = 3 ] &&
	[ "$(grep -c "deleted outside l2tpv3d: clearing it" "$W/b.log")" = 2 ]
rc=$?; log_test $rc "exactly the 5 deletions by hand were reported (A 3, B 2)"
[ $rc = 0 ] || grep "deleted outside l2tpv3d: clearing" "$W/a.log" "$W/b.log"

kill $MON 2>/dev/null; wait $MON 2>/dev/null

# --- notices lost (a tiny watch buffer): everything is re-checked ----------------------
# 40 sessions deleted by hand while A is stopped overflow its minimal
# receive buffers; the daemon says so, asks the kernel, and clears all 40.
stop a TERM && L2TPV3D_WATCH_RCVBUF=1 start a "$NSA" && wait_until 20 all_up
log_test $? "A restarted with a minimal watch buffer; static objects back"
T=$(ctlj a tunnel create peer $B_ADDR name bulk | jq -r .tunnel_id)
for i in $(seq 40); do ctlj a session create tunnel name bulk no-wait >/dev/null; done
wait_until 30 expect_count 43 count_sessions a established
log_test $? "tunnel bulk with 40 sessions up"
ip -n "$NSA" -j l2tp show session | jq -r ".[] | select(.tunnel_id == $T) |
	\"l2tp del session tunnel_id $T session_id \(.session_id)\"" > "$W/batch"
kill -STOP "$(pid_of a)"	# not reading: the notices pile up and overflow
ip -n "$NSA" -batch "$W/batch"
kill -CONT "$(pid_of a)"
wait_until 15 expect_count 3 count_sessions a established &&
	grep -q "kernel watch (.*): notifications lost: re-checking every kernel object" "$W/a.log" &&
	[ "$(grep -c "session [0-9]*: kernel session [0-9]* deleted outside l2tpv3d: clearing it" "$W/a.log")" = 40 ]
rc=$?; log_test $rc "notices lost: the daemon re-checks and clears exactly the 40 deleted sessions"
[ $rc = 0 ] || { grep -c "deleted outside" "$W/a.log"; grep "kernel watch" "$W/a.log"; }
wait_until 10 agree
log_test $? "daemons and kernels agree again"

[ -n "${LOST_LOGS:-}" ] && cp "$W"/*.log "$W"/mon.a "$LOST_LOGS"/
kt_done
