#!/bin/sh
# tools/fuzz-wire.sh [SECONDS] [LIBFUZZER-ARGS...] - coverage-guided fuzzing
# of what arrives from the wire (tests/fuzz/fuzz_wire.h, docs/BUILDING.md,
# "The wire fuzzer").
#
# Builds liblapi and the fuzz target with clang and
# -fsanitize=fuzzer-no-link,address,undefined in build-fuzz/ (or
# $FUZZ_BUILD), then runs a 2-task job over shm for SECONDS (default 60)
# at nice 19 (FUZZ_TASKS=3: the 3-task job whose inputs claim task 2,
# which leaves without LAPI_Term at the end, so lapirun says 70;
# FUZZ_PROVIDER: another provider, e.g. "tcp;ofi_rxm"):
# task 1 runs libFuzzer, starting from the seed corpus
# tests/fuzz/corpus, keeping what it finds new in build-fuzz/corpus and
# any crashing input as build-fuzz/crash-*.  Further arguments go to
# libFuzzer (-runs=N, a file to replay, ...).
set -eu
secs=${1:-60}
[ $# -gt 0 ] && shift
top=$(cd "$(dirname "$0")/.." && pwd)
bdir=${FUZZ_BUILD:-$top/build-fuzz}
cc=${FUZZ_CC:-clang}

if [ ! -f "$bdir/CMakeCache.txt" ]; then
  nice -n 10 cmake -S "$top" -B "$bdir" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPENLAPI_SANITIZE=fuzzer \
    -DOPENLAPI_BUILD_EXAMPLES=OFF -DOPENLAPI_BUILD_BENCH=OFF >/dev/null
fi
nice -n 10 cmake --build "$bdir" -j2 --target lapirun fuzz_wire_libfuzzer \
  >/dev/null

mkdir -p "$bdir/corpus"
cd "$bdir"
# The job's alarm covers the campaign and its end; lapirun's timeout is
# for joining only.  LeakSanitizer runs at exit; UBSan stops at the first
# report (the build makes it fatal).
export FUZZ_LIMIT_S=$((secs + 120))
export LAPI_DEBUG=0 CRTS_LDM_STACK_SIZE=128K
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec nice -n 19 "$bdir/bin/lapirun" -n "${FUZZ_TASKS:-2}" \
  --provider "${FUZZ_PROVIDER:-shm}" --timeout 120 \
  "$bdir/tests/fuzz_wire_libfuzzer" -max_total_time="$secs" -max_len=9000 \
  -print_final_stats=1 -timeout=30 -artifact_prefix="$bdir/" "$@" \
  "$bdir/corpus" "$top/tests/fuzz/corpus"
