#!/bin/sh
# tests/docs/import-graph.sh - the control socket stays a consumer: no
# module of the daemon reaches src/ctl.c again through what it calls or
# reads (nm of the daemon's objects: who defines what, who uses it), so
# the domain layer (tunnels, sessions, transport) knows no consumer; only
# main.c calls into ctl.c.  And no circle of calls crosses a layer
# (doc/architecture.md): the only circles are among the files of one
# module (config*, dp_kernel*) or among the daemon's objects (peer, tunnel,
# session, pool).  Exit 77 when the objects or nm are missing.
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
# circles: strongly connected components (Tarjan, iterative)
index, low, on, stack, comps, n = {}, {}, set(), [], [], 0
for root in list(edges):
    if root in index:
        continue
    work = [(root, iter(sorted(edges[root])))]
    index[root] = low[root] = n; n += 1; stack.append(root); on.add(root)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = n; n += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            c = set()
            while True:
                x = stack.pop(); on.discard(x); c.add(x)
                if x == v:
                    break
            if len(c) > 1:
                comps.append(c)
def one_module(c):
    return (all(m.startswith("config") for m in c) or all(m.startswith("dp_kernel") for m in c)
            or c <= {"peer", "tunnel", "session", "pool"})
bad = [sorted(c) for c in comps if not one_module(c)]
test(not bad, "no circle of calls crosses a layer (%s)" % ("; ".join(" ".join(c) for c in bad) or
                                                         "%d within one" % len(comps)))
test(not {"tunnel", "session", "peer", "pool"} & edges["transport"],
     "transport.c hands datagrams up through callbacks")
for f in ("tunnel", "session", "pool"):
    test(not {"handover", "failover", "main"} & edges[f],
         "%s.c calls nothing of the process layer" % f)
print("%d passed, %d failed" % (ok, fail))
sys.exit(1 if fail else 0)
PY
