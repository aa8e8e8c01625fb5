#!/usr/bin/env bash
# scripts/demo leaves nothing behind : run as a user would, it
# exits 0; made to fail half-way, interrupted with Ctrl-C or terminated, it
# exits non-zero; and every time its two namespaces, both l2tpv3d daemons
# and its work directory are gone when it returns.
#
#   this test --TMPDIR=$T/tmp--> scripts/demo --no-deps --builddir B
#                                  |  ns l2tpdemo-lac-X  <-veth->  ns l2tpdemo-lns-X
#                                  |  l2tpv3d -f $T/tmp/l2tpv3d-demo.Y/{lac,lns}.conf
#   asserts afterwards: neither of the namespaces the demo said it made (nor
#   any other with their tag) is left, no l2tpv3d whose command line names
#   $T, $T/tmp empty.  Another demo may run beside it: only its own count.
#
# The failure comes from a build tree whose l2tpv3ctl refuses `session
# create` after both daemons are up and a tunnel is established; Ctrl-C is
# SIGINT to the demo's whole process group, as a terminal sends it.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v jq >/dev/null || skip "needs jq"
command -v python3 >/dev/null || skip "needs python3"
[ -x "$D" ] && [ -x "$C" ] || skip "daemon or CLI not built"
ip netns add "l2tpv3d-probe-$$" 2>/dev/null || skip "cannot create network namespaces"
ip netns del "l2tpv3d-probe-$$"
DEMO=$top_srcdir/scripts/demo
[ -x "$DEMO" ] || skip "no $DEMO (not in this tree)"

T=$(mktemp -d /tmp/l2tpv3d-demotest.XXXXXX)
DEMO_PID=
# Our own cleanup, for when an assertion's subject is still around: the demo
# (its process group) and whatever it printed that it had made.
t_cleanup() {
	set +e
	trap '' INT TERM HUP
	[ -z "$DEMO_PID" ] || kill -KILL -- "-$DEMO_PID" 2>/dev/null
	for f in "$T"/*.out; do
		[ -f "$f" ] || continue
		cleanup_ns $(sed -n 's/^demo: namespaces \([^ ]*\) and \([^ ]*\),.*/\1 \2/p' "$f")
	done
	for p in $(pgrep -x l2tpv3d); do
		tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF "$T/" && kill -9 "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap t_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir "$T/tmp"

# A build tree like $top_builddir whose l2tpv3ctl fails `session create`.
mkdir -p "$T/failbuild/src/cli"
ln -s "$D" "$T/failbuild/src/l2tpv3d"
cat > "$T/failbuild/src/cli/l2tpv3ctl" <<EOF
#!/bin/sh
case " \$* " in *" session create "*) echo "forced failure (tests/integration/demo.sh)" >&2; exit 1 ;; esac
exec "$C" "\$@"
EOF
chmod +x "$T/failbuild/src/cli/l2tpv3ctl"

demo_ns() { ip netns list 2>/dev/null | awk '$1 ~ /^l2tpdemo-/ { print $1 }' | sort; }
# our_daemons: l2tpv3d processes (zombies too) started from a config in $T
our_daemons() {
	local p
	for p in $(pgrep -x l2tpv3d); do
		tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF "$T/" && echo "$p"
	done
	return 0
}
no_daemons() { [ -z "$(our_daemons)" ]; }

# run_demo NAME [--keep] [demo args]: starts the demo in its own process
# group (job control), TMPDIR=$T/tmp, stdin from a FIFO we hold open (so
# --keep waits at its prompt), output in $T/NAME.out; sets DEMO_PID.
run_demo() {
	local name=$1; shift
	rm -f "$T/in"; mkfifo "$T/in"
	set -m
	# SIGINT back to its default first: a shell cannot trap a signal ignored
	# when it started (as it is under a background job of a shell without
	# job control, e.g. "scripts/check &" from a script)
	TMPDIR=$T/tmp python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$DEMO" --no-deps "$@" < "$T/in" > "$T/$name.out" 2>&1 &
	DEMO_PID=$!
	set +m
	exec 9> "$T/in"
}

# wait_demo TIMEOUT_S: waits for the demo, sets RC (124 when it did not end)
wait_demo() {
	if wait_until "$1" sh -c "! kill -0 $DEMO_PID 2>/dev/null"; then
		wait "$DEMO_PID" 2>/dev/null; RC=$?
	else
		kill -KILL -- "-$DEMO_PID" 2>/dev/null; wait "$DEMO_PID" 2>/dev/null; RC=124
	fi
	exec 9>&-
	DEMO_PID=
}

# check_clean NAME: the namespaces, daemons and temp dir of run NAME are gone
check_clean() {
	local name=$1 made tag left fail0=$TESTS_FAIL
	made=$(sed -n 's/^demo: namespaces \([^ ]*\) and \([^ ]*\),.*/\1 \2/p' "$T/$name.out")
	[ -n "$made" ]
	log_test $? "$name: the demo said which namespaces it made ($made)"
	# its own namespaces, by the tag it named them with: another demo or
	# another run of this test may have made l2tpdemo-* ones meanwhile
	tag=${made##*-}
	left=$(demo_ns | grep -x -- "l2tpdemo-[a-z]*-$tag" | tr '\n' ' ')
	[ -n "$tag" ] && [ -z "$left" ]
	log_test $? "$name: no l2tpdemo-*-$tag namespace left ${left:+($left)}"
	# a killed daemon may linger a moment as a zombie before it is reaped
	wait_until 5 no_daemons
	log_test $? "$name: no l2tpv3d of the demo left $(our_daemons | tr '\n' ' ')"
	[ -z "$(ls -A "$T/tmp")" ]
	log_test $? "$name: no temp dir left $(ls -A "$T/tmp" | tr '\n' ' ')"
	if [ "$TESTS_FAIL" != "$fail0" ]; then echo "--- $name output"; tail -n 30 "$T/$name.out"; fi
}

BUILD=(--builddir "$top_builddir")

# 1. success: the whole demo, exit 0
run_demo success "${BUILD[@]}" -n 2 -s 2
wait_demo 120
[ $RC = 0 ]
log_test $? "success: scripts/demo -n 2 -s 2 exits 0 (exit $RC)"
grep -q "session t2-s2 established" "$T/success.out" && grep -q "^demo: stopping" "$T/success.out"
log_test $? "success: it brought up every session and stopped"
check_clean success

# 2. failure half-way: both daemons up, a tunnel established, then an error
run_demo failure --builddir "$T/failbuild" -n 2 -s 2
wait_demo 120
[ $RC != 0 ] && [ $RC != 124 ] && grep -q "tunnel t1 established" "$T/failure.out" &&
	grep -q "forced failure" "$T/failure.out"
log_test $? "failure: a failing session create ends the demo with an error (exit $RC)"
check_clean failure

# up NAME: both daemons and both namespaces of run NAME exist (so that the
# checks after an interruption are not vacuous)
up() {
	local ns
	[ "$(our_daemons | wc -l)" = 2 ] || return 1
	for ns in $(sed -n 's/^demo: namespaces \([^ ]*\) and \([^ ]*\),.*/\1 \2/p' "$T/$1.out"); do
		ip netns list | awk '{ print $1 }' | grep -qxF "$ns" || return 1
	done
}

# 3. Ctrl-C while tunnels and sessions are being created
run_demo sigint-bringup "${BUILD[@]}" -n 30 -s 4
wait_until 60 grep -q "tunnel t1 established" "$T/sigint-bringup.out" && up sigint-bringup
log_test $? "bring-up: daemons and namespaces up, tunnels being created"
kill -INT -- "-$DEMO_PID" 2>/dev/null
wait_demo 60
[ $RC = 130 ] && ! grep -q "^demo: stopping" "$T/sigint-bringup.out"
rc=$?; log_test $rc "Ctrl-C during bring-up: the demo exits 130 (exit $RC)"
[ $rc = 0 ] || { echo "    the demo's last lines:"; tail -5 "$T/sigint-bringup.out" | sed 's/^/    /'; }
check_clean sigint-bringup

# 4. Ctrl-C at the --keep prompt: everything up, the demo waiting for Enter
# (read prints its prompt only to a terminal: wait for the line before it)
run_demo sigint-keep "${BUILD[@]}" -n 2 -s 1 --keep
wait_until 60 grep -q "daemons keep running" "$T/sigint-keep.out" && up sigint-keep
log_test $? "--keep: the demo waits at its prompt with the daemons up"
kill -INT -- "-$DEMO_PID" 2>/dev/null
wait_demo 60
[ $RC = 130 ]
log_test $? "Ctrl-C at the --keep prompt: the demo exits 130 (exit $RC)"
check_clean sigint-keep

# 5. SIGTERM to the demo's shell alone (a supervisor, timeout(1))
run_demo sigterm "${BUILD[@]}" -n 2 -s 1 --keep
wait_until 60 grep -q "daemons keep running" "$T/sigterm.out" && up sigterm
log_test $? "--keep: up again, for SIGTERM"
kill -TERM "$DEMO_PID" 2>/dev/null
wait_demo 60
[ $RC = 143 ]
log_test $? "SIGTERM at the --keep prompt: the demo exits 143 (exit $RC)"
check_clean sigterm

it_done
