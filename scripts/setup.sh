#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs every dependency from
# Debian's packages (apt, as root or through sudo), builds neardup (Release),
# and runs the main job on the bundled example corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release >/dev/null
targets=(neardup)
# The Python package too, when pybind11 was found (docs/PYTHON.md).
if grep -q '^neardup_python:' <(cmake --build --preset release --target help 2>/dev/null); then
  targets+=(neardup_python)
fi
cmake --build --preset release -j "$(nproc)" --target "${targets[@]}"

echo
echo "== neardup clusters --threshold 0.6 examples/news.jsonl"
echo "   (12 short articles, among them 4 groups of republished or re-cased copies)"
build/release/neardup clusters --threshold 0.6 examples/news.jsonl
echo
echo "== neardup pairs --threshold 0.6 examples/news.jsonl"
build/release/neardup pairs --threshold 0.6 examples/news.jsonl
if [ -d build/release/python/neardup ]; then
  echo
  echo "== Python: neardup.clusters() on the same file (PYTHONPATH=build/release/python)"
  PYTHONPATH=build/release/python /usr/bin/python3 -c '
import json, neardup
docs = [(r["id"], r["text"]) for r in map(json.loads, open("examples/news.jsonl"))]
for cluster in neardup.clusters(docs, threshold=0.6):
    print(cluster)'
fi
