#!/usr/bin/env bash
# Where a command's threads were off the CPU (issue 13, session 11): runs
# COMMAND under `perf sched record -g` and prints, for its own threads, the
# time between leaving the CPU and running again, summed by the state they
# left in (R preempted, D uninterruptible wait: a lock or I/O, S sleep) and
# the first kernel frames they left from; most first. On a quiet machine D
# and S rows are what a thread waited for (the output file's inode lock, an
# fsync, a futex of the thread pool); R rows are other work taking the CPU.
#
#   bench/offcpu_by_stack.sh [-n ROWS] COMMAND...
#   e.g. bench/offcpu_by_stack.sh build/release/neardup dedup --threshold 0.8 \
#          --quiet --threads 2 cache/neardup_corpora/few_dups.jsonl -o /tmp/o.jsonl
# Needs perf with sched tracepoints (root, or perf_event_paranoid <= 1).
set -euo pipefail
rows=15
if [ "${1:-}" = -n ]; then rows=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [-n ROWS] COMMAND..." >&2; exit 2; }
data=$(mktemp)
trap 'rm -f "$data"' EXIT
perf sched record -g -o "$data" -- "$@" >/dev/null
name=$(basename "$1")
name=${name:0:15}  # the kernel's comm is at most 15 bytes
echo "off-CPU ms  count  state  first kernel frames (threads of $name)"
perf sched timehist -i "$data" --state -g 2>/dev/null | awk -v comm="$name" -v rows="$rows" '
  # Columns: time, cpu, task[tid/pid], wait time (ms), sch delay, run time,
  # state, callchain. A task line says how long the task waited before this
  # run ("wait time") and how it left the CPU after it: the wait belongs to
  # the reason of its previous line.
  index($3, comm "[") == 1 {
    task = $3; wait = $4; state = $7
    reason = $0
    sub(/^.*[0-9.]+ +[0-9.]+ +[0-9.]+ +[A-Z+]+ +/, "", reason)
    n = split(reason, frames, " <- ")
    key = state
    for (i = 1; i <= n && i <= 4; ++i) key = key (i == 1 ? "  " : " <- ") frames[i]
    if (task in last) { sum[last[task]] += wait; count[last[task]]++ }
    last[task] = key
  }
  END {
    for (k in sum) printf "%10.1f %6d  %s\n", sum[k], count[k], k
  }' | sort -rn | head -n "$rows"
