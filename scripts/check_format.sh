#!/usr/bin/env bash
# Fails when a C++ source is not formatted as .clang-format says.
# With --fix, formats them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- '*.h' '*.cc' '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ ${#files[@]} -eq 0 ]; then exit 0; fi
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run -Werror "${files[@]}"
  echo "clang-format: ${#files[@]} files clean"
fi
