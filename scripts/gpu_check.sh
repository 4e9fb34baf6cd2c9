#!/usr/bin/env bash
# The GPU backend's check, in two halves (issue 19, docs/GPU.md):
#
#   scripts/gpu_check.sh package DIR   on the build machine (with CUDA's nvcc):
#       builds cuda_test and neardup_gpu_check (release preset; sm_90 + PTX,
#       CUDA runtime linked statically), copies them, the shared libraries
#       they need (ldd, minus the C and C++ runtimes; as lib.tar.gz), this
#       script and a
#       zstd-compressed real corpus (cache/corpora/spamassassin.jsonl, from
#       scripts/fetch_corpora.sh, if present) into DIR. With
#       GPU_CHECK_BASELINE=FILE, FILE (an earlier neardup_gpu_check) goes
#       along as DIR/baseline/neardup_gpu_check, to be timed on the same
#       device (the lent machines differ from call to call).
#   scripts/gpu_check.sh run DIR       on the GPU machine (no build tools or
#       Debian libraries needed): runs the bit-identity tests (golden-style
#       texts, a seeded corpus, many small batches, the real corpus) and the
#       throughput benchmark, then both again with the UTF-8 path on
#       (NEARDUP_GPU_UTF8=1; the benchmark quick), and prints one summary;
#       then the baseline's quick run, if packaged. Writes the full log to
#       $OUT/gpu_check.log when OUT is set.
#
# Exit status: 0 when every test passed and every fingerprint was identical.
set -uo pipefail

mode=${1:-}
dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ]; then
  echo "usage: $0 package|run DIR" >&2
  exit 2
fi

if [ "$mode" = package ]; then
  set -e
  cd "$(dirname "$0")/.."
  cmake --preset release ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
  cmake --build --preset release -j2 --target cuda_test neardup_gpu_check
  mkdir -p "$dir/lib"
  cp build/release/src/gpu/cuda_test build/release/bench/neardup_gpu_check "$dir/"
  cp scripts/gpu_check.sh "$dir/"
  for bin in "$dir/cuda_test" "$dir/neardup_gpu_check"; do
    ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
      case "$(basename "$lib")" in
        libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
        *) cp -L "$lib" "$dir/lib/" ;;
      esac
    done
  done
  # Compressed: the readers' libraries (ICU, poppler, ...) are tens of MB,
  # and the device tool carries at most 64 MiB.
  tar -C "$dir" -czf "$dir/lib.tar.gz" lib
  rm -rf "$dir/lib"
  # libstdc++ as a fallback, used only if the GPU machine has none new enough.
  mkdir -p "$dir/lib-fallback"
  cp -L "$(ldd "$dir/cuda_test" | awk '/libstdc\+\+/ {print $3}')" "$dir/lib-fallback/"
  if [ -n "${GPU_CHECK_BASELINE:-}" ]; then
    mkdir -p "$dir/baseline"
    cp "$GPU_CHECK_BASELINE" "$dir/baseline/neardup_gpu_check"
  fi
  if [ -f cache/corpora/spamassassin.jsonl ]; then
    zstd -q -f -19 cache/corpora/spamassassin.jsonl -o "$dir/spamassassin.jsonl.zst"
  fi
  du -sh "$dir"
  exit 0
fi

if [ "$mode" != run ]; then
  echo "unknown mode $mode" >&2
  exit 2
fi

dir=$(cd "$dir" && pwd)
log=${OUT:+$OUT/gpu_check.log}
log=${log:-/dev/null}
exec > >(tee "$log") 2>&1
libdir="$dir/lib"
if [ -f "$dir/lib.tar.gz" ]; then
  libdir=$(mktemp -d)/lib
  tar -C "$(dirname "$libdir")" -xzf "$dir/lib.tar.gz"
fi
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$dir/cuda_test" | grep -q "not found"; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir/lib-fallback"
fi
echo "== $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -m) $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm \
  --format=csv,noheader 2>/dev/null || echo "nvidia-smi unavailable"
ldd "$dir/cuda_test" | grep "not found" && echo "missing libraries (above)"
corpus=""
[ -f "$dir/spamassassin.jsonl.zst" ] && corpus="$dir/spamassassin.jsonl.zst"

echo "== bit identity (GoogleTest)"
NEARDUP_GPU_CORPUS="$corpus" timeout 120 "$dir/cuda_test" --gtest_brief=1
tests=$?
echo "cuda_test exit status: $tests"
# Session 7 wrote the flat FingerprintBatch output and the pinned input seam
# (Fingerprinter::NewInput) without a GPU: name their test's result here.
echo "== flat batch from the backend's pinned input (unverified before this run)"
timeout 60 "$dir/cuda_test" --gtest_filter='CudaFingerprinterTest.FlatBatchFromPinnedInputEqualsCpu'
flat=$?
echo "flat batch / pinned input test exit status: $flat"
[ "$tests" -eq 0 ] && tests=$flat

echo "== check and throughput"
timeout 170 "$dir/neardup_gpu_check" ${corpus:+--corpus "$corpus"} ${GPU_CHECK_ARGS:-}
check=$?
echo "neardup_gpu_check exit status: $check"
# The UTF-8 path (off by default until this passes): every bit-identity
# test again with it on, then a quick check and benchmark (the real corpus's
# row shows how many bytes still fall back to the CPU).
echo "== UTF-8 path (NEARDUP_GPU_UTF8=1): bit identity (GoogleTest)"
NEARDUP_GPU_UTF8=1 NEARDUP_GPU_CORPUS="$corpus" timeout 120 "$dir/cuda_test" --gtest_brief=1
utf8_tests=$?
echo "cuda_test (UTF-8 path) exit status: $utf8_tests"
echo "== UTF-8 path: check and throughput (quick)"
NEARDUP_GPU_UTF8=1 timeout 120 "$dir/neardup_gpu_check" --quick ${corpus:+--corpus "$corpus"} |
  sed -n '/^identity\|^  \|UTF-8 path\|^no GPU\|^device/p; /==== neardup GPU check summary/,$p'
utf8_check=${PIPESTATUS[0]}
echo "neardup_gpu_check (UTF-8 path) exit status: $utf8_check"
if [ -x "$dir/baseline/neardup_gpu_check" ]; then
  echo "== baseline: the earlier version, quick run on the same device"
  timeout 100 "$dir/baseline/neardup_gpu_check" --quick | sed -n '/==== neardup GPU check summary/,$p'
fi
pass() { [ "$1" = 0 ] && echo PASS || echo FAIL; }
echo "== gpu_check: tests $(pass $tests), check $(pass $check);" \
  "UTF-8 path: tests $(pass $utf8_tests), check $(pass $utf8_check)"
[ $tests = 0 ] && [ $check = 0 ] && [ $utf8_tests = 0 ] && [ $utf8_check = 0 ]
