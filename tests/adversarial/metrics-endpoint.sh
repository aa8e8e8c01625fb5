#!/usr/bin/env bash
# The /metrics endpoint (metrics_listen) under the attacks the control
# socket already resists: clients that connect and send nothing hold at most
# 16 connections (more are refused at once, counted) and none beyond 10 s; a
# client dribbling its headers a byte a second is cut at the same absolute
# deadline; with the daemon's descriptors used up, accepting neither spins
# nor floods the log, and scrapes are answered again once they are freed.
# HEAD answers the headers without the body, and a listening address that
# is not loopback is warned about at start.
#
#   +------------- ns A ---------------+    +------------- ns B ---------------+
#   | l2tpv3d a                        |    | l2tpv3d b (ulimit -n 64)         |
#   |   metrics_listen 127.0.0.1:9724  |    |   metrics_listen 0.0.0.0:9724    |
#   |   ^ mx.py: 1 dribbler, 19 idle,  |    |   ^ control socket: 100 held     |
#   |   |  scrapes (GET, HEAD, POST)   |    |   ^ mx.py: 30 idle, scrapes      |
#   +----------------------------------+    +----------------------------------+
. "$(dirname "$0")/../integration/lib.sh"
it_setup
command -v python3 >/dev/null || skip "needs python3"

PORT=9724 CAP=16 DEADLINE_S=10 NOFILE=64 NHOLD_CTL=100

write_conf a $A_ADDR
sed -i "s|ctl_socket|metrics_listen = \"127.0.0.1:$PORT\"; ctl_socket|" "$W/a.conf"
start a "$NSA"
log_test $? "daemon a starts, metrics_listen 127.0.0.1:$PORT"

cat > "$W/mx.py" <<'PY'
import json, select, socket, sys, time

def report(out, line):
    with open(out, "a") as f:
        f.write(line + "\n")

def scrape(port, method, path, bodyfile=None):
    """One request, read to the server's close; prints status, headers, body size."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                   % (method, path)).encode())
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError as e:      # reset, timeout: whatever arrived counts
        if not locals().get("data"):
            print(json.dumps({"status": 0, "error": str(e)}))
            return
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines[0].startswith("HTTP/") else 0
    headers = {k.strip().lower(): v.strip()
               for k, _, v in (l.partition(":") for l in lines[1:])}
    if bodyfile:
        open(bodyfile, "wb").write(body)
    print(json.dumps({"status": status, "headers": headers, "body_bytes": len(body),
                      "body": body[:120].decode("latin-1")}))

def held_until_closed(held, out, t0):
    """Waits for the server to close every one of held, reports when, and holds on."""
    while held:
        for s in select.select(held, [], [], 1)[0]:
            try:
                d = s.recv(4096)
            except ConnectionResetError:
                d = b""
            if not d:
                held.remove(s)
    report(out, "closed %.1f" % (time.monotonic() - t0))
    time.sleep(3600)

def hold(port, n, out):
    """Opens n connections and sends nothing.  Reports how many the server
    closed at once (within 5 s; nofd: how many said "descriptors"), then how
    long the server took to close the others; then holds whatever is left."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n)]
    t0 = time.monotonic()
    # those the server closes at once, well before a deadline could (5 s at most)
    waiting = list(socks)
    while waiting and time.monotonic() < t0 + 5:
        for s in select.select(waiting, [], [], 0.5)[0]:
            waiting.remove(s)
    held, refused, nofd = [], 0, 0
    for s in socks:
        s.setblocking(False)
        try:
            d = s.recv(4096)
            refused += 1
            nofd += b"descriptors" in d
        except BlockingIOError:
            held.append(s)
        except ConnectionResetError:
            refused += 1
    report(out, "refused %d nofd %d held %d" % (refused, nofd, len(held)))
    held_until_closed(held, out, t0)

def get(port):
    """A scrape: its status and the clients it counts (-1: not in it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    status = int(data.split()[1]) if data.startswith(b"HTTP/") else 0
    count = [l.split()[1] for l in data.split(b"\n") if l.startswith(b"l2tpv3d_metrics_clients ")]
    return status, int(count[0]) if count else -1

def cap(port, n, extra, out):
    """In one go (so that nothing here waits on the 10 s deadline): n - 1
    idle connections and a scrape beside them; one more, then extra more;
    how many of the n are held and how many of the extra the server closed
    (waited for up to 5 s), and what a scrape gets then.  Then how long the server
    took to close the held ones."""
    t0 = time.monotonic()
    first = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n - 1)]
    # (the server accepts in order: the scrape's turn comes after them all)
    beside, counted = get(port)
    # the n-th: the scrape's slot may still be the server's a moment after
    # its reply (its close lingers), so one refused for that is made again
    end, again = time.monotonic() + 5, 0
    while True:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if select.select([s], [], [], 0.5)[0] == [] or time.monotonic() > end:
            break
        s.close()
        again += 1
    first.append(s)
    more = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(extra)]
    # the extra ones closed, well before the deadline could close any other
    waiting, end = list(more), time.monotonic() + 5
    while waiting and time.monotonic() < end:
        for s in select.select(waiting, [], [], 0.5)[0]:
            waiting.remove(s)
    def closed(s):
        s.setblocking(False)
        try:
            return s.recv(4096) is not None
        except BlockingIOError:
            return False
        except ConnectionResetError:
            return True
    held = [s for s in first if not closed(s)]
    refused = sum(closed(s) for s in more)
    status, _ = get(port)
    report(out, "beside %d counted %d held %d refused %d scrape %d again %d elapsed %.1f" %
           (beside, counted, len(held), refused, status, again, time.monotonic() - t0))
    held_until_closed(held, out, t0)

def dribble(port, out):
    """A request whose headers never end: one byte a second, for up to 30 s."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    t0 = time.monotonic()
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    s.settimeout(1)
    while time.monotonic() - t0 < 30:
        try:
            s.send(b"a")
            if not s.recv(4096):
                break
        except socket.timeout:
            continue
        except OSError:
            break
    report(out, "closed %.1f" % (time.monotonic() - t0))

def hold_unix(path, n, out):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        socks.append(s)
    report(out, "held %d" % n)
    time.sleep(3600)

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "scrape":
    scrape(int(args[0]), args[1], args[2], args[3] if len(args) > 3 else None)
elif cmd == "hold":
    hold(int(args[0]), int(args[1]), args[2])
elif cmd == "cap":
    cap(int(args[0]), int(args[1]), int(args[2]), args[3])
elif cmd == "dribble":
    dribble(int(args[0]), args[1])
elif cmd == "hold_unix":
    hold_unix(args[0], int(args[1]), args[2])
PY
MX() { local ns=$1; shift; ip netns exec "$ns" python3 "$W/mx.py" "$@"; }
# mx_bg NAME NS ARGS...: mx.py in the background, its pid in $W/NAME.pid (killed on exit)
mx_bg() {
	local name=$1 ns=$2; shift 2
	ip netns exec "$ns" python3 "$W/mx.py" "$@" &
	echo $! > "$W/$name.pid"
}
# sample SERIES: its value in the Prometheus text on stdin, or "absent"
sample() { awk -v k="$1" '$1 == k { v = $2 } END { print v == "" ? "absent" : v }'; }
# m NAME SERIES: one series of `l2tpv3ctl metrics` (not over HTTP: no slot taken)
m() { ctl "$1" metrics | sample "$2"; }
clients_are() { [ "$(m a l2tpv3d_metrics_clients)" = "$1" ]; }
has_line() { grep -q "^$2" "$1" 2>/dev/null; }
field() { sed -n "s/.*\(^\| \)$2 \([0-9.]*\).*/\2/p" "$1"; }	# field FILE KEY: the number after KEY
# in_range VALUE LOW HIGH (decimals)
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

# ---- the connection cap (daemon a) ----------------------------------------
# (one process opens them all: the checks do not race the 10 s deadline)
mx_bg cap "$NSA" cap $PORT $CAP 5 "$W/cap.out"
wait_until 20 has_line "$W/cap.out" held
echo "    $(head -1 "$W/cap.out")"
[ "$(field "$W/cap.out" beside)" = 200 ] && [ "$(field "$W/cap.out" counted)" = $CAP ]
log_test $? "a real scrape works beside $((CAP - 1)) idle clients (200, counts $CAP clients)"
[ "$(field "$W/cap.out" held)" = $CAP ] && [ "$(field "$W/cap.out" refused)" = 5 ]
log_test $? "$CAP idle clients are held, 5 more are closed at once"
[ "$(field "$W/cap.out" scrape)" = 503 ] && ctl a show daemon >/dev/null
log_test $? "at the cap a scrape is refused at once (503); the control socket answers"
wait_until 20 has_line "$W/cap.out" closed && wait_until 5 clients_are 0
log_test $? "the $CAP are closed by the deadline ($(field "$W/cap.out" closed) s), none left"

# ---- the absolute deadline (daemon a) --------------------------------------
mx_bg dribble "$NSA" dribble $PORT "$W/dribble.out"
wait_until 5 clients_are 1
log_test $? "a client dribbling its headers holds one connection"
mx_bg idle1 "$NSA" hold $PORT $((CAP - 2)) "$W/idle1.out"
wait_until 20 has_line "$W/idle1.out" refused
[ "$(field "$W/idle1.out" held)" = $((CAP - 2)) ]
log_test $? "$((CAP - 2)) idle clients more are held ($(head -1 "$W/idle1.out"))"
wait_until 15 has_line "$W/dribble.out" closed
log_test $? "the dribbling client is cut off"
t=$(field "$W/dribble.out" closed)
echo "    dribbler closed after ${t:-never} s (deadline $DEADLINE_S s, one header byte a second)"
in_range "${t:-99}" $((DEADLINE_S - 1)) $((DEADLINE_S + 2))
log_test $? "... at the absolute deadline ($t s)"
wait_until 15 has_line "$W/idle1.out" closed
log_test $? "idle clients are closed by the deadline ($(field "$W/idle1.out" closed) s)"
wait_until 5 clients_are 0
log_test $? "no client left connected"
MX "$NSA" scrape $PORT GET /metrics "$W/scrape3.prom" > "$W/scrape3.json"
rmax=$(sample 'l2tpv3d_metrics_clients_refused_total{reason="max_clients"}' < "$W/scrape3.prom")
dropped=$(sample l2tpv3d_metrics_clients_dropped_total < "$W/scrape3.prom")
echo "    counted: $rmax refused (max_clients), $dropped cut at the deadline"
# refused: the 5, the scrape and any n-th made again; cut: the cap's and the
# dribbler with its idle ones
refused=$((6 + $(field "$W/cap.out" again)))
[ "$(jq .status "$W/scrape3.json")" = 200 ] && [ "$rmax" = "$refused" ] && [ "$dropped" = $((2 * CAP - 1)) ]
log_test $? "scrapes work again; refusals ($rmax of $refused) and deadline cuts ($dropped of $((2 * CAP - 1))) are counted"

# ---- methods --------------------------------------------------------------
MX "$NSA" scrape $PORT GET /metrics > "$W/get.json"
MX "$NSA" scrape $PORT HEAD /metrics > "$W/head.json"
glen=$(jq -r '.headers["content-length"]' "$W/get.json")
hlen=$(jq -r '.headers["content-length"]' "$W/head.json")
echo "    GET: Content-Length $glen, $(jq .body_bytes "$W/get.json") bytes;" \
	"HEAD: Content-Length $hlen, $(jq .body_bytes "$W/head.json") bytes"
[ "$(jq .status "$W/get.json")" = 200 ] && [ "$(jq .body_bytes "$W/get.json")" = "$glen" ]
log_test $? "GET /metrics: the body, as long as Content-Length says"
[ "$(jq .status "$W/head.json")" = 200 ] && [ "${hlen:-0}" -gt 0 ] 2>/dev/null &&
	[ "$(jq .body_bytes "$W/head.json")" = 0 ]
log_test $? "HEAD /metrics: 200 and Content-Length, no body"
MX "$NSA" scrape $PORT POST /metrics > "$W/post.json"
[ "$(jq .status "$W/post.json")" = 405 ] &&
	[ "$(jq -r '.headers.allow' "$W/post.json")" = "GET, HEAD" ] &&
	[ "$(MX "$NSA" scrape $PORT GET /other | jq .status)" = 404 ]
log_test $? "POST 405 (Allow: GET, HEAD), other paths 404"

# ---- descriptors exhausted (daemon b, 0.0.0.0) ------------------------------
write_conf b $B_ADDR
sed -i "s|ctl_socket|metrics_listen = \"0.0.0.0:$PORT\"; ctl_socket|" "$W/b.conf"
# the descriptors run out long before the control clients' cap does
sed -i "s|\"$B_ADDR\"; };|\"$B_ADDR\"; ctl_max_clients = 1000; };|" "$W/b.conf"
# start() passes daemon arguments only: the limit needs a shell around it
ip netns exec "$NSB" bash -c 'ulimit -n "$1" && exec "$2" -F -f "$3"' sh $NOFILE "$D" "$W/b.conf" \
	>>"$W/b.log" 2>&1 &
PID=$!
echo $PID > "$W/b.pid"
wait_until "$START_S" ctl b show daemon
log_test $? "daemon b starts with $NOFILE descriptors ($(ls /proc/$PID/fd | wc -l) in use)"

grep -q "metrics: serving /metrics on 127.0.0.1:$PORT" "$W/a.log" &&
	! grep -q "not a loopback address" "$W/a.log"
log_test $? "127.0.0.1: no warning"
grep -q "metrics: 0.0.0.0:$PORT is not a loopback address" "$W/b.log"
log_test $? "0.0.0.0: a warning at start (the page lists every peer address)"

mx_bg ctlhold "$NSB" hold_unix "$W/b.ctl" $NHOLD_CTL "$W/ctlhold.out"
wait_until 10 has_line "$W/ctlhold.out" held && wait_until 5 bash -c \
	"[ \$(ls /proc/$PID/fd | wc -l) -ge $NOFILE ]"
log_test $? "$NHOLD_CTL control connections use up b's descriptors"

cpu() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }	# utime + stime, in ticks
hz=$(getconf CLK_TCK)
lines0=$(wc -l < "$W/b.log") cpu0=$(cpu) t0=$(date +%s%N)
mx_bg idle3 "$NSB" hold $PORT 30 "$W/idle3.out"
wait_until 10 has_line "$W/idle3.out" refused
sleep 2		# not a wait: the rest of the ~3 s over which CPU and log lines are measured
cpu_ms=$(( ($(cpu) - cpu0) * 1000 / hz )) lines=$(( $(wc -l < "$W/b.log") - lines0 ))
echo "    30 scrape connections out of descriptors: $(head -1 "$W/idle3.out");" \
	"over $(( ($(date +%s%N) - t0) / 1000000 )) ms: ${cpu_ms} ms of CPU, $lines log lines"
kill -0 $PID
log_test $? "daemon b alive while out of descriptors"
[ "$(field "$W/idle3.out" nofd)" -gt 0 ] 2>/dev/null
log_test $? "scrapes are refused, saying the descriptors ran out"
[ $cpu_ms -lt 1000 ]
log_test $? "no busy loop: less than 1 s of CPU in ~3 s (${cpu_ms} ms)"
[ $lines -lt 30 ]
log_test $? "refusals logged at a limited rate ($lines lines)"

kill "$(cat "$W/ctlhold.pid")" "$(cat "$W/idle3.pid")"
scrape_ok() { [ "$(MX "$NSB" scrape $PORT GET /metrics | jq .status)" = 200 ]; }
wait_until 5 scrape_ok
log_test $? "b serves /metrics again once the descriptors are released"
n=$(m b 'l2tpv3d_metrics_clients_refused_total{reason="no_descriptor"}')
[ "$n" -gt 0 ] 2>/dev/null
log_test $? "refusals for want of descriptors are counted ($n)"

it_done
