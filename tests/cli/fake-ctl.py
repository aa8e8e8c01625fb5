#!/usr/bin/env python3
"""tests/cli/fake-ctl.py - a stand-in for l2tpv3d's control socket.

Listens on SOCKET and answers doc/ctl-protocol.md requests with canned
replies, so tests/cli can check l2tpv3ctl before (and without) the daemon.
Every request line is appended to --record as it arrives, before it is
answered, so once the client has its reply the record is complete.

--hold N keeps replies back until N requests are outstanding (or the client
has been quiet for 50 ms), then sends them newest first: a pipelining
client gets out-of-order replies.  The most requests ever outstanding on
one connection goes to --stats as {"max_inflight": M, "requests": R}; with
N larger than the client's window, M > window means the client overran it.

Canned behaviours, keyed on request arguments:
  peer 192.0.2.99              peer-refused, with data.result (StopCCN 4)
  name "taken"                 exists
  profile "bogus"              invalid-argument
  tunnel_id/session_id 404     not-found
  tunnel_id/session_id 405     not-found, the status alone (no error text)
  tunnel "nosuch" (by name)    not-found
  tunnel_id 999                never answered (client timeout)
  tunnel_id 666                the connection is closed instead
  monitor                      {"monitoring": true}, then three events

Only the Python standard library: the tests must not need anything else.
"""
import argparse
import asyncio
import json
import os
import signal
import sys

STATUS = ["ok", "invalid-argument", "not-found", "exists", "limit",
          "peer-refused", "timeout", "dataplane-error", "config-error",
          "shutting-down", "internal-error"]
HOLD_IDLE = 0.05

TUNNELS = [
    {"tunnel_id": 1001, "peer_tunnel_id": 31337, "name": "alpha",
     "state": "established", "peer": "192.0.2.2:1701", "local": "192.0.2.1:1701",
     "encap": "udp", "peer_host_name": "lac1", "peer_router_id": 3221225986,
     "sessions": 2, "uptime": 3725, "profile": "default", "origin": "cli",
     "auth": "none"},
    {"tunnel_id": 4000000000, "peer_tunnel_id": 0, "name": "",
     "state": "wait-ctl-reply", "peer": "[2001:db8::2]:1701",
     "local": "[2001:db8::1]:1701", "encap": "ip", "peer_host_name": "",
     "peer_router_id": 0, "sessions": 0, "uptime": 5, "profile": "default",
     "origin": "config", "auth": "md5"},
]

SESSIONS = [
    {"session_id": 42, "peer_session_id": 77, "tunnel_id": 1001, "name": "s1",
     "state": "established", "pw_type": "eth", "ifname": "l2tpeth0",
     "cookie_len": 4, "peer_cookie_len": 4, "l2spec": "default",
     "data_seq": "none", "remote_end_id": "100", "circuit": "up",
     "uptime": 90061, "origin": "cli"},
    {"session_id": 43, "peer_session_id": 0, "tunnel_id": 1002, "name": "",
     "state": "wait-reply", "pw_type": "ppp", "ifname": "", "cookie_len": 0,
     "peer_cookie_len": 0, "l2spec": "none", "data_seq": "none",
     "remote_end_id": "", "circuit": "down", "uptime": 0, "origin": "peer"},
]

COUNTERS = {"msgs_in": {"SCCRP": 1, "HELLO": 3}, "msgs_out": {"SCCRQ": 1, "SCCCN": 1},
            "retransmits": 0, "drops": {}, "cwnd": 4, "peer_rx_window": 16}

SESSION_STATS = {"tx_packets": 10, "tx_bytes": 1200, "tx_errors": 0,
                 "rx_packets": 9, "rx_bytes": 1100, "rx_errors": 0,
                 "rx_seq_discards": 0, "rx_oos_packets": 0, "rx_cookie_discards": 1}

DAEMON = {"version": "0.1.0", "pid": 4242, "uptime": 86400, "event_loop": "epoll",
          "dataplane": "kernel", "hostname": "lns1", "router_id": "192.0.2.1",
          "config": "/etc/l2tpv3d/l2tpv3d.conf", "tunnels": 2,
          "tunnels_established": 1, "sessions": 2, "sessions_established": 1,
          "peers": 2, "config_id": False}

RESULT_4 = {"code": 4, "name": "not-authorized", "error": 0, "message": "bad secret"}

EVENTS = [
    {"event": "tunnel-up", "tunnel_id": 1001, "peer": "192.0.2.2:1701",
     "time": 1700000000.25},
    {"event": "session-up", "tunnel_id": 1001, "session_id": 42,
     "peer": "192.0.2.2:1701", "time": 1700000001.5},
    {"event": "tunnel-down", "tunnel_id": 1001, "peer": "192.0.2.2:1701",
     "time": 1700000002.0, "result": RESULT_4},
]

NEVER = object()	# the reply that is never sent
CLOSE = object()	# close the connection instead of replying


def reply(req, status=0, data=None, error=None):
    r = {"id": req.get("id"), "status": status, "status_name": STATUS[status]}
    if error is not None:
        r["error"] = error
    if data is not None:
        r["data"] = data
    return r


def with_config_id(rows, opts):
    if opts.described:
        rows = [dict(t, description=("Customer A \"HQ\"" if i == 0 else "")) for i, t in enumerate(rows)]
    if not opts.config_id:
        return rows
    return [dict(t, config_id=i + 1) for i, t in enumerate(rows)]


def shutdown_rows(opts, sessions):
    """static objects the configuration holds down (reload.c static_shutdown_json)"""
    if not opts.described:
        return {}
    row = {"name": "tb", "state": "shutdown", "origin": "config", "description": "Customer B"}
    if sessions:
        row = dict(row, name="tb-s1", tunnel="tb")
    return {"shutdown": [row], "retrying": []}


def tunnel_create(req, args, n):
    if args.get("peer", "").startswith("192.0.2.99"):
        return reply(req, 5, {"result": RESULT_4},
                     "peer closed the connection: StopCCN result 4 (not authorized)")
    if args.get("name") == "taken":
        return reply(req, 3, None, "tunnel name 'taken' already exists")
    if args.get("profile") == "bogus":
        return reply(req, 1, None, "profile 'bogus': no such tunnel profile")
    t = dict(TUNNELS[0], tunnel_id=1000 + n, peer_tunnel_id=2000 + n,
             name=args.get("name", ""), peer=args.get("peer", "192.0.2.3:1701"),
             sessions=0, uptime=0,
             encap=args.get("encap", "udp"), auth=args.get("digest", "none"),
             state="established" if args.get("wait", True) else "wait-ctl-reply")
    if "pool" in args:
        t["pool"] = args["pool"]
    return reply(req, 0, t)


def session_create(req, args, n):
    if args.get("tunnel") == "nosuch":
        return reply(req, 2, None, "no tunnel named 'nosuch'")
    s = dict(SESSIONS[0], session_id=500 + n, peer_session_id=0,
             tunnel_id=args.get("tunnel_id", 1001), name=args.get("name", ""),
             pw_type=args.get("pw_type", "eth"), ifname=args.get("ifname", "l2tpeth0"),
             cookie_len=args.get("cookie_len", 0), uptime=0,
             state="established" if args.get("wait", True) else "wait-reply")
    return reply(req, 0, s)


def by_id(req, args, key, what):
    """The not-found / never / close triggers shared by show and delete."""
    v = args.get(key)
    if v == 999:
        return NEVER
    if v == 666:
        return CLOSE
    if v == 404:
        return reply(req, 2, None, "no %s %d" % (what, v))
    if v == 405:
        return reply(req, 2)
    return None


def answer(req, opts, n):
    cmd, args = req.get("cmd"), req.get("args") or {}
    if cmd == "tunnel create":
        return tunnel_create(req, args, n)
    if cmd == "session create":
        return session_create(req, args, n)
    if cmd in ("tunnel delete", "tunnel show", "session delete", "session show"):
        noun = cmd.split()[0]
        special = by_id(req, args, noun + "_id", noun)
        if special is not None:
            return special
        if cmd.endswith("delete"):
            return reply(req, 0, {})
        if noun == "tunnel":
            return reply(req, 0, dict(with_config_id(TUNNELS, opts)[0], counters=COUNTERS))
        return reply(req, 0, dict(SESSIONS[0], stats=SESSION_STATS))
    if cmd == "tunnel list":
        return reply(req, 0, dict({"tunnels": with_config_id(TUNNELS, opts)},
                                  **shutdown_rows(opts, False)))
    if cmd == "session list":
        want = args.get("tunnel_id")
        rows = [s for s in SESSIONS if want is None or s["tunnel_id"] == want]
        return reply(req, 0, {"sessions": rows})
    if cmd == "show daemon":
        return reply(req, 0, DAEMON)
    if cmd == "stats":
        data = {"global": {"msgs_in": {"SCCRQ": 2}, "msgs_out": {"SCCRP": 2},
                           "retransmits": 1, "drops": {"bad-digest": 1}, "ctl_requests": 17}}
        if "tunnel_id" in args:
            data["tunnel"] = COUNTERS
        return reply(req, 0, data)
    if cmd == "stats reset":
        return reply(req, 0, {})
    if cmd == "metrics":
        return reply(req, 0, {"text": "# HELP l2tpv3d_tunnels Tunnels.\n# TYPE l2tpv3d_tunnels gauge\n"
                                      "l2tpv3d_tunnels{state=\"established\"} 2\n"})
    if cmd == "reload":
        return reply(req, 0, {"changed": {"tunnels_added": 1, "profiles_changed": 2}})
    if cmd == "monitor":
        return reply(req, 0, {"monitoring": True})
    if cmd == "failover takeover":
        return reply(req, 0, {"tunnels_restored": 3, "tunnels_not_restored": 0})
    return reply(req, 1, None, "unknown command '%s'" % cmd)


class Server:
    def __init__(self, opts):
        self.opts = opts
        self.record = open(opts.record, "a") if opts.record else None
        self.max_inflight = 0
        self.requests = 0

    def note(self, line, outstanding):
        self.requests += 1
        if self.record:
            self.record.write(line.decode() if isinstance(line, bytes) else line)
            self.record.flush()
        if outstanding > self.max_inflight:
            self.max_inflight = outstanding
            self.save_stats()

    def save_stats(self):
        if not self.opts.stats:
            return
        tmp = self.opts.stats + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"max_inflight": self.max_inflight, "requests": self.requests}, f)
        os.replace(tmp, self.opts.stats)


class Client:
    def __init__(self, server, writer):
        self.server, self.writer = server, writer
        self.held, self.outstanding, self.timer, self.n = [], 0, None, 0

    def send(self, obj):
        if self.server.opts.compact:
            text = json.dumps(obj, separators=(",", ":"))
        else:
            text = json.dumps(obj)
        self.writer.write((text + "\n").encode())

    def flush(self):
        if self.timer:
            self.timer.cancel()
            self.timer = None
        self.server.save_stats()
        for r in reversed(self.held):
            self.send(r)
        self.outstanding -= len(self.held)
        self.held = []

    def request(self, line):
        """Returns False when the connection must be closed."""
        self.outstanding += 1
        self.server.note(line, self.outstanding)
        req = json.loads(line)
        self.n += 1
        r = answer(req, self.server.opts, self.n)
        if isinstance(r, dict) and req.get("quiet") is True and r["status"] == 0:
            r.pop("data", None)     # the daemon's "quiet": a success is its status alone
        if r is CLOSE:
            return False
        if r is NEVER:
            return True
        if req.get("cmd") == "monitor" or self.server.opts.hold <= 1:
            self.outstanding -= 1
            self.send(r)
            if req.get("cmd") == "monitor":
                for ev in EVENTS:
                    self.send({"id": req.get("id"), "event": ev})
            return True
        self.held.append(r)
        if len(self.held) >= self.server.opts.hold:
            self.flush()
        else:
            if self.timer:
                self.timer.cancel()
            self.timer = asyncio.get_running_loop().call_later(HOLD_IDLE, self.flush)
        return True


async def serve_client(server, reader, writer):
    c = Client(server, writer)
    try:
        while True:
            line = await reader.readline()
            if not line or not c.request(line):
                break
            await writer.drain()
    except (ConnectionError, json.JSONDecodeError) as e:
        print("fake-ctl: %s" % e, file=sys.stderr)
    if c.timer:
        c.timer.cancel()
    server.save_stats()
    writer.close()


async def main(opts):
    server = Server(opts)
    if os.path.exists(opts.socket):
        os.unlink(opts.socket)
    srv = await asyncio.start_unix_server(
        lambda r, w: serve_client(server, r, w), path=opts.socket, limit=1 << 20)
    server.save_stats()
    if opts.ready:
        with open(opts.ready + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.replace(opts.ready + ".tmp", opts.ready)
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(
            sig, lambda: stop.done() or stop.set_result(None))
    async with srv:
        await stop
    os.unlink(opts.socket)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("socket")
    p.add_argument("--record", help="append every request line here")
    p.add_argument("--stats", help="write {max_inflight, requests} here")
    p.add_argument("--ready", help="write our pid here once listening")
    p.add_argument("--hold", type=int, default=0, help="reorder replies in groups of N")
    p.add_argument("--config-id", action="store_true", help="tunnels carry config_id")
    p.add_argument("--described", action="store_true",
                   help="tunnels carry descriptions; tunnel list has a shut-down tunnel")
    p.add_argument("--compact", action="store_true",
                   help="replies without spaces, byte for byte as l2tpv3d writes them")
    asyncio.run(main(p.parse_args()))
