#!/bin/sh
# tests/unit/wire-oracle.sh - tshark, which is not our code, judges what our
# encoder puts on the wire.
#
#   wire-oracle-gen ──► udp.pcap       every message type, UDP port 1701
#                       ip.pcap        the same over IP protocol 115
#                       auth-udp.pcap  signed (HMAC-MD5), hidden AVPs
#                       auth-ip.pcap   signed (HMAC-SHA-1), hidden AVPs
#                       expected.txt   type/CCID/Ns/Nr of each message
#        tshark -V ──► no "Malformed", no expert info, the fields read back,
#                       and our digests verified with the shared secret
#
# Exit 0 pass, 1 fail, 77 skip (automake) when tshark is not installed.

GEN=${WIRE_ORACLE_GEN:-${top_builddir:-.}/tests/unit/wire-oracle-gen}
SECRET=oracle-secret
failures=0
tests=0

if ! command -v tshark >/dev/null 2>&1; then
	echo "SKIP: tshark not found (Debian package tshark): no wire oracle"
	exit 77
fi
if [ ! -x "$GEN" ]; then
	GEN=$(dirname "$0")/wire-oracle-gen
fi
if [ ! -x "$GEN" ]; then
	echo "FAIL: wire-oracle-gen not built (make check builds it)"
	exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/wire-oracle.XXXXXX") || exit 1
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT

log_test() {
	tests=$((tests + 1))
	if [ "$2" -eq 0 ]; then
		printf 'TEST: %-60s [ OK ]\n' "$1"
	else
		printf 'TEST: %-60s [FAIL]\n' "$1"
		failures=$((failures + 1))
	fi
}

# tshark as root warns on stderr; keep stderr apart so it cannot hide failures
ts() {
	tshark -n -o "l2tp.shared_secret:$SECRET" -o ip.check_checksum:TRUE \
		-o udp.check_checksum:TRUE "$@" 2>"$dir/tshark.err"
}

"$GEN" "$dir"
log_test "wire-oracle-gen writes the captures" $?

# Every file: tshark sees nothing malformed and raises no expert info.
for f in udp ip auth-udp auth-ip; do
	n=$(ts -r "$dir/$f.pcap" -V | grep -c -i malformed)
	log_test "$f: no Malformed in tshark -V" "$n"
	ts -r "$dir/$f.pcap" -Y '_ws.malformed || _ws.expert' >"$dir/expert.txt"
	[ ! -s "$dir/expert.txt" ]
	rc=$?
	[ $rc -eq 0 ] || cat "$dir/expert.txt"
	log_test "$f: no expert info (checksums, digests verified)" $rc
done

# Type, CCID, Ns and Nr of every message, as tshark reads them.
fields() {
	ts -r "$1" -T fields -e l2tp.avp.message_type -e l2tp.ccid -e l2tp.Ns -e l2tp.Nr
}
for f in udp ip; do
	fields "$dir/$f.pcap" | diff -u "$dir/expected.txt" - >"$dir/diff.txt"
	rc=$?
	[ $rc -eq 0 ] || cat "$dir/diff.txt"
	log_test "$f: message type, CCID, Ns, Nr" $rc
done
# with authentication there is no ZLB (RFC 3931 6.15)
grep -v '^	' "$dir/expected.txt" >"$dir/expected-auth.txt"
for f in auth-udp auth-ip; do
	fields "$dir/$f.pcap" | diff -u "$dir/expected-auth.txt" - >"$dir/diff.txt"
	rc=$?
	[ $rc -eq 0 ] || cat "$dir/diff.txt"
	log_test "$f: message type, CCID, Ns, Nr" $rc
done

# AVP values (the samples in wire-oracle-samples.c): numbers in decimal,
# the cookie in hex; tshark prints an empty cookie as <MISSING>.
cat >"$dir/avps-expected.txt" <<'EOF'
1|lac1.example.net|167772161|464374526|||||||||5,4,7|l2tpv3d
2|lns1.example.net|167772162|732819469|||||||||5,4,7|l2tpv3d
3|||||||||||||
|||||||||||||
6|||||||||||||
20|||||||||||||
10||||12648430|0|deadbeef01234567|5||||ge-0/0/1.100||
11||||12513025|12648430|deadbeef|||||||
12||||12648430|12513025||||||||
16||||12513025|12648430||||||||
15||||12648430|12513025||||||||
7||||12513026|0||5||||ge-0/0/1.100||
8||||12648431|12513026||||||||
9||||12648431|12513026||||||||
14||||12513026|12648431|||2|8|AVP 200|||
4|||464374526|||||1|0|administrative shutdown|||
EOF
for f in udp ip; do
	ts -r "$dir/$f.pcap" -T fields -E separator='|' \
		-e l2tp.avp.message_type -e l2tp.avp.host_name -e l2tp.avp.router_id \
		-e l2tp.avp.assigned_control_conn_id -e l2tp.avp.local_session_id \
		-e l2tp.avp.remote_session_id -e l2tp.avp.assigned_cookie \
		-e l2tp.avp.pseudowire_type -e l2tp.result_code -e l2tp.avp.error_code \
		-e l2tp.avp.error_message -e l2tp.avp.remote_end_id -e l2tp.avp.pw_type \
		-e l2tp.avp.vendor_name | sed 's/<MISSING>//g' >"$dir/avps.txt"
	diff -u "$dir/avps-expected.txt" "$dir/avps.txt" >"$dir/diff.txt"
	rc=$?
	[ $rc -eq 0 ] || cat "$dir/diff.txt"
	log_test "$f: AVP values (names, IDs, cookie, PW, result)" $rc
done

# The digest check is real: with another secret tshark rejects every one.
for f in auth-udp auth-ip; do
	total=$(ts -r "$dir/$f.pcap" | wc -l)
	bad=$(tshark -n -o l2tp.shared_secret:not-the-secret -r "$dir/$f.pcap" \
		-Y l2tp.incorrect_digest 2>/dev/null | wc -l)
	[ "$total" -gt 0 ] && [ "$bad" -eq "$total" ]
	log_test "$f: a wrong secret fails all $total digests (got $bad)" $?
	hidden=$(ts -r "$dir/$f.pcap" -T fields -e l2tp.avp.hidden | tr ',' '\n' | grep -c 1)
	[ "$hidden" -gt 20 ]
	log_test "$f: hidden AVPs on the wire ($hidden)" $?
done

echo "wire oracle: $((tests - failures))/$tests passed"
[ "$failures" -eq 0 ]
