#!/usr/bin/env bash
# Stage profile of `neardup pairs` and `dedup` after fingerprinting (issue 13,
# docs/PARALLELISM.md): makes the two corpora of bench/make_neardup_corpus.py
# (once) and runs each command with --profile at 1 and 2 threads, output to
# /dev/null. Prints the machine and the profile lines on stdout.
#   bench/near_duplicate_stages.sh [DATA_DIR] [NEARDUP]
# Defaults: cache/neardup_corpora, build/release/neardup.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-cache/neardup_corpora}
neardup=${2:-build/release/neardup}
python=/usr/bin/python3
mkdir -p "$data"
[ -f "$data/many_pairs.jsonl" ] ||
  "$python" bench/make_neardup_corpus.py --preset many-pairs -o "$data/many_pairs.jsonl"
[ -f "$data/few_dups.jsonl" ] ||
  "$python" bench/make_neardup_corpus.py --preset few-dups -o "$data/few_dups.jsonl"
echo "nproc=$(nproc), $(lscpu | sed -n 's/^Model name: *//p' | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
run() {
  for threads in 1 2; do
    echo "== $* --threads $threads"
    "$neardup" "$@" --profile --quiet --threads "$threads" >/dev/null 2>"$data/profile.txt" ||
      { cat "$data/profile.txt"; exit 1; }
    cat "$data/profile.txt"
  done
}
run pairs --threshold 0.5 "$data/many_pairs.jsonl"
run dedup --threshold 0.8 "$data/many_pairs.jsonl"
run dedup --threshold 0.8 "$data/few_dups.jsonl"
