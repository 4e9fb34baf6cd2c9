#!/usr/bin/env bash
# CPU (user+sys) of one whole command with two `neardup` binaries,
# alternating (base, new, base, new, ...) PAIRS times; prints the medians,
# the minima, the ratio of the medians and the median of the per-pair
# ratios (new/base), and whether the two outputs (stdout) are
# byte-identical. The per-pair ratio is the figure to quote on a loaded
# machine: each pair runs within one short stretch of load. Record
# /proc/loadavg before and after. bench/ab_compare.sh gives best wall, best
# CPU and peak RSS instead.
#
#   bench/cpu_ab_pairs.sh LABEL PAIRS BASE_BINARY NEW_BINARY ARGS...
#   e.g. bench/cpu_ab_pairs.sh "i18n simhash" 8 /work/main/wt/base21/neardup \
#          build/release/neardup fingerprint --simhash --threads 1 --quiet FILE
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: $0 LABEL PAIRS BASE_BINARY NEW_BINARY ARGS..." >&2; exit 2; }
label=$1 pairs=$2 base=$3 new=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < pairs; i++)); do
  for which in base new; do
    binary=$base
    [ "$which" = new ] && binary=$new
    /usr/bin/time -f "%U %S" -o "$tmp/time" "$binary" "$@" > /dev/null
    read -r user sys < "$tmp/time"
    python3 -c "print($user + $sys)" >> "$tmp/$which.cpu"
  done
done
md5_base=$("$base" "$@" | md5sum | cut -c1-12)
md5_new=$("$new" "$@" | md5sum | cut -c1-12)
python3 - "$label" "$tmp/base.cpu" "$tmp/new.cpu" "$md5_base" "$md5_new" <<'PY'
import statistics as st
import sys
label, base_file, new_file, md5_base, md5_new = sys.argv[1:]
base = [float(x) for x in open(base_file)]
new = [float(x) for x in open(new_file)]
ratios = [n / b for b, n in zip(base, new)]
same = "identical" if md5_base == md5_new else "DIFFERENT"
print(f"{label}: base cpu median {st.median(base):.3f} min {min(base):.3f} | "
      f"new median {st.median(new):.3f} min {min(new):.3f} | "
      f"ratio of medians x{st.median(new) / st.median(base):.3f}, "
      f"median pair ratio x{st.median(ratios):.3f} ({len(ratios)} pairs) | "
      f"md5 {md5_base} {md5_new} {same}")
PY
