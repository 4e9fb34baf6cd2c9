#!/bin/bash
# The lead's end-of-session quiet run: every issue's whole-command figure
# for two builds, alternating, on a machine with nothing else running
# (docs/BENCHMARKS.md "Session 12, end" came from it; ~15 minutes).
#
#   bench/quiet_ab.sh BASE_DIR NEW_DIR [all|fp|corpus|serve|pause|mpi]
#
# Each DIR holds `neardup`, `neardup-mpi` and `bench/http_load` (a build
# folder such as build/release, or a folder of copied binaries), and, for a
# `neardup` of session 14 or later, the modules beside it:
# `neardup_server.so` (which `neardup serve` loads), `neardup_extract.so`
# and `neardup_postgres.so`; `pause` also needs `bench/stream_bench` in
# both. Corpora: the npm corpora
# (scripts/fetch_corpora.sh; pipeline_bench.sh builds its 256 MB file from
# them), cache/neardup_corpora/{few_dups,many_pairs}.jsonl
# (bench/make_neardup_corpus.py) and cache/mpi_bench_1m/big.jsonl
# (apps/mpi/testing/make_corpus.py); see each script for its details.
set -u
cd "$(dirname "$0")/.."
B=${1:?usage: quiet_ab.sh BASE_DIR NEW_DIR [part]}
N=${2:?usage: quiet_ab.sh BASE_DIR NEW_DIR [part]}
part=${3:-all}
F=${BENCH_DIR:-/tmp/neardup_pipeline_bench}/big.jsonl
FD=cache/neardup_corpora/few_dups.jsonl
MP=cache/neardup_corpora/many_pairs.jsonl
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# `serve` must load its module in both, checked before any part runs.
if [ "$part" = all ] || [ "$part" = serve ]; then
  for d in "$B" "$N"; do
    if ! serve_help=$("$d/neardup" serve --help 2>&1 >/dev/null); then
      echo "quiet_ab.sh: $d/neardup cannot serve (copy neardup_server.so beside it):" >&2
      echo "$serve_help" >&2
      exit 2
    fi
  done
fi
echo "== $(date -u) $(uptime)"
"$N/neardup" --version | head -3
if [ "$part" = all ] || [ "$part" = fp ]; then
  for s in simhash minhash; do
    bench/pipeline_bench.sh --build "$N" --no-perf --runs 3 --baseline "$B/neardup" --sketch $s \
      --jsonl-only 2>&1 | tail -8
  done
  for t in 1 2; do
    for s in --simhash --minhash; do
      RUNS=5 bench/ab_compare.sh "fingerprint $s t$t" "$B/neardup" "$N/neardup" fingerprint $s \
        --quiet --threads $t "$F"
    done
  done
  RUNS=5 bench/ab_compare.sh "fingerprint --kminhash t1" "$B/neardup" "$N/neardup" fingerprint \
    --kminhash --quiet --threads 1 "$F"
fi
if [ "$part" = all ] || [ "$part" = corpus ]; then
  # The `dedup` rows write -o: the previous output is removed before each
  # timed run (BEFORE_EACH), so that no build pays for freeing the other's
  # file in its rename (docs/PARALLELISM.md, session 13).
  rm_kept="rm -f '$out/kept.jsonl'"
  for t in 1 2; do
    BEFORE_EACH=$rm_kept RUNS=5 bench/ab_compare.sh "few-dups dedup t$t" "$B/neardup" \
      "$N/neardup" dedup \
      --threshold 0.8 --quiet --threads $t -o "$out/kept.jsonl" "$FD"
    RUNS=3 bench/ab_compare.sh "many-pairs pairs t$t" "$B/neardup" "$N/neardup" pairs \
      --threshold 0.5 --quiet --threads $t "$MP"
    BEFORE_EACH=$rm_kept RUNS=3 bench/ab_compare.sh "many-pairs dedup t$t" "$B/neardup" \
      "$N/neardup" dedup \
      --threshold 0.8 --quiet --threads $t -o "$out/kept.jsonl" "$MP"
  done
fi
if [ "$part" = all ] || [ "$part" = serve ]; then
  # Half of a ~20k adds/s saturating rate; set --rate to half of what the
  # closed-loop rows give on the machine at hand.
  PRIORITY=1 RUNS='--route documents --connections 32 --threads 4
--route documents --connections 32 --threads 4 --rate 4000
--route documents --connections 32 --threads 4 --rate 10000
--route documents --connections 8 --threads 4 --batch 100' \
    SECONDS_PER_RUN=10 bench/server/load_figures.sh "$B" "$N" "$B" "$N" 2>&1 | tail -40
  # Batches with both cores for the server (the loader on core 1 too; session
  # 13): issue 14's 200 MB/s figure, with the split stated on each line.
  PRIORITY=1 SERVER_CPU=0,1 RUNS='--route documents --connections 8 --threads 4 --batch 100' \
    SECONDS_PER_RUN=10 bench/server/load_figures.sh "$B" "$N" "$B" "$N" 2>&1 | tail -8
fi
if [ "$part" = all ] || [ "$part" = pause ]; then
  for b in "$B" "$N"; do
    echo "-- $b"
    "$b/bench/stream_bench" --benchmark_filter='BM_StreamAddPause/1000000/0' 2>&1 | tail -3
  done
fi
if [ "$part" = all ] || [ "$part" = mpi ]; then
  REPEAT=2 RUNS="mpi2 mpi1 nd2" bench/mpi_scaling.sh "$B" "$N" cache/mpi_bench_1m/big.jsonl \
    "$out/mpi" 2>&1 | grep -E "^== |job wall|process:|profile rank 0"
fi
echo "== done $(date -u)"
