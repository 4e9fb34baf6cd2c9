#!/bin/bash
# Issue 15's measurement: `neardup-mpi COMMAND` (default dedup; see COMMAND
# below) at 1 and 2 ranks (one thread each) against `neardup COMMAND
# --threads 2`, for two builds, run alternately in one script so that both
# see the same machine.
#
#   bench/mpi_scaling.sh BASE_DIR NEW_DIR [CORPUS] [OUT_DIR]
#
# BASE_DIR and NEW_DIR hold `neardup` and `neardup-mpi` (a build folder, or
# a folder of copied binaries). CORPUS defaults to the 1M-document corpus
# of docs/DISTRIBUTED.md:
#   /usr/bin/python3 apps/mpi/testing/make_corpus.py cache/mpi_bench_1m 15 1000000
# Environment: RUNS (the list of runs, default "mpi2 mpi1 nd2"), REPEAT
# (default 1), NICE (default 0: the lead's quiet runs; 10 on a shared
# machine), EXTRA (flags added to every command, e.g. "--rule components"),
# COMMAND (default dedup; e.g. clusters, whose output is small), KEEP_WALLS
# (1: the summary counts OUT_DIR's earlier runs too).
# GLIBC_TUNABLES=... is passed to every rank (e.g. to measure malloc
# settings; docs/DISTRIBUTED.md "Fresh memory").
# A run is mpiN (N ranks of one thread), ndN (`neardup --threads N`), or
# 2xmpi1 / 2xnd1: two independent one-thread jobs at once, each with its
# own output, the machine's ceiling (if each is X times slower than alone,
# no split of one job over the two cores can gain more than 2 / X).
# The split's ceiling in one run (docs/DISTRIBUTED.md "Current figures"):
#   REPEAT=2 RUNS="mpi1 2xmpi1 mpi2" bench/mpi_scaling.sh BASE NEW
# (pass one build as both BASE and NEW for twice the runs of one build):
# the summary gives mpi1 / mpi2 beside the ceiling 2 x mpi1 / 2xmpi1 and
# the share of it reached.
# Prints each run's wall time, each process's user/sys CPU, peak RSS and minor faults
# (/usr/bin/time), --profile lines, and the output's md5 (all must agree);
# at the end, each build's median wall per run kind with its spread (a
# 2x* kind: each of the two jobs' walls), its mpi1 / mpi2 speed-up from the
# medians, and with 2xmpi1 the ceiling 2 / X.
set -euo pipefail
BASE=${1:?usage: mpi_scaling.sh BASE_DIR NEW_DIR [CORPUS] [OUT_DIR]}
NEW=${2:?usage: mpi_scaling.sh BASE_DIR NEW_DIR [CORPUS] [OUT_DIR]}
CORPUS=${3:-cache/mpi_bench_1m/big.jsonl}
OUT=${4:-/tmp/mpi_scaling}
RUNS=${RUNS:-mpi2 mpi1 nd2}
REPEAT=${REPEAT:-1}
NICE=${NICE:-0}
EXTRA=${EXTRA:-}
COMMAND=${COMMAND:-dedup}
mkdir -p "$OUT"
WALLS=$OUT/walls.txt
# KEEP_WALLS=1: add to OUT's earlier runs' walls (two short calls, one
# summary). The first line names the builds: walls of other builds are not
# mixed in silently.
BUILDS="# builds: base $BASE new $NEW corpus $CORPUS command $COMMAND ${EXTRA}"
if [ "${KEEP_WALLS:-0}" = 1 ] && [ -s "$WALLS" ]; then
  if [ "$(head -n 1 "$WALLS")" != "$BUILDS" ]; then
    echo "warning: $WALLS holds other builds' walls: $(head -n 1 "$WALLS")" >&2
  fi
else
  echo "$BUILDS" > "$WALLS"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
TIME_FORMAT='%e s wall, %U user, %S sys, %M KB peak, %R minor faults'

run() {  # run TAG DIR KIND [OUT]
  local tag=$1 dir=$2 kind=$3 out=${4:-$OUT/out.$1.$3} start end status label wall
  label="$tag $kind${4:+ #${4##*.}}"  # "new nd1 #2": the second of two at once
  case $kind in
    2x*)  # two at once, each its own output; each prints its own lines
      run "$tag" "$dir" "${kind#2x}" "$out.1" &
      run "$tag" "$dir" "${kind#2x}" "$out.2"
      wait
      return
      ;;
  esac
  echo "== $label ($(uptime | sed 's/.*load/load/'))"
  # An earlier run's output must not stand in for a failed one's md5.
  rm -f "$out"
  start=$(date +%s.%N)
  case $kind in
    mpi*)
      # set -e does not stop inside this list: the status is kept, below.
      # shellcheck disable=SC2086
      { nice -n "$NICE" mpirun -n "${kind#mpi}" --oversubscribe --bind-to none \
        /usr/bin/time -f "$label process: $TIME_FORMAT" "$dir/neardup-mpi" "$COMMAND" \
        --threads 1 --profile $EXTRA "$CORPUS" -o "$out" 2>&1 | grep -v ": skipped "
        status=${PIPESTATUS[0]}; } || true
      ;;
    nd*)
      # shellcheck disable=SC2086
      { nice -n "$NICE" /usr/bin/time -f "$label process: $TIME_FORMAT" "$dir/neardup" "$COMMAND" \
        --threads "${kind#nd}" --profile $EXTRA "$CORPUS" -o "$out" 2>&1 | grep -v ": skipped "
        status=${PIPESTATUS[0]}; } || true
      ;;
  esac
  end=$(date +%s.%N)
  if [ "$status" -ne 0 ] || [ ! -f "$out" ]; then
    echo "$label: FAILED (exit status $status)"
    return
  fi
  wall=$(echo "$end - $start" | bc)
  echo "$label: job wall $wall s, md5 $(md5sum < "$out" | cut -c1-32)"
  # A 2x* run's two jobs are recorded under 2xKIND (each job's own wall:
  # the ceiling's figure).
  echo "$tag ${4:+2x}$kind $wall" >> "$WALLS"
}

# The median and spread of each build's walls per run kind, and each
# build's speed-up of mpi2 over mpi1 from the medians (issue 15's verdict:
# one 6 GB process varies 20-30% run to run on the shared VM, so a single
# pair of runs decides nothing).
stats() {  # stats TAG KIND: "median min max count" of its walls, or nothing
  awk -v t="$1" -v k="$2" '$1 == t && $2 == k { print $3 }' "$WALLS" | sort -g |
    awk '{ w[NR] = $1 } END {
      if (NR == 0) exit
      m = (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2
      printf "%.2f %.2f %.2f %d\n", m, w[1], w[NR], NR
    }'
}
summary() {
  local tag kind one two
  echo "== summary (job walls: median [min, max] of the runs)"
  for tag in new base; do
    for kind in $RUNS; do
      stats "$tag" "$kind" | awk -v l="$tag $kind" '{ printf "%s: median %s s [%s, %s] over %d\n", l, $1, $2, $3, $4 }'
    done
    one=$(stats "$tag" mpi1 | cut -d' ' -f1)
    two=$(stats "$tag" mpi2 | cut -d' ' -f1)
    if [ -n "$one" ] && [ -n "$two" ]; then
      awk -v t="$tag" -v a="$one" -v b="$two" 'BEGIN { printf "%s: mpi1 / mpi2 = x%.2f (medians)\n", t, a / b }'
    fi
    local split=$two
    two=$(stats "$tag" 2xmpi1 | cut -d' ' -f1)
    if [ -n "$one" ] && [ -n "$two" ]; then
      awk -v t="$tag" -v a="$one" -v b="$two" 'BEGIN {
        printf "%s: 2xmpi1 / mpi1 = x%.2f (medians; ceiling of a 2-rank split x%.2f)\n", t, b / a, 2 * a / b }'
      if [ -n "$split" ]; then
        awk -v t="$tag" -v a="$one" -v b="$two" -v c="$split" 'BEGIN {
          printf "%s: mpi1 / mpi2 x%.2f against the ceiling x%.2f: %.0f%% of it\n", t, a / c, 2 * a / b, 100 * (a / c) / (2 * a / b) }'
      fi
    fi
  done
}

# The first of two back-to-back 6 GB jobs runs 1-3 s slower (session 16,
# docs/BENCHMARKS.md "Session 16, end"), so the build that runs first
# changes with each repeat: compare builds over an even REPEAT.
for ((i = 0; i < REPEAT; ++i)); do
  for kind in $RUNS; do
    if ((i % 2 == 0)); then
      run new "$NEW" "$kind"
      run base "$BASE" "$kind"
    else
      run base "$BASE" "$kind"
      run new "$NEW" "$kind"
    fi
  done
done
summary
