#!/usr/bin/env bash
# Where a command's threads were off the CPU (issue 13, session 11): runs
# COMMAND under `perf sched record -g` and prints, for its own threads, the
# time between leaving the CPU and running again, summed by the state they
# left in (R preempted, D uninterruptible wait: a lock or I/O, S sleep) and
# the first kernel frames they left from; most first. On a quiet machine D
# and S rows are what a thread waited for (the output file's inode lock, an
# fsync, a futex of the thread pool); R rows are other work taking the CPU.
# The totals by state are printed first, on their own, then the ROWS
# largest stacks. Only the command's own process is counted: its child
# processes (a decompressor it starts, anything it forks) are not.
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
pid_file=$(mktemp)
totals=$(mktemp)
stacks=$(mktemp)
trap 'rm -f "$data" "$pid_file" "$totals" "$stacks"' EXIT
# The command's own process only (by pid, session 13: other processes of
# the same name, e.g. other engineers' test runs, were counted before).
perf sched record -g -o "$data" -- sh -c 'echo $$ > "$0"; exec "$@"' "$pid_file" "$@" >/dev/null
pid=$(cat "$pid_file")
echo "off-CPU ms  count  state  first kernel frames (threads of process $pid, $(basename "$1"))"
perf sched timehist -i "$data" --state -g 2>/dev/null | awk -v pid="$pid" -v totals="$totals" '
  # Columns: time, cpu, task[tid/pid] (task[pid] for the main thread), wait
  # time (ms), sch delay, run time, state, callchain. A task line says how
  # long the task waited before this run ("wait time") and how it left the
  # CPU after it: the wait belongs to the reason of its previous line.
  $3 ~ ("/" pid "]$") || $3 ~ ("\\[" pid "]$") {
    task = $3; wait = $4; state = $7
    reason = $0
    sub(/^.*[0-9.]+ +[0-9.]+ +[0-9.]+ +[A-Z+]+ +/, "", reason)
    n = split(reason, frames, " <- ")
    key = state
    for (i = 1; i <= n && i <= 4; ++i) key = key (i == 1 ? "  " : " <- ") frames[i]
    if (task in last) {
      sum[last[task]] += wait; count[last[task]]++
      split(last[task], st, " "); by_state[st[1]] += wait
    }
    last[task] = key
  }
  END {
    # The totals by state to their own file (D and S: waits; R and W:
    # preempted), printed before the stacks whatever their size.
    for (k in by_state) printf "%10.1f  total  %s\n", by_state[k], k > totals
    for (k in sum) printf "%10.1f %6d  %s\n", sum[k], count[k], k
  }' | sort -rn | head -n "$rows" > "$stacks" || true
sort -rn "$totals"
cat "$stacks"
