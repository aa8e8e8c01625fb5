#!/bin/sh
# tests/fuzz/run.sh [SECONDS [ENGINE_SECONDS [RESTORE_SECONDS [JSON_SECONDS]]]] - fuzz with libFuzzer:
#
#   fuzz_msg     the control message codec, SECONDS (default 30), seeded
#                with every sample message (wire-oracle-gen -s);
#   fuzz_engine  the whole engine (one control connection with its
#                sessions: cc, sess, rd, codec, auth) driven by scripts of
#                datagrams, clock steps and local operations, ENGINE_SECONDS
#                (default 60), seeded by tests/fuzz/mkseeds.py with typical
#                exchanges and the messages of tests/fixtures/pcap;
#   fuzz_restore the restart handover's reader (l2tp_cc_restore), RESTORE_SECONDS
#                (default 20), seeded with connections saved after real
#                exchanges (tests/fuzz/restore-seed.c);
#   fuzz_json    the control socket's request reader (usl/json), JSON_SECONDS
#                (default 10), seeded with typical requests; its oracle
#                writes each document read back and reads it again.
#
# Both are built straight from the sources with
# clang -fsanitize=fuzzer,address,undefined (no configure needed).  Fails on
# any crash, sanitizer report, leak or oracle abort; exits 77 (skip) when
# clang or libFuzzer is not available.  A campaign: FUZZ_RUNS=100000000
# tests/fuzz/run.sh 0 86400 (see tests/fuzz/README).
#
# Environment: CLANG (default clang), FUZZ_SANITIZE (the engine fuzzer's
# sanitizers, default address,undefined; empty for a campaign's raw speed,
# about 4x), FUZZ_DIR (build and corpus directory,
# default tests/fuzz/corpus-run in the tree, which git ignores), FUZZ_RUNS
# (fuzz_engine stops after that many executions as well).

secs=${1:-30}
esecs=${2:-60}
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
top=$(cd "$here/../.." && pwd)
cc=${CLANG:-clang}
out=${FUZZ_DIR:-$top/tests/fuzz/corpus-run}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: $cc not found (Debian package clang): cannot build the fuzzer"
	exit 77
fi
if ! echo 'int main(void){return 0;}' | "$cc" -x c - -o /dev/null -lcrypto 2>/dev/null; then
	echo "FAIL: libcrypto not found (Debian package libssl-dev)"
	exit 1
fi

mkdir -p "$out/corpus" "$out/seeds" || exit 1
cd "$top" || exit 1
src="src/proto/avp.c src/proto/msg.c src/proto/auth.c usl/buf.c usl/escape.c tests/unit/wire-oracle-samples.c"
flags="-g -O1 -std=gnu11 -I. -Isrc -Itests/unit -D_GNU_SOURCE"

if ! "$cc" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	tests/fuzz/fuzz_msg.c $src -lcrypto -o "$out/fuzz_msg" 2>"$out/build.log"; then
	if grep -q -i "fuzzer" "$out/build.log"; then
		cat "$out/build.log"
		echo "SKIP: $cc cannot link libFuzzer (-fsanitize=fuzzer)"
		exit 77
	fi
	cat "$out/build.log"
	echo "FAIL: fuzz_msg does not build"
	exit 1
fi
if ! "$cc" $flags tests/unit/wire-oracle-gen.c $src -lcrypto -o "$out/wire-oracle-gen" ||
   ! "$out/wire-oracle-gen" -s "$out/seeds"; then
	echo "FAIL: cannot write the seed corpus"
	exit 1
fi

esan=${FUZZ_SANITIZE-address,undefined}
esrc="$src src/proto/cc.c src/proto/sess.c src/proto/rd.c usl/log.c usl/time.c
	usl/timer.c usl/rbtree.c usl/hash.c usl/pack.c"
if ! "$cc" $flags -fsanitize=fuzzer${esan:+,$esan} ${esan:+-fno-sanitize-recover=all} \
	tests/fuzz/fuzz_engine.c $esrc -lcrypto -o "$out/fuzz_engine" 2>"$out/build-engine.log"; then
	cat "$out/build-engine.log"
	echo "FAIL: fuzz_engine does not build"
	exit 1
fi
if ! "$cc" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	tests/fuzz/fuzz_restore.c $esrc -lcrypto -o "$out/fuzz_restore" \
	2>"$out/build-restore.log" ||
   ! "$cc" $flags tests/fuzz/restore-seed.c tests/unit/engine_harness.c $esrc \
	$(pkg-config --cflags --libs check) -lcrypto -o "$out/restore-seed" 2>>"$out/build-restore.log"; then
	cat "$out/build-restore.log"
	echo "FAIL: fuzz_restore or its seed writer does not build"
	exit 1
fi
mkdir -p "$out/restore-corpus" "$out/restore-seeds"
"$out/restore-seed" "$out/restore-seeds" || { echo "FAIL: cannot write the restore seeds"; exit 1; }
if ! "$cc" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	tests/fuzz/fuzz_json.c usl/json.c -o "$out/fuzz_json" 2>"$out/build-json.log"; then
	cat "$out/build-json.log"
	echo "FAIL: fuzz_json does not build"
	exit 1
fi
mkdir -p "$out/json-corpus" "$out/json-seeds"
printf '%s' '{"id": 7, "cmd": "tunnel create", "args": {"peer": "192.0.2.2", "wait": false, "hello_interval": 60}, "quiet": true}' >"$out/json-seeds/create"
printf '%s' '{"id":1,"cmd":"monitor","args":{"events":["session-up","tunnel-down"]}}' >"$out/json-seeds/monitor"
printf '%s' '{"s":"q\" \u00e9 \ud83d\ude00 \u0000","n":[-0,1.5e-3,-9223372036854775809,null,true,{}]}' >"$out/json-seeds/values"
mkdir -p "$out/engine-corpus" "$out/engine-seeds"
python3 tests/fuzz/mkseeds.py "$out/engine-seeds" tests/fixtures/pcap/*.pcap || {
	echo "FAIL: cannot write the engine seeds"
	exit 1
}

# fuzz NAME TARGET SECONDS PREFIX LOG [libFuzzer options...]: one run, its
# figures, and the end of its log with a FAIL line on any finding.
fuzz() {
	name=$1 target=$2 t=$3 prefix=$4 log=$5
	shift 5
	echo "fuzzing for ${t}s: $target"
	# -error_exitcode: libFuzzer's default, 77, would read as "skipped"
	"$target" -max_total_time="$t" -error_exitcode=1 -timeout_exitcode=1 -detect_leaks=1 \
		-print_final_stats=1 -artifact_prefix="$prefix" "$@" >"$log" 2>&1
	rc=$?
	grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|cov: " \
		"$log" | tail -4
	[ $rc -eq 0 ] && return 0
	tail -60 "$log"
	echo "FAIL: the $name fuzzer found a problem (rc $rc); reproducer in ${prefix}crash-* or ${prefix}leak-*"
	exit 1
}

if [ "$secs" -gt 0 ]; then
	fuzz codec "$out/fuzz_msg" "$secs" "$out/" "$out/fuzz.log" -max_len=4100 \
		"$out/corpus" "$out/seeds"
fi
fuzz engine "$out/fuzz_engine" "$esecs" "$out/engine-" "$out/fuzz-engine.log" \
	${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -max_len=16384 -timeout=10 \
	"$out/engine-corpus" "$out/engine-seeds"
rsecs=${3:-20}
fuzz restore "$out/fuzz_restore" "$rsecs" "$out/restore-" "$out/fuzz-restore.log" \
	-max_len=65536 "$out/restore-corpus" "$out/restore-seeds"
jsecs=${4:-10}
fuzz json "$out/fuzz_json" "$jsecs" "$out/json-" "$out/fuzz-json.log" \
	-max_len=4096 "$out/json-corpus" "$out/json-seeds"
echo "PASS: no crash, sanitizer report, leak or oracle abort (codec ${secs}s, engine ${esecs}s, restore ${rsecs}s, json ${jsecs}s)"
