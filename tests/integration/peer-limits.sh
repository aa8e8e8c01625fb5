#!/usr/bin/env bash
# Limits per peers entry, and slots kept for the entries' peers: B allows 5
# tunnels, of which 2 (reserved_tunnels) only for peers a peers entry names.
# A over IPv6 is a peer no entry names (peer_default): it gets 3 tunnels and
# its 4th is refused, so A over IPv4 (entry lac-a) still gets its tunnels.
# lac-a's own max_tunnels 2 and max_sessions 2 hold across its tunnels; each
# refusal says which limit; a tunnel that goes frees its slot.
#
#   +------ ns A (LAC) ------+          +------ ns B (LNS) ----------------------+
#   | 192.0.2.1 (lac-a)      |--veth----| max_tunnels 5, reserved_tunnels 2      |
#   | 2001:db8::1 (unlisted) |          | lac-a: max_tunnels 2, max_sessions 2   |
#   +------------------------+          +----------------------------------------+
. "$(dirname "$0")/lib.sh"
it_setup

write_conf b $B_ADDR "peers = ( { name = \"lac-a\"; match = \"$A_ADDR/32\"; accept = true;
                      max_tunnels = 2; max_sessions = 2; } );
peer_default = { accept = true; };"
sed -i "s|listen = \[\"$B_ADDR\"\];|listen = [\"$B_ADDR\", \"$B_ADDR6\"]; max_tunnels = 5; reserved_tunnels = 2;|" "$W/b.conf"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
start b "$NSB" && start a "$NSA"
log_test $? "both daemons start (B: max_tunnels 5, reserved_tunnels 2, lac-a at most 2)"

open_v6() { ctlj a tunnel create peer $B_ADDR6 name "$1" 2>&1; }
open_v4() { ctlj a tunnel create peer $B_ADDR name "$1" 2>&1; }
up() { [ "$(jq -r .state <<<"$1" 2>/dev/null)" = established ]; }

ok=0
for n in 1 2 3; do out=$(open_v6 u$n); up "$out" || ok=1; done
[ $ok = 0 ] && wait_until 20 expect_count 3 count_tunnels b established	# (once B read the SCCCNs)
log_test $? "an unlisted peer (peer_default) gets 3 tunnels"
out=$(open_v6 u4)
grep -q "StopCCN result 2 .*max_tunnels 5 reached for peers no entry names (reserved_tunnels 2 kept" <<<"$out"
rc=$?; log_test $rc "its 4th is refused: the StopCCN names reserved_tunnels"
[ $rc = 0 ] || echo "$out"

out=$(open_v4 a1) && up "$out" && out=$(open_v4 a2) && up "$out"
log_test $? "the configured LAC lac-a still gets its 2 tunnels (5 in all)"
# B clears one of the unlisted peer's: gone once A acknowledges (no StopCCN hold)
u1=$(ctlj b tunnel list | jq -r '[.tunnels[] | select(.peer | startswith("["))][0].tunnel_id')
ctl b tunnel delete "$u1" >/dev/null
wait_until 10 expect_count 4 count_tunnels b
log_test $? "B clears one unlisted tunnel (4 left)"
out=$(open_v4 a3)
grep -q "StopCCN result 2 .*peers entry lac-a: max_tunnels 2 reached" <<<"$out"
rc=$?; log_test $rc "lac-a's 3rd is refused: the StopCCN names the entry and its max_tunnels"
[ $rc = 0 ] || echo "$out"
grep -q "SCCRQ from $A_ADDR.* refused: .*peers entry lac-a: max_tunnels 2 reached" "$W/b.log"
log_test $? "B's log says which limit"

# sessions: lac-a's 2 across its tunnels
s1=$(ctlj a session create tunnel name a1 name s1) && up "$s1" &&
	s2=$(ctlj a session create tunnel name a2 name s2) && up "$s2"
log_test $? "lac-a opens a session on each of its tunnels"
out=$(ctlj a session create tunnel name a1 name s3 2>&1)
grep -q "CDN result 4 .*peers entry lac-a: max_sessions 2 reached" <<<"$out"
rc=$?; log_test $rc "its 3rd session is refused with a CDN that names the entry's max_sessions"
[ $rc = 0 ] || echo "$out"
expect_count 2 count_sessions b established
log_test $? "B has exactly lac-a's 2 sessions"

# a tunnel that goes frees its entry's slots (B still holds its StopCCN state)
ctl a tunnel delete name a2 >/dev/null
wait_until 10 expect_count 1 count_sessions b && expect_count 3 count_tunnels b established
log_test $? "lac-a's tunnel a2 goes, and its session with it"
out=$(open_v4 a4) && up "$out" && s=$(ctlj a session create tunnel name a4 name s4) && up "$s"
log_test $? "then lac-a gets a tunnel and a session again"

# the daemon-wide max_sessions: the peer's call is refused at once, with a CDN that says why
ns=$(count_sessions b)
sed -i "s|max_tunnels = 5;|max_tunnels = 5; max_sessions = $ns;|" "$W/b.conf"
ctl b reload >/dev/null
# on an unlisted tunnel still up (B cleared one of the three, whichever it listed first)
u=$(ctlj a tunnel list | jq -r '[.tunnels[] | select(.state == "established" and
	(.peer | startswith("[")))][0].name')
out=$(ctlj a -t 20 session create tunnel name "$u" name g1 2>&1)
grep -q "CDN result 4 .*max_sessions ($ns) reached" <<<"$out"
rc=$?; log_test $rc "over B's max_sessions ($ns): the ICRQ gets a CDN naming the limit, not silence"
[ $rc = 0 ] || echo "$out"

it_done
