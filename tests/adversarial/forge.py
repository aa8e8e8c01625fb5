#!/usr/bin/env python3
"""tests/adversarial/forge.py - hand-built L2TPv3 control datagrams, as an
attacker sends them: from a real socket, or with a forged source address and
port (raw IPv4 socket, IP_HDRINCL).  Bounded in count and time, only to the
address given (a test namespace).

  forge.py sccrq --dst 192.0.2.2 [--src-net 192.0.2.0/24 | --src IP] [--sport P]
                 [--count N] [--rate R] [--tie-breaker HEX] [--nonce LEN]
                 [--digest none|bogus] [--host-name S]
  forge.py stopccn --dst IP --ccid X --sports A-B [--ns A-B] [--nr A-B]
  forge.py big --dst IP --size N
  forge.py ccid0-zlb --dst IP
  forge.py data --dst IP --dport P --src IP --sport P --session ID [--count N]

Prints "sent N" on stdout.
"""
import argparse
import hashlib
import hmac
import ipaddress
import os
import random
import socket
import struct
import sys
import time

AVP_M = 0x8000


def avp(atype, value, mandatory=True):
    flags = AVP_M if mandatory else 0
    return struct.pack("!HHH", flags | (6 + len(value)), 0, atype) + value


def header(ccid, ns, nr, body_len):
    return struct.pack("!HHIHH", 0xC803, 12 + body_len, ccid, ns, nr)


def msg(ccid, ns, nr, avps):
    body = b"".join(avps)
    return header(ccid, ns, nr, len(body)) + body


def sccrq(assigned_ccid, host=b"forged", tie_breaker=None, nonce_len=None, digest=None,
          secret=None):
    avps = [avp(0, struct.pack("!H", 1))]
    if digest == "bogus":
        avps.append(avp(59, b"\x00" + os.urandom(16)))
    elif secret is not None:
        avps.append(avp(59, b"\x00" + bytes(16)))
    avps += [avp(7, host), avp(60, struct.pack("!I", 0x0A000001)),
             avp(61, struct.pack("!I", assigned_ccid)), avp(62, struct.pack("!HH", 5, 4)),
             avp(10, struct.pack("!H", 16), mandatory=False)]
    if tie_breaker is not None:
        avps.append(avp(5, struct.pack("!Q", tie_breaker)))
    if nonce_len is not None:
        avps.append(avp(73, os.urandom(nonce_len)))
    m = msg(0, 0, 0, avps)
    if secret is not None and digest != "bogus":
        # RFC 3931 4.3/5.4.1: key = HMAC-MD5(secret, 2); an SCCRQ's digest
        # covers the message alone (its nonce is inside), digest zeroed
        key = hmac.new(secret, b"\x02", hashlib.md5).digest()
        d = hmac.new(key, m, hashlib.md5).digest()
        off = 12 + 8 + 6 + 1
        m = m[:off] + d + m[off + 16:]
    return m


def stopccn(ccid, ns, nr):
    return msg(ccid, ns, nr, [avp(0, struct.pack("!H", 4)), avp(1, struct.pack("!H", 1))])


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ip_udp(src, sport, dst, dport, payload):
    udp_len = 8 + len(payload)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
    c = csum(pseudo + udp) or 0xFFFF
    udp = struct.pack("!HHHH", sport, dport, udp_len, c) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, random.randrange(65536), 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + udp


class Raw:
    """Sends UDP datagrams with any source address and port."""

    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)

    def send(self, src, sport, dst, dport, payload):
        self.s.sendto(ip_udp(src, sport, dst, dport, payload), (dst, 0))


def span(text):
    a, _, b = text.partition("-")
    return range(int(a), int(b or a) + 1)


def pace(i, rate, t0):
    if rate:
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def cmd_sccrq(a):
    raw = Raw()
    hosts = None
    if a.src_net:
        net = ipaddress.ip_network(a.src_net)
        skip = {str(net.network_address), str(net.broadcast_address), a.dst} | set(a.exclude or [])
        hosts = [str(h) for h in net.hosts() if str(h) not in skip]
    t0 = time.monotonic()
    n = 0
    for i in range(a.count):
        if time.monotonic() - t0 > a.max_seconds:
            break
        src = a.src or random.choice(hosts)
        sport = a.sport or random.randrange(1024, 65536)
        tb = int(a.tie_breaker, 16) if a.tie_breaker else None
        raw.send(src, sport, a.dst, a.dport,
                 sccrq(random.randrange(1, 1 << 32), a.host_name.encode(), tb, a.nonce, a.digest,
                       a.secret.encode() if a.secret else None))
        n += 1
        pace(i, a.rate, t0)
    print("sent", n)


def cmd_stopccn(a):
    n = 0
    for port in span(a.sports):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((a.src or "0.0.0.0", port))
        except OSError:
            s.close()
            continue
        for ns in span(a.ns):
            for nr in span(a.nr):
                s.sendto(stopccn(a.ccid, ns, nr), (a.dst, a.dport))
                n += 1
        s.close()
    print("sent", n)


def cmd_big(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    body = avp(0, struct.pack("!H", 1)) + avp(7, b"x" * (a.size - 12 - 8 - 6))
    s.sendto(header(0, 0, 0, len(body)) + body, (a.dst, a.dport))
    print("sent 1")


def cmd_ccid0_zlb(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(header(0, 0, 1, 0), (a.dst, a.dport))
    print("sent 1")


def cmd_data(a):
    """L2TPv3 data frames over UDP (T bit 0, RFC 3931 4.1.2.1), from any address and port."""
    raw = Raw()
    frame = struct.pack("!II", 0x00030000, a.session) + b"\x00" * 60
    for _ in range(a.count):
        raw.send(a.src, a.sport, a.dst, a.dport, frame)
    print("sent", a.count)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("sccrq")
    q.add_argument("--src")
    q.add_argument("--src-net")
    q.add_argument("--exclude", action="append")
    q.add_argument("--sport", type=int)
    q.add_argument("--count", type=int, default=1)
    q.add_argument("--rate", type=float, default=0)
    q.add_argument("--tie-breaker")
    q.add_argument("--nonce", type=int)
    q.add_argument("--digest", choices=["none", "bogus"], default="none")
    q.add_argument("--host-name", default="forged")
    q.add_argument("--secret", help="sign the SCCRQ with this shared secret (HMAC-MD5)")
    q = sub.add_parser("stopccn")
    q.add_argument("--src")
    q.add_argument("--ccid", type=int, required=True)
    q.add_argument("--sports", required=True)
    q.add_argument("--ns", default="0-15")
    q.add_argument("--nr", default="0-3")
    q = sub.add_parser("big")
    q.add_argument("--size", type=int, default=5000)
    q = sub.add_parser("data")
    q.add_argument("--src", required=True)
    q.add_argument("--sport", type=int, required=True)
    q.add_argument("--session", type=int, required=True)
    q.add_argument("--count", type=int, default=1)
    q = sub.add_parser("ccid0-zlb")
    for q in sub.choices.values():
        q.add_argument("--dst", required=True)
        q.add_argument("--dport", type=int, default=1701)
        q.add_argument("--max-seconds", type=float, default=60)
    a = p.parse_args()
    {"sccrq": cmd_sccrq, "stopccn": cmd_stopccn, "big": cmd_big, "data": cmd_data,
     "ccid0-zlb": cmd_ccid0_zlb}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
