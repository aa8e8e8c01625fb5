#!/bin/sh
# tests/docs/import-graph.sh - the control socket stays a consumer: no
# module of the daemon reaches src/ctl.c again through what it calls or
# reads (nm of the daemon's objects: who defines what, who uses it), so
# the domain layer (tunnels, sessions, transport) knows no consumer; only
# main.c calls into ctl.c.  Exit 77 when the objects or nm are missing.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)/build}
command -v nm >/dev/null && command -v python3 >/dev/null || { echo "SKIP: needs nm and python3"; exit 77; }
ls "$top_builddir"/src/l2tpv3d-*.o >/dev/null 2>&1 || { echo "SKIP: daemon objects not built"; exit 77; }
python3 - "$top_builddir/src" <<'PY'
import collections, glob, os, subprocess, sys
defs, refs = {}, collections.defaultdict(set)
for o in glob.glob(os.path.join(sys.argv[1], "l2tpv3d-*.o")):
    name = os.path.basename(o)[len("l2tpv3d-"):-2]
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRC":
            defs[p[2]] = name
        elif len(p) == 2 and p[0] == "U":
            refs[name].add(p[1])
edges = collections.defaultdict(set)
for f, syms in refs.items():
    edges[f] |= {defs[s] for s in syms if s in defs and defs[s] != f}
def reach(a):
    seen, st = set(), [a]
    while st:
        for y in edges[st.pop()]:
            if y not in seen:
                seen.add(y); st.append(y)
    return seen
ok = fail = 0
def test(cond, what):
    global ok, fail
    print("TEST: %-60s [%s]" % (what, " OK " if cond else "FAIL"))
    ok, fail = ok + bool(cond), fail + (not cond)
into = sorted(f for f in edges if "ctl" in edges[f])
test(into == ["main"], "only main.c calls into ctl.c (%s)" % ", ".join(into))
test("ctl" not in reach("ctl"), "no cycle through ctl.c")
for f in ("tunnel", "session", "transport"):
    test("ctl" not in edges[f] and "hooks" not in edges[f],
         "%s.c publishes events, calls no consumer" % f)
print("%d passed, %d failed" % (ok, fail))
sys.exit(1 if fail else 0)
PY
