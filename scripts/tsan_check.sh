#!/usr/bin/env bash
# ThreadSanitizer over the tests of concurrent readers and writers: the
# collection's pinned views against a committing, compacting writer with
# background merges (collection_snapshot_test, store_test), the Hamming and
# LSH stores' readers during writes (index_store_test), the stream
# (stream_test), and since session 18 the mapping fault guard's SIGBUS
# registry (io_test, and engine_test's inputs that shrink under the
# pipeline). Not part of CI (a third build of the library); run it after
# a change to any of them.
#
#   scripts/tsan_check.sh [-j N]
#
# The test binaries of a TSan build run oneTBB with one thread
# (tests/support/one_tbb_thread.cc says why), so every report is about the
# threads the library and the tests start themselves. Exit status: 0 when
# every binary passed without a report.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
[ "${1:-}" = "-j" ] && jobs=$2
tests=(collection_snapshot_test store_test index_store_test stream_test io_test engine_test)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The tsan preset (CMakePresets.json, session 18): -O1 -g1, no benchmarks,
# CUDA, MPI or examples.
cmake --preset tsan -DNEARDUP_UNITY_TESTS=ON "${launcher[@]}" >/dev/null
cmake --build build/tsan -j "$jobs" --target "${tests[@]}"
# A report fails the binary (exitcode 66); second_deadlock_stack for lock
# order reports.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export NEARDUP_SOURCE_DIR=$PWD
status=0
# Each binary with its gtest filter (io_test's EffectiveThreadsTest expects
# oneTBB's threads, which a TSan test binary does not have).
for run in 'tests/collection_snapshot_test:*' 'src/store/store_test:*' \
           'src/index/index_store_test:*' 'src/stream/stream_test:*' \
           'src/io/io_test:-EffectiveThreadsTest.*' \
           'src/engine/engine_test:ShrinkingInput*:*Pipeline*'; do
  binary=${run%%:*}
  filter=${run#*:}
  echo "== $binary $filter"
  (cd "build/tsan/$(dirname "$binary")" &&
    "./$(basename "$binary")" --gtest_brief=1 "--gtest_filter=$filter") || status=1
done
[ $status = 0 ] && echo "tsan_check: no ThreadSanitizer report, every test passed"
exit $status
