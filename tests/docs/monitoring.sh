#!/usr/bin/env bash
# tests/docs/monitoring.sh - what etc/monitoring ships works against the
# daemon as it is: the Prometheus alert rules pass `promtool check rules`
# (when the prometheus package is installed) and, always, a strict parser of
# the rule-file structure (a YAML subset: no python3-yaml needed); the
# Grafana dashboard is JSON with a query in every panel; and every metric
# and label that a rule or a dashboard query names is in a scrape of two
# running daemons (static tunnel and session on the LAC, a peers entry on
# the LNS, so that every per-object family is there).  Exit 77 (skip) when
# the scrape cannot run (not root, daemons not built), after the file checks.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
M=$top_srcdir/etc/monitoring
RULES=$M/l2tpv3d-alerts.yml DASH=$M/l2tpv3d-dashboard.json
. "$top_srcdir/tests/integration/lib.sh"

if command -v promtool >/dev/null; then
	promtool check rules "$RULES"
	log_test $? "promtool check rules $RULES"
fi

# rules.py parse FILE: the rule file's structure checked, its expressions printed as JSON;
# rules.py dash FILE: the dashboard's queries printed as JSON
# rules.py refs SCRAPE.json... < EXPRS.json: every metric and label named is in a scrape
cat > "${TMPDIR:-/tmp}/monitoring-check.$$.py" <<'PY'
import json, re, sys

def fail(msg):
    print("monitoring: " + msg, file=sys.stderr)
    sys.exit(1)

def parse_yaml_subset(text):
    """Block mappings and sequences, plain and double-quoted scalars, comments:
    what a rule file needs.  Anything else (tabs, anchors, flow style, block
    scalars, a comment after a value, a duplicate key) is an error."""
    lines = []
    for n, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw:
            fail("line %d: a tab" % n)
        s = raw.rstrip()
        if s.strip() and not s.lstrip().startswith("#"):
            lines.append([n, len(s) - len(s.lstrip()), s.strip()])
    pos = 0

    def scalar(v, n):
        if v.startswith('"'):
            try:
                return json.loads(v)
            except ValueError:
                fail("line %d: bad double-quoted string" % n)
        if v[0] in "'[{&*!|>%@`" or " #" in v or v.endswith(":"):
            fail("line %d: unsupported value %r" % (n, v))
        return v

    def block(ind):
        return seq(ind) if lines[pos][2].startswith("- ") else mapping(ind)

    def mapping(ind):
        nonlocal pos
        d = {}
        while pos < len(lines):
            n, i, s = lines[pos]
            if i < ind:
                break
            if i > ind or s.startswith("- "):
                fail("line %d: bad indentation" % n)
            key, sep, rest = s.partition(":")
            if not sep or (rest and not rest.startswith(" ")) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
                fail("line %d: not 'key: value'" % n)
            if key in d:
                fail("line %d: duplicate key %s" % (n, key))
            pos += 1
            if rest.strip():
                d[key] = scalar(rest.strip(), n)
            elif pos < len(lines) and lines[pos][1] > ind:
                d[key] = block(lines[pos][1])
            else:
                fail("line %d: %s has no value" % (n, key))
        return d

    def seq(ind):
        nonlocal pos
        out = []
        while pos < len(lines):
            n, i, s = lines[pos]
            if i < ind:
                break
            if i != ind or not s.startswith("- "):
                fail("line %d: bad list item" % n)
            lines[pos] = [n, ind + 2, s[2:].lstrip()]
            out.append(mapping(ind + 2))
        return out

    doc = mapping(0)
    if pos != len(lines):
        fail("line %d: left over" % lines[pos][0])
    return doc

DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")

def balanced(e):
    stack, q = [], None
    for c in e:
        if q:
            q = None if c == q else q
        elif c in "\"'":
            q = c
        elif c in "([{":
            stack.append(")]}"["([{".index(c)])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return False
    return not stack and not q

def check_rules(path):
    doc = parse_yaml_subset(open(path).read())
    if set(doc) != {"groups"} or not isinstance(doc["groups"], list) or not doc["groups"]:
        fail("the file is one key, groups, a non-empty list")
    exprs, names = [], set()
    for g in doc["groups"]:
        if not set(g) <= {"name", "interval", "rules"} or not isinstance(g.get("name"), str):
            fail("group %r: keys name, rules (interval)" % g.get("name"))
        if g["name"] in names:
            fail("group %s twice" % g["name"])
        names.add(g["name"])
        if not isinstance(g.get("rules"), list) or not g["rules"]:
            fail("group %s: no rules" % g["name"])
        alerts = set()
        for r in g["rules"]:
            what = r.get("alert", r.get("record"))
            if ("alert" in r) == ("record" in r) or not isinstance(what, str):
                fail("group %s: a rule is an alert or a record" % g["name"])
            allowed = {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"} \
                if "alert" in r else {"record", "expr", "labels"}
            if not set(r) <= allowed:
                fail("rule %s: unknown keys %s" % (what, sorted(set(r) - allowed)))
            if what in alerts:
                fail("rule %s twice in group %s" % (what, g["name"]))
            alerts.add(what)
            if not isinstance(r.get("expr"), str) or not r["expr"].strip() or not balanced(r["expr"]):
                fail("rule %s: expr missing or unbalanced" % what)
            for k in ("for", "keep_firing_for"):
                if k in r and not (isinstance(r[k], str) and DURATION.match(r[k])):
                    fail("rule %s: %s is not a duration" % (what, k))
            for k in ("labels", "annotations"):
                if k in r and not (isinstance(r[k], dict) and all(isinstance(v, str) for v in r[k].values())):
                    fail("rule %s: %s is a map of strings" % (what, k))
            if "alert" in r and "severity" not in r.get("labels", {}):
                fail("alert %s: no severity label" % what)
            # the labels its annotations print must survive its aggregation
            exprs.append({"where": "rule " + what, "expr": r["expr"],
                          "text": json.dumps(r.get("annotations", {})),
                          "aggregated": bool(re.match(r"^\s*(max|min|sum|count|avg)\b", r["expr"]))})
    return exprs

def check_dash(path):
    d = json.load(open(path))
    exprs = []
    def panels(ps):
        for p in ps:
            if p.get("type") == "row":
                panels(p.get("panels", []))
                continue
            ts = p.get("targets") or []
            if not ts or not all(isinstance(t.get("expr"), str) and t["expr"] for t in ts):
                fail("panel %r: no query" % p.get("title"))
            for t in ts:
                if not balanced(t["expr"]):
                    fail("panel %r: unbalanced %s" % (p.get("title"), t["expr"]))
                exprs.append({"where": "panel " + p.get("title", "?"), "expr": t["expr"]})
    panels(d.get("panels", []))
    for v in d.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.match(r"^label_values\((.*),\s*([A-Za-z_]\w*)\)$", q or "")
        if v.get("type") == "query":
            if not m:
                fail("variable %s: not label_values(...)" % v.get("name"))
            exprs.append({"where": "variable " + v["name"], "expr": m.group(1), "by": [m.group(2)]})
    if not exprs:
        fail("the dashboard has no query")
    return exprs

METRIC = re.compile(r"\b(l2tpv3d_[A-Za-z0-9_]+)\b(\{([^}]*)\})?")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
ADDED = {"instance", "job"}		# what Prometheus adds to every series

def check_refs(scrapes):
    labels = {}
    for path in scrapes:
        for key in json.load(open(path)):
            name, _, rest = key.partition("{")
            labels.setdefault(name, set()).update(re.findall(r'([A-Za-z_]\w*)="', rest))
    bad = []
    for e in json.load(sys.stdin):
        found = METRIC.findall(e["expr"])
        if not found:
            bad.append("%s: names no l2tpv3d_ metric: %s" % (e["where"], e["expr"]))
        known = set(ADDED)
        for name, _, sel in found:
            if name not in labels:
                bad.append("%s: %s is not in a scrape" % (e["where"], name))
                continue
            known |= labels[name]
            for l in re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)", sel):
                if l not in labels[name] | ADDED:
                    bad.append("%s: %s has no label %s" % (e["where"], name, l))
        grouped = [l.strip() for g in GROUPING.findall(e["expr"]) for l in g.split(",") if l.strip()]
        printed = re.findall(r"\$labels\.(\w+)", e.get("text", ""))
        for l in grouped + e.get("by", []) + printed:
            if l not in known:
                bad.append("%s: label %s is on none of its metrics" % (e["where"], l))
        for l in printed if e.get("aggregated") else []:
            if l not in grouped:
                bad.append("%s: prints label %s, which its aggregation drops" % (e["where"], l))
    for b in bad:
        print("monitoring: " + b, file=sys.stderr)
    sys.exit(1 if bad else 0)

if sys.argv[1] == "parse":
    print(json.dumps(check_rules(sys.argv[2])))
elif sys.argv[1] == "dash":
    print(json.dumps(check_dash(sys.argv[2])))
else:
    check_refs(sys.argv[2:])
PY
PY_CHECK="python3 ${TMPDIR:-/tmp}/monitoring-check.$$.py"
trap 'rm -f "${TMPDIR:-/tmp}/monitoring-check.$$.py"' EXIT

$PY_CHECK parse "$RULES" > "${TMPDIR:-/tmp}/monitoring-rules.$$.json"
log_test $? "the alert rules' structure: groups, alerts with expr, for, severity, annotations"
sed 's/^\(  *\)expr:/\1exp:/' "$RULES" > "${TMPDIR:-/tmp}/monitoring-bad.$$.yml"
! $PY_CHECK parse "${TMPDIR:-/tmp}/monitoring-bad.$$.yml" >/dev/null 2>&1
log_test $? "the parser refuses the same rules with 'expr' misspelt"
rm -f "${TMPDIR:-/tmp}/monitoring-bad.$$.yml"
$PY_CHECK dash "$DASH" > "${TMPDIR:-/tmp}/monitoring-dash.$$.json"
log_test $? "the dashboard is JSON, every panel has a query, every variable is label_values()"
EXPRS=$(jq -s add "${TMPDIR:-/tmp}/monitoring-rules.$$.json" "${TMPDIR:-/tmp}/monitoring-dash.$$.json")
rm -f "${TMPDIR:-/tmp}"/monitoring-{rules,dash}.$$.json
[ "$TESTS_FAIL" = 0 ] || { it_done; exit 1; }

it_setup
trap 'rm -f "${TMPDIR:-/tmp}/monitoring-check.$$.py"; it_cleanup' EXIT
write_conf b $B_ADDR 'peers = ( { name = "lacs"; match = "192.0.2.0/24"; accept = true; } );'
write_conf a $A_ADDR "peer_default = { accept = true; };
tunnels = ( { name = \"st\"; peer = \"$B_ADDR\";
              sessions = ( { name = \"cust-a\"; remote_end_id = \"cust-a\"; } ); } );"
start b "$NSB" && start a "$NSA" && wait_until 10 expect_count 1 count_sessions a established
log_test $? "two daemons, a's static tunnel st and session cust-a up"
CHECK="python3 $top_srcdir/tests/integration/promcheck.py"
ctl a metrics | $CHECK - > "$W/a.json" && ctl b metrics | $CHECK - > "$W/b.json"
log_test $? "both scrapes pass the exposition-format lint"
# the families the files lean on most are there (a missing one fails below as well)
missing=$(for f in l2tpv3d_session_up l2tpv3d_tunnel_flaps_total l2tpv3d_session_flaps_total \
		l2tpv3d_static_not_up; do
	jq -e --arg f "$f" 'keys | any(startswith($f))' "$W/a.json" >/dev/null || echo "$f"
done)
[ -z "$missing" ] || { echo "missing: $missing"; false; }
log_test $? "a's scrape has the per-object families"
$PY_CHECK refs "$W/a.json" "$W/b.json" <<<"$EXPRS"
log_test $? "every metric and label in the rules and the dashboard is in the scrapes"
it_done
