#!/usr/bin/env bash
# A rank killed from outside ends the whole job within seconds with a
# non-zero exit, never a hang: Open MPI 4.1 has no fault tolerance, so the
# runtime must take the other ranks down.
#
# Rank 0 reads a FIFO that nobody writes (stdin-like inputs all go to rank
# 0), so it blocks there while rank 1, which has no share, waits in the
# first collective after reading. Then rank 1 is killed with SIGKILL.
# Then the killed job's hidden output temporary is removed by the next job
# writing the same output, and only by it.
#
# Usage: kill_test.sh NEARDUP_MPI MPIEXEC WORKDIR
set -uo pipefail
neardup_mpi=$1 mpiexec=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
source "$here/common.sh"
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
# Let rank 0 create its hidden output temporary (before it opens the FIFO,
# where it blocks) and rank 1 reach the collective: a fixed second was too
# short for an ASan build on a loaded machine (no temporary yet).
shopt -s nullglob
for _ in $(seq 1 300); do
  made=("$work"/.out.neardup-*)
  [ "${#made[@]}" -gt 0 ] && break
  sleep 0.1
done
shopt -u nullglob
sleep 1
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

# Rank 0's hidden temporary of the output is left by the killed job. A job
# writing another output in the same directory leaves it; the next job
# writing the same output removes it (nobody holds its lock: output.h).
shopt -s nullglob
left=("$work"/.out.neardup-*)
if [ "${#left[@]}" != 1 ]; then
  echo "FAIL: expected the killed job's one temporary, found: ${left[*]:-none}" >&2
  exit 1
fi
printf '{"id": "a", "text": "one two three four"}\n{"id": "b", "text": "one two three four"}\n' \
  >"$work/small.jsonl"
"$mpiexec" -n 2 --oversubscribe "$neardup_mpi" pairs --quiet "$work/small.jsonl" -o "$work/other" ||
  { echo "FAIL: the job writing another output failed" >&2; exit 1; }
if [ ! -e "${left[0]}" ]; then
  echo "FAIL: a job writing another output removed ${left[0]}" >&2
  exit 1
fi
"$mpiexec" -n 2 --oversubscribe "$neardup_mpi" pairs --quiet "$work/small.jsonl" -o "$work/out" ||
  { echo "FAIL: the rerun of the same output failed" >&2; exit 1; }
after=("$work"/.out.neardup-* "$work"/.other.neardup-*)
if [ -e "${left[0]}" ] || [ "${#after[@]}" != 0 ] || [ ! -s "$work/out" ]; then
  echo "FAIL: the rerun left temporaries (${after[*]:-none}) or no output" >&2
  exit 1
fi
echo "ok: the rerun of the same output removed the killed job's temporary"
