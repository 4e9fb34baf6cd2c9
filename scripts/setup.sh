#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs every dependency from
# Debian's packages (apt, as root or through sudo), builds neardup (Release),
# and runs the main job on the bundled example corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target neardup

echo
echo "== neardup clusters --threshold 0.6 examples/news.jsonl"
echo "   (12 short articles, among them 4 groups of republished or re-cased copies)"
build/release/neardup clusters --threshold 0.6 examples/news.jsonl
echo
echo "== neardup pairs --threshold 0.6 examples/news.jsonl"
build/release/neardup pairs --threshold 0.6 examples/news.jsonl
