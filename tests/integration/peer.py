#!/usr/bin/env python3
"""tests/integration/peer.py - a scripted L2TPv3 peer (LCCE) over UDP that
behaves the way real implementations do (doc/rfc3931-conformance.md, "Interop realities"), for
the integration tests: raw control messages, its own Ns/Nr, ZLB
acknowledgements (or none), loss of our messages, silence, CDN answered
with CDN.  Python 3, stdlib only.

As a library:

    p = Peer(("192.0.2.1", 1701), ("192.0.2.2", 1701), rws=1024)
    p.connect(extra=[avp(2, b"\\x01\\x00")])   # SCCRQ, SCCRP, SCCCN
    s = p.icrq(serial=False)                   # ICRQ; waits for ICRP (or CDN)
    p.send(MSG["HELLO"]); p.wait_acked()

As a CLI, `peer.py serve --local IP[:PORT] --remote IP[:PORT]` reads one
command a line on stdin and answers each with one JSON line on stdout
({"ok": true, ...} or {"ok": false, "error": "..."}):

    connect [rws=N] [tb=HEX] [v2=1] [host=S] [scccn=0] [MODS]
                                               open a control connection (MODS: SCCRQ)
    accept [rws=N] [timeout=S] [MODS]          answer the other side's SCCRQ (MODS: SCCRP)
    icrq [serial=0] [iccn=0] [lsid=N] [MODS]   open a session (ICRQ, ICRP, ICCN)
    send TYPE [lsid=N] [rsid=N] [ccid=N] [ns=N] [nr=N] [to=IP:PORT] [MODS]
                                               any message; sequenced unless ns=
    wait TYPE [timeout=S] [lsid=N] [any=1] [peek=1]
                                               next received TYPE (any=1: any CCID;
                                               peek=1: leave it for the next wait)
    acked [timeout=S]                          all we sent is acknowledged
    count TYPE N [timeout=S]                   N in-sequence TYPEs received so far
    set ack=0|1 ooo=ack|silent cdn_echo=0|1 auto_icrp=0|1 rtx=0|1
    drop N                                     lose the next N of the other side's messages
    disappear                                  never answer nor send again
    state                                      Ns, Nr, counters, sessions
    clear                                      forget received messages
    quit

MODS change the AVPs of the message built (vendor 0 unless V: is given):
    omit=T           leave AVP T out
    set=T:HEX        AVP T's value replaced by HEX
    pad=T:N          N zero octets appended to AVP T's value (bad length)
    len=T:N          AVP T's length field says N (overrun, too short)
    mbit=T:0|1       M bit of AVP T
    extra=V:T:M:HEX  one more AVP at the end (repeatable)
    tail=HEX         raw octets after the last AVP (a truncated AVP header)
"""
import json
import os
import random
import select
import socket
import struct
import sys
import threading
import time

AVP_M = 0x8000
# How long a wait for the other side's message lasts unless timeout= says:
# the answer ends it at once, so this is only the deadline of a loaded
# machine (a check that nothing comes gives its own, short timeout=).
WAIT_S = float(os.environ.get("PEER_WAIT_S", "10"))
MSG = {"ZLB": 0, "SCCRQ": 1, "SCCRP": 2, "SCCCN": 3, "StopCCN": 4, "HELLO": 6,
       "OCRQ": 7, "OCRP": 8, "OCCN": 9, "ICRQ": 10, "ICRP": 11, "ICCN": 12,
       "CDN": 14, "WEN": 15, "SLI": 16, "ACK": 20}
NAME = {v: k for k, v in MSG.items()}
SESSION_MSGS = {7, 8, 9, 10, 11, 12, 14, 15, 16}

# IETF AVP types used here
A_MSG, A_RESULT, A_TIE, A_HOST, A_VENDOR, A_RWS, A_SERIAL = 0, 1, 5, 7, 8, 10, 15
A_CIRC_ERR, A_ROUTER, A_CCID, A_PWCAP, A_LSID, A_RSID = 34, 60, 61, 62, 63, 64
A_COOKIE, A_REMOTE_END, A_PWTYPE, A_L2SS, A_DATASEQ, A_CIRC = 65, 66, 68, 69, 70, 71


def avp(atype, value=b"", m=True, vendor=0, length=None):
    """One AVP; length overrides the length field (malformed on purpose)."""
    n = 6 + len(value) if length is None else length
    return struct.pack("!HHH", (AVP_M if m else 0) | (n & 0x3FF), vendor, atype) + value


def u16(v):
    return struct.pack("!H", v)


def u32(v):
    return struct.pack("!I", v)


def header(ccid, ns, nr, body_len):
    return struct.pack("!HHIHH", 0xC803, 12 + body_len, ccid, ns, nr)


class Avp:
    """An AVP to build: attributes editable before encoding."""

    def __init__(self, atype, value=b"", m=True, vendor=0):
        self.type, self.value, self.m, self.vendor, self.length = atype, value, m, vendor, None

    def encode(self):
        return avp(self.type, self.value, self.m, self.vendor, self.length)


class Msg:
    """A decoded control message (never raises: problems are in .bad)."""

    def __init__(self, data, src=None):
        self.raw, self.src, self.avps, self.bad = data, src, [], None
        self.t = time.monotonic()
        if len(data) < 12:
            self.bad = "short"
            self.ccid = self.ns = self.nr = 0
            self.type = -1
            return
        _, _, self.ccid, self.ns, self.nr = struct.unpack("!HHIHH", data[:12])
        off = 12
        while off + 6 <= len(data):
            fl, vendor, atype = struct.unpack("!HHH", data[off:off + 6])
            n = fl & 0x3FF
            if n < 6 or off + n > len(data):
                self.bad = "avp length"
                break
            self.avps.append((vendor, atype, bool(fl & AVP_M), data[off + 6:off + n]))
            off += n
        if not self.avps:
            self.type = 0
        elif self.avps[0][:2] == (0, A_MSG) and len(self.avps[0][3]) == 2:
            self.type = struct.unpack("!H", self.avps[0][3])[0]
        else:
            self.type = -1

    def get(self, atype, vendor=0):
        for v, t, _, val in self.avps:
            if v == vendor and t == atype:
                return val
        return None

    def int(self, atype):
        v = self.get(atype)
        if v is None or len(v) not in (2, 4, 8):
            return None
        return int.from_bytes(v, "big")

    def result(self):
        v = self.get(A_RESULT)
        if v is None or len(v) < 2:
            return None
        r = [struct.unpack("!H", v[:2])[0]]
        if len(v) >= 4:
            r.append(struct.unpack("!H", v[2:4])[0])
            r.append(v[4:].decode("utf-8", "replace"))
        return r

    @property
    def name(self):
        return NAME.get(self.type, "type-%d" % self.type)

    def json(self):
        d = {"type": self.name, "ccid": self.ccid, "ns": self.ns, "nr": self.nr}
        for key, t in (("lsid", A_LSID), ("rsid", A_RSID), ("assigned_ccid", A_CCID),
                       ("rws", A_RWS), ("tie_breaker", A_TIE)):
            v = self.int(t)
            if v is not None:
                d[key] = v
        r = self.result()
        if r is not None:
            d["result"], d["error"] = r[0], (r[1] if len(r) > 1 else None)
            if len(r) > 2:
                d["text"] = r[2]
        d["avps"] = [[v, t, int(m), val.hex()] for v, t, m, val in self.avps]
        if self.bad:
            d["bad"] = self.bad
        return d


def seq_lt(a, b):
    """a before b, modulo 2^16."""
    return a != b and ((b - a) & 0xFFFF) < 0x8000


class PeerError(Exception):
    pass


class Session:
    def __init__(self, lsid):
        self.lsid, self.rsid, self.state = lsid, 0, "wait-reply"

    def json(self):
        return {"lsid": self.lsid, "rsid": self.rsid, "state": self.state}


class Peer:
    """One UDP socket, one control connection at a time (ccid), and a
    receive thread that acknowledges and answers like an LCCE would."""

    def __init__(self, local, remote, rws=16, host="pypeer", router_id=0x0A000001):
        fam = socket.AF_INET6 if ":" in local[0] else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(local)
        self.remote0 = remote	# where SCCRQs go (the listener)
        self.remote = remote	# the tunnel's address, learnt from its SCCRP/SCCRQ
        self.rws, self.host, self.router_id = rws, host, router_id
        self.lock = threading.Condition()
        self.ccid = 0		# ours
        self.peer_ccid = 0
        self.ns = self.nr = 0
        self.una = 0		# oldest Ns the peer has not acknowledged
        self.unacked = []	# [ns, bytes, last sent]
        self.inbox = []		# received messages (in sequence, or with another CCID)
        self.counts = {}	# in-sequence messages by type name
        self.dup = self.ooo = self.dropped = self.zlb_rx = 0
        self.ack, self.ooo_ack, self.cdn_echo, self.auto_icrp, self.rtx = True, True, False, True, True
        self.drop_n = 0
        self.gone = False
        self.closed = False
        self.sessions = {}	# our lsid -> Session
        self.next_sid = random.randrange(1, 1 << 30)
        self.rx = threading.Thread(target=self._loop, daemon=True)
        self.rx.start()

    # ---- sending ----
    def _tx(self, data, to=None):
        if not self.gone:
            self.sock.sendto(data, to or self.remote)

    def new_sid(self):
        self.next_sid += 1
        return self.next_sid

    def build(self, mtype, avps, ccid=None, ns=None, nr=None, mods=None):
        """Encodes a message; a sequenced one takes the next Ns unless ns is given."""
        avps = [Avp(A_MSG, u16(mtype))] + list(avps)
        tail = b""
        for kind, arg in mods or []:
            if kind == "extra":
                avps.append(arg)
                continue
            if kind == "first":
                avps.insert(1, arg)	# right after the Message Type (a Message Digest's place)
                continue
            if kind == "tail":
                tail += arg
                continue
            vendor, t = arg[0], arg[1]
            hit = [a for a in avps if a.type == t and a.vendor == vendor]
            if kind == "omit":
                avps = [a for a in avps if a not in hit]
            for a in hit:
                if kind == "set":
                    a.value = arg[2]
                elif kind == "pad":
                    a.value += bytes(arg[2])
                elif kind == "len":
                    a.length = arg[2]
                elif kind == "mbit":
                    a.m = bool(arg[2])
        body = b"".join(a.encode() for a in avps) + tail
        with self.lock:
            seq = ns is None
            if seq:
                ns = self.ns
                self.ns = (self.ns + 1) & 0xFFFF
            data = header(self.peer_ccid if ccid is None else ccid, ns,
                          self.nr if nr is None else nr, len(body)) + body
            if seq:
                self.unacked.append([ns, data, time.monotonic()])
        return data

    def send(self, mtype, avps=(), to=None, **kw):
        data = self.build(mtype, avps, **kw)
        self._tx(data, to)
        return data

    def zlb(self, ccid=None, to=None):
        self._tx(header(self.peer_ccid if ccid is None else ccid, self.ns, self.nr, 0), to)

    def sccrx_avps(self, rws=None, tb=None, v2=False, host=None):
        a = [Avp(A_HOST, (host or self.host).encode()), Avp(A_ROUTER, u32(self.router_id)),
             Avp(A_CCID, u32(self.ccid)), Avp(A_PWCAP, u16(5) + u16(4)),
             Avp(A_RWS, u16(rws or self.rws)), Avp(A_VENDOR, b"pypeer", m=False)]
        if tb is not None:
            a.append(Avp(A_TIE, tb.to_bytes(8, "big")))
        if v2:
            # what Cisco IOS puts in its SCCRQ, with M=1 (RFC 2661 AVPs)
            a += [Avp(2, u16(0x0100)), Avp(3, u32(3)), Avp(4, u32(0)), Avp(6, u16(0x1120))]
        return a

    def session_avps(self, mtype, s, serial=True):
        lsid = s.lsid if s else 0
        rsid = s.rsid if s else 0
        a = [Avp(A_LSID, u32(lsid)), Avp(A_RSID, u32(rsid))]
        if mtype in (MSG["ICRQ"], MSG["OCRQ"]):
            if serial:
                a.append(Avp(A_SERIAL, u32(lsid), m=False))
            a += [Avp(A_PWTYPE, u16(5)), Avp(A_REMOTE_END, b""), Avp(A_CIRC, u16(3))]
        elif mtype in (MSG["ICRP"], MSG["OCRP"], MSG["SLI"]):
            a.append(Avp(A_CIRC, u16(1)))
        elif mtype == MSG["CDN"]:
            a.insert(0, Avp(A_RESULT, u16(3)))
        elif mtype == MSG["WEN"]:
            a.append(Avp(A_CIRC_ERR, bytes(26)))
        return a

    def std_avps(self, mtype, s=None):
        if mtype in (MSG["SCCRQ"], MSG["SCCRP"]):
            return self.sccrx_avps()
        if mtype == MSG["StopCCN"]:
            return [Avp(A_CCID, u32(self.ccid)), Avp(A_RESULT, u16(1))]
        if mtype in SESSION_MSGS:
            return self.session_avps(mtype, s)
        return []

    # ---- receiving ----
    def _loop(self):
        while not self.closed:
            try:
                r, _, _ = select.select([self.sock], [], [], 0.1)
            except (OSError, ValueError):
                return
            if r:
                try:
                    data, src = self.sock.recvfrom(65535)
                except OSError:
                    return
                with self.lock:
                    self._input(Msg(data, src))
                    self.lock.notify_all()
            with self.lock:
                self._retransmit()

    def _retransmit(self):
        now = time.monotonic()
        if not self.rtx or self.gone or not self.unacked or now - self.unacked[0][2] < 1.0:
            return
        for u in self.unacked:	# go back N: they are few
            u[2] = now
            self._tx(u[1])

    def _input(self, m):
        if self.gone:
            return
        if m.ccid == 0 or m.ccid != self.ccid or self.ccid == 0:
            # an SCCRQ, or another connection's message: not sequenced here
            if m.type != 0:
                self.inbox.append(m)
            return
        if m.type != 0 and self.drop_n > 0:
            self.drop_n -= 1
            self.dropped += 1
            return
        # Nr acknowledges what we sent
        while self.unacked and seq_lt(self.unacked[0][0], m.nr):
            self.unacked.pop(0)
        if self.unacked:
            self.una = self.unacked[0][0]
        else:
            self.una = self.ns
        if m.type == 0:
            self.zlb_rx += 1
            return
        if m.type == MSG["ACK"]:
            return
        if m.ns != self.nr:
            if seq_lt(m.ns, self.nr):
                self.dup += 1
                if self.ack:
                    self.zlb(to=m.src)
            else:
                self.ooo += 1	# queued nowhere: it must come again
                if self.ack and self.ooo_ack:
                    self.zlb(to=m.src)
            return
        self.nr = (self.nr + 1) & 0xFFFF
        self.counts[m.name] = self.counts.get(m.name, 0) + 1
        self.inbox.append(m)
        self._react(m)
        if self.ack:
            self.zlb(to=m.src)

    def _react(self, m):
        """What an LCCE answers by itself."""
        if m.type == MSG["SCCRP"]:
            # the tunnel answers from its own port; our ZLB must name its CCID
            self.peer_ccid = m.int(A_CCID) or 0
            self.remote = m.src
        elif m.type == MSG["ICRQ"] and self.auto_icrp:
            s = Session(self.new_sid())
            s.rsid = m.int(A_LSID) or 0
            s.state = "wait-connect"
            self.sessions[s.lsid] = s
            self._tx(self.build(MSG["ICRP"], self.session_avps(MSG["ICRP"], s)))
        elif m.type == MSG["ICCN"]:
            s = self.sessions.get(m.int(A_RSID) or 0)
            if s:
                s.state = "established"
        elif m.type == MSG["CDN"]:
            s = self.sessions.get(m.int(A_RSID) or 0)
            if s:
                s.state = "closed"
                if self.cdn_echo:
                    self._tx(self.build(MSG["CDN"], self.session_avps(MSG["CDN"], s)))

    # ---- waiting ----
    def _take(self, pred):
        for i, m in enumerate(self.inbox):
            if pred(m):
                return self.inbox.pop(i)
        return None

    def wait(self, pred, timeout=None):
        end = time.monotonic() + (WAIT_S if timeout is None else timeout)
        with self.lock:
            while True:
                m = self._take(pred)
                if m is not None:
                    return m
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)

    def wait_type(self, mtype, timeout=None, lsid=None, any_ccid=False):
        def pred(m):
            if m.type != mtype:
                return False
            if not any_ccid and self.ccid and m.ccid != self.ccid and mtype != MSG["SCCRQ"]:
                return False
            return lsid is None or m.int(A_RSID) == lsid
        return self.wait(pred, timeout)

    def wait_until(self, cond, timeout):
        end = time.monotonic() + (WAIT_S if timeout is None else timeout)
        with self.lock:
            while not cond():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(min(left, 0.1))
            return True

    def wait_acked(self, timeout=None):
        return self.wait_until(lambda: not self.unacked, timeout)

    # ---- scenarios' building blocks ----
    def reset_conn(self):
        with self.lock:
            self.ccid = random.randrange(1, 1 << 32)
            self.peer_ccid = 0
            self.ns = self.nr = self.una = 0
            self.unacked = []
            self.sessions = {}
            self.counts = {}
            self.remote = self.remote0

    def connect(self, rws=None, tb=None, v2=False, host=None, mods=None, timeout=None,
                scccn=True):
        """SCCRQ to the listener, SCCRP (from the tunnel's own port), SCCCN."""
        self.reset_conn()
        self.send(MSG["SCCRQ"], self.sccrx_avps(rws, tb, v2, host), ccid=0, mods=mods)
        m = self.wait(lambda m: m.ccid == self.ccid and m.type in (MSG["SCCRP"], MSG["StopCCN"]),
                      timeout)
        if m is None:
            raise PeerError("no SCCRP")
        if m.type == MSG["SCCRP"] and scccn:
            self.send(MSG["SCCCN"])
        return m

    def accept(self, rws=None, timeout=None, mods=None):
        """Answers the other side's SCCRQ (it opens): SCCRP, then its SCCCN."""
        self.reset_conn()
        q = self.wait_type(MSG["SCCRQ"], timeout)
        if q is None:
            raise PeerError("no SCCRQ")
        with self.lock:
            self.peer_ccid = q.int(A_CCID) or 0
            self.remote = q.src
            self.nr = (q.ns + 1) & 0xFFFF
        self.send(MSG["SCCRP"], self.sccrx_avps(rws), mods=mods)
        if mods:
            return q, None	# malformed on purpose: what comes back is the caller's
        c = self.wait_type(MSG["SCCCN"], timeout)
        if c is None:
            raise PeerError("no SCCCN")
        return q, c

    def icrq(self, serial=True, iccn=True, lsid=None, mods=None, timeout=None):
        s = Session(lsid or self.new_sid())
        with self.lock:
            self.sessions[s.lsid] = s
        avps = self.session_avps(MSG["ICRQ"], s, serial)
        self.send(MSG["ICRQ"], avps, mods=mods)
        m = self.wait(lambda m: m.type in (MSG["ICRP"], MSG["CDN"]) and m.int(A_RSID) == s.lsid,
                      timeout)
        if m is None:
            return s, None
        if m.type == MSG["ICRP"]:
            s.rsid = m.int(A_LSID) or 0
            s.state = "wait-connect"
            if iccn:
                self.send(MSG["ICCN"], self.session_avps(MSG["ICCN"], s))
                s.state = "established"
        else:
            s.state = "closed"
            s.rsid = m.int(A_LSID) or 0
        return s, m

    def state(self):
        return {"ccid": self.ccid, "peer_ccid": self.peer_ccid, "ns": self.ns, "nr": self.nr,
                "una": self.una, "unacked": len(self.unacked), "counts": self.counts,
                "dup": self.dup, "ooo": self.ooo, "dropped": self.dropped, "zlb_rx": self.zlb_rx,
                "inbox": [m.name for m in self.inbox],
                "sessions": [s.json() for s in self.sessions.values()]}

    def close(self):
        self.closed = True
        self.rx.join(1)
        self.sock.close()


# ---- the CLI -------------------------------------------------------------

def addr(text, port=1701):
    if text.startswith("["):
        h, _, p = text[1:].partition("]")
        return h, int(p[1:]) if p else port
    if text.count(":") == 1:
        h, _, p = text.partition(":")
        return h, int(p)
    return text, port


def mtype_of(text):
    if text in MSG:
        return MSG[text]
    for k, v in MSG.items():
        if k.lower() == text.lower():
            return v
    return int(text)


def vt(text):
    """'T' or 'V:T' -> (vendor, type)"""
    p = text.split(":")
    return (int(p[0]), int(p[1])) if len(p) == 2 else (0, int(p[0]))


def parse_mods(kv):
    mods = []
    for k, v in kv:
        if k == "omit":
            mods.append(("omit", vt(v)))
        elif k in ("set", "pad", "len", "mbit"):
            head, _, last = v.rpartition(":")
            val = bytes.fromhex(last) if k == "set" else int(last)
            mods.append((k, vt(head) + (val,)))
        elif k in ("extra", "first"):
            ven, t, m, h = (v.split(":") + [""])[:4]
            mods.append((k, Avp(int(t), bytes.fromhex(h), m == "1", int(ven))))
        elif k == "tail":
            mods.append(("tail", bytes.fromhex(v)))
    return mods


def serve(p, cmd, args):
    kv = [tuple(a.split("=", 1)) if "=" in a else (a, "") for a in args]
    o = dict(kv)
    mods = parse_mods(kv)
    to = float(o.get("timeout", WAIT_S))
    if cmd == "connect":
        m = p.connect(int(o["rws"]) if "rws" in o else None,
                      int(o["tb"], 16) if "tb" in o else None, o.get("v2") == "1",
                      o.get("host"), mods, to, o.get("scccn", "1") == "1")
        return {"ccid": p.ccid, "peer_ccid": p.peer_ccid, "reply": m.json()}
    if cmd == "accept":
        q, c = p.accept(int(o["rws"]) if "rws" in o else None, to, mods)
        return {"ccid": p.ccid, "peer_ccid": p.peer_ccid, "sccrq": q.json(),
                "scccn": c.json() if c else None}
    if cmd == "icrq":
        s, m = p.icrq(o.get("serial", "1") == "1", o.get("iccn", "1") == "1",
                      int(o["lsid"]) if "lsid" in o else None, mods, to)
        return {"session": s.json(), "reply": m.json() if m else None}
    if cmd == "send":
        mt = mtype_of(args[0])
        lsid = int(o["lsid"]) if "lsid" in o else None
        s = p.sessions.get(lsid) if lsid is not None else None
        if s is None and lsid is not None:
            s = Session(lsid)
        if s is not None and "rsid" in o:
            s = Session(s.lsid)
            s.rsid = int(o["rsid"])
        avps = p.std_avps(mt, s)
        kw = {k: int(o[k]) for k in ("ccid", "ns", "nr") if k in o}
        data = p.send(mt, avps, to=addr(o["to"]) if "to" in o else None, mods=mods, **kw)
        return {"ns": struct.unpack("!H", data[8:10])[0], "len": len(data)}
    if cmd == "wait":
        m = p.wait_type(mtype_of(args[0]), to, int(o["lsid"]) if "lsid" in o else None,
                        o.get("any") == "1")
        if m is None:
            raise PeerError("no %s within %s s" % (args[0], to))
        if o.get("peek") == "1":
            with p.lock:
                p.inbox.insert(0, m)
        return {"msg": m.json()}
    if cmd == "acked":
        t0 = time.monotonic()
        if not p.wait_acked(to):
            raise PeerError("unacknowledged: %d (ns %d, una %d)" % (len(p.unacked), p.ns, p.una))
        return {"ns": p.ns, "ms": int((time.monotonic() - t0) * 1000)}
    if cmd == "count":
        name, n = NAME[mtype_of(args[0])], int(args[1])
        t0 = time.monotonic()
        ok = p.wait_until(lambda: p.counts.get(name, 0) >= n, to)
        got = p.counts.get(name, 0)
        if not ok:
            raise PeerError("%d %s of %d within %s s" % (got, name, n, to))
        return {"count": got, "ms": int((time.monotonic() - t0) * 1000)}
    if cmd == "set":
        for k, v in kv:
            if k == "ooo":
                p.ooo_ack = v == "ack"
            elif k in ("ack", "cdn_echo", "auto_icrp", "rtx"):
                setattr(p, k, v == "1")
        return {}
    if cmd == "drop":
        with p.lock:
            p.drop_n = int(args[0])
        return {}
    if cmd == "disappear":
        p.gone = True
        return {}
    if cmd == "state":
        with p.lock:
            return p.state()
    if cmd == "clear":
        with p.lock:
            p.inbox = []
        return {}
    raise PeerError("unknown command " + cmd)


def main():
    import argparse
    ap = argparse.ArgumentParser(description="scripted L2TPv3 peer")
    sub = ap.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("serve")
    q.add_argument("--local", required=True)
    q.add_argument("--remote", required=True)
    q.add_argument("--rws", type=int, default=16)
    q.add_argument("--host", default="pypeer")
    a = ap.parse_args()
    p = Peer(addr(a.local), addr(a.remote), a.rws, a.host)
    print(json.dumps({"ok": True, "ready": True}), flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "quit":
            break
        try:
            r = serve(p, w[0], w[1:])
            r["ok"] = True
        except (PeerError, ValueError, KeyError, IndexError, OSError) as e:
            r = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(r), flush=True)
    p.close()


if __name__ == "__main__":
    main()
