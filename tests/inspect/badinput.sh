#!/usr/bin/env bash
# Unreadable input exits 2 with a message naming the problem: garbage, an
# empty file, a missing file, a capture cut in the middle (its messages and
# summary are still printed), an unsupported link type, bad arguments.
. "$(dirname "$0")/lib.sh"
need_inspect
scratch

# pcap header (little endian, microseconds, snaplen 65535) for link type $1
pcap_header() {
	printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00'
	printf "$(printf '\\x%02x\\x%02x\\x00\\x00' $(($1 & 255)) $(($1 >> 8)))"
}

# bad FILE PATTERN DESCRIPTION [ARGS...]: exit 2 and PATTERN on stderr
bad() {
	local file=$1 pat=$2 what=$3; shift 3
	"$INSPECT" "$@" "$file" > "$T/out" 2> "$T/err"
	local rc=$?
	[ $rc = 2 ] && grep -qi -- "$pat" "$T/err"
	log_test $? "$what: exit 2, '$pat'"
	[ $rc = 2 ] || echo "  rc $rc: $(head -3 "$T/err")"
}

head -c 4000 /dev/urandom > "$T/garbage.pcap"
printf 'this is not a capture\n' >> "$T/garbage.pcap"
bad "$T/garbage.pcap" "garbage.pcap" "random bytes"
: > "$T/empty.pcap"
bad "$T/empty.pcap" "empty.pcap" "an empty file"
bad "$T/missing.pcap" "No such file" "a missing file"
pcap_header 105 > "$T/wifi.pcap"
bad "$T/wifi.pcap" "unsupported link type" "802.11 link type"

# one whole frame (an SCCRQ over Ethernet/IPv4/UDP), then a record cut short
frame() {
	printf '\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00'	# Ethernet
	printf '\x45\x00\x00\x30\x00\x01\x40\x00\x40\x11\x00\x00\xc0\x00\x02\x01\xc0\x00\x02\x02'
	printf '\xc3\x50\x06\xa5\x00\x1c\x12\x34'				# UDP 50000 -> 1701
	printf '\xc8\x03\x00\x14\x00\x00\x00\x00\x00\x00\x00\x00'		# header, 20 octets
	printf '\x80\x08\x00\x00\x00\x00\x00\x06'				# Message Type: HELLO
}
{
	pcap_header 1
	printf '\x00\x00\x00\x00\x00\x00\x00\x00\x3e\x00\x00\x00\x3e\x00\x00\x00'
	frame
	printf '\x00\x00\x00\x00\x00\x00\x00\x00\x3e\x00\x00\x00\x3e\x00\x00\x00'
	frame | head -c 20
} > "$T/cut.pcap"
bad "$T/cut.pcap" "truncated" "a capture cut in the middle of a frame"
grep -q "^summary: 1 frames, 1 control messages" "$T/out"
log_test $? "the cut capture still prints what it read and the summary"

bad - "stdin" "garbage on stdin" < "$T/garbage.pcap"
bad "$T/empty.pcap" "usage" "no file argument" --json --secret
bad "$T/empty.pcap" "bad UDP port" "a bad --udp-port" --udp-port 0
"$INSPECT" --help | grep -q "^usage: l2tpv3-inspect"
log_test $? "--help prints the usage"

inspect_done
