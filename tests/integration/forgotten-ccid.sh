#!/usr/bin/env bash
# A restarted LNS tells a LAC at once about the connections it forgot.
#
# 1. B answers a control message for a CCID it does not know with a StopCCN
#    (header CCID 0, result 2/1, Assigned CCID = the unknown one), never
#    larger than what it answers: a bare HELLO (20 octets) gets nothing, a
#    larger message gets its answer; a ZLB or a StopCCN gets nothing.
# 2. Such a StopCCN (unauthenticated: a forger's as well) is not believed:
#    B, told by a live scripted peer (profile "plain": no digests, no HELLOs of its own) that its
#    connection is unknown, probes it with a HELLO, the peer answers, and
#    the connection stays.
# 3. A's tunnel to B (authenticated: HELLOs of 42 octets; B answers from its
#    listener's port) is cleared seconds after B is killed and restarted,
#    not after its HELLO's retransmissions run out (a minute).
#
#   +------ ns A ---------------------------+          +------ ns B --------+
#   | peer.py 192.0.2.1:1701 (parts 1, 2)   |--veth----| l2tpv3d "b"        |
#   | l2tpv3d "a", hello 3 s (part 3)       |          | responder_port     |
#   +---------------------------------------+          |   = "listener"     |
#                                                      +--------------------+
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
it_setup

PROF='tunnel_profiles = ( { name = "default"; digest = "md5"; secret = "s3cret"; hello_interval = 3; } );'
write_conf b $B_ADDR "${PROF%);} , { name = \"plain\"; digest = \"none\"; hello_interval = 0; } );
peer_default = { accept = true; };"
sed -i 's|listen = \[|responder_port = "listener"; listen = [|' "$W/b.conf"
write_conf a $A_ADDR "$PROF
peer_default = { accept = true; };"
start b "$NSB" || exit 1

# --- 1: answers for unknown CCIDs ------------------------------------------------
peer_start $A_ADDR
stop_len() { J '.msg | 12 + ([.avps[] | 6 + (.[3] | length / 2)] | add)'; }
PAD="extra=0:99:0:$(printf '%060d' 0)"	# an AVP it ignores (M=0): 36 octets more
P send HELLO ccid=1111 ns=0 nr=0 && P send ZLB ccid=2222 ns=0 nr=0 &&
	P send StopCCN ccid=3333 ns=0 nr=0 "$PAD" && P send HELLO ccid=4444 ns=5 nr=0 "$PAD" &&
	sent=$(J .len) && P wait StopCCN any=1 timeout=3
rc=$?
[ $rc = 0 ] && [ "$(J .msg.ccid)" = 0 ] && [ "$(J .msg.assigned_ccid)" = 4444 ] &&
	[ "$(J .msg.result)" = 2 ] && [ "$(J .msg.error)" = 1 ] && [ "$(J .msg.nr)" = 6 ] &&
	[ "$(stop_len)" -le "$sent" ]
rc=$?; log_test $rc "a HELLO of $sent octets for unknown CCID 4444: StopCCN naming it ($(stop_len) octets), the first answer"
[ $rc = 0 ] || echo "$R"
! P wait StopCCN any=1 timeout=2
log_test $? "nothing for a bare HELLO (20 octets), a ZLB or a StopCCN to unknown CCIDs"
grep -q "HELLO for unknown tunnel 4444 from $A_ADDR: StopCCN sent" "$W/b.log"
log_test $? "B's log says what it answered"

# --- 2: a live peer told its connection is unknown is probed, and stays ------------
P clear
ctl b tunnel create peer $A_ADDR name live profile plain >/dev/null &	# the peer does not sign
cpid=$!
P accept && wait_until 10 expect_count 1 count_tunnels b established
log_test $? "B opens a tunnel to the scripted peer"
wait $cpid
hello() { ctlj b stats | jq '.global.msgs_out.HELLO // 0'; }
h0=$(hello)
P send StopCCN ccid=0 ns=0 nr=0 &&
	wait_until 5 grep -q "tunnel live ([0-9]*) (peer $A_ADDR): a StopCCN says the peer has no connection" "$W/b.log"
log_test $? "a StopCCN with CCID 0 naming the peer's connection: B probes it"
sleep 8	# past the probe's budget: a HELLO and its 2 retransmissions (1 + 2 + 4 s)
[ "$(hello)" = $((h0 + 1)) ] && [ "$(ctlj b tunnel show name live | jq -r .state)" = established ]
log_test $? "the peer answers the probe's HELLO: the connection stays ($(hello) HELLOs sent, $h0 before)"
peer_stop
ctl b tunnel delete name live >/dev/null
wait_until 40 expect_count 0 count_tunnels b

# --- 3: a restarted LNS: the LAC's connection goes within seconds -----------------
start a "$NSA" || exit 1
out=$(ctlj a tunnel create peer $B_ADDR name t1)
[ "$(jq -r .state <<<"$out")" = established ] && [ "$(ctlj a tunnel show name t1 | jq -r .auth)" = md5 ]
log_test $? "A's tunnel to B is up, authenticated"
kill -9 "$(pid_of b)"
wait_until 5 sh -c "! kill -0 $(pid_of b) 2>/dev/null"
start b "$NSB"
t0=$(date +%s%N)
wait_until 20 expect_count 0 count_tunnels a established
rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log_test $rc "B restarted: A's connection is cleared $ms ms later (hello 3 s; not 60 s of retransmissions)"
grep -q "tunnel t1 ([0-9]*) (peer $B_ADDR): a StopCCN says the peer has no connection" "$W/a.log" &&
	grep -q "HELLO for unknown tunnel [0-9]* from $A_ADDR: StopCCN sent" "$W/b.log"
log_test $? "B answered A's HELLO; A probed its connection on that StopCCN"

it_done
