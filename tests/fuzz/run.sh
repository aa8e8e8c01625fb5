#!/bin/sh
# tests/fuzz/run.sh [SECONDS] - fuzz the control message codec with libFuzzer.
#
# Builds tests/fuzz/fuzz_msg straight from the sources with
# clang -fsanitize=fuzzer,address,undefined (no configure needed), seeds the
# corpus with every sample message (wire-oracle-gen -s), and runs for
# SECONDS (default 30).  Fails on any crash, sanitizer report or leak; exits
# 77 (skip) when clang or libFuzzer is not available.
#
# Environment: CLANG (default clang), FUZZ_DIR (build and corpus directory,
# default tests/fuzz/corpus-run in the tree, which git ignores).

secs=${1:-30}
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
src="src/proto/avp.c src/proto/msg.c src/proto/auth.c usl/buf.c tests/unit/wire-oracle-samples.c"
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

echo "fuzzing for ${secs}s: $out/fuzz_msg (corpus $out/corpus)"
# -error_exitcode: libFuzzer's default, 77, would read as "skipped"
"$out/fuzz_msg" -max_total_time="$secs" -error_exitcode=1 -timeout_exitcode=1 \
	-detect_leaks=1 -print_final_stats=1 -max_len=4100 \
	-artifact_prefix="$out/" "$out/corpus" "$out/seeds" >"$out/fuzz.log" 2>&1
rc=$?
grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|cov: " \
	"$out/fuzz.log" | tail -4
if [ $rc -ne 0 ]; then
	tail -40 "$out/fuzz.log"
	echo "FAIL: the fuzzer found a problem (rc $rc); reproducer in $out/crash-* or leak-*"
	exit 1
fi
echo "PASS: no crash, sanitizer report or leak in ${secs}s"
