#!/usr/bin/env python3
"""promcheck.py FILE|- : lint Prometheus text exposition format (0.0.4) the
way `promtool check metrics` does what matters to us, and print the samples
as JSON ({"name{labels}": value}) for the caller to compare.

Checks: every sample belongs to a family announced by # HELP and # TYPE
before it, families are contiguous and announced once, names and label
names are valid, label values are quoted and escaped, values parse, a
counter's name ends in _total, no series appears twice, and every name
starts with l2tpv3d_.  Exit 1 with the problems on stderr."""
import json
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def parse_labels(s):
    out, pos = [], 0
    while pos < len(s):
        m = LABEL.match(s, pos)
        if not m:
            raise ValueError("bad label at %r" % s[pos:])
        out.append((m.group(1), m.group(2)))
        pos = m.end()
        if pos < len(s):
            if s[pos] != ",":
                raise ValueError("expected ',' in labels %r" % s)
            pos += 1
    return out


def main():
    text = (sys.stdin if sys.argv[1] == "-" else open(sys.argv[1])).read()
    errs, samples, helps, types, seen_fam, current = [], {}, {}, {}, [], None
    if not text.endswith("\n"):
        errs.append("no final newline")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if len(parts) < 4:
                errs.append("%d: short %s line" % (n, parts[1]))
                continue
            kind, fam, rest = parts[1], parts[2], parts[3]
            if not NAME.match(fam):
                errs.append("%d: bad family name %r" % (n, fam))
            table = helps if kind == "HELP" else types
            if fam in table:
                errs.append("%d: second # %s for %s" % (n, kind, fam))
            table[fam] = rest
            if kind == "TYPE" and rest not in TYPES:
                errs.append("%d: bad type %r" % (n, rest))
            if fam != current:
                if fam in seen_fam:
                    errs.append("%d: family %s not contiguous" % (n, fam))
                seen_fam.append(fam)
                current = fam
            continue
        if line.startswith("#"):
            continue
        m = re.match(r"([^{ ]+)(\{(.*)\})? (\S+)$", line)
        if not m:
            errs.append("%d: unparsable sample %r" % (n, line))
            continue
        name, labels, value = m.group(1), m.group(3) or "", m.group(4)
        if not NAME.match(name):
            errs.append("%d: bad metric name %r" % (n, name))
        if not name.startswith("l2tpv3d_"):
            errs.append("%d: %s lacks the l2tpv3d_ prefix" % (n, name))
        if name != current or name not in types or name not in helps:
            errs.append("%d: sample %s outside its announced family" % (n, name))
        if types.get(name) == "counter" and not name.endswith("_total"):
            errs.append("%d: counter %s does not end in _total" % (n, name))
        try:
            lab = parse_labels(labels)
            float(value)
        except ValueError as e:
            errs.append("%d: %s" % (n, e))
            continue
        if len({k for k, _ in lab}) != len(lab):
            errs.append("%d: repeated label name" % n)
        key = name + ("{" + ",".join('%s="%s"' % kv for kv in sorted(lab)) + "}" if lab else "")
        if key in samples:
            errs.append("%d: series %s twice" % (n, key))
        samples[key] = float(value)
    for fam in types:
        if not any(k == fam or k.startswith(fam + "{") for k in samples):
            errs.append("family %s has no sample" % fam)
    for e in errs:
        print("promcheck: " + e, file=sys.stderr)
    print(json.dumps(samples))
    return 1 if errs else 0


sys.exit(main())
