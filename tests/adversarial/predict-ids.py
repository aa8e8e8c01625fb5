#!/usr/bin/env python3
"""predict-ids.py ID... - the ID prediction attack: assuming the IDs come, in
order, from an xorshift64 (13, 7, 17) generator (each ID bits
16..47 of the next state), recover its state over GF(2) and print the next
ID it would hand out.  Prints "none" when the IDs fit no such generator."""
import sys

MASK = (1 << 64) - 1


def sym_step(s):
    """One xorshift step on a symbolic state: s[i] is a 64-bit mask of the
    unknown initial bits that bit i of the state is the XOR of."""
    def shl(v, n):
        return [0] * n + v[:64 - n]

    def shr(v, n):
        return v[n:] + [0] * n

    def xor(a, b):
        return [x ^ y for x, y in zip(a, b)]

    s = xor(s, shl(s, 13))
    s = xor(s, shr(s, 7))
    return xor(s, shl(s, 17))


def step(s):
    s ^= (s << 13) & MASK
    s ^= s >> 7
    s ^= (s << 17) & MASK
    return s


def solve(rows):
    """rows: (mask, bit); returns a solution x or None."""
    pivots = {}
    for mask, bit in rows:
        for p, (pm, pb) in pivots.items():
            if mask >> p & 1:
                mask ^= pm
                bit ^= pb
        if mask == 0:
            if bit:
                return None
            continue
        p = mask.bit_length() - 1
        for q, (qm, qb) in list(pivots.items()):
            if qm >> p & 1:
                pivots[q] = (qm ^ mask, qb ^ bit)
        pivots[p] = (mask, bit)
    x = 0
    for p, (pm, pb) in pivots.items():
        if pb:
            x |= 1 << p
    return x


def main():
    ids = [int(a) for a in sys.argv[1:]]
    s = [1 << i for i in range(64)]
    rows = []
    for v in ids:
        s = sym_step(s)
        for j in range(32):
            rows.append((s[16 + j], v >> j & 1))
    x = solve(rows)
    if x is None:
        print("none")
        return
    st = x
    for v in ids:
        st = step(st)
        if (st >> 16) & 0xFFFFFFFF != v:
            print("none")
            return
    while True:
        st = step(st)
        nxt = (st >> 16) & 0xFFFFFFFF
        if nxt:
            print(nxt)
            return


main()
