#!/usr/bin/env bash
# tests/cli/cli-test.sh - l2tpv3ctl against a fake daemon.
#
#   l2tpv3ctl ──── UNIX socket $T/NAME.sock ────> fake-ctl.py (canned replies)
#     │ stdout, stderr, exit status                 │ every request -> $T/NAME.rec
#     └─> checked here with jq / grep / diff        └ max in flight -> $T/NAME.stats
#
# Fakes: "main" answers at once, "cfg" adds config_id to tunnels, "ooo"
# sends replies in reversed groups of 8, "win" holds replies until the
# client goes quiet (so it sees the client's whole window).
#
# Run by `make check` (top_srcdir/top_builddir exported) or by hand.
# Exits 77 (skip) without python3 or jq.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
CTL=$top_builddir/src/cli/l2tpv3ctl
FAKE=$top_srcdir/tests/cli/fake-ctl.py

for tool in python3 jq; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done
[ -x "$CTL" ] || { echo "cli-test.sh: $CTL is not built" >&2; exit 99; }

. "$top_srcdir/scripts/lib.sh"

# Short: a UNIX socket path must fit in 108 bytes.
T=$(mktemp -d /tmp/cli-test.XXXXXX) || exit 99
FAKE_PIDS=
cleanup() {
	for pid in $FAKE_PIDS; do kill "$pid" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
unset L2TPV3CTL_SOCKET
export TZ=UTC	# monitor prints local time

# start_fake NAME [fake-ctl.py options]
start_fake() {
	name=$1
	shift
	python3 "$FAKE" "$T/$name.sock" --record "$T/$name.rec" --stats "$T/$name.stats" \
		--ready "$T/$name.ready" "$@" 2>"$T/$name.log" &
	FAKE_PIDS="$FAKE_PIDS $!"
	wait_until 10 test -e "$T/$name.ready" ||
		die "fake daemon '$name' did not start: $(cat "$T/$name.log")"
}

# run ARGS...: l2tpv3ctl with stdout in $T/out, stderr in $T/err, status in RC.
run() {
	"$CTL" "$@" >"$T/out" 2>"$T/err"
	RC=$?
}

# check RESULT DESCRIPTION: log_test, plus what went wrong on failure.
check() {
	log_test "$1" "$2"
	[ "$1" = 0 ] && return 0
	echo "    exit status: $RC"
	sed 's/^/    stdout: /' "$T/out" | head -20
	sed 's/^/    stderr: /' "$T/err" | head -5
	return 0
}

# usage_case DESCRIPTION EXPECTED-STDERR ARGS...: exit 2, the message, nothing sent.
usage_case() {
	desc=$1 want=$2
	shift 2
	: >"$T/main.rec"
	run -s "$T/main.sock" "$@"
	[ "$RC" = 2 ] && grep -qF -- "$want" "$T/err" && [ ! -s "$T/main.rec" ]
	check $? "usage: $desc"
}

# req_case DESCRIPTION JQ-CONDITION ARGS...: exit 0, exactly one request, matching.
req_case() {
	desc=$1 cond=$2
	shift 2
	: >"$T/main.rec"
	run -s "$T/main.sock" "$@"
	[ "$RC" = 0 ] && [ "$(wc -l <"$T/main.rec")" -eq 1 ] &&
		jq -e "(.id | type == \"number\") and ($cond)" "$T/main.rec" >/dev/null
	check $? "request: $desc"
}

# out_case DESCRIPTION STATUS EXPECTED-FILE ARGS...: that exit status, stdout exactly.
out_case() {
	desc=$1 want_rc=$2 want=$3
	shift 3
	run -s "$T/main.sock" "$@"
	[ "$RC" = "$want_rc" ] && diff -u "$want" "$T/out" >"$T/diff"
	rc=$?
	check $rc "output: $desc"
	[ $rc = 0 ] || sed 's/^/    /' "$T/diff"
}

# err_case DESCRIPTION STATUS EXACT-STDERR ARGS...
err_case() {
	desc=$1 want_rc=$2 want=$3
	shift 3
	run "$@"
	[ "$RC" = "$want_rc" ] && [ "$(cat "$T/err")" = "$want" ]
	check $? "error: $desc"
}

# jq_case DESCRIPTION JQ-CONDITION ARGS...: exit 0, stdout is JSON matching.
jq_case() {
	desc=$1 cond=$2
	shift 2
	run -s "$T/main.sock" "$@"
	[ "$RC" = 0 ] && jq -e "$cond" "$T/out" >/dev/null
	check $? "json: $desc"
}

start_fake main
start_fake cfg --config-id
start_fake desc --described
start_fake ooo --hold 8
start_fake win --hold 100000
start_fake compact --compact

###########################################################################
# Arguments: exit 2, one message naming the problem, nothing sent.

usage_case "no command" \
	"l2tpv3ctl: missing command (valid: tunnel, session, show, stats, metrics, reload, restart, failover, debug, monitor)"
usage_case "typo at the top level" \
	"l2tpv3ctl: unknown command 'tunel' (valid: tunnel, session, show, stats, metrics, reload, restart, failover, debug, monitor)" \
	tunel list
usage_case "typo in a subcommand" \
	"l2tpv3ctl: tunnel: unknown command 'crate' (valid: create, delete, show, list)" \
	tunnel crate peer 192.0.2.2
usage_case "typo after show" "l2tpv3ctl: show: unknown command 'deamon' (valid: daemon)" \
	show deamon
usage_case "missing subcommand" \
	"l2tpv3ctl: session: missing command (valid: create, delete, show, list)" session
usage_case "typo in an argument" \
	"l2tpv3ctl: tunnel create: unknown argument 'pear' (valid: peer, pool, local, encap, profile, name, secret, secret-file, description, digest, hello, src-port, no-wait)" \
	tunnel create pear 192.0.2.2
usage_case "ambiguous prefix" \
	"l2tpv3ctl: ambiguous command 's' (could be: session, show, stats)" s list
usage_case "ambiguous argument prefix" \
	"l2tpv3ctl: tunnel create: ambiguous argument 'p' (could be: peer, pool, profile)" \
	tunnel create p 192.0.2.2
usage_case "missing required argument" "l2tpv3ctl: tunnel create: missing argument (peer or pool)" \
	tunnel create encap ip
usage_case "peer and pool both" "l2tpv3ctl: tunnel create: give only one of peer or pool" \
	tunnel create pool lns peer 192.0.2.2
usage_case "pool without a name" "l2tpv3ctl: tunnel create: missing value for 'pool'" \
	tunnel create pool
usage_case "missing value at the end" \
	"l2tpv3ctl: tunnel create: missing value for 'name'" tunnel create peer 192.0.2.2 name
usage_case "missing ID or name" \
	"l2tpv3ctl: tunnel delete: missing argument (ID or name)" tunnel delete result 4
usage_case "both ID and name" "l2tpv3ctl: tunnel show: give only one of ID or name" \
	tunnel show 5 name t1
usage_case "argument given twice" "l2tpv3ctl: tunnel create: 'peer' given twice" \
	tunnel create peer 192.0.2.2 peer 192.0.2.3
usage_case "argument to a command without any" \
	"l2tpv3ctl: reload: unexpected argument 'now' (takes none)" reload now
usage_case "bad enum (encap)" \
	"l2tpv3ctl: tunnel create: bad value 'tcp' for 'encap' (valid: udp, ip)" \
	tunnel create peer 192.0.2.2 encap tcp
usage_case "bad enum (digest)" \
	"l2tpv3ctl: tunnel create: bad value 'sha256' for 'digest' (valid: none, md5, sha1)" \
	tunnel create peer 192.0.2.2 digest sha256
usage_case "bad enum (src-port)" \
	"bad value '1702' for 'src-port' (valid: 1701, ephemeral)" \
	tunnel create peer 192.0.2.2 src-port 1702
usage_case "bad enum (pw)" \
	"l2tpv3ctl: session create: bad value 'atm' for 'pw' (valid: eth, eth_vlan, ppp)" \
	session create tunnel 5 pw atm
usage_case "ambiguous enum prefix (seq)" \
	"l2tpv3ctl: session create: ambiguous value 'n' for 'seq' (could be: none, non-ip)" \
	session create tunnel 5 seq n
usage_case "cookie length" "l2tpv3ctl: session create: 'cookie' must be 0, 4 or 8" \
	session create tunnel 5 cookie 3
usage_case "ID zero" \
	"l2tpv3ctl: tunnel show: bad value '0' for 'ID' (expected a decimal number from 1 to 4294967295)" \
	tunnel show 0
usage_case "ID over 32 bits" "session delete: bad value '4294967296' for 'ID'" \
	session delete 4294967296
usage_case "ID in hex" "tunnel delete: bad value '0x10' for 'ID'" tunnel delete 0x10
usage_case "negative ID" "session show: bad value '-1' for 'ID'" session show -1
usage_case "tunnel reference neither ID nor name" \
	"session create: bad value 'abc' for 'tunnel' (expected ID or name NAME)" \
	session create tunnel abc
usage_case "tunnel filter ID" "stats: bad value '0' for 'tunnel'" stats tunnel 0
usage_case "result code range" "tunnel delete: bad value '70000' for 'result'" \
	tunnel delete 5 result 70000
usage_case "hello not a number" "tunnel create: bad value '10s' for 'hello'" \
	tunnel create peer 192.0.2.2 hello 10s
usage_case "address: short IPv4" \
	"l2tpv3ctl: tunnel create: bad value '192.0.2' for 'peer' (expected an IPv4 or IPv6 address, ADDR:PORT or [V6]:PORT)" \
	tunnel create peer 192.0.2
usage_case "address: octet over 255" "bad value '192.0.2.256' for 'peer'" \
	tunnel create peer 192.0.2.256
usage_case "address: port 0" "bad value '[2001:db8::1]:0' for 'peer'" \
	tunnel create peer '[2001:db8::1]:0'
usage_case "address: port over 65535" "bad value '192.0.2.1:65536' for 'local'" \
	tunnel create peer 192.0.2.2 local 192.0.2.1:65536
usage_case "address: IPv4 in brackets" "bad value '[192.0.2.1]:1701' for 'peer'" \
	tunnel create peer '[192.0.2.1]:1701'
usage_case "address: host name" "bad value 'lns.example' for 'peer'" \
	tunnel create peer lns.example
usage_case "interface name" "bad value 'a/b' for 'ifname'" \
	session create tunnel 5 ifname a/b
usage_case "name too long" "value for 'name' is too long (at most 63 characters)" \
	tunnel create peer 192.0.2.2 name \
	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
usage_case "bad -t" "l2tpv3ctl: bad value 'soon' for -t" -t soon tunnel list
usage_case "bad -w" "l2tpv3ctl: bad value '0' for -w" -w 0 -b - tunnel list
usage_case "unknown option" "l2tpv3ctl: unknown option '-x'" -x tunnel list
usage_case "-b and a command" "give either -b or a command, not both" -b - tunnel list
usage_case "--no-wait only as a flag" "unknown argument '--name'" \
	tunnel create peer 192.0.2.2 --name x

###########################################################################
# No daemon: exit 1 with the socket named.

err_case "socket missing" 1 \
	"l2tpv3ctl: cannot reach l2tpv3d at $T/none.sock: No such file or directory (is the daemon running?)" \
	-s "$T/none.sock" tunnel list
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/stale.sock"
err_case "socket refuses" 1 \
	"l2tpv3ctl: cannot reach l2tpv3d at $T/stale.sock: Connection refused (is the daemon running?)" \
	-s "$T/stale.sock" show daemon
export L2TPV3CTL_SOCKET="$T/env.sock"
err_case "L2TPV3CTL_SOCKET is used" 1 \
	"l2tpv3ctl: cannot reach l2tpv3d at $T/env.sock: No such file or directory (is the daemon running?)" \
	tunnel list
run -s "$T/main.sock" tunnel list
[ "$RC" = 0 ]
check $? "-s overrides L2TPV3CTL_SOCKET"
unset L2TPV3CTL_SOCKET
run -s "$T/none.sock" -b - </dev/null
[ "$RC" = 1 ] && grep -qF "cannot reach l2tpv3d at $T/none.sock" "$T/err"
check $? "error: batch without a daemon"

###########################################################################
# The requests sent for each command.

req_case "tunnel create, every argument" '.cmd == "tunnel create" and .args == {
	peer: "192.0.2.2", local: "192.0.2.1:1701", encap: "ip", profile: "p1",
	name: "t1", secret: "s e", digest: "sha1", hello_interval: 30,
	udp_src_port: "ephemeral"}' \
	tunnel create peer 192.0.2.2 local 192.0.2.1:1701 encap ip profile p1 name t1 \
	secret "s e" digest sha1 hello 30 src-port ephemeral
req_case "tunnel create description" '.args == {peer: "192.0.2.2", description: "Customer A \"HQ\""}' \
	tunnel create peer 192.0.2.2 description 'Customer A "HQ"'
req_case "session create description" '.args == {tunnel_id: 7, description: "port 1"}' \
	session create tunnel 7 description "port 1"
printf 'from-a-file\n' >"$T/secret"
chmod 600 "$T/secret"
req_case "tunnel create secret-file: the file's content, its newline dropped" \
	'.args == {peer: "192.0.2.2", secret: "from-a-file"}' \
	tunnel create peer 192.0.2.2 secret-file "$T/secret"
: >"$T/main.rec"
printf 's3cret\nnot read\n' | "$CTL" -s "$T/main.sock" tunnel create peer 192.0.2.2 secret - >/dev/null 2>&1
[ $? = 0 ] && jq -e '.args == {peer: "192.0.2.2", secret: "s3cret"}' "$T/main.rec" >/dev/null
check $? "request: tunnel create secret -: one line of standard input"
chmod 644 "$T/secret"
usage_case "secret-file readable by every user" \
	"l2tpv3ctl: tunnel create: $T/secret is readable by every user (mode 0644): chmod o-r it" \
	tunnel create peer 192.0.2.2 secret-file "$T/secret"
chmod 600 "$T/secret"
usage_case "secret and secret-file both" \
	"l2tpv3ctl: tunnel create: give only one of 'secret' and 'secret-file'" \
	tunnel create peer 192.0.2.2 secret x secret-file "$T/secret"
usage_case "secret-file missing" \
	"l2tpv3ctl: tunnel create: cannot read $T/none: No such file or directory" \
	tunnel create peer 192.0.2.2 secret-file "$T/none"
: >"$T/empty"
chmod 600 "$T/empty"
usage_case "secret-file empty" "l2tpv3ctl: tunnel create: $T/empty is empty (expected the secret)" \
	tunnel create peer 192.0.2.2 secret-file "$T/empty"
usage_case "a control character in a description" \
	"l2tpv3ctl: tunnel create: bad value for 'description' (a control character at offset 1; valid: printable characters)" \
	tunnel create peer 192.0.2.2 description "$(printf 'a\tb')"
printf 'tunnel create peer 192.0.2.2 secret -\n' >"$T/batch-secret"
: >"$T/main.rec"
run -s "$T/main.sock" -b "$T/batch-secret"
[ "$RC" = 2 ] && grep -qF "'secret -' cannot be used in a batch (use secret-file)" "$T/err" && [ ! -s "$T/main.rec" ]
check $? "usage: secret - in a batch"
req_case "tunnel create no-wait, [v6]:port" \
	'.args == {peer: "[2001:db8::2]:1701", wait: false}' \
	tunnel create peer '[2001:db8::2]:1701' no-wait
req_case "failover takeover: no arguments" '.cmd == "failover takeover" and (.args // {}) == {}' \
	failover takeover
req_case "tunnel create through a pool" '.cmd == "tunnel create" and .args == {pool: "lns", name: "t1"}' \
	tunnel create pool lns name t1
req_case "prefix: tun cr po lns" '.args == {pool: "lns"}' tun cr po lns
req_case "tunnel create --no-wait, bare v6" '.args == {peer: "2001:db8::2", wait: false}' \
	tunnel create peer 2001:db8::2 --no-wait
req_case "tunnel delete ID result" '.cmd == "tunnel delete" and .args == {tunnel_id: 77, result: 4}' \
	tunnel delete 77 result 4
req_case "tunnel delete name" '.args == {name: "t1"}' tunnel delete name t1
req_case "tunnel show, largest ID" '.cmd == "tunnel show" and .args == {tunnel_id: 4294967295}' \
	tunnel show 4294967295
req_case "tunnel list" '.cmd == "tunnel list" and .args == {}' tunnel list
req_case "session create, every argument" '.cmd == "session create" and .args == {
	tunnel_id: 1001, profile: "sp", name: "s1", pw_type: "eth_vlan", cookie_len: 8,
	l2spec: "default", data_seq: "non-ip", ifname: "l2tp5", remote_end_id: "100"}' \
	session create tunnel 1001 profile sp name s1 pw eth_vlan cookie 8 l2spec default \
	seq non-ip ifname l2tp5 remote-end-id 100
req_case "session create tunnel name" '.args == {tunnel: "t1", wait: false}' \
	session create tunnel name t1 no-wait
req_case "session delete" '.cmd == "session delete" and .args == {session_id: 42, result: 3}' \
	session delete 42 result 3
req_case "session show name" '.cmd == "session show" and .args == {name: "s1"}' \
	session show name s1
req_case "session list" '.cmd == "session list" and .args == {}' session list
req_case "session list tunnel" '.args == {tunnel_id: 1001}' session list tunnel 1001
req_case "show daemon" '.cmd == "show daemon" and .args == {}' show daemon
req_case "stats" '.cmd == "stats" and .args == {}' stats
req_case "stats tunnel" '.cmd == "stats" and .args == {tunnel_id: 7}' stats tunnel 7
req_case "session list tunnel name" '.cmd == "session list" and .args == {tunnel: "t1"}' \
	session list tunnel name t1
req_case "stats tunnel name" '.cmd == "stats" and .args == {tunnel: "t1"}' stats tunnel name t1
req_case "stats reset" '.cmd == "stats reset" and .args == {}' stats reset
req_case "stats reset tunnel name" '.cmd == "stats reset" and .args == {tunnel: "t1"}' \
	stats reset tunnel name t1
req_case "prefix: st res t 7" '.cmd == "stats reset" and .args == {tunnel_id: 7}' st res t 7
req_case "metrics" '.cmd == "metrics" and .args == {}' metrics
req_case "reload" '.cmd == "reload" and .args == {}' reload

# Prefixes, as in ip(8).
req_case "prefix: tun cr pe ... en i" '.cmd == "tunnel create" and .args == {peer: "192.0.2.2", encap: "ip"}' \
	tun cr pe 192.0.2.2 en i
req_case "prefix: sh dae" '.cmd == "show daemon"' sh dae
req_case "prefix: ses l t 1001" '.cmd == "session list" and .args == {tunnel_id: 1001}' \
	ses l t 1001
req_case "prefix: ses cr tun n t1 coo 4" '.cmd == "session create" and .args == {tunnel: "t1", cookie_len: 4}' \
	ses cr tun n t1 coo 4
req_case "prefix: tunnel de 5" '.cmd == "tunnel delete" and .args == {tunnel_id: 5}' tunnel de 5
req_case "prefix: st" '.cmd == "stats"' st
req_case "prefix: rel" '.cmd == "reload"' rel

###########################################################################
# Text output.

printf 'tunnel 1001 established\n' >"$T/want"
out_case "tunnel create" 0 "$T/want" tunnel create peer 192.0.2.2
printf '# HELP l2tpv3d_tunnels Tunnels.\n# TYPE l2tpv3d_tunnels gauge\nl2tpv3d_tunnels{state="established"} 2\n' >"$T/want"
out_case "metrics: the Prometheus text as the daemon wrote it" 0 "$T/want" metrics
printf 'tunnel 1001 wait-ctl-reply\n' >"$T/want"
out_case "tunnel create no-wait" 0 "$T/want" tunnel create peer 192.0.2.2 no-wait
printf 'session 501 established\n' >"$T/want"
out_case "session create" 0 "$T/want" session create tunnel 1001
printf 'tunnel 77 deleted\n' >"$T/want"
out_case "tunnel delete" 0 "$T/want" tunnel delete 77
printf 'counters reset\n' >"$T/want"
out_case "stats reset" 0 "$T/want" stats reset
printf 'tunnel t1 counters reset\n' >"$T/want"
out_case "stats reset tunnel name" 0 "$T/want" stats reset tunnel name t1
printf 'session s1 deleted\n' >"$T/want"
out_case "session delete name" 0 "$T/want" session delete name s1

cat >"$T/want" <<'EOF'
ID          PEER-ID  NAME   STATE           PEER                PEER-HOST  ENCAP  SESSIONS  UPTIME
1001        31337    alpha  established     192.0.2.2:1701      lac1       udp    2         1h02m05s
4000000000  0        -      wait-ctl-reply  [2001:db8::2]:1701  -          ip     0         5s
EOF
out_case "tunnel list" 0 "$T/want" tunnel list

cat >"$T/want" <<'EOF'
ID          PEER-ID  NAME   STATE           PEER                PEER-HOST  ENCAP  SESSIONS  UPTIME    CONFIG-ID
1001        31337    alpha  established     192.0.2.2:1701      lac1       udp    2         1h02m05s  1
4000000000  0        -      wait-ctl-reply  [2001:db8::2]:1701  -          ip     0         5s        2
EOF
run -s "$T/cfg.sock" tunnel list
[ "$RC" = 0 ] && diff -u "$T/want" "$T/out" >/dev/null
check $? "output: tunnel list with CONFIG-ID"

cat >"$T/want" <<'EOF'
ID          PEER-ID  NAME   STATE           PEER                PEER-HOST  ENCAP  SESSIONS  UPTIME    DESCRIPTION
1001        31337    alpha  established     192.0.2.2:1701      lac1       udp    2         1h02m05s  Customer A "HQ"
4000000000  0        -      wait-ctl-reply  [2001:db8::2]:1701  -          ip     0         5s        -
-           -        tb     shutdown        -                   -          -      -         -         Customer B
EOF
run -s "$T/desc.sock" tunnel list
[ "$RC" = 0 ] && diff -u "$T/want" "$T/out" >"$T/diff"
check $? "output: tunnel list with descriptions and a tunnel shut down"

cat >"$T/want" <<'EOF'
ID  PEER-ID  TUNNEL  NAME  STATE        PW   REMOTE-END-ID  IFNAME    COOKIE  UPTIME
42  77       1001    s1    established  eth  100            l2tpeth0  4       1d01h01m01s
43  0        1002    -     wait-reply   ppp  -              -         0       0s
EOF
out_case "session list" 0 "$T/want" session list

cat >"$T/want" <<'EOF'
tunnel_id:      1001
peer_tunnel_id: 31337
name:           alpha
state:          established
peer:           192.0.2.2:1701
local:          192.0.2.1:1701
encap:          udp
peer_host_name: lac1
peer_router_id: 3221225986
sessions:       2
uptime:         1h02m05s
profile:        default
origin:         cli
auth:           none
counters:
  msgs_in:
    SCCRP: 1
    HELLO: 3
  msgs_out:
    SCCRQ: 1
    SCCCN: 1
  retransmits:    0
  drops:          -
  cwnd:           4
  peer_rx_window: 16
EOF
out_case "tunnel show (nested counters)" 0 "$T/want" tunnel show 1001

run -s "$T/main.sock" show daemon
[ "$RC" = 0 ] && grep -qx 'uptime:               1d00h00m00s' "$T/out" &&
	grep -qx 'config_id:            no' "$T/out"
check $? "output: show daemon"

cat >"$T/want" <<'EOF'
configuration reloaded
  changed:
    tunnels_added:    1
    profiles_changed: 2
EOF
out_case "reload" 0 "$T/want" reload

# Failures: the daemon's status and message on stderr.
err_case "peer-refused" 1 \
	"l2tpv3ctl: peer-refused: peer closed the connection: StopCCN result 4 (not authorized)" \
	-s "$T/main.sock" tunnel create peer 192.0.2.99
err_case "not-found" 1 "l2tpv3ctl: not-found: no tunnel 404" -s "$T/main.sock" tunnel show 404
err_case "exists" 1 "l2tpv3ctl: exists: tunnel name 'taken' already exists" \
	-s "$T/main.sock" tunnel create peer 192.0.2.2 name taken
err_case "daemon's invalid-argument exits 2" 2 "l2tpv3ctl: profile 'bogus': no such tunnel profile" \
	-s "$T/main.sock" tunnel create peer 192.0.2.2 profile bogus
err_case "no reply within -t" 1 "l2tpv3ctl: timeout: no reply from l2tpv3d within 0.3s" \
	-s "$T/main.sock" -t 0.3 tunnel show 999
err_case "daemon closes the connection" 1 "l2tpv3ctl: l2tpv3d closed the connection" \
	-s "$T/main.sock" session show 666

###########################################################################
# -j output.

jq_case "tunnel create" '.tunnel_id == 1001 and .state == "established"' \
	-j tunnel create peer 192.0.2.2
jq_case "tunnel list" '.tunnels | length == 2 and .[1].tunnel_id == 4000000000' -j tunnel list
[ "$(wc -l <"$T/out")" -gt 1 ]
check $? "json: single replies are pretty-printed"
jq_case "session show" '.session_id == 42 and .stats.rx_cookie_discards == 1' -j session show 42
jq_case "stats tunnel" '.global.ctl_requests == 17 and .tunnel.cwnd == 4' -j stats tunnel 1001
jq_case "tunnel delete" '. == {}' -j tunnel delete 5
run -s "$T/main.sock" -j tunnel create peer 192.0.2.99
[ "$RC" = 1 ] && jq -e '.result.code == 4' "$T/out" >/dev/null &&
	grep -qF "l2tpv3ctl: peer-refused:" "$T/err"
check $? "json: peer-refused prints data.result, message on stderr"

###########################################################################
# monitor

cat >"$T/want" <<'EOF'
2023-11-14T22:13:20.250 tunnel-up tunnel 1001 peer 192.0.2.2:1701
2023-11-14T22:13:21.500 session-up tunnel 1001 session 42 peer 192.0.2.2:1701
2023-11-14T22:13:22.000 tunnel-down tunnel 1001 peer 192.0.2.2:1701 result 4 (not-authorized): bad secret
EOF
out_case "monitor -t (text)" 0 "$T/want" -t 0.5 monitor
run -s "$T/main.sock" -j -t 0.5 monitor
[ "$RC" = 0 ] && jq -se 'length == 3 and .[0].event == "tunnel-up" and
	.[1].session_id == 42 and .[2].result.code == 4' "$T/out" >/dev/null
check $? "monitor -j: one event per line"
: >"$T/main.rec"
run -s "$T/main.sock" -j -t 0.5 monitor --reconnect
[ "$RC" = 0 ] && jq -e '.cmd == "monitor" and .args == {}' "$T/main.rec" >/dev/null
check $? "monitor --reconnect: the client's own, not sent"
req_case "monitor events: a list of full names (prefixes expanded)" \
	'.cmd == "monitor" and .args == {"events": ["session-up", "session-down"]}' \
	-t 0.5 monitor events session-up,session-do
err_case "monitor events: an unknown name" 2 \
	"l2tpv3ctl: monitor: bad value 'session-gone' for 'events' (valid: tunnel-created, tunnel-up, tunnel-down, tunnel-deleted, session-created, session-up, session-down, session-deleted)" \
	-s "$T/main.sock" monitor events session-up,session-gone
err_case "monitor events: an empty item" 2 \
	"l2tpv3ctl: monitor: bad value 'tunnel-up,' for 'events' (expected a comma-separated list of: tunnel-created, tunnel-up, tunnel-down, tunnel-deleted, session-created, session-up, session-down, session-deleted)" \
	-s "$T/main.sock" monitor events tunnel-up,

"$CTL" -s "$T/main.sock" -j monitor >"$T/mon" 2>"$T/err" &
mon=$!
wait_until 5 sh -c "[ \$(wc -l <'$T/mon') -ge 3 ]"
got=$?
kill -TERM "$mon"
wait "$mon"
RC=$?
[ $got = 0 ] && [ "$RC" = 0 ]
check $? "monitor: events flushed at once, SIGTERM ends it with 0"

###########################################################################
# Batch mode.

# One-line commands, in order (the main fake answers at once).
cat >"$T/batch" <<'EOF'
# a comment, then a blank line

tunnel create peer 192.0.2.2 name t1
tunnel create peer 192.0.2.99
tunel list
  tunnel delete 77   # trailing comment
session create tunnel 1001 no-wait
tunnel list
EOF
cat >"$T/want" <<'EOF'
3: tunnel 1001 established
4: peer-refused: peer closed the connection: StopCCN result 4 (not authorized)
6: tunnel 77 deleted
7: session 504 wait-reply
8: ok
ID          PEER-ID  NAME   STATE           PEER                PEER-HOST  ENCAP  SESSIONS  UPTIME
1001        31337    alpha  established     192.0.2.2:1701      lac1       udp    2         1h02m05s
4000000000  0        -      wait-ctl-reply  [2001:db8::2]:1701  -          ip     0         5s
EOF
out_case "batch text: LINE: result" 2 "$T/want" -b "$T/batch"
grep -qxF "l2tpv3ctl: line 5: unknown command 'tunel' (valid: tunnel, session, show, stats, metrics, reload, restart, failover, debug, monitor)" "$T/err"
check $? "batch: parse error named with its line number"

printf 'tunnel create peer 192.0.2.99\nshow daemon\n' >"$T/in"
run -s "$T/main.sock" -b - <"$T/in"
[ "$RC" = 1 ]
check $? "batch: a failed command (no parse error) exits 1"
printf 'tunnel list\nshow daemon' >"$T/in"
run -s "$T/main.sock" -b - <"$T/in"
[ "$RC" = 0 ] && grep -q '^2: ok' "$T/out"
check $? "batch: exit 0, last line without newline"

: >"$T/main.rec"
printf '%s\n' "tunnel create peer 192.0.2.2 secret \"a b#c\" name 'x y'" 'monitor' >"$T/in"
run -s "$T/main.sock" -j -b - <"$T/in"
[ "$RC" = 2 ] && jq -se '.[0].args == {peer: "192.0.2.2", secret: "a b#c", name: "x y"}' \
	"$T/main.rec" >/dev/null && grep -qF "line 2: monitor: cannot be used in a batch" "$T/err"
check $? "batch: quoting; monitor refused"

# Out of order: 200 creates named after their line, a few errors among them.
awk 'BEGIN {
	for (i = 1; i <= 200; i++) {
		if (i == 17) print "tunnel create peer 192.0.2.99";
		else if (i == 50) print "tunnel create encap ip";
		else if (i == 120) print "tunnel create peer 192.0.2.2 name taken";
		else printf "tunnel create peer 192.0.2.2 name t%d\n", i;
	}
}' >"$T/batch200"
: >"$T/ooo.rec"
run -s "$T/ooo.sock" -j -w 8 -b "$T/batch200"
[ "$RC" = 2 ] && jq -se '
	length == 200 and
	([.[].line] | sort == [range(1; 201)]) and
	([.[].line] != [range(1; 201)]) and
	(map(select(.status == 0)) | length == 197 and all(.data.name == "t\(.line)")) and
	(map(select(.status != 0) | [.line, .status_name]) | sort ==
		[[17, "peer-refused"], [50, "invalid-argument"], [120, "exists"]])' \
	"$T/out" >/dev/null
check $? "batch -j: 200 lines, replies out of order, matched by id"
jq -se 'length == 199 and ([.[].id] | unique | length == 199)' "$T/ooo.rec" >/dev/null &&
	grep -qF "line 50: tunnel create: missing argument (peer or pool)" "$T/err"
check $? "batch: one request per good line, ids unique"

# The daemon's own encoding (no spaces, "quiet" honoured): a reply that is
# its status alone is read without json-c; one with more goes through it.
printf '%s\n' 'tunnel create peer 192.0.2.2 name c1' 'tunnel delete 405' 'tunnel delete 404' \
	'tunnel create peer 192.0.2.99' 'tunnel create peer 192.0.2.2 name c2' >"$T/in"
run -s "$T/compact.sock" -q -b - <"$T/in"
[ "$RC" = 1 ] && [ "$(wc -l <"$T/out")" = 4 ] && grep -qx '2: not-found: -' "$T/out" &&
	grep -qx '3: not-found: no tunnel 404' "$T/out" && grep -q '^4: peer-refused: ' "$T/out" &&
	[ "$(tail -1 "$T/out")" = "5 commands: 2 succeeded, 3 failed" ]
check $? "batch -q, compact replies: a status alone read as such (rc $RC)"

# The window: a fake that holds every reply until the client goes quiet
# sees exactly as many requests as the client dares to send.
# (a new connection per run; the fake's maximum is over all of them, so
# the windows go up)
awk 'BEGIN { for (i = 1; i <= 48; i++) printf "tunnel create peer 192.0.2.2 name w%d\n", i }' \
	>"$T/batch48"
for w in 3 8 32; do
	run -s "$T/win.sock" -j -w "$w" -b "$T/batch48"
	max=$(jq .max_inflight "$T/win.stats")
	[ "$RC" = 0 ] && [ "$max" = "$w" ] && [ "$(wc -l <"$T/out")" = 48 ]
	check $? "batch: -w $w respected (max in flight $max)"
done
run -s "$T/win.sock" -j -b "$T/batch200"
max=$(jq .max_inflight "$T/win.stats")
[ "$RC" = 2 ] && [ "$max" = 64 ]
check $? "batch: default window 64 (max in flight $max)"

# A producer that waits for replies before writing more: stdin must be
# read as it comes, and replies printed as they arrive.
{
	printf 'tunnel create peer 192.0.2.2 name p1\ntunnel create peer 192.0.2.2 name p2\n'
	wait_until 5 grep -q '"p2"' "$T/prod" && echo ok >"$T/prod.flag"
	printf 'tunnel create peer 192.0.2.2 name p3\n'
} | "$CTL" -s "$T/main.sock" -j -b - >"$T/prod" 2>"$T/err"
RC=$?
[ "$RC" = 0 ] && [ -s "$T/prod.flag" ] && [ "$(wc -l <"$T/prod")" = 3 ]
check $? "batch: reads stdin incrementally, prints replies as they arrive"

printf 'tunnel list\ntunnel show 999\n' >"$T/in"
run -s "$T/main.sock" -t 0.3 -b - <"$T/in"
[ "$RC" = 1 ] && grep -qF "timeout: no reply from l2tpv3d within 0.3s" "$T/err"
check $? "batch: -t bounds the wait for replies"
printf 'tunnel list\ntunnel show 666\ntunnel list\n' >"$T/in"
run -s "$T/main.sock" -b - <"$T/in"
[ "$RC" = 1 ] && grep -qF "l2tpv3d closed the connection" "$T/err"
check $? "batch: daemon closing the connection"

# 10,000 lines over one connection (the tunnel benchmark drives this).
awk 'BEGIN { for (i = 1; i <= 10000; i++) printf "tunnel create peer 192.0.2.2 name b%d\n", i }' \
	>"$T/batch10k"
start=$(date +%s%N)
run -s "$T/ooo.sock" -j -b "$T/batch10k"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
# (a figure, not a bound: the benchmarks time the batch path)
[ "$RC" = 0 ] && jq -se 'length == 10000 and all(.status == 0)' "$T/out" >/dev/null
check $? "batch: 10,000 lines, every answer read (${ms} ms, fake daemon included)"

echo "cli-test: $TESTS_OK passed, $TESTS_FAIL failed"
[ "$TESTS_FAIL" = 0 ]
