#!/usr/bin/env bash
# Descriptor exhaustion is an ordinary error: with its descriptors used up
# by held control connections, the daemon refuses further clients (one
# reply line each, counted) instead of spinning on a listening socket that
# stays readable and logging every failed accept.
#
#   +----------------- ns A -----------------+
#   | l2tpv3d (ulimit -n 64)                 |
#   |   ^ control socket                     |
#   |   | python3 holder: 100 connections    |
#   |   | l2tpv3ctl show daemon, every 0.3 s |
#   +----------------------------------------+
. "$(dirname "$0")/../integration/lib.sh"
it_setup
command -v python3 >/dev/null || skip "needs python3"

NOFILE=64 NHOLD=100
write_conf a $A_ADDR
# the descriptors run out long before the client cap does
sed -i "s|router_id = \"$A_ADDR\"; };|router_id = \"$A_ADDR\"; ctl_max_clients = 1000; };|" "$W/a.conf"
# start() passes daemon arguments only: the limit needs a shell around it
ip netns exec "$NSA" bash -c 'ulimit -n "$1" && exec "$2" -F -f "$3"' sh $NOFILE "$D" "$W/a.conf" \
	>>"$W/a.log" 2>&1 &
PID=$!
echo $PID > "$W/a.pid"
wait_until 5 ctl a show daemon
log_test $? "daemon starts with $NOFILE descriptors ($(ls /proc/$PID/fd | wc -l) in use)"

cat > "$W/hold.py" <<'PY'
import json, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
socks, refused = [], 0
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    socks.append(s)
time.sleep(1)
for s in socks:
    s.setblocking(False)
    try:
        line = s.recv(4096)
        if line and "descriptors" in json.loads(line.split(b"\n")[0]).get("error", ""):
            refused += 1
    except BlockingIOError:
        pass
print(refused, flush=True)
time.sleep(3600)
PY

cpu() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }	# utime + stime, in ticks
hz=$(getconf CLK_TCK)

python3 "$W/hold.py" "$W/a.ctl" $NHOLD > "$W/hold.out" 2>&1 &
HOLD=$!
wait_until 10 test -s "$W/hold.out"
refused=$(cat "$W/hold.out")
echo "    $NHOLD connections: $refused refused for want of descriptors"
[ "${refused:-0}" -gt 0 ]
log_test $? "connections beyond the descriptors are refused with a reply line"

lines0=$(wc -l < "$W/a.log") cpu0=$(cpu) failed=0
for i in $(seq 10); do
	ctl a -t 2 show daemon >/dev/null 2>&1 && failed=1	# must not be served
	sleep 0.3
done
cpu_ms=$(( ($(cpu) - cpu0) * 1000 / hz )) lines=$(( $(wc -l < "$W/a.log") - lines0 ))
echo "    over ~3 s of exhaustion: ${cpu_ms} ms of CPU, $lines log lines"
kill -0 $PID
log_test $? "daemon alive while out of descriptors"
[ $failed = 0 ]
log_test $? "show daemon is refused while out of descriptors"
[ $cpu_ms -lt 1000 ]
log_test $? "no busy loop: less than 1 s of CPU in ~3 s (${cpu_ms} ms)"
[ $lines -lt 30 ]
log_test $? "refusals logged at a limited rate ($lines lines)"

kill $HOLD; wait $HOLD 2>/dev/null
wait_until 5 ctl a show daemon
log_test $? "show daemon answers again once the descriptors are released"
n=$(ctlj a stats | jq .global.ctl_accept_emfile)
[ "$n" -ge $((refused + 10)) ]
log_test $? "refusals are counted (ctl_accept_emfile $n)"
# (the daemon reads the holder's closes in its own time, as ctl-slow-reader.sh waits)
clients() { ctlj a show daemon | jq .ctl_clients; }
wait_until 5 expect_count 1 clients
log_test $? "the held connections are gone (ctl_clients $(clients))"

it_done
