#!/usr/bin/env bash
# A rank killed from outside ends the whole job within seconds with a
# non-zero exit, never a hang: Open MPI 4.1 has no fault tolerance, so the
# runtime must take the other ranks down.
#
# Rank 0 reads a FIFO that nobody writes (stdin-like inputs all go to rank
# 0), so it blocks there while rank 1, which has no share, waits in the
# first collective after reading. Then rank 1 is killed with SIGKILL.
#
# Usage: kill_test.sh NEARDUP_MPI MPIEXEC WORKDIR
set -uo pipefail
neardup_mpi=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
mkfifo "$work/never-written"

"$mpiexec" -n 2 --oversubscribe "$neardup_mpi" pairs --quiet "$work/never-written" \
  -o "$work/out" 2>"$work/err" &
job=$!

# Rank 1's process: a child of mpiexec whose environment says rank 1.
rank1=""
for _ in $(seq 1 200); do
  for pid in $(pgrep -P "$job" 2>/dev/null); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
      rank1=$pid
    fi
  done
  [ -n "$rank1" ] && break
  sleep 0.1
done
if [ -z "$rank1" ]; then
  echo "FAIL: rank 1 never started" >&2
  kill "$job" 2>/dev/null
  exit 1
fi
sleep 1  # let it reach the collective
start=$(date +%s)
kill -KILL "$rank1"

# The job must end on its own; give it 30 s on a loaded machine.
for _ in $(seq 1 300); do
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$job" 2>/dev/null; then
  echo "FAIL: the job still runs 30 s after rank 1 was killed (a hang)" >&2
  for pid in $(pgrep -P "$job"); do kill -KILL "$pid" 2>/dev/null; done
  kill -KILL "$job" 2>/dev/null
  exit 1
fi
code=0
wait "$job" || code=$?
elapsed=$(($(date +%s) - start))
if [ "$code" = 0 ]; then
  echo "FAIL: the job exited 0 after a rank was killed" >&2
  exit 1
fi
if [ -e "$work/out" ]; then
  echo "FAIL: a killed job left an output file" >&2
  exit 1
fi
echo "ok: killing rank 1 ended the job in ${elapsed} s with exit $code"
grep -m1 -i "signal\|killed\|exited" "$work/err" || true
