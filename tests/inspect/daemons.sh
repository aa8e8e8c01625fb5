#!/usr/bin/env bash
# Our own daemons on the wire lint clean: two l2tpv3d in namespaces (null
# data plane, tests/integration/lib.sh), captured on A's veth while they
# bring tunnels and sessions up and tear them down:
#   t1  A -> B, IPv4, plain: two sessions (one deleted by each side), B deletes it
#   t2  A -> B, IPv6, "secure": MD5 digests, hidden AVPs, HELLO every second
#   t3  B -> A, IPv4, "ackmsg": explicit ACK messages; A adds a session
#   t4  A -> B over IP (protocol 115), when this kernel has l2tp_ip
#   t5  INSPECT_TUNNELS more tunnels (default 0), two sessions each, then deleted
# l2tpv3-inspect must find every connection, decode every message, verify
# every digest with the secret and report no violation.  INSPECT_LOSS=20
# (loss.sh) drops that percentage of packets on both sides first; the
# capture sees every packet (it taps A's veth before A's input hook drops).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/inspect/lib.sh"
need_inspect
need_capturer
LOSS=${INSPECT_LOSS:-0}
WAIT=$((LOSS ? 60 : 20))	# seconds to wait for a state change
[ "$LOSS" = 0 ] || command -v nft >/dev/null || skip "needs nft (nftables) for the loss rule"
it_setup

# Fast retransmissions for the loss test, backing off up to 8 s: a lower cap
# (tests/integration/loss.sh uses 1 s) is below what RFC 3931 4.2 asks for,
# and the tool reports a retransmission interval that stops growing below it.
PROFILES='tunnel_profiles = (
  { name = "default"; retransmit_initial = 0.2; retransmit_cap = 8.0; max_retries = 12;
    sccrq_max_retries = 12; sccrp_max_retries = 12; },
  { name = "secure"; digest = "md5"; secret = "s3cret"; hide_avps = true; hello_interval = 1;
    retransmit_initial = 0.2; retransmit_cap = 8.0; max_retries = 12; sccrp_max_retries = 12; },
  { name = "ackmsg"; send_ack_msg = true; retransmit_initial = 0.2; retransmit_cap = 8.0;
    max_retries = 12; sccrp_max_retries = 12; } );
session_profiles = ( { name = "default"; cookie_len = 8; } );'
# over IP needs the kernel's l2tp_ip loaded (the listener fails without it);
# loading modules is left to whoever runs the tests
grep -q "^L2TP/IP " /proc/net/protocols && listen_ip=true || listen_ip=false
write_conf b $B_ADDR "$PROFILES
peers = ( { name = \"v6\"; match = \"$A_ADDR6\"; tunnel_profile = \"secure\"; } );
peer_default = { accept = true; };"
sed -i "s|listen = \[\"$B_ADDR\"\]|listen = [\"$B_ADDR\", \"$B_ADDR6\"]; listen_ip = $listen_ip|" "$W/b.conf"
write_conf a $A_ADDR "$PROFILES
peer_default = { accept = true; };"
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start"

if [ "$LOSS" != 0 ]; then
	for ns in "$NSA" "$NSB"; do
		ip netns exec "$ns" nft -f - <<NFT
table inet loss {
	chain in { type filter hook input priority 0; meta l4proto { udp, 115 } numgen random mod 100 < $LOSS counter drop; }
}
NFT
	done
	log_test $? "$LOSS% loss on both sides"
fi

start_capture "$NSA" veth0 "$W/cap.pcapng"
log_test $? "capturing on A's veth0"

# --- t1: IPv4, plain ----------------------------------------------------------------
T1=$(ctlj a tunnel create peer $B_ADDR name t1 | jq -r .tunnel_id)
S1=$(ctlj a session create tunnel "$T1" name s1 remote-end-id pw1 | jq -r .session_id)
S2=$(ctlj a session create tunnel "$T1" name s2 | jq -r .session_id)
PS2=$(ctlj a session show "$S2" | jq -r .peer_session_id)
[ "$S1" -gt 0 ] && [ "$S2" -gt 0 ] && wait_until "$WAIT" expect_count 2 count_sessions b established
log_test $? "t1: tunnel and two sessions up"
ctl a session delete "$S1" >/dev/null && ctl b session delete "$PS2" >/dev/null &&
	wait_until "$WAIT" expect_count 0 count_sessions a && wait_until "$WAIT" expect_count 0 count_sessions b
log_test $? "t1: one session deleted from each side"
PT1=$(ctlj a tunnel show "$T1" | jq -r .peer_tunnel_id)
ctl b tunnel delete "$PT1" >/dev/null && wait_until "$WAIT" expect_count 0 count_tunnels a established
log_test $? "t1: B deletes the tunnel"

# --- t2: IPv6, digests and hidden AVPs ---------------------------------------------------
T2=$(ctlj a tunnel create peer $B_ADDR6 profile secure name t2 | jq -r .tunnel_id)
S3=$(ctlj a session create tunnel "$T2" name s3 remote-end-id pw3 | jq -r .session_id)
[ "$S3" -gt 0 ] && wait_until "$WAIT" expect_count 1 count_sessions b established
log_test $? "t2: authenticated tunnel with a session up"
sleep 2.5	# a few HELLOs
ctl a tunnel delete "$T2" >/dev/null && wait_until "$WAIT" expect_count 0 count_tunnels b established
log_test $? "t2: A deletes the tunnel"

# --- t3: B opens, explicit ACKs -----------------------------------------------------------
T3=$(ctlj b tunnel create peer $A_ADDR profile ackmsg name t3 | jq -r .tunnel_id)
PT3=$(ctlj b tunnel show "$T3" | jq -r .peer_tunnel_id)
S4=$(ctlj a session create tunnel "$PT3" name s4 | jq -r .session_id)
[ "$S4" -gt 0 ] && wait_until "$WAIT" expect_count 1 count_sessions b established
log_test $? "t3: B's tunnel up, A adds a session"
ctl a tunnel delete "$PT3" >/dev/null && wait_until "$WAIT" expect_count 0 count_tunnels b established
log_test $? "t3: A deletes B's tunnel"

# --- t4: L2TPv3 over IP ------------------------------------------------------------------------
encap_ip=0
if ! $listen_ip; then
	echo "TEST: t4: tunnel over IP                                           [SKIP] (no l2tp_ip)"
elif out=$(ctlj a tunnel create peer $B_ADDR encap ip name t4 2>&1); then
	encap_ip=1
	T4=$(jq -r .tunnel_id <<<"$out")
	ctl a tunnel delete "$T4" >/dev/null && wait_until "$WAIT" expect_count 0 count_tunnels b established
	log_test $? "t4: tunnel over IP up and down"
else
	echo "TEST: t4: tunnel over IP                                           [SKIP] (${out:0:60})"
fi

# --- t5: more tunnels, two sessions each (loss.sh: enough traffic for the loss to show) --------
N=${INSPECT_TUNNELS:-0}
if [ "$N" -gt 0 ]; then
	for i in $(seq 1 "$N"); do echo "tunnel create peer $B_ADDR name x$i"; done > "$W/t.batch"
	for i in $(seq 1 "$N"); do
		echo "session create tunnel name x$i name x$i-a"
		echo "session create tunnel name x$i name x$i-b"
	done > "$W/s.batch"
	for i in $(seq 1 "$N"); do echo "tunnel delete name x$i"; done > "$W/d.batch"
	ctl a -j -b "$W/t.batch" > "$W/t.out" && ctl a -j -b "$W/s.batch" > "$W/s.out" &&
		[ "$(jq -s '[.[] | select(.status == 0)] | length' "$W/s.out")" = $((2 * N)) ]
	log_test $? "t5: $N tunnels with 2 sessions each"
	ctl a -j -b "$W/d.batch" > "$W/d.out" && wait_until "$WAIT" expect_count 0 count_tunnels b established
	log_test $? "t5: all deleted"
fi

conns=$((3 + encap_ip + N))
# the capture ends with the last StopCCN's acknowledgement in the file (under
# loss an excused StopCCN may never be acknowledged: the verdict says so)
stop_capture_when "$WAIT" capture_closed "$conns"
rc=$?
[ "$LOSS" != 0 ] || log_test $rc "the capture holds $conns connections, each closed by an acknowledged StopCCN"

# --- the verdict ------------------------------------------------------------------------------
"$INSPECT" -j --secret s3cret "$W/cap.pcapng" > "$W/lint.json"
rc=$?
# Under loss, what A sends is captured before B's input drops it: a StopCCN
# whose every copy B lost (A gives up after its retries, B never saw it)
# shows as unacknowledged though nobody broke 4.2.  Only that is excused.
excused=0
if [ $rc = 1 ] && [ "$LOSS" != 0 ]; then
	excused=$(jq -s --arg a "$A_ADDR:" '[.[] | select(.violations? | length > 0) | .violations[] as $v |
		select($v.kind == "unacked-retransmission" and .type == "StopCCN" and (.src | startswith($a)))] | length' "$W/lint.json")
	[ "$excused" = "$(summary "$W/lint.json" | jq .violations)" ] && rc=0
fi
[ $rc = 0 ] || "$INSPECT" --secret s3cret "$W/cap.pcapng" | grep ' !! ' | head -20
[ $rc = 0 ]
log_test $? "the capture lints clean (exit $rc: $(summary "$W/lint.json" | jq -c .by_kind); $excused StopCCN lost after the capture point excused)"
jq_check "$W/lint.json" "select(.summary) | .summary | .connections == $conns and .not_decoded == 0 and
	.violations == $excused and .messages >= 30"
log_test $? "$conns connections, $(summary "$W/lint.json" | jq .messages) messages, none undecoded"
jq_check "$W/lint.json" 'select(.summary) | .summary.connection_list[] | .from_start and
	(.state | startswith("closed"))'
log_test $? "every connection seen from its SCCRQ to its StopCCN"
jq_check "$W/lint.json" 'select(.conn == 2 and .type != null) |
	(.notes // []) | index("digest: verified") != null'
log_test $? "t2: every message's digest verifies (MD5, both nonces)"
jq_check "$W/lint.json" 'select(.conn == 2 and .type == "ICRQ") | .avps.remote_end_id == "pw3"'
log_test $? "t2: hidden AVPs unhidden with the secret"
[ "$(jq_count "$W/lint.json" 'select(.conn == 2 and .type == "HELLO")')" -ge 1 ]
log_test $? "t2: HELLO seen"
jq_check "$W/lint.json" 'select(.summary) | .summary.connection_list[] | select(.conn == 3) |
	.a.ack > 0 and .a.zlb == 0'
log_test $? "t3: B acknowledges with explicit ACK messages only"
jq_check "$W/lint.json" 'select(.summary) | .summary.connection_list[] | select(.conn == 1) |
	.a.zlb + .b.zlb > 0 and .a.ack + .b.ack == 0'
log_test $? "t1: acknowledgements are ZLBs (no explicit ACK)"
"$INSPECT" "$W/cap.pcapng" > "$W/lint.txt"
rc=$?
[ $rc = 1 ] && [ "$excused" != 0 ] && [ "$(grep -c ' !! ' "$W/lint.txt")" = "$excused" ] && rc=0
[ $rc = 0 ] && grep -q "digest: not verified (no --secret)" "$W/lint.txt"
log_test $? "without the secret: still clean, digests noted as not verified (exit $rc)"
if [ "$LOSS" != 0 ]; then
	rtx=$(jq 'select(.summary) | [.summary.connection_list[] | .a.retransmitted + .b.retransmitted] | add' "$W/lint.json")
	[ "$rtx" -gt 0 ]
	log_test $? "the loss showed: $rtx retransmissions in the capture, all linted clean"
fi

# keep the evidence of a failure: the capture goes with $W
[ "$TESTS_FAIL" = 0 ] && [ -z "${INSPECT_KEEP:-}" ] || { cp "$W/cap.pcapng" "/tmp/l2tpv3-inspect-daemons-$$.pcapng" &&
	echo "capture kept in /tmp/l2tpv3-inspect-daemons-$$.pcapng"; }
it_done
