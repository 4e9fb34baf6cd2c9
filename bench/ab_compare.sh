#!/usr/bin/env bash
# Before/after of one whole command: runs it with two `neardup` binaries,
# alternating, RUNS times each (default 3), and prints for each the best
# wall time, the best CPU time (user+sys) and the peak RSS, and whether the
# two outputs (stdout) are byte-identical. On a shared machine the load
# changes from run to run; alternating keeps a comparison within one stretch.
# BEFORE_EACH (environment, optional): a shell command run before every
# timed run, outside the timer. A command that writes `-o FILE` should set
# it to `rm -f FILE`: otherwise each run's rename frees the previous run's
# file, i.e. the other build's (on a file system that discards freed blocks
# synchronously, such as this VM's journal-less ext4 mounted `discard`,
# 0.10-0.13 s per 255 MB, charged to whichever build runs next).
# CHRT (environment, optional): a real-time priority, e.g. CHRT=10: each
# timed run is `chrt -f $CHRT BINARY ...` (root), so that other work on a
# loaded machine does not preempt it (session 15, load 7-10: few-dups
# `dedup` then gave the quiet machine's walls back in some stretches, 0.55
# s / 0.33-0.35 s at one / two threads, and 1.3x them in others: the other
# vCPU's work and the host still show). The runs take the CPUs from
# everything else while they last; kernel threads (writeback) run where a
# CPU is left.
#
#   bench/ab_compare.sh LABEL BASE_BINARY NEW_BINARY ARGS...
#   e.g. bench/ab_compare.sh "dedup t1" /tmp/neardup-base build/release/neardup \
#          dedup --threshold 0.8 --quiet --threads 1 cache/neardup_corpora/few_dups.jsonl
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 LABEL BASE_BINARY NEW_BINARY ARGS..." >&2; exit 2; }
label=$1 base=$2 new=$3
shift 3
runs=${RUNS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A wall cpu rss
for which in base new; do wall[$which]=; cpu[$which]=; done
for ((r = 0; r < runs; r++)); do
  for which in base new; do
    binary=$base
    [ $which = new ] && binary=$new
    if [ -n "${BEFORE_EACH:-}" ]; then bash -c "$BEFORE_EACH"; fi
    prefix=()
    if [ -n "${CHRT:-}" ]; then prefix=(chrt -f "$CHRT"); fi
    /usr/bin/time -f "%e %U %S %M" -o "$out/time" "${prefix[@]}" "$binary" "$@" > "$out/$which.out"
    read -r w u s m < "$out/time"
    c=$(echo "$u + $s" | bc)
    if [ -z "${wall[$which]}" ] || (( $(echo "$w < ${wall[$which]}" | bc) )); then wall[$which]=$w; fi
    if [ -z "${cpu[$which]}" ] || (( $(echo "$c < ${cpu[$which]}" | bc) )); then cpu[$which]=$c; fi
    rss[$which]=$m
  done
done
same=DIFFERENT
cmp -s "$out/base.out" "$out/new.out" && same=identical
printf '%s | base wall %s s, cpu %s s, rss %s KB | new wall %s s, cpu %s s, rss %s KB | output %s\n' \
  "$label" "${wall[base]}" "${cpu[base]}" "${rss[base]}" "${wall[new]}" "${cpu[new]}" \
  "${rss[new]}" "$same"
