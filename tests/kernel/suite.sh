#!/usr/bin/env bash
# tests/kernel/suite.sh - the whole kernel data plane suite, one script
# after the other in one environment (`make check-kernel` runs it in ONE
# vm-run guest: boot once, pay process start-up under emulation once).
#
#   suite.sh [TEST...]      default: all, in the order below
#
# Prints every test's `TEST: ... [ OK ]` lines and a final
# "N passed, N failed" over all of them.  Exit 0 when all passed, 1 when
# any failed, 77 when every script skipped.
dir=$(cd "$(dirname "$0")" && pwd)
TESTS=${*:-pseudowire cookies prepared lifecycle lost forged-notices xconnect ppp overrun statefile restart scale transport-opts metrics crash ha-pair}
ok=0 fail=0 ran=0 skipped=0 broken=
log=$(mktemp /tmp/l2tpv3d-suite.XXXXXX)
t0=$(date +%s)
times=
for t in $TESTS; do
	echo "=== $t"
	t1=$(date +%s)
	"$dir/$t.sh" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	times="$times $t $(( $(date +%s) - t1 ))"
	if [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
		continue
	fi
	ran=$((ran + 1))
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	if [ -z "$line" ]; then	# died before its summary
		fail=$((fail + 1)) broken="$broken $t"
		continue
	fi
	ok=$((ok + ${line%% passed*}))
	f=${line#*, }; fail=$((fail + ${f%% failed}))
	[ "$rc" = 0 ] || [ "${f%% failed}" != 0 ] || { fail=$((fail + 1)); broken="$broken $t(rc $rc)"; }
done
rm -f "$log"
echo "=== kernel suite: $ran scripts run, $skipped skipped, $(( $(date +%s) - t0 )) s${broken:+; broken:$broken}"
echo "=== seconds per script:$times"
echo "$ok passed, $fail failed"
[ "$ran" = 0 ] && exit 77
[ "$fail" = 0 ]
