#!/usr/bin/env bash
# The LNS makes its kernel session when it answers an ICRQ, not when the
# ICCN comes (dp_session_prepare, doc/kernel-dataplane.md), so that its
# register_netdevice runs while the LAC does its own.  Against a scripted
# LAC (tests/integration/peer.py) that holds its ICCN back:
#   - while the call waits, B's kernel session and its l2tpeth exist, down;
#   - the ICCN brings that same interface up; an ICCN that turns sequencing
#     on modifies the kernel session in place (iproute2 shows it);
#   - an ICCN that changes the L2-Specific Sublayer (which the kernel cannot
#     modify) gets a new kernel session: the old interface goes, and B's
#     data packets on the wire carry the sublayer;
#   - a CDN instead of the ICCN deletes what was made.
. "$(dirname "$0")/lib.sh"
kt_setup
command -v python3 >/dev/null || skip "needs python3 (the scripted peer)"
. "$top_srcdir/tests/integration/peer-lib.sh"

write_conf b $B_ADDR 'peer_default = { accept = true; };'
start b "$NSB"
log_test $? "B starts"
peer_start $A_ADDR && P connect && [ "$(J .reply.type)" = SCCRP ] && P acked &&
	wait_until 5 expect_count 1 k_tunnels "$NSB"
log_test $? "the scripted LAC's control connection: B's kernel tunnel is made"

# k_sess NS SID: iproute2's view of one kernel session (JSON), "" when absent
k_sess() { ip -n "$1" -j l2tp show session | jq -c --argjson s "$2" '.[] | select(.session_id == $s)'; }
k_ifname() { k_sess "$NSB" "$1" | jq -r '.interface // empty'; }
link_flags() { ip -n "$NSB" -j link show dev "$1" 2>/dev/null | jq -r '.[0].flags | join(",")'; }
is_up() { [[ ,$(link_flags "$1"), == *,UP,* ]]; }
is_down() { local f; f=$(link_flags "$1") && [ -n "$f" ] && [[ ,$f, != *,UP,* ]]; }
ifindex() { ip -n "$NSB" -j link show dev "$1" 2>/dev/null | jq -r '.[0].ifindex'; }
b_state() { ctlj b session show "$1" | jq -r .state; }
b_kstate() { ctlj b session show "$1" | jq -r .dataplane.kernel_state; }
prepared() { [ -n "$(k_ifname "$1")" ] && is_down "$(k_ifname "$1")" && [ "$(b_kstate "$1")" = prepared ]; }

L2SS_DEFAULT=extra=0:69:1:0001 SEQ_ALL=extra=0:70:1:0002
# call [MODS]: an ICRQ answered by ICRP, no ICCN; $LSID the peer's id, $RSID B's
call() {
	P icrq iccn=0 "$@" && [ "$(J .reply.type)" = ICRP ] || return 1
	LSID=$(J .session.lsid) RSID=$(J .session.rsid)
}

# --- 1: made at the ICRP, down; the ICCN brings it up and turns sequencing on ----
call $L2SS_DEFAULT && wait_until 5 prepared "$RSID" && [ "$(b_state "$RSID")" = wait-connect ] &&
	[ "$(k_sess "$NSB" "$RSID" | jq -r .peer_session_id)" = "$LSID" ] &&
	[ "$(k_sess "$NSB" "$RSID" | jq -r 'has("send_seq")')" = false ]
log_test $? "ICRQ answered, ICCN held back: B's kernel session (peer id $LSID, no sequencing) and its $(k_ifname "$RSID") exist, down"
IF1=$(k_ifname "$RSID") IDX1=$(ifindex "$IF1") S1=$RSID
P send ICCN lsid="$LSID" $L2SS_DEFAULT $SEQ_ALL && wait_until 5 expect_count established b_state "$S1"
log_test $? "ICCN (sublayer unchanged, Data Sequencing 2): B established"
is_up "$IF1" && [ "$(ifindex "$IF1")" = "$IDX1" ] && [ "$(k_ifname "$S1")" = "$IF1" ] &&
	[ "$(b_kstate "$S1")" = up ] && [ "$(k_sess "$NSB" "$S1" | jq -r 'has("send_seq")')" = true ]
log_test $? "the same $IF1 (index $IDX1) is up, its kernel session modified in place: sequenced sending on"

# --- 2: the ICCN changes the sublayer: a new kernel session, seen on the wire ------
call && wait_until 5 prepared "$RSID"
log_test $? "a second call without a sublayer: prepared with none"
IF2=$(k_ifname "$RSID") IDX2=$(ifindex "$IF2") S2=$RSID L2=$LSID
P send ICCN lsid="$L2" $L2SS_DEFAULT && wait_until 5 expect_count established b_state "$S2"
log_test $? "ICCN asking for the default sublayer: B established"
IF2N=$(k_ifname "$S2")
[ "$(ip -n "$NSB" -j l2tp show session | jq --argjson s "$S2" '[.[] | select(.session_id == $s)] | length')" = 1 ] &&
	[ -n "$IF2N" ] && is_up "$IF2N" && [ "$(ifindex "$IF2N")" != "$IDX2" ] &&
	! ip -n "$NSB" -j link show | jq -e --argjson i "$IDX2" 'any(.[]; .ifindex == $i)' >/dev/null &&
	grep -q "session $S2: the connected call differs" "$W/b.log"
log_test $? "a new kernel session for it ($IF2 index $IDX2 gone, $IF2N up), the reason in the log"

# capture_sublayer SID: the 4 octets after the session ID (no cookie) of B's
# first data packet for SID, as A's veth0 sees it: 00000000 is the default
# sublayer, ffffffff the broadcast destination of a frame without one
capture_sublayer() {
	ip netns exec "$NSA" timeout "$CAPTURE_S" python3 - "$1" <<'PY'
import socket, struct, sys
sid = int(sys.argv[1])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind(("veth0", 0))
print("ready", flush=True)
while True:
    f = s.recv(2048)
    if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00" or f[23] != 17:
        continue
    udp = 14 + (f[14] & 0x0F) * 4
    p = f[udp + 8:]
    if p[0] & 0x80 == 0 and struct.unpack("!I", p[4:8])[0] == sid:
        print(p[8:12].hex())
        break
PY
}
CAPTURE_S=120	# the capturer's life: python starts in seconds under emulation, more under load
capture_sublayer "$L2" > "$W/sublayer" &
cap=$!
wait_until 60 grep -q ready "$W/sublayer"
log_test $? "a capturer on A's veth0 is ready"
# B pings across the pseudowire (each ping starts with ARP: a data packet of
# the session) until the capturer has its first data packet
captured() { [ "$(wc -l < "$W/sublayer")" -ge 2 ] || { ip netns exec "$NSB" $PING -c 1 -W 1 10.99.0.2; false; }; }
ip -n "$NSB" addr add 10.99.0.1/30 dev "$IF2N" && wait_until 60 captured
wait $cap
sub=$(sed -n 2p "$W/sublayer")
[ "$sub" = 00000000 ]
log_test $? "B's data packets for it carry the default sublayer (captured after the session ID: ${sub:-nothing})"

# --- 3: a CDN instead of the ICCN deletes what was made ------------------------------
call && wait_until 5 prepared "$RSID"
log_test $? "a third call: prepared"
IF3=$(k_ifname "$RSID") S3=$RSID
P send CDN lsid="$LSID" && wait_until 5 expect_count "" k_sess "$NSB" "$S3" &&
	link_gone "$NSB" "$IF3" && expect_count 2 k_sessions "$NSB"
log_test $? "CDN before the ICCN: B's kernel session and $IF3 are gone, the other two stay"
# (B's log holds this test's sessions: the one that differed is in it)
grep -q "session $S2: the connected call differs" "$W/b.log" && ! grep -q "made ahead of its call" "$W/b.log"
log_test $? "no preparation failed along the way (none logged)"

peer_stop
stop b TERM
kt_done
