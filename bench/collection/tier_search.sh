#!/usr/bin/env bash
# Search over the tiers of a chunk index against one merged index (issue 11
# section 1): the 1000 queries of containment_bench against the synthetic
# archive split into 3 and 6 tiers (each a quarter of the one before), with
# every 50th document dead and with none, and against the same live
# documents (every 50th dead) merged into one index, in one process, REPEAT times each in a random interleaved order
# (so a change of the machine's load hits all alike). Prints the CPU ms per query of each and the ratio to the
# merged index; the answers' hash must be the same on every line.
#   bench/collection/tier_search.sh [CONTAINMENT_BENCH] [N] [REPEAT]
set -euo pipefail
bench=${1:-build/release/bench/containment_bench}
num_docs=${2:-100000}
repeat=${3:-3}
NEARDUP_CONTAINMENT_BENCH_DOCS=$num_docs "$bench" --benchmark_filter='QueryTiers' \
  --benchmark_repetitions="$repeat" --benchmark_enable_random_interleaving=true --benchmark_format=json 2>/dev/null |
  /usr/bin/python3 -c '
import json, statistics, sys
runs = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("run_type") == "iteration"]
by = {}
for b in runs:
    by.setdefault("/".join(b["name"].split("/")[1:3]), []).append(b)
merged = statistics.median(b["cpu_ms_per_query"] for b in by["1/50"])
for key, bs in sorted(by.items(), key=lambda kv: (int(kv[0].split("/")[0]), -int(kv[0].split("/")[1]))):
    tiers, dead = key.split("/")
    ms = [b["cpu_ms_per_query"] for b in bs]
    med = statistics.median(ms)
    print("%s tiers, %s: cpu ms/query median %.4f (runs %s), x%.3f of merged, visited/query %.0f, answers %s"
          % (tiers, "every %sth dead" % dead if dead != "0" else "none dead", med,
             " ".join("%.4f" % m for m in ms), med / merged,
             bs[0]["visited_per_query"], sorted({int(b["answers_hash"]) for b in bs})))
'
