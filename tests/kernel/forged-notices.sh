#!/usr/bin/env bash
# Forged kernel notices.  The kernel multicasts the l2tp family's notices of
# every network namespace to every listener, without privilege, so anyone
# can read our tunnels' ids; in a user and network namespace of their own
# they may create and delete tunnels with the same two ids, and the delete
# notices reach our daemons too.  Here nobody (uid 65534, `unshare -Urn`)
# does that to both sides' tunnel for FORGE_S seconds.  The daemons must
# ask the kernel before believing a notice: the tunnel and its session stay
# up in both daemons and both kernels, nothing is sent to the peer, the
# pseudowire passes pings, and each daemon logs that it checked and ignored
# the notices (which shows they reached it).
. "$(dirname "$0")/lib.sh"
kt_setup
FORGE_S=${FORGE_S:-30}
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
command -v setpriv >/dev/null && command -v unshare >/dev/null || skip "needs setpriv and unshare (util-linux)"
"${NOBODY[@]}" unshare -Urn true 2>/dev/null || skip "no unprivileged user namespaces on this kernel"

write_conf a $A_ADDR "session_profiles = ( { name = \"default\"; address = \"$PW_A/30\"; } );
peer_default = { accept = true; };"
write_conf b $B_ADDR "session_profiles = ( { name = \"default\"; address = \"$PW_B/30\"; } );
peer_default = { accept = true; };"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

out=$(ctlj a tunnel create peer $B_ADDR); TID=$(jq -r .tunnel_id <<<"$out") PTID=$(jq -r .peer_tunnel_id <<<"$out")
out=$(ctlj a session create tunnel "$TID"); SA=$(jq -r .session_id <<<"$out") SB=$(jq -r .peer_session_id <<<"$out")
wait_until 20 session_up b "$SB"
KA=$(k_tunnel_ids "$NSA") KB=$(k_tunnel_ids "$NSB")
[ "$KA" = "[[$TID,$PTID]]" ] && [ "$KB" = "[[$PTID,$TID]]" ] && expect_count 1 k_sessions "$NSA" &&
	expect_count 1 k_sessions "$NSB" && pingable "$NSB" $PW_A
log_test $? "tunnel $TID/$PTID and session $SA up in both kernels, ping across: $PING_SUMMARY"

sent() { ctlj "$1" stats | jq '(.global.msgs_out.StopCCN // 0) + (.global.msgs_out.CDN // 0)'; }
sa0=$(sent a) sb0=$(sent b)

# The forger, as nobody in a user and network namespace of its own: A's
# tunnel and B's, created and deleted over and over (one ip process reads
# the commands; each delete is a notice with both ids of ours).  It says on
# stderr how many rounds it wrote (the guest has no /dev/fd for a process
# substitution).
forge() {
	"${NOBODY[@]}" unshare -Urn bash -c '
		end=$(( $(date +%s) + $1 )) n=0
		ip link set lo up
		{
			while [ "$(date +%s)" -lt "$end" ]; do
				for _ in 1 2 3 4 5 6 7 8 9 10; do
					echo "l2tp add tunnel tunnel_id $2 peer_tunnel_id $3 encap udp local 127.0.0.1 remote 127.0.0.1 udp_sport 5001 udp_dport 5002"
					echo "l2tp add tunnel tunnel_id $3 peer_tunnel_id $2 encap udp local 127.0.0.1 remote 127.0.0.1 udp_sport 5003 udp_dport 5004"
					echo "l2tp del tunnel tunnel_id $2"
					echo "l2tp del tunnel tunnel_id $3"
				done
				n=$((n + 10))
			done
			echo "$n" >&2
		} | ip -force -batch - >/dev/null 2>&1' forge "$FORGE_S" "$TID" "$PTID"
}
rounds=$(forge 2>&1)
[ "${rounds:-0}" -gt 0 ] && wait_until 10 grep -q "a delete notice for tunnel $TID, which is still there" "$W/a.log" &&
	wait_until 10 grep -q "a delete notice for tunnel $PTID, which is still there" "$W/b.log"
log_test $? "nobody forged look-alikes for ${FORGE_S} s ($rounds rounds): both daemons checked the notices and ignored them"

# a second past the last notice, every confirmation has been answered
sleep 2
[ "$(k_tunnel_ids "$NSA")" = "$KA" ] && [ "$(k_tunnel_ids "$NSB")" = "$KB" ] &&
	expect_count 1 k_sessions "$NSA" && expect_count 1 k_sessions "$NSB" &&
	[ "$(ctlj a tunnel show "$TID" | jq -r .state)" = established ] &&
	[ "$(ctlj b tunnel show "$PTID" | jq -r .state)" = established ] &&
	expect_count 1 count_sessions a established && expect_count 1 count_sessions b established
log_test $? "the tunnel and its session are still up in both daemons and both kernels"
[ "$(sent a)" = "$sa0" ] && [ "$(sent b)" = "$sb0" ] && grep -q "which is still there" "$W/a.log" &&
	! grep -q "deleted outside l2tpv3d" "$W/a.log" "$W/b.log"
log_test $? "no StopCCN or CDN sent, no deletion believed"
pingable "$NSB" $PW_A
log_test $? "ping across after the forging: $PING_SUMMARY"
kt_done
