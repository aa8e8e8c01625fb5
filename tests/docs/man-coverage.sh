#!/usr/bin/env bash
# tests/docs/man-coverage.sh - the man pages document what the programs accept.
#
#   l2tpv3d.conf(5)  every "section.setting" of `l2tpv3d --list-settings` (the
#                    parser's own table, config_known_settings[]) has an entry,
#                    and every entry is a setting the parser accepts
#   l2tpv3d(8)       every option of `l2tpv3d -h`
#   l2tpv3ctl(8)     every option of `l2tpv3ctl -h`; every command of the CLI's
#                    token tables (src/cli/parse.c) has a .SS of its own name,
#                    holding every argument keyword of its table and every
#                    word `l2tpv3ctl -h` shows for it (keywords and values)
#   all three        format without warnings (groff -ww; mandoc -Tlint when
#                    installed)
#
# Conventions it relies on (see the comments at the top of each page): a
# setting's entry is a .TP whose tag's first word is the setting's name,
# under a .SS naming its section ("tunnels.sessions" for the nested list).
# Without --list-settings (an older daemon) the settings come from
# config_known_settings[] in src/config_table.c.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
. "$top_srcdir/scripts/lib.sh"

MAN=$top_srcdir/man
D=$top_builddir/src/l2tpv3d
C=$top_builddir/src/cli/l2tpv3ctl
skip() { echo "SKIPPED: $*"; exit 77; }
[ -x "$D" ] && [ -x "$C" ] || skip "l2tpv3d or l2tpv3ctl not built in $top_builddir"
command -v groff >/dev/null || skip "groff not installed (Debian: groff-base)"
T=$(mktemp -d /tmp/l2tpv3d-man.XXXXXX)
trap 'rm -rf "$T"' EXIT

# Troff source with \- as -, \(dq as ", and font escapes removed.
plain() { sed -e 's/\\-/-/g' -e 's/\\(dq/"/g' -e 's/\\f[BIRP]//g' "$1"; }

# --- l2tpv3d.conf(5) --------------------------------------------------------
if "$D" --list-settings >"$T/known" 2>/dev/null && [ -s "$T/known" ]; then
	src="l2tpv3d --list-settings"
else
	src="config_known_settings[] in src/config_table.c"
	sed -n '/^const char \*const config_known_settings\[\] = {/,/^};/p' \
		"$top_srcdir/src/config_table.c" | grep -o '"[a-z0-9_.]*"' | tr -d '"' >"$T/known"
fi
sort -u -o "$T/known" "$T/known"

# .SS SECTION ... .TP / .B[IR] "NAME = ..." -> SECTION.NAME
plain "$MAN/l2tpv3d.conf.5" | awk '
	/^\.SH/ { insec = ($2 == "SETTINGS"); sec = ""; next }
	insec && /^\.SS/ { s = $0; sub(/^\.SS[ \t]+/, "", s); gsub(/"/, "", s); sec = s; next }
	insec && /^\.TP/ { tag = 1; next }
	tag { tag = 0; t = $0; sub(/^\.[A-Z]+[ \t]+/, "", t); sub(/^"/, "", t)
	      if (sec != "" && match(t, /^[a-z][a-z0-9_]*/)) print sec "." substr(t, 1, RLENGTH) }
' | sort -u >"$T/documented"

missing=$(comm -23 "$T/known" "$T/documented")
[ -z "$missing" ]
log_test $? "l2tpv3d.conf(5) documents all $(wc -l <"$T/known") settings ($src)"
[ -z "$missing" ] || echo "  not in l2tpv3d.conf(5): $(echo $missing)"
extra=$(comm -13 "$T/known" "$T/documented")
[ -z "$extra" ]
log_test $? "l2tpv3d.conf(5) documents no setting the parser refuses"
[ -z "$extra" ] || echo "  not accepted by the parser: $(echo $extra)"

# --- options ------------------------------------------------------------------
# every -x and --long-option in a help text appears in the page
check_options() {	# check_options PROGRAM PAGE
	local prog=$1 page=$2 opts o missing=
	# "[-FdnvhV]" is six options
	opts=$("$prog" -h 2>&1 | grep -oE '(^|[][ ,|(])--?[A-Za-z][A-Za-z-]*' |
		sed 's/^[][ ,|(]//' | awk '/^-[^-]/ { for (i = 2; i <= length($0); i++)
			print "-" substr($0, i, 1); next } { print }' | sort -u)
	[ -n "$opts" ] || { missing="(no options in '${prog##*/} -h')"; }
	plain "$page" >"$T/page"
	for o in $opts; do
		grep -qE -- "(^|[^A-Za-z-])$o([^A-Za-z-]|$)" "$T/page" || missing="$missing $o"
	done
	[ -z "$missing" ]
	log_test $? "${page##*/} documents every option of '${prog##*/} -h' ($(echo $opts | wc -w))"
	[ -z "$missing" ] || echo "  missing:$missing"
}
check_options "$D" "$MAN/l2tpv3d.8"
check_options "$C" "$MAN/l2tpv3ctl.8"

# --- l2tpv3ctl(8) commands -----------------------------------------------------
# From parse.c: "NAME|kw kw ..." per command, kw the keywords of its arg table.
awk '
	/^static const struct arg [a-z_]+\[\] = \{/ { t = $4; sub(/\[\]/, "", t); args[t] = ""; cur = t; next }
	cur != "" && /^\};/ { cur = ""; next }
	cur != "" && /^[ \t]*(\{ *"|STR_ARG\("|ENUM_ARG\(")/ {
		if (match($0, /"[^"]*"/)) args[cur] = args[cur] " " substr($0, RSTART + 1, RLENGTH - 2)
	}
	match($0, /\{ *CMD_[A-Z_]+, *"[^"]+", *[a-z_]+ *\}/) {
		s = substr($0, RSTART, RLENGTH); n = split(s, f, "\"")
		tbl = f[3]; gsub(/[ ,}]/, "", tbl); cmds[f[2]] = tbl
	}
	END { for (c in cmds) print c "|" args[cmds[c]] }
' "$top_srcdir/src/cli/parse.c" | sort >"$T/commands"
[ "$(wc -l <"$T/commands")" -ge 10 ]
log_test $? "found the CLI's commands in src/cli/parse.c ($(wc -l <"$T/commands"))"

# The help text's command lines, continuation lines joined: "tunnel create peer ADDR ..."
"$C" -h | awk '
	/^commands/ { on = 1; next }
	on && /^$/ { on = 0 }
	on && /^  [a-z]/ { if (line != "") print line; line = $0; next }
	on && /^   +/ { line = line " " $0 }
	END { if (line != "") print line }
' | sed 's/^ *//; s/  */ /g' >"$T/help"

# The page cut into its .SS subsections: one file per heading.
mkdir "$T/ss"
plain "$MAN/l2tpv3ctl.8" | awk -v dir="$T/ss" '
	/^\.S[SH]/ { s = $0; sub(/^\.S[SH][ \t]+/, "", s); gsub(/"/, "", s); f = dir "/" s; next }
	f != "" { print > f }
'
bad=
while IFS='|' read -r cmd kws; do
	f="$T/ss/$cmd"
	if [ ! -f "$f" ]; then
		bad="$bad\n  '$cmd': no .SS $cmd"
		continue
	fi
	# the help line of this command: its words, minus the command and placeholders
	words=$(grep -E "^$cmd( |$)" "$T/help" | head -1 | sed "s/^$cmd//" |
		tr '[]()|' '     ' | tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9_-]*$' | sort -u)
	for w in $kws $words; do
		grep -qE -- "(^|[^a-z0-9_-])$w([^a-z0-9_-]|$)" "$f" || bad="$bad\n  '$cmd': '$w' not in its section"
	done
done <"$T/commands"
[ -z "$bad" ]
log_test $? "l2tpv3ctl(8): each command has its section with all its arguments and values"
[ -z "$bad" ] || printf '%b\n' "$bad"
# and the help text lists no command the page lacks
bad=
while read -r line; do
	found=
	while IFS='|' read -r cmd _; do
		case "$line " in "$cmd "*) found=1 ;; esac
	done <"$T/commands"
	[ -n "$found" ] || bad="$bad\n  '$line'"
done <"$T/help"
[ -z "$bad" ]
log_test $? "every command of 'l2tpv3ctl -h' is a command of the token tables"
[ -z "$bad" ] || printf 'unknown:%b\n' "$bad"

# --- formatting ----------------------------------------------------------------
for page in "$MAN"/l2tpv3d.8 "$MAN"/l2tpv3ctl.8 "$MAN"/l2tpv3d.conf.5; do
	out=$(groff -ww -man -z "$page" 2>&1)
	if command -v mandoc >/dev/null; then
		out="$out$(mandoc -Tlint -W warning "$page" 2>&1)"
		what="groff -ww, mandoc -Tlint"
	else
		what="groff -ww"
	fi
	[ -z "$out" ]
	log_test $? "${page##*/} formats without warnings ($what)"
	[ -z "$out" ] || echo "$out" | head -20
done

# --- documentation stands on its own -------------------------------------------
TOP=$(cd "$(dirname "$0")/../.." && pwd)
out=$(grep -rnE '/work/|\.\./shared/|shared/docs|\(shared docs\)' "$TOP/README.md" "$TOP/doc" "$TOP/man" "$TOP/etc" 2>/dev/null)
[ -z "$out" ]
log_test $? "README, doc/, man/ and etc/ point at nothing outside the repository"
[ -z "$out" ] || echo "$out" | head -5
missing=
for d in "$TOP"/doc/*.md; do
	grep -qx "doc/${d##*/}" "$TOP/debian/l2tpv3d.docs" || case ${d##*/} in
		benchmarks.md|fuzzing.md) ;;	# developers' pages, with plots in doc/img
		*) missing="$missing ${d##*/}" ;;
	esac
done
[ -z "$missing" ]
log_test $? "the package ships every operator's page of doc/ (missing:${missing:- none})"

echo "$TESTS_OK passed, $TESTS_FAIL failed"
[ "$TESTS_FAIL" = 0 ]
