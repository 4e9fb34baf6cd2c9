#!/usr/bin/env bash
# The cost of a one-document commit on a large collection (issue 11 section 1:
# a commit should cost in proportion to its change, not to the archive).
# Builds a collection of N synthetic documents (default 100000, about 40 MB
# of text) with `neardup index add`, then times ROUNDS single-document adds
# and prints, per round, the wall time and the bytes of the chunk index
# files that commit wrote (a tier of its postings, or a merge of tiers; the
# whole index before tiers), and the collection's index size.
#   bench/collection/one_document_add.sh [NEARDUP_BINARY] [N] [ROUNDS]
# Writes to a temporary directory, removed at the end.
set -euo pipefail
neardup=${1:-build/release/neardup}
num_docs=${2:-100000}
rounds=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 - "$num_docs" "$work/archive.jsonl" <<'PY'
import json, random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(11)
words = ["w%d" % i for i in range(50000)]
with open(path, "w") as out:
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(40, 80)))
        out.write(json.dumps({"id": "doc%d" % i, "text": text}) + "\n")
PY

"$neardup" index create "$work/c" >/dev/null
start=$(date +%s.%N)
"$neardup" index add "$work/c" "$work/archive.jsonl" >/dev/null 2>&1
end=$(date +%s.%N)
echo "built $num_docs documents in $(awk "BEGIN { printf \"%.3f\", $end - $start }") s"
index_bytes=$(du -b "$work"/c/data/index-*.ndi | awk '{s += $1} END {print s}')
echo "chunk index files: $index_bytes bytes"

for round in $(seq 1 "$rounds"); do
  printf '{"id": "extra%d", "text": "one more document number %d with a few words of its own"}\n' \
    "$round" "$round" >"$work/one.jsonl"
  before=$(du -sb "$work/c/data" | cut -f1)
  old_files=$(ls "$work"/c/data/index-*.ndi)
  # Wall and CPU (user + system) seconds: on a loaded machine the CPU time
  # is the figure to compare.
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$neardup" index add "$work/c" "$work/one.jsonl" \
    >/dev/null 2>&1
  read -r wall user sys <"$work/time"
  written=0
  for f in "$work"/c/data/index-*.ndi; do
    grep -qxF "$f" <<<"$old_files" || written=$((written + $(stat -c %s "$f")))
  done
  echo "round $round: one-document add ${wall} s wall, $(awk "BEGIN { print $user + $sys }") s CPU," \
       "index files written $written bytes (data/ was $before bytes)"
done
"$neardup" index stats "$work/c" | tr ',' '\n' | grep -E '"(documents|index_postings|index_bytes|index_tiers)"' |
  tr '\n' ' '
echo
