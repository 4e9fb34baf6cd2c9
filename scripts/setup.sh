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
echo "== neardup fingerprint --simhash examples/news.jsonl (12 short articles, 4 near-duplicate groups)"
build/release/neardup fingerprint --simhash examples/news.jsonl
