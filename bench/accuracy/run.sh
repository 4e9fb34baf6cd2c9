#!/usr/bin/env bash
# Accuracy harness driver: fetches the corpora into cache/ (git-ignored),
# builds the harness in Release and prints the markdown tables on stdout
# (progress on stderr). Extra arguments go to the harness, e.g.
#   bench/accuracy/run.sh --max-spam=3000 --spam-sources=200
# See docs/ACCURACY.md for the figures and what they mean.
set -euo pipefail
cd "$(dirname "$0")/../.."

scripts/fetch_corpora.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target accuracy_harness >&2
echo "Machine: nproc=$(nproc), $(lscpu | sed -n 's/^Model name: *//p' | head -1)" >&2
exec build/release/bench/accuracy_harness "$@"
