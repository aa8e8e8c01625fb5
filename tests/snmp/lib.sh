# tests/snmp/lib.sh - a real snmpd as AgentX master, l2tpv3d daemons as its
# subagents, all on loopback, null data plane.  No root needed.
#
#   snmpwalk/snmpget --udp 127.0.0.1:SNMP_PORT--> snmpd --trap2sink--> snmptrapd
#                                                   ^ AgentX ($W/agentx.sock)
#                                                   |
#   l2tpv3d a (127.0.0.2:PORT, snmp on) <--L2TPv3--> l2tpv3d b (127.0.0.3:PORT)
#
# snmpd reads only its own config in $W (-C -c), keeps its state in $W, and
# loads no MIB; the tools load only L2TPV3D-MIB (-m), found in mibs/, with
# tests/snmp/mibs/ standing in for the IETF modules it imports.  Ports are
# random so parallel runs do not meet; everything is killed on exit.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
. "$top_srcdir/scripts/lib.sh"

D=$top_builddir/src/l2tpv3d
C=$top_builddir/src/cli/l2tpv3ctl
A_ADDR=127.0.0.2 B_ADDR=127.0.0.3

skip() { echo "SKIP: $*"; exit 77; }

snmp_setup() {
	local p
	for p in snmpd snmpget snmpgetnext snmpwalk snmpbulkwalk jq; do
		command -v "$p" >/dev/null || skip "needs $p (Debian: snmpd, snmp, jq)"
	done
	[ -x "$D" ] && [ -x "$C" ] || skip "daemon or CLI not built"
	ldd "$D" 2>/dev/null | grep -q netsnmpagent || skip "l2tpv3d built without --with-snmp"
	W=$(mktemp -d /tmp/l2tpv3d-snmp.XXXXXX)
	trap snmp_cleanup EXIT
	PORT=$(free_port) SNMP_PORT=$(free_port) TRAP_PORT=$(free_port)
	[ -n "$PORT" ] && [ -n "$SNMP_PORT" ] && [ -n "$TRAP_PORT" ] || skip "no free port below 32768"
	MIBARGS=(-M "$top_srcdir/mibs:$top_srcdir/tests/snmp/mibs" -m L2TPV3D-MIB)
	SNMP=(-v2c -c public -t 1 -r 2 "${MIBARGS[@]}" "127.0.0.1:$SNMP_PORT")
	export MIBS=		# our own snmpd/snmptrapd load no MIB
}

# free_port: a UDP and TCP port no socket has, below the ephemeral range
# (32768 on: another test's thousands of sockets may take any of those at
# any time), and not one this test took already
free_port() {
	local p i
	for i in $(seq 1 200); do
		p=$((20000 + RANDOM % 12000))
		case " ${PORT:-} ${SNMP_PORT:-} ${TRAP_PORT:-} " in *" $p "*) continue ;; esac
		[ -z "$(ss -Hanu "sport = :$p" 2>/dev/null; ss -Hant "sport = :$p" 2>/dev/null)" ] &&
			{ echo "$p"; return 0; }
	done
	return 1
}

# The EXIT trap, also on SIGINT/SIGTERM (see tests/integration/lib.sh).
snmp_cleanup() {
	local p
	trap '' INT TERM HUP
	kill_pidfiles KILL "$W"/*.pid
	if [ "$TESTS_FAIL" != 0 ] || [ -n "${KEEP_LOGS:-}" ]; then
		for p in "$W"/*.log; do [ -f "$p" ] && { echo "--- $p (last 30 lines)"; tail -30 "$p"; }; done
	fi
	rm -rf "$W"
}

# snmptrapd_start: a notification receiver (optional: returns 1 without it)
snmptrapd_start() {
	command -v snmptrapd >/dev/null || return 1
	echo "disableAuthorization yes" > "$W/snmptrapd.conf"
	SNMP_PERSISTENT_DIR=$W/trapd snmptrapd -f -On -Lf "$W/traps.log" -C -c "$W/snmptrapd.conf" \
		"udp:127.0.0.1:$TRAP_PORT" >/dev/null 2>&1 &
	echo $! > "$W/snmptrapd.pid"
	disown $!	# no "Killed" line from bash when we kill it
}

# snmpd_start: AgentX master on $W/agentx.sock, SNMP on 127.0.0.1:$SNMP_PORT
snmpd_start() {
	cat > "$W/snmpd.conf" <<CONF
agentAddress udp:127.0.0.1:$SNMP_PORT
master agentx
agentXSocket $W/agentx.sock
rocommunity public 127.0.0.1
trap2sink 127.0.0.1:$TRAP_PORT public
CONF
	SNMP_PERSISTENT_DIR=$W/snmpd snmpd -f -Lo -C -c "$W/snmpd.conf" >>"$W/snmpd.log" 2>&1 &
	echo $! > "$W/snmpd.pid"
	disown $!
	wait_until 5 test -S "$W/agentx.sock"
}

snmpd_kill() {
	local pid; pid=$(cat "$W/snmpd.pid")
	kill -9 "$pid" 2>/dev/null
	wait_until 5 sh -c "! kill -0 $pid 2>/dev/null"
	rm -f "$W/snmpd.pid"
}

# write_conf NAME ADDR SNMP(true|false) CONFIG_ID(true|false)
write_conf() {
	cat > "$W/$1.conf" <<CONF
global = { listen = ["$2"]; udp_port = $PORT; hostname = "$1"; dataplane = "null";
           log_level = "debug"; ctl_socket = "$W/$1.ctl"; router_id = "$2";
           snmp_config_id = $4; };
peer_default = { accept = true; };
snmp = { enabled = $3; agentx_socket = "$W/agentx.sock"; };
CONF
}

# start NAME: starts l2tpv3d with $W/NAME.conf and waits for its socket
start() {
	"$D" -F -f "$W/$1.conf" >>"$W/$1.log" 2>&1 &
	echo $! > "$W/$1.pid"
	disown $!
	wait_until 5 "$C" -s "$W/$1.ctl" show daemon || { echo "$1 did not start"; tail "$W/$1.log"; return 1; }
}

stop() {
	kill -TERM "$(cat "$W/$1.pid")" 2>/dev/null
	wait_until 10 sh -c "! kill -0 $(cat "$W/$1.pid") 2>/dev/null"
}

ctl() { local n=$1; shift; "$C" -s "$W/$n.ctl" "$@"; }
ctlj() { local n=$1; shift; "$C" -s "$W/$n.ctl" -j "$@"; }

# sget OID...: the values, one per line
sget() { snmpget "${SNMP[@]}" -Oqv "$@" 2>&1; }
# swalk OID: "column.index = value" lines, indexes numeric
swalk() { snmpwalk "${SNMP[@]}" -OQsb "$@" 2>&1; }
# sindexes COLUMN: the index part of each instance of a column
sindexes() { swalk "$1" | sed -n 's/^[A-Za-z0-9]*\.\([0-9.]*\) = .*/\1/p'; }
# svalue COLUMN.INDEX: one value, nothing when absent
svalue() { sget "$1" | grep -v "No Such"; }

snmp_done() {
	echo "$TESTS_OK passed, $TESTS_FAIL failed"
	[ "$TESTS_FAIL" = 0 ]
}
