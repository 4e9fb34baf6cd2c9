#!/usr/bin/env bash
# Start-up cost of two `neardup` binaries, alternating: ROUNDS (default 6)
# rounds of `perf stat -r REPS` (default 30) each of `--version` and of a
# one-line `fingerprint`, printing per round the mean task-clock (CPU ms)
# of each and the new/base ratio, then the median ratio; and the shared
# objects each binds at start (LD_DEBUG=files, `--version`).
#   bench/startup_ab.sh BASE_BINARY NEW_BINARY
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BASE_BINARY NEW_BINARY" >&2; exit 2; }
base=$1 new=$2
for tool in perf bc; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
rounds=${ROUNDS:-6} reps=${REPS:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '{"id":"a","text":"the quick brown fox jumps over the lazy dog"}\n' >"$work/one.jsonl"
for which in base new; do
  binary=$base
  [ $which = new ] && binary=$new
  echo "$which: $(LD_DEBUG=files "$binary" --version 2>&1 >/dev/null | grep -c 'calling init') objects initialised at start"
done
ms() {  # BINARY ARGS...: mean task-clock in ms over $reps runs
  perf stat -x, -e task-clock -r "$reps" "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
}
for label in version fingerprint; do
  ratios=()
  for ((r = 0; r < rounds; r++)); do
    if [ $label = version ]; then
      b=$(ms "$base" --version); n=$(ms "$new" --version)
    else
      b=$(ms "$base" fingerprint -q "$work/one.jsonl"); n=$(ms "$new" fingerprint -q "$work/one.jsonl")
    fi
    ratio=$(echo "scale=3; $n / $b" | bc)
    ratios+=("$ratio")
    printf '%s round %d: base %.2f ms, new %.2f ms, new/base %s\n' $label $r "$b" "$n" "$ratio"
  done
  printf '%s median new/base: %s\n' $label \
    "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')"
done
