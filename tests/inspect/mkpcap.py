#!/usr/bin/env python3
"""tests/inspect/mkpcap.py - crafted captures for l2tpv3-inspect (stdlib only).

usage: mkpcap.py OUTDIR

Writes into OUTDIR:
  violations.pcap, violations.expected
      one conversation per fault, each fault exactly once per line of
      violations.expected ("FRAME<TAB>KIND"); lint it with --secret s3cret
  clean-*.pcap, clean-*.pcapng, clean.expected
      the same clean conversation over every link type, address family and
      encapsulation the tool reads; clean.expected: "FILE<TAB>MESSAGES"
  port1702.pcap     the clean conversation on UDP port 1702 (--udp-port)
  auth.pcap         authenticated conversation (MD5 one way, SHA-1 the
                    other), hidden AVPs, explicit ACKs; secret s3cret
  fragments.pcap    L2TP in IPv4/IPv6 fragments and a snap-length cut
"""
import hashlib
import hmac
import os
import struct
import sys

SECRET = b"s3cret"

# message types (RFC 3931 3.1)
SCCRQ, SCCRP, SCCCN, STOPCCN, HELLO = 1, 2, 3, 4, 6
ICRQ, ICRP, ICCN, CDN, SLI, ACK = 10, 11, 12, 14, 16, 20
ZLB = None

# AVP types
RESULT, HOST, WINDOW, SERIAL, RV, DIGEST = 1, 7, 10, 15, 36, 59
ROUTER_ID, CCID, PW_CAPS, LSID, RSID = 60, 61, 62, 63, 64
COOKIE, END_ID, PW_TYPE, CIRCUIT, NONCE = 65, 66, 68, 71, 73

LINKTYPE = {"eth": 1, "null": 0, "raw": 101, "loop": 108, "sll": 113,
            "ipv4": 228, "ipv6": 229, "sll2": 276}


def u16(v):
    return struct.pack("!H", v)


def u32(v):
    return struct.pack("!I", v)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip_bytes(addr):
    if ":" in addr:
        import ipaddress
        return ipaddress.IPv6Address(addr).packed
    return bytes(int(x) for x in addr.split("."))


# ---- L2TP (built by hand on purpose: the tool's codec must not check itself) ----

def avp(t, value=b"", m=True, h=False, vendor=0, length=None):
    ln = 6 + len(value) if length is None else length
    return struct.pack("!HHH", (0x8000 if m else 0) | (0x4000 if h else 0) | ln,
                       vendor, t) + value


def l2tp(mtype, avps, ccid, ns, nr, mt_m=True, flags=0xc803, length_delta=0,
         first=None, digest=None):
    """A control message; digest: (dtype, key, nonces) to sign it."""
    body = b""
    if first is not None:
        body += first
    elif mtype is not None:
        body += avp(0, u16(mtype), m=mt_m)
    dig_off = None
    if digest is not None:
        dlen = 16 if digest[0] == 0 else 20
        dig_off = 12 + len(body) + 7
        body += avp(DIGEST, bytes([digest[0]]) + bytes(dlen))
    body += b"".join(avps)
    msg = bytearray(struct.pack("!HHIHH", flags, 12 + len(body) + length_delta, ccid,
                                ns, nr) + body)
    if digest is not None:
        dtype, key, nonces = digest
        mac = hmac.new(key, nonces + bytes(msg),
                       hashlib.md5 if dtype == 0 else hashlib.sha1).digest()
        msg[dig_off:dig_off + len(mac)] = mac
    return bytes(msg)


def hide(attr, value, rv):
    """RFC 3931 5.3: original length + value, MD5 chained over the key and RV."""
    key = hmac.new(SECRET, b"\x01", hashlib.md5).digest()
    plain = u16(len(value)) + value
    out, prev = b"", None
    for i in range(0, len(plain), 16):
        b = hashlib.md5((u16(attr) + key + rv) if prev is None else (key + prev)).digest()
        chunk = bytes(p ^ k for p, k in zip(plain[i:i + 16], b))
        out += chunk
        prev = chunk
    return out


# ---- IP, UDP, link ----

def ip4(src, dst, proto, payload, ident=1, frag=0x4000):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, frag, 64, proto, 0,
                    ip_bytes(src), ip_bytes(dst))
    return h[:10] + u16(csum(h)) + h[12:] + payload


def ip6(src, dst, nh, payload, ext=()):
    chain = b""
    first = nh
    for t, data in reversed(ext):
        chain = bytes([first]) + data + chain
        first = t
    body = chain + payload
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), first, 64, ip_bytes(src),
                       ip_bytes(dst)) + body


def udp(src, dst, sport, dport, payload, zero_csum=False):
    ln = 8 + len(payload)
    if ":" in src:
        pseudo = ip_bytes(src) + ip_bytes(dst) + u32(ln) + b"\0\0\0\x11"
    else:
        pseudo = ip_bytes(src) + ip_bytes(dst) + b"\0\x11" + u16(ln)
    hdr = struct.pack("!HHHH", sport, dport, ln, 0)
    c = 0 if zero_csum else (csum(pseudo + hdr + payload) or 0xffff)
    return struct.pack("!HHHH", sport, dport, ln, c) + payload


def link(kind, ippkt, vlans=()):
    v6 = ippkt[0] >> 4 == 6
    et = 0x86dd if v6 else 0x0800
    if kind == "eth":
        tags = b"".join(u16(tpid) + u16(vid) for tpid, vid in vlans)
        return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + tags + u16(et) + ippkt
    if kind == "sll":
        return u16(0) + u16(1) + u16(6) + b"\x02\0\0\0\0\x01\0\0" + u16(et) + ippkt
    if kind == "sll2":
        return u16(et) + u16(0) + u32(3) + u16(1) + b"\0\x06" + b"\x02\0\0\0\0\x01\0\0" + ippkt
    if kind == "null":	# host byte order of a little-endian BSD: AF_INET 2, AF_INET6 28
        return struct.pack("<I", 28 if v6 else 2) + ippkt
    if kind == "loop":	# network byte order: AF_INET6 24 (OpenBSD)
        return struct.pack("!I", 24 if v6 else 2) + ippkt
    return ippkt


class Capture:
    """Frames in pcap (us or ns) or pcapng; frame numbers count from 1."""

    def __init__(self, kind="eth", fmt="pcap", nano=False, vlans=()):
        self.kind, self.fmt, self.nano, self.vlans = kind, fmt, nano, vlans
        self.frames = []
        self.t = 1700000000.0
        self.us = 0		# microseconds since t, exact

    def add(self, ippkt, dt=0.01, snap=None, raw=None):
        self.us += int(round(dt * 1e6))
        data = raw if raw is not None else link(self.kind, ippkt, self.vlans)
        self.frames.append((self.us, data, snap))
        return len(self.frames)

    def write(self, path):
        lt = LINKTYPE[self.kind]
        with open(path, "wb") as f:
            if self.fmt == "pcapng":
                f.write(self._pcapng(lt))
                return
            f.write(struct.pack("<IHHiIII", 0xa1b23c4d if self.nano else 0xa1b2c3d4,
                                2, 4, 0, 0, 65535, lt))
            for us, data, snap in self.frames:
                sec = int(self.t) + us // 1000000
                frac = us % 1000000 * (1000 if self.nano else 1)
                cap = data[:snap] if snap else data
                f.write(struct.pack("<IIII", sec, frac, len(cap), len(data)) + cap)

    def _pcapng(self, lt):
        def block(btype, body):
            body += b"\0" * (-len(body) % 4)
            n = 12 + len(body)
            return struct.pack("<II", btype, n) + body + struct.pack("<I", n)
        out = block(0x0a0d0d0a, struct.pack("<IHHq", 0x1a2b3c4d, 1, 0, -1))
        out += block(1, struct.pack("<HHI", lt, 0, 65535))
        for rel, data, snap in self.frames:
            us = int(self.t) * 1000000 + rel
            out += block(6, struct.pack("<IIIII", 0, us >> 32, us & 0xffffffff,
                                        len(data), len(data)) + data)
        return out


class Peer:
    def __init__(self, ip, port, ccid, host, caps=(5,), nonce=None, dtype=0):
        self.ip, self.port, self.ccid, self.host = ip, port, ccid, host
        self.caps, self.nonce, self.dtype = caps, nonce, dtype
        self.ns = 0		# next Ns to send
        self.nr = 0		# next Ns expected from the peer
        self.knows_peer = False


class Conv:
    """Two LCCEs that number, acknowledge and sign their messages correctly
    unless told otherwise; every send() returns the frame number."""

    def __init__(self, cap, a, b, over_ip=False, auth=False):
        self.cap, self.a, self.b, self.over_ip, self.auth = cap, a, b, over_ip, auth
        self.last = {}

    def other(self, p):
        return self.b if p is self.a else self.a

    def _digest(self, frm, to, mtype):
        if not self.auth:
            return None
        key = hmac.new(SECRET, b"\x02", hashlib.md5).digest()
        if mtype == SCCRQ:
            nonces = b""
        else:
            nonces = frm.nonce + to.nonce
        return (frm.dtype, key, nonces)

    def wire(self, frm, payload, dt=0.01, zero_csum=False):
        to = self.other(frm)
        if self.over_ip:
            payload = b"\0\0\0\0" + payload
            if ":" in frm.ip:
                pkt = ip6(frm.ip, to.ip, 115, payload, ext=getattr(self, "ext", ()))
            else:
                pkt = ip4(frm.ip, to.ip, 115, payload)
        else:
            seg = udp(frm.ip, to.ip, frm.port, to.port, payload, zero_csum)
            if ":" in frm.ip:
                pkt = ip6(frm.ip, to.ip, 17, seg, ext=getattr(self, "ext", ()))
            else:
                pkt = ip4(frm.ip, to.ip, 17, seg)
        return self.cap.add(pkt, dt)

    def send(self, frm, mtype, avps=(), *, ns=None, nr=None, ccid=None, sign=True,
             dt=0.01, zero_csum=False, **kw):
        to = self.other(frm)
        seq = mtype not in (ZLB, ACK)
        if ccid is None:
            ccid = to.ccid if frm.knows_peer else 0
        ns = frm.ns if ns is None else ns
        nr = frm.nr if nr is None else nr
        dig = self._digest(frm, to, mtype) if sign and mtype is not ZLB else None
        payload = l2tp(mtype, avps, ccid, ns, nr, digest=dig, **kw)
        if mtype == SCCRQ:
            to.knows_peer = True
        if mtype == SCCRP:
            to.knows_peer = True
        if seq and ns == frm.ns:
            frm.ns = (frm.ns + 1) & 0xffff
            to.nr = frm.ns
        self.last[id(frm)] = (mtype, avps, ccid, ns, kw)
        return self.wire(frm, payload, dt, zero_csum)

    def resend(self, frm, dt):
        """A retransmission of frm's last message: same Ns, the current Nr."""
        mtype, avps, ccid, ns, kw = self.last[id(frm)]
        payload = l2tp(mtype, avps, ccid, ns, frm.nr,
                       digest=self._digest(frm, self.other(frm), mtype), **kw)
        return self.wire(frm, payload, dt)

    # ---- the usual messages ----

    def sccrx(self, frm, mtype, caps=None):
        avps = [avp(HOST, frm.host.encode()), avp(WINDOW, u16(16)),
                avp(ROUTER_ID, ip_bytes("10.255.0.%d" % (frm.ccid & 0xff))),
                avp(CCID, u32(frm.ccid)),
                avp(PW_CAPS, b"".join(u16(c) for c in (caps or frm.caps)))]
        if self.auth:
            avps.append(avp(NONCE, frm.nonce))
        return self.send(frm, mtype, avps)

    def ack(self, frm, **kw):
        return self.send(frm, ACK if self.auth else ZLB, **kw)

    def handshake(self):
        self.sccrx(self.a, SCCRQ)
        self.sccrx(self.b, SCCRP)
        self.send(self.a, SCCCN)
        self.ack(self.b)

    def icrq(self, frm, lsid, pw=5, hidden=False, drop=(), cookie=b""):
        avps = [avp(LSID, u32(lsid)), avp(RSID, u32(0)), avp(PW_TYPE, u16(pw)),
                avp(CIRCUIT, u16(3))]
        if cookie:
            avps.append(avp(COOKIE, cookie))
        tail = [avp(SERIAL, u32(lsid * 7)), avp(END_ID, b"pw-%d" % lsid)]
        if hidden:
            rv = hashlib.md5(b"rv%d" % lsid).digest()
            avps.append(avp(RV, rv))
            tail = [avp(SERIAL, hide(SERIAL, u32(lsid * 7), rv), h=True),
                    avp(END_ID, hide(END_ID, b"pw-%d" % lsid, rv), h=True)]
        avps += tail
        avps = [a for i, a in enumerate(avps) if i not in drop]
        return self.send(frm, ICRQ, avps)

    def icrp(self, frm, lsid, rsid, cookie=b""):
        avps = [avp(LSID, u32(lsid)), avp(RSID, u32(rsid)), avp(CIRCUIT, u16(3))]
        if cookie:
            avps.append(avp(COOKIE, cookie))
        return self.send(frm, ICRP, avps)

    def iccn(self, frm, lsid, rsid):
        return self.send(frm, ICCN, [avp(LSID, u32(lsid)), avp(RSID, u32(rsid))])

    def cdn(self, frm, lsid, rsid, result=3):
        return self.send(frm, CDN, [avp(RESULT, u16(result) + u16(0)), avp(LSID, u32(lsid)),
                                    avp(RSID, u32(rsid))])

    def stopccn(self, frm, with_ccid=True):
        avps = [avp(RESULT, u16(1) + u16(0) + b"bye")]
        if with_ccid:
            avps.append(avp(CCID, u32(frm.ccid)))
        return self.send(frm, STOPCCN, avps)


def data_frame(cv, frm, sid, cookie=b"", body=b"\xaa" * 20):
    """A data message: over IP the Session ID leads (no zero word)."""
    to = cv.other(frm)
    if cv.over_ip:
        payload = u32(sid) + cookie + body
        pkt = ip6(frm.ip, to.ip, 115, payload) if ":" in frm.ip else ip4(frm.ip, to.ip, 115, payload)
    else:
        seg = udp(frm.ip, to.ip, frm.port, to.port,
                  u16(0x0003) + u16(0) + u32(sid) + cookie + body)
        pkt = ip6(frm.ip, to.ip, 17, seg) if ":" in frm.ip else ip4(frm.ip, to.ip, 17, seg)
    return cv.cap.add(pkt)


# ---- clean conversations: every link type ----

def clean_conversation(cap, v6=False, over_ip=False, port=1701, extras=False, ext=()):
    a_ip, b_ip = ("2001:db8::1", "2001:db8::2") if v6 else ("192.0.2.1", "192.0.2.2")
    a = Peer(a_ip, 50000, 0x0a0a0a0a, "lac")
    b = Peer(b_ip, port, 0x0b0b0b0b, "lns")
    cv = Conv(cap, a, b, over_ip=over_ip)
    cv.ext = ext
    cv.sccrx(a, SCCRQ)
    b.port = 40001		# the responder answers from an ephemeral port (4.1.2.2)
    cv.sccrx(b, SCCRP)
    cv.send(a, SCCCN)
    cv.ack(b)
    cv.icrq(a, 1001)
    cv.icrp(b, 2001, 1001)
    cv.iccn(a, 1001, 2001)
    cv.ack(b)
    data_frame(cv, a, 2001)
    data_frame(cv, b, 1001)
    cv.send(b, HELLO)
    cv.ack(a)
    cv.cdn(a, 1001, 2001)
    cv.ack(b)
    cv.stopccn(a)
    cv.ack(b)
    n = 14
    if extras and not over_ip:
        # an L2TPv2 HELLO and a DNS query on the same hosts: noted / ignored
        cv.wire(a, struct.pack("!HHHHHH", 0xc802, 20, 1, 1, 9, 9) + avp(0, u16(HELLO)))
        cap.add(ip4(a_ip, b_ip, 17, udp(a_ip, b_ip, 5353, 53, b"\0" * 12)))
        n += 1
    return n


def unanswered_hello():
    """A connection up, and B's HELLO, which A never takes (its Nr stays)."""
    cap = Capture()
    a, b = Peer("192.0.2.1", 50000, 0x0a0a0a0a, "lac"), Peer("192.0.2.2", 1701, 0x0b0b0b0b, "lns")
    cv = Conv(cap, a, b)
    cv.handshake()
    hello_ns = b.ns
    cv.send(b, HELLO)
    a.nr = hello_ns
    return cap, cv, a, b


def write_clean(out):
    variants = [
        ("clean-eth-udp4.pcap", dict(kind="eth"), dict(extras=True)),
        ("clean-eth-qinq-udp4.pcapng", dict(kind="eth", fmt="pcapng",
                                            vlans=((0x88a8, 10), (0x8100, 20))), {}),
        ("clean-eth-udp6.pcap", dict(kind="eth"), dict(v6=True)),
        ("clean-eth-ip4-nsec.pcap", dict(kind="eth", nano=True), dict(over_ip=True)),
        ("clean-sll-udp6.pcap", dict(kind="sll"), dict(v6=True)),
        ("clean-sll2-ip4.pcap", dict(kind="sll2"), dict(over_ip=True)),
        ("clean-raw-udp6ext.pcap", dict(kind="raw"),
         dict(v6=True, ext=((0, b"\0" + b"\x01\x04\0\0\0\0"), (60, b"\0" + b"\x01\x04\0\0\0\0")))),
        ("clean-ipv4-ip4.pcap", dict(kind="ipv4"), dict(over_ip=True)),
        ("clean-ipv6-ip6.pcapng", dict(kind="ipv6", fmt="pcapng"), dict(v6=True, over_ip=True)),
        ("clean-null-udp4.pcap", dict(kind="null"), {}),
        ("clean-loop-ip6.pcap", dict(kind="loop"), dict(v6=True, over_ip=True)),
    ]
    with open(os.path.join(out, "clean.expected"), "w") as exp:
        for name, capkw, convkw in variants:
            cap = Capture(**capkw)
            n = clean_conversation(cap, **convkw)
            cap.write(os.path.join(out, name))
            exp.write("%s\t%d\n" % (name, n))
    # port 1702: data messages and a broken control message before the
    # conversation are L2TP only for --udp-port 1702; the conversation itself
    # is recognised either way (a control header that fills its datagram)
    cap = Capture()
    a_ip, b_ip = "192.0.2.1", "192.0.2.2"
    for payload in (u16(3) + u16(0) + u32(7) + b"\xaa" * 20, u16(3) + u16(0) + u32(7) + b"\xbb" * 20,
                    l2tp(HELLO, [], 0x0b0b0b0b, 0, 0, length_delta=4)):
        cap.add(ip4(a_ip, b_ip, 17, udp(a_ip, b_ip, 50000, 1702, payload)))
    clean_conversation(cap, port=1702)
    cap.write(os.path.join(out, "port1702.pcap"))
    # captured before a lossy hop: B's HELLO and both its copies never reach
    # A, whose StopCCN (Nr still at the HELLO) ends the connection
    cap, cv, a, b = unanswered_hello()
    cv.resend(b, 1.0)
    cv.resend(b, 2.0)
    cv.send(a, STOPCCN, [avp(RESULT, u16(1) + u16(0) + b"bye"), avp(CCID, u32(a.ccid))], dt=1.5)
    cv.ack(b)
    cap.write(os.path.join(out, "lost-before-stopccn.pcap"))
    # the same, and B sends one more copy of its HELLO after A's StopCCN,
    # which A (closing) no longer takes; A's StopCCN is retransmitted once
    cap, cv, a, b = unanswered_hello()
    cv.resend(b, 0.2)
    cv.send(a, STOPCCN, [avp(RESULT, u16(1) + u16(0) + b"bye"), avp(CCID, u32(a.ccid))], dt=0.1)
    cv.resend(b, 0.3)
    cv.resend(a, 0.1)
    cv.ack(b)
    cap.write(os.path.join(out, "copy-after-stopccn.pcap"))


# ---- one conversation per fault ----

class Expect:
    def __init__(self):
        self.lines = []

    def __call__(self, frame, kind):
        self.lines.append("%d\t%s" % (frame, kind))


def pair(n, **kw):
    return (Peer("10.0.%d.1" % n, 50000 + n, 0x1000 + n, "a%d" % n, **kw),
            Peer("10.0.%d.2" % n, 1701, 0x2000 + n, "b%d" % n, **kw))


def header_faults(cap, ex):
    a, b = pair(1)
    cv = Conv(cap, a, b)
    body = avp(0, u16(HELLO))
    ex(cv.wire(a, b"\xc8\x03\0\x08\0\0\0\x01"), "short-header")
    ex(cv.wire(a, struct.pack("!HHIHH", 0xc804, 12 + len(body), 1, 0, 0) + body), "bad-version")
    ex(cv.wire(a, struct.pack("!HHIHH", 0x8803, 12 + len(body), 1, 0, 0) + body), "no-length-bit")
    ex(cv.wire(a, struct.pack("!HHIHH", 0xc003, 12 + len(body), 1, 0, 0) + body), "no-seq-bit")
    ex(cv.wire(a, struct.pack("!HHIHH", 0xc803, 16 + len(body), 1, 0, 0) + body),
       "length-mismatch")


def avp_faults(cap, ex):
    a, b = pair(2)
    cv = Conv(cap, a, b)
    cv.handshake()

    def bad(kind, *args, **kw):
        ex(cv.send(a, *args, **kw), kind)
        cv.ack(b)

    bad("first-avp-not-message-type", HELLO, [avp(0, u16(HELLO))], first=avp(HOST, b"x"))
    bad("avp-too-short", HELLO, [avp(SERIAL, b"", length=4)])
    bad("avp-overrun", HELLO, [avp(SERIAL, u32(1), length=20)])
    bad("bad-avp-length", HELLO, [avp(ROUTER_ID, b"\1\2\3")])
    bad("bad-avp-value", HELLO, [avp(LSID, u32(0))])
    bad("hidden-no-random-vector", HELLO, [avp(SERIAL, b"\0" * 6, h=True)])
    bad("duplicate-avp", HELLO, [avp(SERIAL, u32(1)), avp(SERIAL, u32(2))])
    bad("unknown-mandatory", HELLO, [avp(2, b"\0\1", vendor=4491)])
    bad("unknown-message-type", 99, [])
    cv.send(a, 98, [], mt_m=False)	# unknown with M=0: to be ignored, not a violation
    cv.ack(b)
    bad("message-type-m-bit", HELLO, [], mt_m=False)
    bad("missing-avp", ICRQ, [avp(LSID, u32(5)), avp(SERIAL, u32(1)), avp(PW_TYPE, u16(5)),
                              avp(END_ID, b"x"), avp(CIRCUIT, u16(3))])
    bad("udp-checksum-off", HELLO, [], zero_csum=True)
    cv.stopccn(a)
    cv.ack(b)


def seq_faults(cap, ex):
    a, b = pair(3)
    cv = Conv(cap, a, b)
    cv.handshake()
    a.ns += 2
    ex(cv.send(a, HELLO), "ns-gap")
    cv.ack(b)
    cv.send(a, HELLO)
    cv.ack(b)
    # a new message under the Ns of the HELLO just sent
    ex(cv.send(a, ICRQ, [avp(LSID, u32(77)), avp(RSID, u32(0)), avp(SERIAL, u32(1)),
                         avp(PW_TYPE, u16(5)), avp(END_ID, b"x"), avp(CIRCUIT, u16(3))],
               ns=a.ns - 1), "ns-reused")
    cv.ack(b)
    ex(cv.ack(b, nr=a.ns + 5), "nr-invalid")
    ex(cv.ack(b, nr=a.ns - 2), "nr-backwards")
    ex(cv.send(a, HELLO, ccid=0), "zero-ccid")
    cv.ack(b)
    # a HELLO retransmitted every second: the fourth interval must be 1.5
    # times the second (its first may have waited behind an older message)
    cv.send(a, HELLO)
    cv.resend(a, 1.0)
    cv.resend(a, 1.0)
    cv.resend(a, 1.0)
    ex(cv.resend(a, 1.0), "no-backoff")
    cv.ack(b)
    # one timer late: resent after a partial ACK (0.2 s), then 0.2 s doubling
    # with the first timer 0.2 s late; backed off, not flagged
    cv.send(a, HELLO)
    cv.resend(a, 0.209)
    cv.resend(a, 0.407)
    cv.resend(a, 0.414)
    cv.resend(a, 0.846)
    cv.ack(b)
    # the last one: retransmitted, and the peer never says a word again
    cv.send(a, HELLO)
    ex(cv.resend(a, 1.0), "unacked-retransmission")


def sccrq_backoff(cap, ex):
    a, b = pair(4)
    cv = Conv(cap, a, b)
    cv.sccrx(a, SCCRQ)
    cv.resend(a, 1.0)
    cv.resend(a, 1.0)
    ex(cv.resend(a, 1.0), "no-backoff")
    cv.sccrx(b, SCCRP)
    cv.send(a, SCCCN)
    cv.ack(b)


def state_faults(cap, ex):
    a, b = pair(5)
    cv = Conv(cap, a, b)
    cv.sccrx(a, SCCRQ)
    cv.sccrx(b, SCCRP)
    ex(cv.icrq(a, 55), "wrong-state")		# ICRQ before SCCCN
    cv.send(a, SCCCN)
    cv.ack(b)

    a, b = pair(6)
    cv = Conv(cap, a, b)
    cv.sccrx(a, SCCRQ)
    ex(cv.send(a, SCCCN, ccid=0x6666), "wrong-state")	# SCCCN without SCCRP

    a, b = pair(7)
    cv = Conv(cap, a, b)
    cv.handshake()
    ex(cv.icrp(b, 900, 777), "wrong-state")		# ICRP for no ICRQ
    cv.ack(a)
    ex(cv.stopccn(a, with_ccid=False), "missing-avp")	# 6.4: Assigned CCID MUST be there
    cv.ack(b)
    ex(cv.send(b, HELLO), "wrong-state")		# after acknowledging the StopCCN
    cv.ack(a)

    a, b = pair(8)
    cv = Conv(cap, a, b)
    cv.handshake()
    ex(cv.icrq(a, 88, pw=7), "pw-type-not-advertised")
    cv.cdn(b, 99, 88, result=14)
    cv.ack(a)
    cv.stopccn(a)
    cv.ack(b)

    a, b = pair(9)
    cv = Conv(cap, a, b)
    cv.handshake()
    cv.stopccn(a)
    ex(cv.send(a, HELLO), "wrong-state")		# after its own StopCCN
    cv.ack(b)


def auth_faults(cap, ex):
    a = Peer("10.0.10.1", 50010, 0x1010, "a10", nonce=b"A" * 16, dtype=0)
    b = Peer("10.0.10.2", 1701, 0x2010, "b10", nonce=b"B" * 16, dtype=1)
    cv = Conv(cap, a, b, auth=True)
    cv.handshake()
    ex(cv.send(b, ZLB), "digest-missing")		# 6.15: no ZLB with authentication
    cv.send(a, HELLO)
    cv.ack(b)
    frame = cv.send(a, HELLO, sign=False, first=avp(0, u16(HELLO)) + avp(DIGEST, b"\0" + b"\x55" * 16))
    ex(frame, "digest-mismatch")
    cv.ack(b)
    cv.stopccn(a)
    cv.ack(b)


def refusal_faults(cap, ex):
    # B refuses A's SCCRQ with a StopCCN that carries its Assigned CCID: the
    # ZLB that acknowledges it must go to that CCID (5.4.3), not to 0
    a, b = pair(11)
    cv = Conv(cap, a, b)
    cv.sccrx(a, SCCRQ)
    cv.stopccn(b)
    ex(cv.ack(a), "zero-ccid-ack")
    # the same, acknowledged to B's CCID: clean
    a, b = pair(12)
    cv = Conv(cap, a, b)
    cv.sccrx(a, SCCRQ)
    cv.stopccn(b)
    cv.ack(a, ccid=b.ccid)
    # a refusal without the AVP (no state made for the SCCRQ): 0 is all A has
    a, b = pair(13)
    cv = Conv(cap, a, b)
    cv.sccrx(a, SCCRQ)
    cv.stopccn(b, with_ccid=False)
    cv.ack(a)


def cookie_faults(cap, ex):
    # data checked against the cookies ICRQ/ICRP assigned (5.4.4): a peer that
    # ignores the Assigned Cookie (freeRtr) sends none; reported once per
    # session and direction
    a, b = pair(14)
    cv = Conv(cap, a, b)
    cv.handshake()
    ca, cb = bytes.fromhex("a1a2a3a4a5a6a7a8"), bytes.fromhex("b1b2b3b4")
    cv.icrq(a, 1401, cookie=ca)
    cv.icrp(b, 2401, 1401, cookie=cb)
    cv.iccn(a, 1401, 2401)
    cv.ack(b)
    data_frame(cv, a, 2401, cb)			# each with the other's cookie: clean
    data_frame(cv, b, 1401, ca)
    ex(data_frame(cv, b, 1401), "cookie-mismatch")	# none at all
    data_frame(cv, b, 1401)				# the same again: already reported
    ex(data_frame(cv, a, 2401, bytes.fromhex("0badc0de")), "cookie-mismatch")
    cv.icrq(a, 1402)				# no cookies: nothing to check
    cv.icrp(b, 2402, 1402)
    cv.iccn(a, 1402, 2402)
    cv.ack(b)
    data_frame(cv, a, 2402, ca)
    data_frame(cv, b, 1402)
    cv.stopccn(a)
    cv.ack(b)
    # over IP: a Session ID reused after CDN takes its new cookie; a message
    # that ends before the cookie
    a, b = pair(15)
    cv = Conv(cap, a, b, over_ip=True)
    cv.handshake()
    old, new = bytes.fromhex("c1c2c3c4"), bytes.fromhex("d1d2d3d4")
    cv.icrq(a, 1501, cookie=old)
    cv.icrp(b, 2501, 1501)
    cv.iccn(a, 1501, 2501)
    cv.ack(b)
    data_frame(cv, b, 1501, old)
    data_frame(cv, a, 2501)
    cv.cdn(a, 1501, 2501)
    cv.ack(b)
    cv.icrq(a, 1501, cookie=new)
    cv.icrp(b, 2502, 1501)
    cv.iccn(a, 1501, 2502)
    cv.ack(b)
    data_frame(cv, b, 1501, new)
    ex(data_frame(cv, b, 1501, body=b"\xee\xee"), "cookie-mismatch")
    cv.stopccn(a)
    cv.ack(b)


def write_violations(out):
    cap = Capture()
    ex = Expect()
    for scenario in (header_faults, avp_faults, seq_faults, sccrq_backoff, state_faults,
                     auth_faults, refusal_faults, cookie_faults):
        scenario(cap, ex)
        cap.us += 5000000
    # the capture goes on a while: an acknowledgement had all the time it needed
    cap.add(ip4("10.0.99.1", "10.0.99.2", 17, udp("10.0.99.1", "10.0.99.2", 5353, 53, b"\0" * 12)), 3)
    cap.write(os.path.join(out, "violations.pcap"))
    with open(os.path.join(out, "violations.expected"), "w") as f:
        f.write("\n".join(ex.lines) + "\n")


# ---- authentication, hidden AVPs ----

def write_auth(out):
    cap = Capture()
    a = Peer("192.0.2.1", 50000, 0x0a0a0a0a, "lac", nonce=os.urandom(16), dtype=0)
    b = Peer("192.0.2.2", 1701, 0x0b0b0b0b, "lns", nonce=os.urandom(16), dtype=1)
    cv = Conv(cap, a, b, auth=True)
    cv.handshake()
    cv.icrq(a, 1001, hidden=True)
    cv.icrp(b, 2001, 1001)
    cv.iccn(a, 1001, 2001)
    cv.ack(b)
    cv.send(b, HELLO)
    cv.ack(a)
    cv.cdn(b, 2001, 1001)
    cv.ack(a)
    cv.stopccn(a)
    cv.ack(b)
    cap.write(os.path.join(out, "auth.pcap"))


# ---- what is not decoded ----

def write_fragments(out):
    cap = Capture()
    s, d = "198.51.100.1", "198.51.100.2"
    msg = l2tp(HELLO, [avp(HOST, b"h" * 64)], 0x1234, 3, 4)
    seg = udp(s, d, 50000, 1701, msg)
    ident = 0x4242
    # UDP: the first fragment shows the port, the second only the IP ID
    cap.add(ip4(s, d, 17, seg[:48], ident=ident, frag=0x2000))
    cap.add(ip4(s, d, 17, seg[48:], ident=ident, frag=48 // 8))
    # IP protocol 115, both fragments
    p115 = b"\0\0\0\0" + msg
    cap.add(ip4(s, d, 115, p115[:40], ident=ident + 1, frag=0x2000))
    cap.add(ip4(s, d, 115, p115[40:], ident=ident + 1, frag=40 // 8))
    # IPv6 fragment header (44) in front of protocol 115
    frag_hdr = b"\0" + u16(0 | 1) + u32(7)		# offset 0, M=1
    cap.add(ip6("2001:db8::a", "2001:db8::b", 115, p115[:48], ext=((44, frag_hdr),)))
    # a whole message cut by the snap length
    cap.add(ip4(s, d, 17, udp(s, d, 50000, 1701, msg)), snap=60)
    # unrelated fragments: ignored
    other = udp(s, d, 5353, 53, b"\0" * 64)
    cap.add(ip4(s, d, 17, other[:40], ident=ident + 2, frag=0x2000))
    cap.add(ip4(s, d, 17, other[40:], ident=ident + 2, frag=40 // 8))
    cap.write(os.path.join(out, "fragments.pcap"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_clean(out)
    write_violations(out)
    write_auth(out)
    write_fragments(out)


if __name__ == "__main__":
    main()
