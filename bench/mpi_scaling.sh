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
# COMMAND (default dedup; e.g. clusters, whose output is small).
# GLIBC_TUNABLES=... is passed to every rank (e.g. to measure malloc
# settings; docs/DISTRIBUTED.md "Fresh memory").
# A run is mpiN (N ranks of one thread), ndN (`neardup --threads N`), or
# 2xmpi1 / 2xnd1: two independent one-thread jobs at once, each with its
# own output, the machine's ceiling (if each is X times slower than alone,
# no split of one job over the two cores can gain more than 2 / X).
# Prints each run's wall time, each process's user/sys CPU, peak RSS and minor faults
# (/usr/bin/time), --profile lines, and the output's md5 (all must agree).
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
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
TIME_FORMAT='%e s wall, %U user, %S sys, %M KB peak, %R minor faults'

run() {  # run TAG DIR KIND [OUT]
  local tag=$1 dir=$2 kind=$3 out=${4:-$OUT/out.$1.$3} start end status label
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
  echo "$label: job wall $(echo "$end - $start" | bc) s, md5 $(md5sum < "$out" | cut -c1-32)"
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
