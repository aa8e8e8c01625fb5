#!/usr/bin/env bash
# Refusals to a LAC that authenticates: B refuses A's SCCRQ (max_tunnels
# reached) with a StopCCN signed with the secret the peers entry has (a
# Message Digest over the SCCRQ's nonce and the message), so A acts on it at
# once instead of dropping it and retransmitting for 71 s.  A peer B has no
# secret for gets an unsigned StopCCN: A drops the first, and when its
# retransmitted SCCRQ is refused the same way it ends the attempt with what
# the StopCCN said, marked unauthenticated, without the hint about secrets.
#
#   +------ ns A (LAC) ---------+          +------ ns B (LNS) -------------------+
#   | digest md5, secret s3cret |--veth----| lac-a (192.0.2.1): secret s3cret    |
#   | over IPv6 too             |          | 2001:db8::1: no entry (no secret)   |
#   +---------------------------+          +-------------------------------------+
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR "tunnel_profiles = ( { name = \"secure\"; digest = \"md5\"; } );
peers = ( { name = \"lac-a\"; match = \"$A_ADDR/32\"; tunnel_profile = \"secure\"; secret = \"s3cret\"; } );
peer_default = { accept = false; };"
sed -i "s|listen = \[\"$B_ADDR\"\];|listen = [\"$B_ADDR\", \"$B_ADDR6\"]; max_tunnels = 1;|" "$W/b.conf"
write_conf a $A_ADDR 'tunnel_profiles = ( { name = "default"; digest = "md5"; secret = "s3cret"; } );
peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (B: max_tunnels 1, lac-a authenticates)"

out=$(ctlj a tunnel create peer $B_ADDR name t1)
[ "$(jq -r .state <<<"$out")" = established ] && [ "$(ctlj a tunnel show name t1 | jq -r .auth)" = md5 ]
log_test $? "the first tunnel is up, authenticated"

# refused: the CLI answers within a few seconds (a dropped StopCCN: 71 s)
t0=$(date +%s%N)
out=$(timeout 20 "$C" -s "$W/a.ctl" -j tunnel create peer $B_ADDR name t2 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# (the CLI's 20 s cap tells apart an answer at once from the 71 s of retransmissions)
grep -q "peer closed the connection: StopCCN result 2 (general error): max_tunnels reached" <<<"$out"
rc=$?; log_test $rc "the 2nd is refused with a signed StopCCN: the CLI says why in $ms ms"
[ $rc = 0 ] || echo "$out"
grep -q "SCCRQ from $A_ADDR: StopCCN sent, signed" "$W/b.log"
log_test $? "B's log: the StopCCN was signed"
! grep -q "unauthenticated StopCCN" "$W/a.log" && grep -q "tunnel t2 .*failed: .*max_tunnels reached" "$W/a.log"
log_test $? "A took it as authenticated (nothing unauthenticated in its log)"

# a peer B has no secret for: an unsigned refusal ends the attempt after one retransmission
t0=$(date +%s%N)
out=$(timeout 20 "$C" -s "$W/a.ctl" -j tunnel create peer $B_ADDR6 name t6 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q "peer $B_ADDR6 refused the connection, unauthenticated: it sent an unauthenticated StopCCN (dropped): result 4 (requester not authorized): peer not allowed by configuration; it came again after our SCCRQ was retransmitted, which ended the attempt" <<<"$out"
rc=$?; log_test $rc "an unsigned refusal ends the attempt after one retransmission ($ms ms), marked unauthenticated"
[ $rc = 0 ] || echo "$out"
grep -q "tunnel t6 ([0-9]*) (peer $B_ADDR6): it sent an unauthenticated StopCCN (dropped): result 4" "$W/a.log" &&
	! grep -q "check the secret" "$W/a.log"
log_test $? "A's log: the first one dropped, and no hint about secrets (no digest failed)"
# t2 holds for its StopCCN's retransmissions (RFC 3931 4.2); t6 never got that far
n=$(ctlj a tunnel list | jq '[.tunnels[] | select(.state != "stopping")] | length')
[ "$n" = 1 ] && [ "$(count_tunnels a stopping)" = 1 ]
log_test $? "A keeps its first tunnel, t2 in its StopCCN hold, nothing of t6"

it_done
