#!/usr/bin/env bash
# Tunnel and session bring-up and teardown from either side, IPv4 and IPv6,
# cookies, an unknown peer refused with StopCCN, bad CLI input.
. "$(dirname "$0")/lib.sh"
it_setup

# B (the LNS) accepts the LAC's IPv4 subnet only; A accepts anyone.
write_conf b $B_ADDR '
session_profiles = ( { name = "default"; cookie_len = 8; } );
peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; } );
peer_default = { accept = false; };'
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"$B_ADDR\", \"$B_ADDR6\"]|" "$W/b.conf"
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; },
                    { name = "fast"; retransmit_initial = 0.2; retransmit_cap = 0.4; max_retries = 2; } );
session_profiles = ( { name = "default"; cookie_len = 4; } );
peer_default = { accept = true; };'
sed -i "s|listen = \[\"$A_ADDR\"\]|listen = [\"$A_ADDR\", \"$A_ADDR6\"]|" "$W/a.conf"
# A crypto library configured without MD5 (an OpenSSL configuration that
# loads only the null provider): the daemon stops at start and says what,
# instead of deriving every key as zeros and refusing every digest.
cat > "$W/null-provider.cnf" <<'CNF'
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
null = null_sect
[null_sect]
activate = 1
CNF
OPENSSL_CONF=$W/null-provider.cnf timeout 10 ip netns exec "$NSA" "$D" -F -f "$W/a.conf" > "$W/a-nocrypto.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "error: the crypto library (OpenSSL) does not compute HMAC-MD5 (its configuration: OPENSSL_CONF" \
	"$W/a-nocrypto.log" && [ ! -S "$W/a.ctl" ]
log_test $? "a crypto library without MD5: exit 1 at start, naming the algorithm ($rc)"

start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

# --- A opens a tunnel and a session ---------------------------------------
out=$(ctlj a tunnel create peer $B_ADDR name t1)
rc=$?; TID=$(jq -r .tunnel_id <<<"$out"); PTID=$(jq -r .peer_tunnel_id <<<"$out")
[ $rc = 0 ] && [ "$(jq -r .state <<<"$out")" = established ] && [ "$TID" -gt 0 ]
log_test $? "tunnel create from A: established (id $TID)"

# A's create returns once A sent its SCCCN: B's tunnel is up when B has read it
b_tunnel_up() { btun=$(ctlj b tunnel show "$PTID") && [ "$(jq -r .state <<<"$btun")" = established ]; }
wait_until 20 b_tunnel_up && [ "$(jq -r .peer_tunnel_id <<<"$btun")" = "$TID" ] &&
	[ "$(jq -r .peer_host_name <<<"$btun")" = a ] && [ "$(jq -r .peer_router_id <<<"$btun")" = $A_ADDR ]
log_test $? "B sees the tunnel established with A's CCID, host name and router id"

out=$(ctlj a session create tunnel "$TID" name s1 remote-end-id pw1)
rc=$?; SID=$(jq -r .session_id <<<"$out"); PSID=$(jq -r .peer_session_id <<<"$out")
[ $rc = 0 ] && [ "$(jq -r .state <<<"$out")" = established ] && [ "$PSID" -gt 0 ]
log_test $? "session create from A: established (id $SID, peer $PSID)"

# A's create returns once A sent its ICCN: B's session is up when B has read it
b_up() { [ "$(ctlj b session show "$PSID" | jq -r .state)" = established ]; }
wait_until 20 b_up
bs=$(ctlj b session show "$PSID"); as=$(ctlj a session show "$SID")
[ "$(jq -r .state <<<"$bs")" = established ] && [ "$(jq -r .peer_session_id <<<"$bs")" = "$SID" ] &&
	[ "$(jq -r .remote_end_id <<<"$bs")" = pw1 ] &&
	[ "$(jq -r .cookie_len <<<"$bs")" = 8 ] && [ "$(jq -r .peer_cookie_len <<<"$bs")" = 4 ] &&
	[ "$(jq -r .dataplane.cookie <<<"$bs")" = "$(jq -r .dataplane.peer_cookie <<<"$as")" ] &&
	[ "$(jq -r .dataplane.peer_cookie <<<"$bs")" = "$(jq -r .dataplane.cookie <<<"$as")" ]
log_test $? "B's session mirrors A's: ids, remote end id, 8/4-byte cookies crossed"
jq -e '.dataplane.type == "null" and .dataplane.programmed == false and .dataplane.would_program' \
	<<<"$bs" >/dev/null && [ "$(jq -r .dataplane.l2spec_type <<<"$bs")" = "$(jq -r '.l2spec | if . == "default" then 1 else 0 end' <<<"$bs")" ]
log_test $? "the null data plane says it programmed nothing, and l2spec agrees with l2spec_type"

# --- B opens a session on A's tunnel, then A deletes it ----------------------
out=$(ctlj b session create tunnel "$PTID" name s2 cookie 0)
rc=$?; SID2=$(jq -r .session_id <<<"$out")
[ $rc = 0 ] && [ "$(jq -r .state <<<"$out")" = established ] && expect_count 2 count_sessions a established
log_test $? "session create from B on A's tunnel: both sides have 2 sessions"

A_SID2=$(ctlj b session show "$SID2" | jq -r .peer_session_id)
ctl a session delete "$A_SID2" >/dev/null && wait_until 5 expect_count 1 count_sessions b
log_test $? "session delete on A: CDN clears it on B"

# --- B deletes the tunnel: A sees StopCCN, sessions go with it ----------------
ctl b tunnel delete "$PTID" >/dev/null && wait_until 5 expect_count 0 count_tunnels a established &&
	expect_count 0 count_sessions a && [ "$(ctlj a tunnel show "$TID" | jq -r '.state // "gone"')" != established ]
log_test $? "tunnel delete on B: StopCCN takes A's tunnel down, its sessions with it"
wait_until 5 expect_count 0 count_tunnels b
log_test $? "B forgets the tunnel once its StopCCN is acknowledged"

# --- B opens a tunnel to A over IPv6 --------------------------------------
out=$(ctlj b tunnel create peer $A_ADDR6)
rc=$?; T6=$(jq -r .tunnel_id <<<"$out")
[ $rc = 0 ] && [ "$(jq -r .state <<<"$out")" = established ] &&
	[[ "$(jq -r .peer <<<"$out")" == "[$A_ADDR6]:"* ]] && expect_count 1 count_tunnels a established
log_test $? "tunnel create from B over IPv6: established"
ctl b tunnel delete "$T6" >/dev/null; wait_until 5 expect_count 0 count_tunnels a

# --- A from IPv6: B's config refuses unknown peers ------------------------
out=$(ctl a tunnel create peer $B_ADDR6 2>&1); rc=$?
[ $rc = 1 ] && grep -q "not-authorized\|not authorized" <<<"$out"
log_test $? "SCCRQ from a peer the config forbids: StopCCN 4 reported to the CLI ($rc)"
drops=$(ctlj b stats | jq '.global.drops["peer-refused"] // .global.drops.peer_refused // 0')
[ "$drops" -ge 1 ] && expect_count 0 count_tunnels b established
log_test $? "B counted the refusal and has no tunnel from it"
# A's ZLB acknowledging the refusal (Control Connection ID 0) reaches B
zlb_counted() { [ "$(ctlj b stats | jq '.global.drops["zero-ccid"] // 0')" -ge 1 ]; }
wait_until 10 zlb_counted
st=$(ctlj b stats)
[ "$(jq .global.refusals_sent <<<"$st")" = 1 ] && [ "$(jq '.global.drops["zero-ccid"] // 0' <<<"$st")" -ge 1 ] &&
	[ "$(grep -c "SCCRQ from $B_ADDR6\|SCCRQ from $A_ADDR6.*refused" "$W/b.log")" = 1 ]
log_test $? "one StopCCN, one warning; A's ZLB is counted (zero-ccid), not refused again"

# --- with a digest, B's refusal is unauthenticated: dropped, but reported -----
out=$(ctl a tunnel create peer $B_ADDR6 profile fast secret s3cret digest md5 2>&1); rc=$?
[ $rc = 1 ] && grep -q "unauthenticated StopCCN (dropped): result 4 (requester not authorized)" <<<"$out" &&
	grep -q "unauthenticated StopCCN" "$W/a.log"
log_test $? "refused while using a digest: the failure quotes the dropped StopCCN ($(head -c 120 <<<"$out"))"

# --- bad CLI input gives exit 2 and names the problem -------------------------
bad() {	# bad PATTERN ARGS...
	local pat=$1; shift
	local o; o=$(ctl a "$@" 2>&1); local r=$?
	[ $r = 2 ] && grep -qi -- "$pat" <<<"$o" || { echo "  '$*' -> rc $r: $o"; return 1; }
}
bad "tunel" tunel list && bad "peer" tunnel create && bad "encap" tunnel create peer $B_ADDR encap tcp &&
	bad "cookie" session create tunnel 1 cookie 3 && bad "address\|peer" tunnel create peer 300.1.1.1 &&
	bad "valid" session frobnicate
log_test $? "bad CLI arguments: exit 2 with a message naming the argument"
o=$(ctl a tunnel show 12345 2>&1); rc=$?
[ $rc = 1 ] && grep -q "no tunnel" <<<"$o"
log_test $? "unknown tunnel id: exit 1, 'no tunnel'"
o=$("$C" -s "$W/nonexistent.ctl" tunnel list 2>&1); rc=$?
[ $rc = 1 ] && grep -q "is the daemon running" <<<"$o"
log_test $? "daemon not running: exit 1 with a clear message"
kill -0 "$(pid_of a)" && kill -0 "$(pid_of b)" && ctl a show daemon >/dev/null
log_test $? "daemons still running after bad input"

# --- SIGTERM closes every tunnel with StopCCN ---------------------------------
ctlj a tunnel create peer $B_ADDR >/dev/null && ctlj a tunnel create peer $B_ADDR >/dev/null &&
	expect_count 2 count_tunnels b established
log_test $? "two more tunnels up"
kill -TERM "$(pid_of a)"
wait_until 10 sh -c "! kill -0 $(pid_of a) 2>/dev/null" && wait_until 5 expect_count 0 count_tunnels b established
log_test $? "SIGTERM on A: it exits after StopCCN, B has no tunnel up"
grep -q "STOPCCN\|StopCCN" "$W/b.log"
log_test $? "B logged the StopCCN"


# --- both ends shut down at once: crossed StopCCNs ------------------------------
# Each daemon's StopCCN crosses the other's: both sides drop incoming
# StopCCNs (Message Type 4) until both have sent theirs, so the
# retransmissions cross.  A's acknowledgements (ZLBs) are dropped throughout,
# so B's StopCCN is never acknowledged: B lets its tunnels go because A's
# StopCCN says A closed them too, not after the 31 s hold of an unanswered
# StopCCN.
command -v nft >/dev/null || { echo "SKIP: the crossed-StopCCN case needs nft"; it_done; exit; }
start a "$NSA"
for i in 1 2 3 4 5; do echo "tunnel create peer $B_ADDR"; done > "$W/x.batch"
ctl a -b "$W/x.batch" >/dev/null && wait_until 20 expect_count 5 count_tunnels b established
log_test $? "A again, 5 tunnels up"
nft_drop "$NSA" zlbdrop output udp length 20
for ns in "$NSA" "$NSB"; do nft_drop "$ns" stopdrop input @th,208,16 4; done
pa=$(pid_of a) pb=$(pid_of b)
t0=$(date +%s%N)
kill -TERM "$pa" "$pb"
wait_until 5 sh -c "grep -q 'signal 15' '$W/a.log' && grep -q 'signal 15' '$W/b.log'"
# both StopCCNs sent (and dropped); their retransmissions (1 s) cross
stops_dropped() { nft_dropped_at_least 1 "$NSA" stopdrop && nft_dropped_at_least 1 "$NSB" stopdrop; }
wait_until 5 stops_dropped
# B's side first: A answers B's StopCCN with its own at once, and that must
# reach B (were A's side first, A could have it dropped by B and be gone)
for ns in "$NSB" "$NSA"; do nft_undrop "$ns" stopdrop >/dev/null; done
# the deadline: well short of the 31 s hold an unanswered StopCCN takes
CROSSED_EXIT_S=20
wait_until $CROSSED_EXIT_S sh -c "! kill -0 $pa 2>/dev/null && ! kill -0 $pb 2>/dev/null"
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
nft_undrop "$NSA" zlbdrop >/dev/null
log_test $rc "SIGTERM on both at once, StopCCNs crossed, A's ZLBs blocked: both exit in $ms ms (before the 31 s hold; deadline $CROSSED_EXIT_S s)"
it_done
