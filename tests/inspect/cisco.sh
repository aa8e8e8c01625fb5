#!/usr/bin/env bash
# The Cisco RF Gateway 10 capture (L2TPv3 over IP, protocol 115): every
# control message decodes, message types, CCIDs, Ns/Nr and session IDs are
# what tshark reads in the same file, and the only violations reported are
# the two doc/l2tpv3-inspect.md explains (CableLabs DEPI AVPs with M=1; a
# StopCCN for a connection the peer had forgotten, never acknowledged).
. "$(dirname "$0")/lib.sh"
need_inspect
need_cmd jq
CAP=$FIXTURES/cisco-rfgw10-l2tpv3-ip.pcap
[ -r "$CAP" ] || skip "$CAP not found (tests/fixtures is incomplete)"
need_cmd tshark "reference decoder"
scratch

"$INSPECT" -j "$CAP" > "$T/out.json"
rc=$?
[ $rc = 1 ]
log_test $? "exit status 1: violations found (got $rc)"

jq_check "$T/out.json" 'select(.summary) | .summary | .frames == 121 and .messages == 121 and
	.not_decoded == 0 and .data_messages == 0 and .connections == 2'
log_test $? "121 frames, 121 control messages, 2 connections, nothing left undecoded"

# what tshark reads: frame, CCID, Ns, Nr, message type (none for a ZLB), session IDs
tshark -r "$CAP" -T fields -E separator=/t -e frame.number -e l2tp.ccid -e l2tp.Ns -e l2tp.Nr \
	-e l2tp.avp.message_type -e l2tp.avp.local_session_id -e l2tp.avp.remote_session_id \
	2>/dev/null | while IFS=$'\t' read -r f ccid ns nr type lsid rsid; do
		printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$f" "$ccid" "$ns" "$nr" "$type" "$lsid" "$rsid"
	done > "$T/tshark.tsv"
jq -r 'select(.frame) | [.frame, .ccid, .ns, .nr, (if .type == "ZLB" then "" else .type_code end),
	(.avps.local_sid // ""), (.avps.remote_sid // "")] | @tsv' "$T/out.json" > "$T/ours.tsv"
[ "$(wc -l < "$T/tshark.tsv")" = 121 ] && diff "$T/tshark.tsv" "$T/ours.tsv"
log_test $? "types, CCIDs, Ns/Nr and session IDs match tshark's, frame by frame"

[ "$(jq_count "$T/out.json" 'select(.violations) | .violations[] |
	select(.kind | test("^(short-header|bad-version|no-length-bit|no-seq-bit|length-mismatch|avp-|first-avp|bad-avp|hidden-|missing-avp|duplicate-avp|unknown-message-type)"))')" = 0 ]
log_test $? "the codec rejects no message"

kinds=$(jq -r 'select(.summary) | .summary.by_kind | to_entries[] | "\(.key)=\(.value)"' "$T/out.json" |
	sort | tr '\n' ' ')
[ "$kinds" = "unacked-retransmission=1 unknown-mandatory=72 " ]
log_test $? "only the explained violations: $kinds"

[ "$(jq_count "$T/out.json" 'select(.violations and (.violations | map(.kind) | index("unknown-mandatory"))) |
	select((.type | test("^IC(RQ|RP|CN)$")) and (.unknown_mandatory | all(startswith("vendor 4491 "))))')" = 72 ]
log_test $? "unknown-mandatory: the 72 ICRQ/ICRP/ICCN, CableLabs (vendor 4491) AVPs only"

jq_check "$T/out.json" 'select(.frame == 103) | .type == "StopCCN" and
	.retransmission.copy == 2 and (.violations | map(.kind) == ["unacked-retransmission"])'
log_test $? "frame 103: the StopCCN retransmission nobody acknowledged"
jq_check "$T/out.json" 'select(.summary) | .summary.connection_list[1].state == "StopCCN from A, not acknowledged"'
log_test $? "a StopCCN its receiver never acknowledged does not close the connection in the summary"
[ "$(jq_count "$T/out.json" 'select(.avps.pw_type) | select(.avps.pw_type.value == 12 and
	.avps.pw_type.name == "MPEG-TS Payload Type (DEPI MPT)")')" = 48 ]
log_test $? "DEPI pseudowire type 12 has its IANA name, not unknown"

jq_check "$T/out.json" 'select(.frame == 4) | .type == "SCCRP" and .violations == [] and
	.v2_compat == ["Protocol Version", "Framing Capabilities"] and
	(.skipped | index("vendor 9 type 1")) != null and .avps.router_id == "4.6.13.1" and
	.avps.assigned_ccid == 3165063725 and .avps.host_name == "CST-RFGW10-C11"'
log_test $? "frame 4 (SCCRP): v2-compat AVPs and Cisco vendor AVPs skipped, no violation"

jq_check "$T/out.json" 'select(.frame == 2) | .retransmission.copy == 2 and .violations == []' &&
	jq_check "$T/out.json" 'select(.summary) | .summary.connection_list[0] | .from_start and
	.sessions == 24 and .state == "established" and .b.zlb == 33'
log_test $? "SCCRQ retransmission acknowledged by the SCCRP; 24 sessions, 33 ZLBs from the RFGW"

"$INSPECT" "$CAP" > "$T/out.txt"
[ $? = 1 ] && tail -1 "$T/out.txt" | grep -q "^summary: 121 frames, 121 control messages" &&
	grep -q "v2-compat Protocol Version" "$T/out.txt" && grep -q "vendor 9 type 1 (skipped)" "$T/out.txt"
log_test $? "text output: one line per message and the summary line"

inspect_done
