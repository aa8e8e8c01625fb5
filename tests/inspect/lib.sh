# tests/inspect/lib.sh - shared by the l2tpv3-inspect tests.  Source it
# after tests/integration/lib.sh when the test runs daemons.
#
# The harness exports top_srcdir and top_builddir; run by hand, the tests
# guess both from their own path (pass top_builddir for an out-of-tree build).

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
INSPECT=$top_builddir/src/inspect/l2tpv3-inspect
FIXTURES=$top_srcdir/tests/fixtures/pcap
MKPCAP=$top_srcdir/tests/inspect/mkpcap.py

command -v log_test >/dev/null 2>&1 || . "$top_srcdir/scripts/lib.sh"
command -v skip >/dev/null 2>&1 || skip() { echo "SKIP: $*"; exit 77; }

need_inspect() {
	[ -x "$INSPECT" ] || skip "l2tpv3-inspect not built ($INSPECT)"
}

need_cmd() {	# need_cmd CMD [WHY]
	command -v "$1" >/dev/null 2>&1 || skip "needs $1${2:+ ($2)}"
}

# A private scratch directory, removed on exit (tests with daemons have $W).
# The trap replaces it_setup's: after it_setup, it_cleanup runs too, so the
# namespaces and daemons do not outlive the test.
scratch() {
	T=$(mktemp -d /tmp/l2tpv3-inspect-test.XXXXXX)
	trap inspect_cleanup EXIT
}
inspect_cleanup() {
	rm -rf "$T"
	[ -z "${W:-}" ] || ! command -v it_cleanup >/dev/null || it_cleanup
}

# jq_count FILE FILTER: how many JSON lines of FILE the filter selects.
jq_count() {
	jq -s "[.[] | $2] | length" "$1"
}

# jq_distinct FILE FILTER: how many distinct values the filter gives over
# the JSON lines of FILE (a message and its retransmissions count once).
jq_distinct() {
	jq -s "[.[] | $2] | unique | length" "$1"
}

# jq_check FILE FILTER: true when the filter gives at least one value over
# the JSON lines of FILE and every value is true (select() what to check).
jq_check() {
	jq -s -e "[.[] | $2] | length > 0 and all" "$1" >/dev/null
}

# The summary object of a -j run.
summary() {
	jq -c 'select(.summary) | .summary' "$1"
}

# How long a capturer may take to start and write its first packet: seconds
# on a quiet host, far more in an emulated guest on a loaded one (a wait on
# a condition: a generous deadline costs nothing when all is well).
CAPTURE_START_S=${CAPTURE_START_S:-60}

# start_capture NS IF FILE: capture on IF inside NS until stop_capture.
# tcpdump in immediate mode when present: each packet reaches the file as it
# arrives (without it libpcap hands packets over in blocks, up to a second
# late).  dumpcap and tshark (both come with Wireshark) have no immediate
# mode; stop_capture_when waits for what the test is about, whichever runs.
# A 2 KiB snapshot (control messages are smaller) and a 32 MiB ring: a burst
# of thousands of tunnels loses nothing to a capturer woken per packet.
start_capture() {
	local ns=$1 ifc=$2 file=$3
	if command -v tcpdump >/dev/null; then
		ip netns exec "$ns" tcpdump -i "$ifc" --immediate-mode -s 2048 -B 32768 -U -w "$file" 2>"$file.log" &
	elif command -v dumpcap >/dev/null; then
		ip netns exec "$ns" dumpcap -i "$ifc" -s 2048 -B 32 -q -w "$file" 2>"$file.log" &
	else
		ip netns exec "$ns" tshark -i "$ifc" -s 2048 -B 32 -q -w "$file" 2>"$file.log" &
	fi
	CAPTURE_PID=$! CAPTURE_FILE=$file
	wait_until "$CAPTURE_START_S" grep -q "listening on\|Capturing on" "$file.log" &&
		wait_until "$CAPTURE_START_S" test -s "$file" || return 1
	# Saying so comes a moment before packets reach the file, and a busy
	# machine stretches that moment: wait until a probe (an ICMP echo to the
	# interface's broadcast address, which the decoder ignores) or any other
	# packet has been written after the file's header.
	CAPTURE_HEADER=$(stat -c %s "$file")
	CAPTURE_BRD=$(ip -n "$ns" -4 -o addr show dev "$ifc" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "brd") { print $(i + 1); exit } }')
	wait_until "$CAPTURE_START_S" capture_live "$ns" "$file"
}

capture_live() {	# capture_live NS FILE: probes, true once FILE grew
	[ -z "$CAPTURE_BRD" ] ||
		ip netns exec "$1" ping -b -c 1 -W 0.1 "$CAPTURE_BRD" >/dev/null 2>&1
	[ "$(stat -c %s "$2")" -gt "$CAPTURE_HEADER" ]
}

# capture_holds JQ: true when JQ, applied to the array of what
# `l2tpv3-inspect -j` decodes from the capture so far (with --secret
# $CAPTURE_SECRET when set), is true.  It reads the file while the capturer
# writes it: a record cut in the middle ends what it reads.
#   capture_holds 'any(.[]; .type == "ICRP")'
capture_holds() {
	"$INSPECT" -j ${CAPTURE_SECRET:+--secret "$CAPTURE_SECRET"} "$CAPTURE_FILE" 2>/dev/null |
		jq -e -s "$1" >/dev/null 2>&1
}

# capture_has_types TYPE...: the capture holds a message of each TYPE.
capture_has_types() {
	local t f=true
	for t in "$@"; do f="$f and any(.[]; .type == \"$t\")"; done
	capture_holds "$f"
}

# capture_closed N: the capture's summary counts N control connections, each
# closed by an acknowledged StopCCN (the last packets of a run).
capture_closed() {
	capture_holds "any(.[]; .summary? and .summary.connections == $1 and
		all(.summary.connection_list[]; .state | startswith(\"closed\")))"
}

# stop_capture_when SECONDS CHECK...: waits at most SECONDS until CHECK (one
# of the capture_ predicates above) holds, then stops the capture.  False
# when the deadline passed first: the capture is stopped either way.
stop_capture_when() {
	local s=$1 rc=0; shift
	wait_until "$s" "$@" || rc=1
	stop_capture
	return $rc
}

# stop_capture: SIGINT lets the capturer flush and close the file.
stop_capture() {
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
	CAPTURE_PID=
}

need_capturer() {
	command -v tcpdump >/dev/null || command -v dumpcap >/dev/null ||
		command -v tshark >/dev/null || skip "needs tcpdump, dumpcap or tshark to capture"
}

inspect_done() {
	echo "$TESTS_OK passed, $TESTS_FAIL failed"
	[ "$TESTS_FAIL" = 0 ]
}
