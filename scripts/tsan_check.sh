#!/usr/bin/env bash
# ThreadSanitizer over the tests of concurrent readers and writers: the
# collection's pinned views against a committing, compacting writer with
# background merges (collection_snapshot_test, store_test), the Hamming and
# LSH stores' readers during writes (index_store_test), the stream
# (stream_test). Not part of CI (a third build of the library); run it after
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
tests=(collection_snapshot_test store_test index_store_test stream_test)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DNEARDUP_SANITIZE=thread \
  -DNEARDUP_ENABLE_CUDA=OFF -DNEARDUP_BUILD_BENCHMARKS=OFF -DNEARDUP_BUILD_MPI=OFF \
  -DNEARDUP_BUILD_EXAMPLES=OFF -DNEARDUP_UNITY_TESTS=ON "${launcher[@]}" >/dev/null
cmake --build build/tsan -j "$jobs" --target "${tests[@]}"
# A report fails the binary (exitcode 66); second_deadlock_stack for lock
# order reports.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export NEARDUP_SOURCE_DIR=$PWD
status=0
for binary in tests/collection_snapshot_test src/store/store_test \
              src/index/index_store_test src/stream/stream_test; do
  echo "== $binary"
  (cd "build/tsan/$(dirname "$binary")" && "./$(basename "$binary")" --gtest_brief=1) || status=1
done
[ $status = 0 ] && echo "tsan_check: no ThreadSanitizer report, every test passed"
exit $status
