#!/usr/bin/env bash
# RFC 4951 recovery of authenticated connections (digest md5, a shared
# secret): the recovery connection authenticates with the old connection's
# secret, and the recovered connection then signs with the recovery
# connection's nonces, on both sides.  A crash of B, then of A; after each,
# a session opened on every recovered tunnel comes up (its ICRQ, ICRP and
# ICCN digests verify under the new nonces) and no message was dropped for
# its digest.
. "$(dirname "$0")/lib.sh"
it_setup
N=5
prof='tunnel_profiles = ( { name = "default"; failover = true; recovery_time = 60;
                            digest = "md5"; secret = "s3cret-failover"; } );'
write_conf b $B_ADDR "$prof peer_default = { accept = true; };"
write_conf a $A_ADDR "$prof"
for d in a b; do
	sed -i "s|log_level = \"debug\";|log_level = \"info\"; state_dir = \"$W/$d-state\";|" "$W/$d.conf"
done
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (md5 digests, failover)"
for i in $(seq 1 $N); do
	ctl a tunnel create peer $B_ADDR name t$i >/dev/null &&
		ctl a session create tunnel name t$i name s$i >/dev/null || break
done
wait_until 20 expect_count $N count_sessions b established &&
	ctlj a tunnel list | jq -e --argjson n $N '[.tunnels[] | select(.auth == "md5" and .failover == "none")] | length == $n' >/dev/null
log_test $? "$N authenticated tunnels with a session each, failover negotiated"
recorded() { ctlj "$1" show daemon | jq -e --argjson n $N '.failover.recorded_tunnels == $n and .failover.write_pending == false' >/dev/null; }
all_up() {
	ctlj "$1" tunnel list | jq -e --argjson n $N '[.tunnels[] | select(.recovery_of == null)] as $t |
		($t | length) == $n and ([$t[] | select(.state == "established" and .failover == "none")] | length) == $n' \
		>/dev/null && expect_count "$2" count_sessions "$1" established
}
digest_drops() { ctlj "$1" stats | jq '(.global.drops["digest-mismatch"] // 0) + (.global.drops["digest-missing"] // 0)'; }
ns=$N
for victim in b a; do
	survivor=a nsv=$NSB; [ $victim = a ] && survivor=b nsv=$NSA
	wait_until 20 recorded $victim
	log_test $? "$victim records its $N tunnels"
	dd0=$(digest_drops $survivor)
	kill -KILL "$(pid_of $victim)"
	wait_until 10 sh -c "! kill -0 $(pid_of $victim) 2>/dev/null"
	start $victim "$nsv"
	wait_until 60 all_up $victim $ns && wait_until 30 all_up $survivor $ns
	log_test $? "after the crash of $victim: $N authenticated tunnels and $ns sessions recovered"
	ok=0
	for i in $(seq 1 $N); do
		ctl a session create tunnel name t$i name x$victim$i >/dev/null && ok=$((ok + 1))
	done
	ns=$((ns + N))
	[ $ok = $N ] && wait_until 20 expect_count $ns count_sessions b established
	log_test $? "a new session on each recovered tunnel comes up (signed with the recovery's nonces)"
	[ "$(digest_drops $survivor)" = "$dd0" ] && [ "$(digest_drops $victim)" = 0 ]
	log_test $? "no message dropped for its digest on either side"
done

# A recovery SCCRQ that names one of B's connections rightly (both IDs, from
# the peer's address) but cannot sign with its secret: dropped without an
# answer, counted, and the connection is not touched.  (A scripted peer
# beside A, on another port: A holds 1701.)
TID=$(ctlj b tunnel list | jq -r '[.tunnels[] | select(.recovery_of == null)][0].tunnel_id')
PTID=$(ctlj b tunnel show "$TID" | jq -r .peer_tunnel_id)
refused0=$(ctlj b stats | jq '.global.failover_refused')
peer_start_at $A_ADDR 1799
recovery=$(printf '0:77:1:0000%08x%08x' "$PTID" "$TID")
nonce="0:73:1:$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
digest="0:59:1:00$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
! P connect timeout=3 extra="$recovery" extra="$nonce" first="$digest"
log_test $? "a recovery SCCRQ for B's tunnel $TID with a digest of another secret gets no answer"
peer_stop
refused_more() { [ "$(ctlj b stats | jq '.global.failover_refused')" -gt "$refused0" ]; }
wait_until 10 refused_more && all_up b $ns && all_up a $ns &&
	ctl a session create tunnel name t1 name after-forgery >/dev/null &&
	wait_until 20 expect_count $((ns + 1)) count_sessions b established
log_test $? "B counted it; tunnel $TID and all the others still work (a session comes up on them)"
it_done
