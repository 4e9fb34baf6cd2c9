#!/usr/bin/env bash
# Builds and runs the whole test suite: checks the modules' layering, then a
# Release build and an ASan+UBSan build, each under CTest, then checks that
# every source is clang-formatted.
# This is the README's test command and exactly what CI (.ci/run) runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh

echo "== layering"
scripts/check_layering.sh

jobs=$(nproc)
for preset in release asan; do
  echo "== configure + build ($preset)"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== test ($preset)"
  ctest --preset "$preset" -j "$jobs"
done

echo "== clang-format"
scripts/check_format.sh
