#!/usr/bin/env bash
# A restart whose new process refuses the configuration file keeps every
# tunnel: the new process runs the configuration the previous one ran
# (handed over with the tunnels), says so, and a reload of the fixed file
# ends it.
#
# B (the LNS) is restarted the way systemd restarts it: no check of the
# file first, the handover's descriptors passed as $LISTEN_FDS.  A stand-in
# for systemd does that ($L2TPV3D_RESTART_EXEC: the program a restart
# execs, here a script that answers the `-n` check with success and execs
# the daemon with LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES as systemd sets
# them for stored descriptors).  B's peers entry comes from include_dir,
# its secret from a secret_file: the previous configuration must carry
# both (a new tunnel from A after the restart needs them).
#   1. a syntax error: every tunnel and session adopted under the same IDs,
#      A sees no StopCCN or CDN, `show daemon` and the metrics report the
#      refused file, the journal says it once;
#   2. from that process, an unknown setting: the same again;
#   3. a reload of a still-bad file is refused and changes nothing;
#   4. the file fixed, a reload: the report clears;
#   5. a fresh start on a bad file still exits 78, and so does a start
#      with a handed-over state of format 2 (no configuration in it).
. "$(dirname "$0")/lib.sh"
it_setup

metric() { ctl "$1" metrics | awk -v n="$2" '$1 == n { print $2 }'; }

mkdir -m 755 "$W/b.d"
printf 'key-1\n' > "$W/b.key" && chmod 600 "$W/b.key"
cat > "$W/b.d/lacs.conf" <<CONF
peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; secret_file = "$W/b.key"; } );
CONF
write_conf b $B_ADDR "
tunnel_profiles = ( { name = \"default\"; hello_interval = 2; digest = \"md5\"; } );"
sed -i "s|^global = { |global = { include_dir = \"$W/b.d\"; |" "$W/b.conf"
cp "$W/b.conf" "$W/b.conf.good"
write_conf a $A_ADDR '
tunnel_profiles = ( { name = "default"; hello_interval = 2; digest = "md5"; secret = "key-1"; } );
tunnels = ( { name = "st"; peer = "192.0.2.2";
              sessions = ( { name = "st-1"; remote_end_id = "st-1"; },
                           { name = "st-2"; remote_end_id = "st-2"; } ); } );'

# The stand-in for systemd's restart of B
cat > "$W/systemd-restart" <<'SH'
#!/usr/bin/env bash
# systemd runs no check of the file before a restart
for a; do [ "$a" = -n ] && exit 0; done
IFS=, read -r s b <<<"$L2TPV3D_HANDOVER"
unset L2TPV3D_HANDOVER
[ -n "${L2TPIT_STATE_COPY:-}" ] && cat "/proc/self/fd/$s" > "$L2TPIT_STATE_COPY"
# the stored descriptors from 3 on, named, for this process (exec keeps its ID)
exec 100<&"$s" 101<&"$b"
exec {s}<&- {b}<&-
exec 3<&100 4<&101 100<&- 101<&-
export LISTEN_PID=$$ LISTEN_FDS=2 LISTEN_FDNAMES=l2tpv3d-state:l2tpv3d-bundle
exec "$L2TPIT_DAEMON" "$@"
SH
chmod 755 "$W/systemd-restart"
export L2TPIT_DAEMON=$D L2TPIT_STATE_COPY=$W/last.state L2TPV3D_RESTART_EXEC=$W/systemd-restart
start b "$NSB"
rc=$?
unset L2TPV3D_RESTART_EXEC
[ $rc = 0 ] && start a "$NSA"
log_test $? "both daemons start"
wait_until 20 expect_count 2 count_sessions a established
log_test $? "the static tunnel and its 2 sessions come up"

for i in $(seq 1 10); do echo "tunnel create peer $B_ADDR name t$i"; done > "$W/t.batch"
for i in $(seq 1 10); do
	echo "session create tunnel name t$i name t$i-a remote-end-id t$i-a"
	echo "session create tunnel name t$i name t$i-b remote-end-id t$i-b"
done > "$W/s.batch"
ctl a -q -b "$W/t.batch" && ctl a -q -b "$W/s.batch" &&
	wait_until 20 expect_count 11 count_tunnels b established &&
	wait_until 20 expect_count 22 count_sessions b established
log_test $? "10 more tunnels of 2 sessions each: 11 tunnels and 22 sessions on B"

# What must not move across a restart (IDs, names, states, peers, interfaces)
snapshot() {	# snapshot NAME FILE
	{ ctlj "$1" tunnel list | jq -S '.tunnels | sort_by(.tunnel_id)'
	  ctlj "$1" session list | jq -S '.sessions | sort_by(.session_id)'
	} | jq -S 'walk(if type == "object" then del(.uptime) else . end)' > "$2"
}
# StopCCN and CDN A has received so far
a_stops() { ctlj a stats | jq '(.global.msgs_in.StopCCN // 0) + (.global.msgs_in.CDN // 0)'; }
restarts_of() { ctlj "$1" show daemon | jq '.start.restarts'; }
refused_lines() { grep -c "configuration file $W/b.conf refused: " "$W/b.log"; }
# HELLOs on A's static tunnel, sent and received (either side's keepalive may
# fire first): A sends the next one only once the last is acknowledged, so a
# count that goes on by 3 proves B answers
a_hellos() { ctlj a tunnel show name st | jq '(.counters.msgs_out.HELLO // 0) + (.counters.msgs_in.HELLO // 0)'; }
a_hellos_past() { [ "$(a_hellos)" -ge "$1" ]; }

# restart_refused N WHAT PATTERN TUNNELS: B restarted the systemd way with a
# file it refuses (the reason matching PATTERN): its TUNNELS and 22 sessions
# carried, the refusal reported
restart_refused() {
	local n=$1 what=$2 pat=$3 nt=$4 r0 stops0 pid hello0
	snapshot b "$W/before.json"
	jq -se --argjson nt "$nt" 'map(length) == [$nt, 22]' "$W/before.json" >/dev/null
	log_test $? "restart $n: before, B lists $nt tunnels and 22 sessions"
	hello0=$(a_hellos)
	r0=$(restarts_of b)
	stops0=$(a_stops)
	pid=$(pid_of b)
	out=$(ctl b restart 2>&1)
	log_test $? "restart $n of B with $what: $out"
	kill -0 "$pid" && [ "$(ctlj b show daemon | jq .pid)" = "$pid" ]
	log_test $? "restart $n: the new process runs (the stand-in exec'd it in place)"
	snapshot b "$W/after.json"
	diff "$W/before.json" "$W/after.json" > "$W/diff.txt" &&
		jq -se --argjson nt "$nt" 'map(length) == [$nt, 22]' "$W/after.json" >/dev/null
	log_test $? "restart $n: every tunnel and session adopted under the same IDs $(head -c 400 "$W/diff.txt")"
	ctlj b show daemon > "$W/daemon.json"
	[ -s "$W/daemon.json" ] && jq -e --argjson r "$r0" --arg pat "$pat" --arg f "$W/b.conf" --argjson nt "$nt" '
		.start.start == "restarted" and .start.via == "systemd" and
		.start.restarts == $r + 1 and .start.tunnels_adopted == $nt and
		.start.sessions_adopted == 22 and .start.tunnels_dropped == 0 and
		.config == $f and .config_source == "previous" and
		(.config_refused | startswith($f + ":") and test($pat))' "$W/daemon.json" >/dev/null
	log_test $? "restart $n: show daemon says restarted via systemd, $nt and 22 adopted, config previous ($(jq -c '{config_source, config_refused}' "$W/daemon.json"))"
	ctl b show daemon | grep -qE "^config_source: +previous$" &&
		ctl b show daemon | grep -qE "^config_refused: +$W/b.conf:[0-9]+: .*$pat"
	log_test $? "restart $n: the text of show daemon says it too"
	[ "$(metric b l2tpv3d_config_file_refused)" = 1 ] &&
		ctl b metrics | grep -qx 'l2tpv3d_start_info{kind="restarted"} 1'
	log_test $? "restart $n: metrics: l2tpv3d_config_file_refused 1, started by a restart"
	[ "$(refused_lines)" = "$n" ] &&
		grep "configuration file $W/b.conf refused: " "$W/b.log" | tail -1 | grep -qE "$pat"
	log_test $? "restart $n: the log says it once, naming the file and the error"
	wait_until 20 a_hellos_past $((hello0 + 3)) &&
		expect_count "$nt" count_tunnels a established && expect_count 22 count_sessions a established &&
		[ "$(a_stops)" = "$stops0" ] && [ "$stops0" = 0 ]
	log_test $? "restart $n: the HELLOs on A's static tunnel go on ($hello0 -> $(a_hellos)), its $nt tunnels and 22 sessions established, no StopCCN or CDN received"
}

# 1. a syntax error; the secret file changed meanwhile (the running secret must stay)
printf 'bogus = ( { name = "x" \n' >> "$W/b.conf"
printf 'key-2\n' > "$W/b.key"
restart_refused 1 "a syntax error" "syntax error" 11
ctlj a tunnel create peer $B_ADDR name new1 | jq -e '.state == "established"' >/dev/null &&
	expect_count 12 count_tunnels b established
log_test $? "a new tunnel from A is accepted: the include_dir peers entry and its file's secret carried"

# 2. from that process, an unknown setting
cp "$W/b.conf.good" "$W/b.conf"
sed -i 's/^global = { /global = { no_such_setting = 1; /' "$W/b.conf"
restart_refused 2 "an unknown setting" "no_such_setting" 12

# 3. a reload of a file still refused: refused, nothing changes
out=$(ctl b reload 2>&1)
[ $? != 0 ] && grep -q "no_such_setting" <<<"$out" &&
	[ "$(ctlj b show daemon | jq -r .config_source)" = previous ] &&
	[ "$(metric b l2tpv3d_config_file_refused)" = 1 ] &&
	[ "$(metric b l2tpv3d_last_reload_success)" = 0 ] &&
	expect_count 12 count_tunnels b established
log_test $? "a reload of the still-bad file is refused; the previous configuration runs on ($out)"

# 4. the file fixed (and its secret file as it was): a reload ends it
cp "$W/b.conf.good" "$W/b.conf"
printf 'key-1\n' > "$W/b.key"
out=$(ctl b reload 2>&1)
log_test $? "a reload of the fixed file applies"
ctlj b show daemon | jq -e --arg f "$W/b.conf" '.config_source == "file" and .config == $f and
	(has("config_refused") | not)' >/dev/null &&
	[ "$(metric b l2tpv3d_config_file_refused)" = 0 ] &&
	! ctl b show daemon | grep -q "^config_refused" &&
	grep -q "reload: $W/b.conf applied: the previous process's configuration no longer runs" "$W/b.log"
log_test $? "the report clears: config_source file, l2tpv3d_config_file_refused 0, logged"
expect_count 12 count_tunnels b established && expect_count 22 count_sessions b established &&
	expect_count 12 count_tunnels a established && [ "$(a_stops)" = 0 ] && [ "$(refused_lines)" = 2 ]
log_test $? "nothing was cleared by the reload; A received no StopCCN or CDN"

# 5. a start with a bad file and no usable state refuses, as before
stop_b() { local p; p=$(pid_of b); kill "$p"; wait_until 20 sh -c "! kill -0 $p 2>/dev/null"; }
stop_b
sed -i 's/^global = { /global = { no_such_setting = 1; /' "$W/b.conf"
ip netns exec "$NSB" "$D" -F -f "$W/b.conf" > "$W/fresh.log" 2>&1
rc=$?
[ $rc = 78 ] && grep -q "$W/b.conf:[0-9]*: .*no_such_setting" "$W/fresh.log" &&
	! grep -q "refused: .*running the configuration" "$W/fresh.log"
log_test $? "a fresh start on a bad file exits 78 with the error (got $rc)"

# The last state B handed over, as a state of format 2 would be: no configuration
python3 - "$W/last.state" "$W/v2.state" <<'PY'
import struct, sys, zlib
s = open(sys.argv[1], "rb").read()
assert s[:8] == b"l2tpv3d\x01" and struct.unpack_from("<I", s, 8)[0] == 3
(n,) = struct.unpack_from("<I", s, 24 + 32)          # the configuration's blob
body = s[24:24 + 32] + s[24 + 32 + 4 + n:-4]
hdr = s[:8] + struct.pack("<IIQ", 2, struct.unpack_from("<I", s, 12)[0], len(body))
out = hdr + body
open(sys.argv[2], "wb").write(out + struct.pack("<I", zlib.crc32(out) & 0xffffffff))
PY
log_test $? "B's last handed-over state rewritten as one of format 2"
# a bundle holding as many sockets as the state announces, then the daemon
python3 - "$W/v2.state" "$NSB" "$D" "$W/b.conf" > "$W/v2.log" 2>&1 <<'PY'
import os, socket, struct, subprocess, sys
state, ns, daemon, conf = sys.argv[1:]
n = struct.unpack_from("<I", open(state, "rb").read(), 12)[0]
a, b = socket.socketpair()
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
for i in range(0, n, 200):
    a.sendmsg([b"T"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                        struct.pack("%di" % len(socks[i:i + 200]), *[s.fileno() for s in socks[i:i + 200]]))])
a.close()
fd = os.open(state, os.O_RDONLY)
os.dup2(fd, 7); os.dup2(b.fileno(), 8)
env = dict(os.environ, L2TPV3D_HANDOVER="7,8")
env.pop("L2TPV3D_RESTART_EXEC", None)
sys.stdout.flush()
rc = subprocess.call(["ip", "netns", "exec", ns, daemon, "-F", "-f", conf], env=env, pass_fds=(7, 8))
print("exit", rc)
PY
grep -qx "exit 78" "$W/v2.log" &&
	grep -q "restart: the handed-over state (format version 2) holds no configuration" "$W/v2.log" &&
	grep -q "$W/b.conf:[0-9]*: .*no_such_setting" "$W/v2.log"
log_test $? "a handed-over state of format 2 and a bad file: exit 78 with the file's error, as before"

it_done
