#!/usr/bin/env bash
# An AgentX master that accepts but does not answer must not stall the
# daemon: snmpd stopped (SIGSTOP) while the subagent
# connects and registers, then a fake master that answers Open and never
# Register.  Throughout, no event-loop callback of the daemon takes a
# second (`show daemon` loop_busy: a blocking wait for the master would be
# one AgentX timeout, 1 s, each attempt) and a 1 s HELLO keeps its
# schedule; `l2tpv3ctl show daemon`, asked every 100 ms, answers (its
# slowest answer is printed: a figure, a CLI process start on a loaded
# machine).  When snmpd is continued, the subagent registers within one
# retry.
. "$(dirname "$0")/lib.sh"
snmp_setup

write_conf a 127.0.0.2 true false
write_conf b 127.0.0.3 false false

# watch SECONDS: the slowest of `show daemon` answers every 100 ms, in ms
watch_latency() {
	local end=$((SECONDS + $1)) max=0 t0 t1 ms
	while [ $SECONDS -lt $end ]; do
		t0=$(date +%s%N); ctl a show daemon >/dev/null || { echo 99999; return; }; t1=$(date +%s%N)
		ms=$(((t1 - t0) / 1000000)); [ $ms -gt $max ] && max=$ms
		sleep 0.1
	done
	echo $max
}
hellos() { ctlj a stats tunnel "$TID" | jq '[.. | objects | .msgs_out? | objects | .HELLO // 0] | max'; }
busy_1s() { ctlj a show daemon | jq -e '.loop_busy.over_1s'; }

# --- snmpd stopped before the subagent's first attempt ---------------------------------
snmpd_start && kill -STOP "$(cat "$W/snmpd.pid")"
log_test $? "snmpd started and stopped (SIGSTOP): it accepts connections, never answers"
start a && start b && TID=$(ctlj a tunnel create peer 127.0.0.3 hello 1 | jq -r .tunnel_id) &&
	wait_until 5 sh -c "'$C' -s '$W/a.ctl' tunnel list | grep -q established"
log_test $? "daemons start, a tunnel with 1 s HELLOs between them"
h0=$(hellos) l0=$(busy_1s)
max=$(watch_latency 12)
h1=$(hellos) l1=$(busy_1s)
[ -n "$l0" ] && [ "$l1" = "$l0" ] && [ "$max" -lt 99999 ]
log_test $? "12 s of subagent attempts against a stopped snmpd: no callback took 1 s ($l0 then $l1 such), show daemon answered (slowest ${max} ms)"
[ $((h1 - h0)) -ge 8 ]
log_test $? "HELLOs keep their 1 s schedule meanwhile: $((h1 - h0)) in 12 s"
grep -q "snmp: AgentX master .* not reachable yet (no answer to Open in time)" "$W/a.log"
log_test $? "a says why: no answer to Open in time"

kill -CONT "$(cat "$W/snmpd.pid")"
wait_until 15 sh -c "snmpget ${SNMP[*]} -Oqv l2tpv3dVersion.0 2>/dev/null | grep -qx '[0-9][0-9.]*'"
log_test $? "snmpd continued: a registers at its next attempt"
snmpd_kill
rm -f "$W/agentx.sock"

# --- a master that answers Open, never Register ---------------------------------------
python3 - "$W/agentx.sock" > "$W/fake.log" 2>&1 <<'PY' &
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(16)
print("listening", flush=True)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)   # kept open: a master that hangs
    h = c.recv(20)
    if len(h) < 20:
        continue
    ver, typ, flags, _r, sid, tid, pid, plen = struct.unpack("!BBBBIIII", h)
    c.recv(plen)
    print("pdu", typ, flush=True)
    if typ == 1:   # Open -> Response, session 7; Register is never answered
        c.send(struct.pack("!BBBBIIIIIHH", 1, 18, 0x10, 0, 7, tid, pid, 8, 0, 0, 0))
PY
echo $! > "$W/fake.pid"; disown $!
wait_until 5 grep -q listening "$W/fake.log"
log_test $? "a fake AgentX master that answers Open and never Register"
l0=$(busy_1s)
max=$(watch_latency 12)
l1=$(busy_1s)
[ -n "$l0" ] && [ "$l1" = "$l0" ] && [ "$max" -lt 99999 ]
log_test $? "12 s against it: no callback took 1 s ($l0 then $l1 such), show daemon answered (slowest ${max} ms)"
grep -q "no answer to Register in time" "$W/a.log"
log_test $? "a says why: no answer to Register in time"
kill -0 "$(cat "$W/a.pid")" && kill -0 "$(cat "$W/b.pid")"
log_test $? "both daemons still running"
snmp_done
