#!/bin/sh
# tests/config-golden.sh - configuration files against their golden output.
#
#   tests/config/NAME.conf      an input; err-*.conf must be rejected
#   tests/config/NAME.expected  what `config-print NAME.conf` writes, stdout
#                               then stderr, run from tests/config/ so that
#                               error messages start with "NAME.conf:LINE:"
#
# In .expected files @HOSTNAME@ and @RUNSTATEDIR@ stand for this host's name
# and the build's runstatedir (both appear only through defaults).  Every
# accepted file must also print to a fixed point (print, load, print again),
# and what a restart carries of it (config-print -c: secrets in, no file
# needed) must load to the same configuration and carry to itself again.
# etc/l2tpv3d.conf is checked the same way (example.expected), and again
# with its commented LNS example ("#+ " lines; example-lns.expected) and LAC
# example ("#~ " lines and the "#+ " profile; example-lac.expected) enabled,
# and with its LNS example enabled but no secret set (example-nosecret:
# refused).
#
# config-print is the helper built from tests/config-print.c; `l2tpv3d -nv`
# prints the same thing.  Found in $top_builddir/tests or next to this
# script; missing: exit 77 (skip).
#
#   UPDATE=1 tests/config-golden.sh   rewrites the .expected files (review
#                                      the diff before committing them)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${top_srcdir:-$here/..}
prog=
for p in ${top_builddir:+"$top_builddir/tests/config-print"} "$here/config-print"; do
	if [ -x "$p" ]; then prog=$p; break; fi
done
if [ -z "$prog" ]; then
	echo "SKIP: config-print not built (make tests/config-print)"
	exit 77
fi
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/config-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

hostname=$("$prog" -V hostname) || exit 1
runstatedir=$("$prog" -V runstatedir) || exit 1
sed_escape() { printf '%s\n' "$1" | sed 's/[\\|&]/\\&/g'; }
host_re=$(sed_escape "$hostname")
rsd_re=$(sed_escape "$runstatedir")

passed=0 failed=0
log_test() {	# log_test NAME RESULT(0 = ok) [DETAIL FILE]
	if [ "$2" -eq 0 ]; then
		printf 'TEST: %-50s [ OK ]\n' "$1"
		passed=$((passed + 1))
	else
		printf 'TEST: %-50s [FAIL]\n' "$1"
		[ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3"
		failed=$((failed + 1))
	fi
}

# golden DIR FILE.conf EXPECTED MUST_FAIL: one input against its golden output.
golden() {
	dir=$1 conf=$2 expected=$3 must_fail=$4
	name=${expected##*/}
	name=${name%.expected}
	(cd "$dir" && "$prog" "$conf") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err" >>"$tmp/out"

	if [ "$must_fail" = yes ] && [ "$rc" -ne 1 ]; then
		echo "exit status $rc, expected 1 (rejected)" >"$tmp/why"
		log_test "$name: rejected" 1 "$tmp/why"
	elif [ "$must_fail" = no ] && [ "$rc" -ne 0 ]; then
		log_test "$name: accepted" 1 "$tmp/out"
		return
	else
		log_test "$name: exit status $rc" 0
	fi

	if [ "${UPDATE:-0}" = 1 ]; then
		sed -e "s|^  hostname = \"$host_re\";\$|  hostname = \"@HOSTNAME@\";|" \
		    -e "s|^  ctl_socket = \"$rsd_re/l2tpv3d/l2tpv3d.ctl\";\$|  ctl_socket = \"@RUNSTATEDIR@/l2tpv3d/l2tpv3d.ctl\";|" \
		    -e "s|^  state_dir = \"$rsd_re/l2tpv3d\";\$|  state_dir = \"@RUNSTATEDIR@/l2tpv3d\";|" \
		    "$tmp/out" >"$expected"
		echo "    updated $expected"
	fi
	if [ ! -f "$expected" ]; then
		echo "missing $expected (UPDATE=1 writes it)" >"$tmp/why"
		log_test "$name: output" 1 "$tmp/why"
		return
	fi
	sed -e "s|@HOSTNAME@|$host_re|g" -e "s|@RUNSTATEDIR@|$rsd_re|g" "$expected" >"$tmp/want"
	if diff -u "$tmp/want" "$tmp/out" >"$tmp/diff"; then
		log_test "$name: output" 0
	else
		log_test "$name: output" 1 "$tmp/diff"
	fi

	[ "$rc" -eq 0 ] || return
	cp "$tmp/out" "$tmp/printed.conf"
	"$prog" "$tmp/printed.conf" >"$tmp/again" 2>&1
	if [ $? -eq 0 ] && diff -u "$tmp/out" "$tmp/again" >"$tmp/diff"; then
		log_test "$name: print -> load -> print" 0
	else
		cat "$tmp/again" >>"$tmp/diff"
		log_test "$name: print -> load -> print" 1 "$tmp/diff"
	fi
	carried "$dir" "$conf" "$name"
}

# carried DIR FILE.conf NAME: the text a restart carries loads (from
# elsewhere: nothing of DIR is needed) to the configuration FILE makes, and
# carries to the same text again.
carried() {
	(cd "$1" && "$prog" -c "$2") >"$tmp/carried.conf" 2>"$tmp/carried.err" &&
		(cd "$1" && "$prog" "$2") >"$tmp/want" &&
		(cd / && "$prog" "$tmp/carried.conf") >"$tmp/got" 2>>"$tmp/carried.err" &&
		diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" 2>&1 &&
		(cd / && "$prog" -c "$tmp/carried.conf") >"$tmp/carried2.conf" 2>>"$tmp/carried.err" &&
		diff -u "$tmp/carried.conf" "$tmp/carried2.conf" >>"$tmp/diff" 2>&1
	rc=$?
	cat "$tmp/carried.err" >>"$tmp/diff"
	log_test "$3: carried -> load: the same; carried again: the same" $rc "$tmp/diff"
}

for conf in "$srcdir"/tests/config/*.conf; do
	base=${conf##*/}
	case $base in err-*) must_fail=yes ;; *) must_fail=no ;; esac
	golden "$srcdir/tests/config" "$base" "$srcdir/tests/config/${base%.conf}.expected" \
		"$must_fail"
done

# The shipped example, as it is (no peer, no tunnel: it refuses everything),
# and with its LNS part (#+) or its LAC part (the #+ profile, #~) enabled as
# its header says, the secret set.  Left empty, the secret is refused.
golden "$srcdir/etc" l2tpv3d.conf "$srcdir/tests/config/example.expected" no
set_secret='s/secret = "";\( *\)# set it/secret = "example-secret";\1# set it/'
mkdir "$tmp/lns" "$tmp/lac" "$tmp/nosecret"
sed -e '/^peers = ($/,/^);$/d' -e 's/^#+ //' "$srcdir/etc/l2tpv3d.conf" \
	>"$tmp/nosecret/l2tpv3d.conf"
sed -e "$set_secret" "$tmp/nosecret/l2tpv3d.conf" >"$tmp/lns/l2tpv3d.conf"
golden "$tmp/lns" l2tpv3d.conf "$srcdir/tests/config/example-lns.expected" no
sed -e '/^tunnels = ($/,/^);$/d' -e '/^tunnel_profiles = ($/,/^);$/s/^#+ //' \
	-e 's/^#~ //' -e "$set_secret" "$srcdir/etc/l2tpv3d.conf" >"$tmp/lac/l2tpv3d.conf"
golden "$tmp/lac" l2tpv3d.conf "$srcdir/tests/config/example-lac.expected" no
golden "$tmp/nosecret" l2tpv3d.conf "$srcdir/tests/config/example-nosecret.expected" yes

# What a restart carries holds every secret, a secret_file's content in
# place of its path, and include_dir's files merged: it loads with the
# secret files and the directory gone, to the same configuration (the
# secret_file settings aside) and with the same secrets.
mkdir "$tmp/sf" "$tmp/sf/conf.d"
printf 'global-from-file\n' >"$tmp/sf/g.key"
printf 'profile-from-file' >"$tmp/sf/t.key"
printf 'peer-from-file\n' >"$tmp/sf/p.key"
chmod 600 "$tmp/sf/g.key" "$tmp/sf/t.key" "$tmp/sf/p.key"
cat >"$tmp/sf/l2tpv3d.conf" <<'CONF'
global = { secret_file = "g.key"; include_dir = "conf.d"; ha_listen = "127.0.0.1:1799";
           ha_secret = "a-pair-secret-of-16+"; };
tunnel_profiles = ( { name = "default"; digest = "md5"; },
                    { name = "tp"; secret_file = "t.key"; hide_avps = true; } );
peers = ( { name = "p"; match = "192.0.2.0/24"; accept = true; secret_file = "p.key"; } );
peer_default = { accept = true; secret = "inline \"quoted\" secret"; };
CONF
cat >"$tmp/sf/conf.d/cust.conf" <<'CONF'
peers = ( { name = "inc"; match = "198.51.100.0/24"; accept = true; tunnel_profile = "tp";
            secret_file = "p.key"; } );
tunnels = ( { name = "inc-t"; peer = "198.51.100.7"; profile = "tp";
              sessions = ( { name = "inc-s"; remote_end_id = "inc-s"; } ); } );
CONF
(cd "$tmp/sf" && "$prog" -c l2tpv3d.conf) >"$tmp/sf.carried" 2>&1 &&
	(cd "$tmp/sf" && "$prog" l2tpv3d.conf) >"$tmp/sf.want" 2>&1
rc=$?
rm -r "$tmp/sf"
[ $rc -eq 0 ] &&
	[ "$(grep -c 'secret = "global-from-file";' "$tmp/sf.carried")" = 1 ] &&
	[ "$(grep -c 'secret = "profile-from-file";' "$tmp/sf.carried")" = 1 ] &&
	[ "$(grep -c 'secret = "peer-from-file";' "$tmp/sf.carried")" = 2 ] &&
	grep -q 'secret = "inline \\"quoted\\" secret";' "$tmp/sf.carried" &&
	grep -q 'ha_secret = "a-pair-secret-of-16+";' "$tmp/sf.carried" &&
	! grep -q 'secret_file = "[^"]' "$tmp/sf.carried" &&
	grep -q 'name = "inc-t";' "$tmp/sf.carried" && grep -q 'include_dir = "";' "$tmp/sf.carried" &&
	"$prog" "$tmp/sf.carried" >"$tmp/sf.got" 2>&1 &&
	grep -vE '^ *(secret|secret_file) = ' "$tmp/sf.want" >"$tmp/sf.want2" &&
	grep -vE '^ *(secret|secret_file) = ' "$tmp/sf.got" >"$tmp/sf.got2" &&
	diff -u "$tmp/sf.want2" "$tmp/sf.got2" >"$tmp/diff" 2>&1 &&
	"$prog" -c "$tmp/sf.carried" | diff -u "$tmp/sf.carried" - >>"$tmp/diff" 2>&1
log_test "carried: secrets and secret files in, include_dir merged, no file needed" $? "$tmp/diff"

# -nv masks secrets (its output lands in tickets); --show-secrets prints them
D=${top_builddir:+$top_builddir/src/l2tpv3d}
if [ -n "$D" ] && [ -x "$D" ]; then
	out=$("$D" -nv -f "$srcdir/tests/config/lns.conf" 2>&1)
	shown=$("$D" -nv --show-secrets -f "$srcdir/tests/config/lns.conf" 2>&1)
	! printf '%s\n' "$out" | grep -q 'secret = "[^"*]' &&
		printf '%s\n' "$out" | grep -q 'secret = "\*\*\*\*\*\*\*\*"' &&
		printf '%s\n' "$shown" | grep -q 'secret = "[^"*][^"]*"'
	log_test "-nv masks secrets, --show-secrets prints them" $?
fi

# snmp.enabled = true: a daemon built with SNMP (configure --with-snmp)
# accepts it; one built without refuses it, naming the setting and why,
# instead of ignoring it (config-print -V snmp says which build this is).
if [ -n "$D" ] && [ -x "$D" ]; then
	printf 'snmp = {\n  enabled = true;\n};\n' >"$tmp/snmp.conf"
	"$D" -n -f "$tmp/snmp.conf" >"$tmp/snmp.out" 2>&1
	rc=$?
	if [ "$("$prog" -V snmp)" = yes ]; then
		[ "$rc" -eq 0 ]
		log_test "snmp.enabled = true, built with SNMP: -n accepts it" $? "$tmp/snmp.out"
	else
		[ "$rc" -eq 1 ] && grep -q "snmp.conf:2: setting 'snmp.enabled': this l2tpv3d is built without SNMP support" "$tmp/snmp.out"
		log_test "snmp.enabled = true, built without SNMP: -n refuses it (got $rc)" $? "$tmp/snmp.out"
	fi
fi

# A file the daemon refuses at start is EX_CONFIG (78), which the unit's
# RestartPreventExitStatus= keeps from restarting every 5 s; -n still says 1.
# (The file is refused before anything is opened: no root needed.)
if [ -n "$D" ] && [ -x "$D" ]; then
	"$D" -F -f "$srcdir/tests/config/err-unknown.conf" >"$tmp/start" 2>&1
	rc=$?
	[ "$rc" -eq 78 ] && grep -q "err-unknown.conf:" "$tmp/start"
	log_test "start on an invalid file: exit 78 (got $rc)" $? "$tmp/start"
fi

echo "config-golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
