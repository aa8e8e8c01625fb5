#!/usr/bin/env bash
# Control socket limits: a client that pipelines requests and never reads
# the replies neither grows the daemon nor keeps its connection (it is
# disconnected and counted), a client that reads still gets large replies,
# and connections over ctl_max_clients, while every client has a request
# waiting (none idle, so none gives way), are refused and counted.
#
#   +------------ ns A --------------+
#   | l2tpv3d  192.0.2.1             |-- veth --> 192.0.2.9: a static neighbour
#   |   ^ control socket             |            nobody answers, so 200
#   |   | python3 flooder / holder   |            tunnels stay half-open and
#   |   | l2tpv3ctl (normal client)  |            `tunnel list` is ~100 KB
#   +--------------------------------+
. "$(dirname "$0")/../integration/lib.sh"
it_setup
command -v python3 >/dev/null || skip "needs python3"

SINK=192.0.2.9 NTUN=200 MAXC=8
write_conf a $A_ADDR 'tunnel_profiles = ( { name = "default"; sccrq_max_retries = 1000; retransmit_cap = 60; } );'
# into write_conf's global group
sed -i "s|router_id = \"$A_ADDR\"; };|router_id = \"$A_ADDR\"; ctl_max_clients = $MAXC; ctl_max_output = 65536; };|" "$W/a.conf"
ip -n "$NSA" neigh add $SINK lladdr 02:00:00:00:00:09 dev veth0
start a "$NSA"
log_test $? "daemon starts (ctl_max_clients $MAXC, ctl_max_output 65536)"
PID=$(pid_of a)

cat > "$W/client.py" <<'PY'
import json, socket, sys, time

def conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s

def flood(path, n, hold):
    """Pipelines n `tunnel list` requests, never reads for hold seconds, then
    reports whether the daemon had closed the connection."""
    s = conn(path)
    s.settimeout(2)
    req = b"".join(b'{"id": %d, "cmd": "tunnel list"}\n' % i for i in range(1, n + 1))
    try:
        s.sendall(req)
    except (socket.timeout, OSError):
        pass            # the daemon stopped reading us: that is the point
    print("sent", flush=True)
    time.sleep(hold)
    s.settimeout(2)
    try:
        while s.recv(1 << 20):
            pass
        print("closed")
    except ConnectionResetError:
        print("closed")
    except socket.timeout:
        print("open")

def busy(path, n, peer, secs):
    """Opens n connections, each with a tunnel create that waits (its peer
    never answers), and holds them."""
    socks = [conn(path) for _ in range(n)]
    for i, s in enumerate(socks):
        s.sendall(b'{"id": %d, "cmd": "tunnel create", "args": {"peer": "%s"}}\n' % (i + 1, peer.encode()))
    print("busy", flush=True)
    time.sleep(secs)

def hold(path, n, secs):
    """Opens n connections and holds them; prints how many were refused."""
    socks, refused = [], 0
    for _ in range(n):
        socks.append(conn(path))
    for s in socks:
        s.settimeout(10)    # the daemon accepts and refuses when its loop gets to it
        try:
            line = s.recv(4096)
            if line and json.loads(line.split(b"\n")[0]).get("status_name") == "limit":
                refused += 1
        except socket.timeout:
            pass
    print(refused, flush=True)
    time.sleep(secs)

if sys.argv[1] == "flood":
    flood(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
elif sys.argv[1] == "busy":
    busy(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]))
else:
    hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
PY

for i in $(seq $NTUN); do echo "tunnel create peer $SINK no-wait"; done > "$W/create.txt"
ctl a -b "$W/create.txt" >/dev/null
expect_count $NTUN count_tunnels a
log_test $? "$NTUN half-open tunnels make tunnel list large"
size=$(ctlj a tunnel list | wc -c)
echo "    tunnel list reply: $size bytes"

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status"; }
stat_of() { ctlj a stats | jq ".global.$1"; }
rss0=$(rss)

# 3000 pipelined requests: without backpressure ~300 MB of replies
python3 "$W/client.py" flood "$W/a.ctl" 3000 8 > "$W/flood.out" 2>&1 &
FLOOD=$!
wait_until 5 grep -q sent "$W/flood.out"
sleep 1
rss1=$(rss)
growth=$(( (rss1 - rss0) / 1024 ))
echo "    RSS ${rss0} kB -> ${rss1} kB while the flooder does not read"
[ "$growth" -lt 16 ]
log_test $? "daemon RSS grows less than 16 MB (grew ${growth} MB)"

[ "$(ctlj a tunnel list | jq '.tunnels | length')" = $NTUN ] && ctl a show daemon >/dev/null
log_test $? "a reading client meanwhile gets its (large) replies"

wait_until 10 expect_count 1 stat_of ctl_clients_dropped_slow
log_test $? "the flooder is disconnected and counted (ctl_clients_dropped_slow 1)"
wait $FLOOD
[ "$(tail -1 "$W/flood.out")" = closed ]
log_test $? "the flooder sees its connection closed"
[ "$(ctlj a show daemon | jq .ctl_clients)" = 1 ]
log_test $? "only the asking client is connected now (ctl_clients 1)"

# The cap: MAXC connections each with a tunnel create waiting (none idle),
# then 4 more: refused at once with status limit
opened() { grep -c 'state change idle -> wait-ctl-reply' "$W/a.log"; }	# a line per tunnel
open0=$(opened)
python3 "$W/client.py" busy "$W/a.ctl" $MAXC $SINK 30 > "$W/busy.out" 2>&1 &
BUSY=$!
parked() { [ "$(opened)" -ge $((open0 + MAXC)) ]; }
wait_until 20 parked
log_test $? "$MAXC clients, each with a tunnel create waiting, hold every slot"
python3 "$W/client.py" hold "$W/a.ctl" 4 4 > "$W/hold.out" 2>&1 &
HOLD=$!
wait_until 5 test -s "$W/hold.out"
[ "$(cat "$W/hold.out")" = 4 ]
log_test $? "connections over ctl_max_clients get one 'limit' reply ($(cat "$W/hold.out") of 4)"
# The refusal line is sent before the CLI writes its request: even when its
# send fails (EPIPE) the CLI reads the line and says why, at once.
t0=$(date +%s%N)
out=$(ctl a -t 5 show daemon 2>&1)
rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "    l2tpv3ctl over the cap: status $rc after ${ms} ms: $out"
# (the reason is the refusal line, read: a CLI left waiting would say its -t 5 ran out)
[ $rc = 1 ] && grep -q "too many control clients" <<<"$out"
log_test $? "l2tpv3ctl over the cap fails at once and says why"
kill $HOLD $BUSY; wait $HOLD $BUSY 2>/dev/null
clients() { ctlj a show daemon | jq .ctl_clients; }
wait_until 5 expect_count 1 clients
[ "$(stat_of ctl_clients_refused)" = 5 ]
log_test $? "refusals are counted (ctl_clients_refused $(stat_of ctl_clients_refused))"
kill -0 "$PID" && ctl a show daemon >/dev/null
log_test $? "daemon alive and answering after the holders leave"
n=$(grep -c "ctl_max_clients" "$W/a.log")
[ "$n" -le 10 ]
log_test $? "refusals logged at a limited rate ($n lines)"

it_done
