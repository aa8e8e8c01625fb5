#!/usr/bin/env bash
# Idle control connections cannot lock other clients out.  With
# ctl_max_clients = 8: eight idle connections hold every slot, yet
# `l2tpv3ctl reload` and `show daemon` are served (the idlest connections
# are closed to make room, told why); the rest are closed once idle for
# ctl_idle_timeout (3 s here); monitors may take all slots but one, so a
# reload still gets in beside seven of them.
. "$(dirname "$0")/../integration/lib.sh"
it_setup
command -v python3 >/dev/null || skip "needs python3"
write_conf a $A_ADDR 'peer_default = { accept = true; };'
sed -i 's|ctl_socket|ctl_max_clients = 8; ctl_idle_timeout = 3; ctl_socket|' "$W/a.conf"
start a "$NSA"
log_test $? "the daemon starts with ctl_max_clients 8, ctl_idle_timeout 3 s"

# hold N OUT: N connections that send nothing; OUT gets "held N", then
# "closed I: LINE" as each is closed (LINE: what the daemon said first)
cat > "$W/hold.py" <<'PY'
import select, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    socks.append(s)
print(f"held {n}", flush=True)
said = {i: b"" for i in range(n)}
open_ = set(range(n))
deadline = time.time() + 120
while open_ and time.time() < deadline:
    r, _, _ = select.select([socks[i] for i in open_], [], [], 1)
    for s in r:
        i = socks.index(s)
        d = s.recv(4096)
        said[i] += d
        if not d:
            print(f"closed {i}: {said[i].decode(errors='replace').strip()}", flush=True)
            open_.discard(i)
PY
python3 "$W/hold.py" "$W/a.ctl" 8 > "$W/hold.out" 2>&1 & HOLD=$!
wait_until 10 grep -q "^held 8" "$W/hold.out"
log_test $? "8 idle connections hold every slot"
ctl a reload >/dev/null && ctl a show daemon >/dev/null
log_test $? "reload and show daemon are served all the same"
wait_until 10 grep -q 'closed for a new client' "$W/hold.out"
log_test $? "the idlest connections were closed for them, told why ($(grep -c 'closed for a new client' "$W/hold.out"))"
wait_until 20 sh -c "[ \$(grep -c '^closed' '$W/hold.out') = 8 ]" &&
	[ "$(grep -c 'idle for ctl_idle_timeout' "$W/hold.out")" -ge 1 ]
log_test $? "the others are closed after 3 s idle ($(grep -c 'idle for ctl_idle_timeout' "$W/hold.out") by the deadline)"
wait $HOLD
n=$(ctlj a stats | jq '.global.ctl_clients_evicted_idle')
[ "$n" -ge 8 ] && [ "$(ctlj a stats | jq '.global.ctl_clients_refused')" = 0 ]
log_test $? "counted: $n idle clients closed, none refused"

# monitors: all slots but one (an admitted monitor prints nothing until an
# event; a refused one says why and exits)
MONS=
for i in 1 2 3 4 5 6 7 8; do
	"$C" -s "$W/a.ctl" -j monitor > "$W/mon.$i" 2>&1 &
	MONS="$MONS $!"
done
refused() { grep -l "too many monitors" "$W"/mon.* | wc -l; }
wait_until 10 expect_count 1 refused && wait_until 10 sh -c "[ \$($C -s $W/a.ctl -j show daemon | jq .ctl_clients) = 8 ]"
log_test $? "8 monitors asked: 7 admitted (with this request, 8 clients), 1 refused with the reason"
ctl a reload >/dev/null
log_test $? "a reload gets in beside 7 monitors"
kill $MONS 2>/dev/null
it_done
