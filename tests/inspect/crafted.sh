#!/usr/bin/env bash
# Crafted captures (tests/inspect/mkpcap.py): one conversation per fault,
# each fault reported exactly where it is and as the kind it is, nothing
# else (data messages checked against the cookies their session assigned
# among them); the same clean conversation over every link type, family and
# encapsulation lints clean; authentication and hidden AVPs with and without
# the secret; fragments and snap-length cuts are reported, not decoded.
. "$(dirname "$0")/lib.sh"
need_inspect
need_cmd jq
need_cmd python3 "writes the crafted captures"
scratch
python3 "$MKPCAP" "$T" || { log_test 1 "mkpcap.py writes the captures"; inspect_done; exit 1; }

# --- one violation per kind ---------------------------------------------------
"$INSPECT" -j --secret s3cret "$T/violations.pcap" > "$T/v.json"
rc=$?
[ $rc = 1 ]
log_test $? "violations.pcap: exit status 1 (got $rc)"
jq -r 'select(.frame) | .frame as $f | .violations[] | "\($f)\t\(.kind)"' "$T/v.json" | sort > "$T/got"
sort "$T/violations.expected" > "$T/want"
if diff "$T/want" "$T/got" > "$T/diff"; then
	log_test 0 "every fault reported at its frame as its kind, nothing else ($(wc -l < "$T/want"))"
else
	cat "$T/diff"
	log_test 1 "every fault reported at its frame as its kind, nothing else"
fi
kinds=$(cut -f2 "$T/want" | sort -u | wc -l)
[ "$kinds" -ge 28 ]
log_test $? "the crafted capture covers $kinds kinds"
jq_check "$T/v.json" 'select(.type == "type-98") | .violations == [] and
	(.notes | index("message type 98 unknown with M=0: ignored")) != null'
log_test $? "an unknown message type with M=0 is a note, not a violation"
# data checked against the assigned cookies: the crafted frames above, and
# what is said about them (8/4-octet cookies assigned, the peer sends none)
jq_check "$T/v.json" 'select(.type == "data" and .session_id == 1401) | .dir == "B>A" and (.violations[0].detail | test("^session 1401: .* where the cookie a1a2a3a4a5a6a7a8 its ICRQ \\(frame [0-9]+\\) assigned belongs"))'
log_test $? "a data message without the cookie its session's ICRQ assigned: cookie-mismatch, named"
[ "$(jq_count "$T/v.json" 'select(.type == "data")')" = 3 ] &&
	jq_check "$T/v.json" 'select(.summary) | .summary.by_kind["cookie-mismatch"] == 3'
log_test $? "one cookie-mismatch per session and direction, not one per data message"
"$INSPECT" --secret s3cret "$T/violations.pcap" > "$T/v.txt"
[ $? = 1 ] && grep -q ' !! ns-gap: Ns 4, expected 2' "$T/v.txt" &&
	grep -q '^summary: .* violations: ' "$T/v.txt" &&
	grep -Eq ' c[0-9]+ B>A 10\.0\.14\.2:1701 > 10\.0\.14\.1:50014 data session 1401 !! cookie-mismatch: ' "$T/v.txt"
log_test $? "text output names each violation on its message's line"

# --- the same clean conversation, every way it can be captured ----------------
while IFS=$'\t' read -r file n; do
	"$INSPECT" -j "$T/$file" > "$T/c.json"
	rc=$?
	[ $rc = 0 ] && jq_check "$T/c.json" "select(.summary) | .summary | .messages == $n and
		.connections == 1 and .data_messages == 2 and .not_decoded == 0 and .violations == 0"
	log_test $? "$file: $n messages, 2 data messages skipped, clean (rc $rc)"
done < "$T/clean.expected"
jq_check "$T/c.json" 'select(.type == "ICRQ") | .avps.local_sid == 1001 and .avps.remote_sid == 0 and
	.avps.pw_type.name == "Ethernet" and .avps.circuit_status.active and .dir == "A>B"'
log_test $? "ICRQ AVPs decoded: session IDs, PW type name, circuit status bits"
"$INSPECT" -j "$T/clean-eth-udp4.pcap" > "$T/c.json"
jq_check "$T/c.json" 'select(.notes and (.notes | index("L2TPv2 message: not linted")))'
log_test $? "an L2TPv2 message on port 1701 is noted, not linted"
"$INSPECT" - < "$T/clean-eth-qinq-udp4.pcapng" | tail -1 | grep -q "14 control messages"
log_test $? "reads a capture from stdin (-)"

"$INSPECT" -j "$T/lost-before-stopccn.pcap" > "$T/l.json"
[ $? = 0 ] && jq_check "$T/l.json" 'select(.summary) | .summary.violations == 0' &&
	jq_check "$T/l.json" 'select(.notes) | select(any(.notes[]; contains("not taken by the peer before its StopCCN")))'
log_test $? "copies the peer's StopCCN shows it never got: lost, not an unacked retransmission"
"$INSPECT" -j "$T/copy-after-stopccn.pcap" > "$T/l.json"
[ $? = 0 ] && jq_check "$T/l.json" 'select(.summary) | .summary.violations == 0 and .summary.messages >= 9' &&
	[ "$(jq_count "$T/l.json" 'select(.type == "HELLO" and (.notes // [] | any(contains("not taken by the peer before its StopCCN"))))')" = 2 ]
log_test $? "a copy sent after the peer's StopCCN, which a closing peer does not take: noted, not an unacked retransmission"

"$INSPECT" -j "$T/port1702.pcap" > "$T/p.json" &&
	jq_check "$T/p.json" 'select(.summary) | .summary | .messages == 14 and .data_messages == 2'
log_test $? "port 1702 without --udp-port: control messages found by their header alone"
"$INSPECT" -j --udp-port 1702 "$T/port1702.pcap" > "$T/p.json"
[ $? = 1 ] && jq_check "$T/p.json" 'select(.summary) | .summary | .messages == 15 and
	.data_messages == 4 and .by_kind == {"length-mismatch": 1}'
log_test $? "--udp-port 1702: data and a broken message before the SCCRQ are L2TP too"

# --- authentication and hidden AVPs -----------------------------------------------
"$INSPECT" -j --secret s3cret "$T/auth.pcap" > "$T/a.json"
rc=$?
[ $rc = 0 ] && [ "$(jq_count "$T/a.json" 'select(.notes) | select(.notes | index("digest: verified"))')" = 14 ]
log_test $? "auth.pcap with the secret: all 14 digests (MD5 and SHA-1) verify (rc $rc)"
jq_check "$T/a.json" 'select(.type == "ICRQ") | .avps.serial == 7007 and .avps.remote_end_id == "pw-1001"'
log_test $? "hidden AVPs unhidden with --secret"
jq_check "$T/a.json" 'select(.summary) | .summary.ack == 5 and .summary.zlb == 0 and
	.summary.connection_list[0].auth'
log_test $? "explicit ACKs counted apart from ZLBs; authentication noticed"
"$INSPECT" -j "$T/auth.pcap" > "$T/a.json"
rc=$?
[ $rc = 0 ] && [ "$(jq_count "$T/a.json" 'select(.notes) | select(.notes | index("digest: not verified (no --secret)"))')" = 14 ] &&
	jq_check "$T/a.json" 'select(.type == "ICRQ") | .notes | index("hidden AVPs: not decoded (no --secret)") != null'
log_test $? "auth.pcap without the secret: digests and hidden AVPs noted as not checked (rc $rc)"
"$INSPECT" -j --secret wrong "$T/auth.pcap" > "$T/a.json"
rc=$?
[ $rc = 1 ] && jq_check "$T/a.json" 'select(.summary) | .summary.by_kind["digest-mismatch"] >= 13'
log_test $? "a wrong secret: digest-mismatch (rc $rc)"

# --- what is not decoded ------------------------------------------------------------
"$INSPECT" -j "$T/fragments.pcap" > "$T/f.json"
rc=$?
[ $rc = 0 ] && jq_check "$T/f.json" 'select(.summary) | .summary.not_decoded == 6 and .summary.messages == 0' &&
	[ "$(jq_count "$T/f.json" 'select(.not_decoded == "IPv4 fragment (not reassembled)")')" = 4 ] &&
	[ "$(jq_count "$T/f.json" 'select(.not_decoded == "IPv6 fragment (not reassembled)")')" = 1 ] &&
	[ "$(jq_count "$T/f.json" 'select(.not_decoded | tostring | test("snap length"))')" = 1 ]
log_test $? "IPv4/IPv6 fragments and a snap-length cut reported as not decoded (rc $rc)"

inspect_done
