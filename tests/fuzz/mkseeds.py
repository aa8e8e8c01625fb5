#!/usr/bin/env python3
"""tests/fuzz/mkseeds.py DIR [PCAP...] - seed scripts for fuzz_engine.

Typical exchanges with us as responder and as initiator (SCCRQ, SCCRP,
SCCCN, HELLO, ICRQ/ICRP/ICCN, OCRQ, CDN, SLI, WEN, StopCCN, ZLB), in the
script format of fuzz_engine.c, and every L2TPv3 control message found in
the given captures (L2TP over IP or UDP port 1701) replayed against a
responder with fixed-up headers."""
import os
import struct
import sys

M = 0x8000


def avp(t, v, m=True, vendor=0):
    return struct.pack("!HHH", (M if m else 0) | (6 + len(v)), vendor, t) + v


def msg(mtype, avps, ccid=0, ns=0, nr=0, auth=False):
    """auth: a zeroed HMAC-MD5 Message Digest AVP after the Message Type,
    which fuzz_engine's 0x04 record fills in."""
    digest = avp(59, bytes(17)) if auth else b""
    body = avp(0, struct.pack("!H", mtype)) + digest + b"".join(avps)
    return struct.pack("!HHIHH", 0xC803, 12 + len(body), ccid, ns, nr) + body


def u16(v): return struct.pack("!H", v)
def u32(v): return struct.pack("!I", v)


SCCRX = [avp(7, b"peer"), avp(60, u32(0x0a000002)), avp(61, u32(0x55667788)),
         avp(62, u16(5) + u16(4)), avp(10, u16(16), m=False)]
SCCRQ = msg(1, SCCRX + [avp(5, struct.pack("!Q", 7))])
SCCRP = msg(2, SCCRX)
SCCCN = msg(3, [])
HELLO = msg(6, [])
STOPCCN = msg(4, [avp(1, u16(1)), avp(61, u32(0x55667788))])
ZLB = struct.pack("!HHIHH", 0xC803, 12, 0, 0, 0)
SESS = [avp(63, u32(0x1000)), avp(64, u32(0)), avp(68, u16(5)), avp(66, b"circuit"),
        avp(71, u16(3)), avp(15, u32(1))]
ICRQ = msg(10, SESS + [avp(65, bytes(8)), avp(69, u16(1))])
ICRQ_NOSERIAL = msg(10, SESS[:-1])
ICRQ_DEPI = msg(10, SESS + [avp(15, u32(9), vendor=4491)])
OCRQ = msg(7, SESS)
ICCN = msg(12, [avp(63, u32(0x1000)), avp(64, u32(1)), avp(71, u16(1))])
ICRP = msg(11, [avp(63, u32(0x1000)), avp(64, u32(1)), avp(71, u16(1)), avp(69, u16(0))])
CDN = msg(14, [avp(63, u32(0x1000)), avp(64, u32(1)), avp(1, u16(3))])
SLI = msg(16, [avp(63, u32(0x1000)), avp(64, u32(1)), avp(71, u16(0))])
WEN = msg(15, [avp(63, u32(0x1000)), avp(64, u32(1)), avp(34, bytes(26))])
MALFORMED = msg(12, [avp(63, b"\x00\x01"), avp(64, u32(1))])


def dg(b, fix=True):
    return bytes([1 if fix else 0]) + struct.pack("!H", len(b)) + b


def sdg(b):
    """Fixed up and signed by the far end (0x04)."""
    return bytes([4]) + struct.pack("!H", len(b)) + b


NONCE = avp(73, bytes(range(1, 17)))
A_SCCRQ = msg(1, SCCRX + [NONCE], auth=True)
A_SCCRP = msg(2, SCCRX + [NONCE], auth=True)
A_SCCCN = msg(3, [], auth=True)
A_HELLO = msg(6, [], auth=True)
A_ICRQ = msg(10, SESS, auth=True)
A_ICRP = msg(11, [ICRP[20:]], auth=True)
A_ICCN = msg(12, [ICCN[20:]], auth=True)
A_CDN = msg(14, [CDN[20:]], auth=True)
A_STOPCCN = msg(4, [STOPCCN[20:]], auth=True)


def tick(n): return bytes([2, n])
def op(o): return bytes([3, o])


def scripts():
    yield "responder-session", bytes([0x10]) + dg(SCCRQ, False) + tick(1) + dg(SCCCN) + \
        tick(2) + dg(ICRQ) + tick(1) + dg(ICCN) + tick(10) + dg(HELLO) + dg(SLI) + \
        dg(WEN) + dg(CDN) + tick(5) + dg(STOPCCN) + tick(200)
    yield "responder-nolossy", bytes([0x50]) + dg(SCCRQ, False) + dg(SCCCN) + dg(ICRQ_NOSERIAL) + \
        dg(ICRQ_DEPI) + dg(OCRQ) + dg(MALFORMED) + dg(ZLB) + tick(100) + tick(255) + tick(255)
    yield "initiator", bytes([0x91]) + dg(SCCRP) + tick(1) + op(2) + tick(1) + dg(ICRP) + \
        op(4) + op(5) + tick(3) + dg(HELLO) + op(3) + dg(CDN) + op(1) + tick(255)
    yield "initiator-auth", bytes([0x03]) + dg(SCCRP) + tick(20) + tick(255) + tick(255)
    yield "responder-auth-session", bytes([0x12]) + sdg(A_SCCRQ) + tick(1) + sdg(A_SCCCN) + \
        sdg(A_ICRQ) + tick(1) + sdg(A_ICCN) + sdg(A_HELLO) + dg(HELLO) + sdg(A_CDN) + \
        tick(5) + sdg(A_STOPCCN) + tick(200)
    yield "initiator-auth-session", bytes([0x0b]) + sdg(A_SCCRP) + tick(1) + op(4) + op(2) + \
        tick(1) + sdg(A_ICRP) + op(5) + sdg(A_HELLO) + op(1) + tick(255)
    yield "initiator-timeout", bytes([0x21]) + tick(255) + tick(255) + tick(255) + tick(255)
    yield "responder-window", bytes([0x20]) + dg(SCCRQ, False) + dg(SCCCN) + \
        b"".join(dg(ICRQ) for _ in range(8)) + tick(3) + dg(STOPCCN)


def pcap_messages(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    pos = 24
    while pos + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[pos:pos + 16])
        pkt = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        off = {1: 14, 113: 16, 101: 0, 228: 0}.get(linktype, 14)
        if linktype == 1 and len(pkt) > 14 and pkt[12:14] == b"\x81\x00":
            off = 18
        ip = pkt[off:]
        if len(ip) < 20 or ip[0] >> 4 != 4:
            continue
        hl = (ip[0] & 15) * 4
        proto = ip[9]
        if proto == 115 and len(ip) >= hl + 4 and ip[hl:hl + 4] == b"\0\0\0\0":
            yield ip[hl + 4:]
        elif proto == 17 and len(ip) >= hl + 8 and 1701 in struct.unpack("!HH", ip[hl:hl + 4]):
            yield ip[hl + 8:]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, s in scripts():
        with open(os.path.join(out, name), "wb") as f:
            f.write(s)
    for cap in sys.argv[2:]:
        msgs = [m for m in pcap_messages(cap) if len(m) >= 12 and m[0] & 0x80]
        base = os.path.basename(cap)
        for i in range(0, len(msgs), 12):
            chunk = msgs[i:i + 12]
            s = bytes([0x20]) + dg(SCCRQ, False) + dg(SCCCN) + b"".join(dg(m) for m in chunk)
            with open(os.path.join(out, "%s-%03d" % (base, i)), "wb") as f:
                f.write(s)


main()
