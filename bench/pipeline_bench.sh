#!/usr/bin/env bash
# Whole-command benchmark of `neardup fingerprint` (issue 13): the input
# forms (JSONL, zstd one frame, zstd many frames, gzip one member, gzip many
# members, a directory of 64 JSONL files, a directory of one text file per
# document) at 1 and 2 threads, MB/s by wall clock and by CPU time
# (user+sys, the figure that still means something on a loaded machine),
# and, with perf, the share of each stage.
#
#   bench/pipeline_bench.sh [--build build/release] [--mb 250] [--runs 3]
#                           [--sketch simhash|minhash] [--no-perf]
#                           [--baseline BINARY] [--jsonl-only]
#
# --baseline: another `neardup` binary (e.g. a copy of the build before a
# change) run alternately with the build's, run for run, so that both see
# the same machine load; each gets its own row (`base` / `build`) and the
# CPU-time ratio build/base is printed. --jsonl-only: only the plain JSONL
# form (the others take most of the time).
#
# The corpus is cache/corpora/{spamassassin,brown}.jsonl (scripts/
# fetch_corpora.sh), repeated up to --mb megabytes, in $BENCH_DIR (default
# /tmp/neardup_pipeline_bench). Output goes to /dev/null. MB/s are of the
# uncompressed input (for the text files: of their bytes, one copy of the
# corpora, read with --input-format text so that the HTML mails are not
# extracted).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/release
mb=250
runs=3
sketch=simhash
use_perf=1
baseline=
jsonl_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --mb) mb=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --sketch) sketch=$2; shift 2 ;;
    --no-perf) use_perf=0; shift ;;
    --baseline) baseline=$2; shift 2 ;;
    --jsonl-only) jsonl_only=1; shift ;;
    *) echo "usage: $0 [--build DIR] [--mb N] [--runs N] [--sketch simhash|minhash] [--no-perf]" \
            "[--baseline BINARY] [--jsonl-only]" >&2
       exit 2 ;;
  esac
done
neardup=$build/neardup
[ -x "$neardup" ] || { echo "build $neardup first" >&2; exit 1; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "no baseline binary $baseline" >&2; exit 1; }
command -v perf >/dev/null 2>&1 || use_perf=0

dir=${BENCH_DIR:-/tmp/neardup_pipeline_bench}
mkdir -p "$dir"
big=$dir/big.jsonl
if [ ! -s "$big" ] || [ "$(stat -L -c %s "$big")" -lt $((mb * 1000000 * 9 / 10)) ]; then
  scripts/fetch_corpora.sh
  : > "$big"
  while [ "$(stat -L -c %s "$big")" -lt $((mb * 1000000)) ]; do
    cat cache/corpora/spamassassin.jsonl cache/corpora/brown.jsonl >> "$big"
  done
  rm -f "$big".* && rm -rf "$dir/parts"
fi
[ -s "$big.zst" ] || zstd -q -1 -T0 -f "$big" -o "$big.zst"              # one frame
[ -s "$big.pzst" ] || { pzstd -q -1 -p 2 -f "$big" -o "$dir/tmp.zst" &&  # many frames
                        mv "$dir/tmp.zst" "$big.pzst"; }
[ -s "$big.gz" ] || gzip -1 -c "$big" > "$big.gz"                      # one member
# Many members (what concatenated .gz files, bgzip or this give): split
# runs one gzip per 16 MB slice, writing to split's standard output.
[ -s "$big.members.gz" ] || split -C 16M --filter='gzip -1' "$big" > "$big.members.gz"
ln -sf "$big.members.gz" "$dir/many_members.jsonl.gz"
if [ ! -d "$dir/texts" ]; then  # one file per document, 1000 to a folder
  /usr/bin/python3 - "$dir/texts" cache/corpora/brown.jsonl cache/corpora/spamassassin.jsonl <<'PY'
import json, os, sys
n = 0
for source in sys.argv[2:]:
    for line in open(source, encoding="utf-8"):
        folder = os.path.join(sys.argv[1], "%03d" % (n // 1000))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "%06d.txt" % n), "w", encoding="utf-8") as out:
            out.write(json.loads(line)["text"])
        n += 1
PY
fi
if [ ! -d "$dir/parts" ]; then
  mkdir -p "$dir/parts"
  split -n l/64 -d -a 2 --additional-suffix=.jsonl "$big" "$dir/parts/part"
fi
# pzstd's frames under a name the reader sees as JSONL.
ln -sf "$big.pzst" "$dir/many_frames.jsonl.zst"

bytes=$(stat -L -c %s "$big")
echo "# neardup fingerprint --$sketch; $((bytes / 1000000)) MB of JSONL; $(nproc) CPUs;" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# best of $runs; MB/s of uncompressed JSONL: by wall clock, and by CPU time (user+sys)"
printf '%-22s %-6s %7s %9s %9s %9s %9s\n' form binary threads wall_s cpu_s "MB/s" "MB/s/cpu"

binaries=("$neardup")
labels=(build)
if [ -n "$baseline" ]; then binaries=("$baseline" "$neardup"); labels=(base build); fi

run_form() {  # NAME INPUT [BYTES [ARGS...]]
  local name=$1 input=$2 bytes=${3:-$bytes} threads i wall cpu
  shift 2
  [ $# -eq 0 ] || shift
  for threads in 1 2; do
    local -a best_wall=() best_cpu=()
    for i in "${!binaries[@]}"; do best_wall[i]=1e9; best_cpu[i]=1e9; done
    for _ in $(seq "$runs"); do
      for i in "${!binaries[@]}"; do  # alternated, run for run
        read -r wall cpu < <( { /usr/bin/time -f '%e %U %S' \
          "${binaries[i]}" fingerprint "--$sketch" --quiet --threads "$threads" "$@" "$input" \
          > /dev/null; } 2>&1 | awk '{print $1, $2 + $3}')
        best_wall[i]=$(awk -v a="${best_wall[i]}" -v b="$wall" 'BEGIN{print (b < a) ? b : a}')
        best_cpu[i]=$(awk -v a="${best_cpu[i]}" -v b="$cpu" 'BEGIN{print (b < a) ? b : a}')
      done
    done
    for i in "${!binaries[@]}"; do
      awk -v n="$name" -v l="${labels[i]}" -v t="$threads" -v w="${best_wall[i]}" \
        -v c="${best_cpu[i]}" -v b="$bytes" \
        'BEGIN{printf "%-22s %-6s %7d %9.2f %9.2f %9.0f %9.0f\n", n, l, t, w, c, b/w/1e6, b/c/1e6}'
    done
    if [ -n "$baseline" ]; then
      awk -v a="${best_cpu[0]}" -v b="${best_cpu[1]}" -v t="$threads" \
        'BEGIN{printf "%-22s cpu build/base at %d thread(s): %.2f\n", "", t, b/a}'
    fi
  done
}

run_form jsonl "$big"
[ "$jsonl_only" = 0 ] || exit 0
run_form "zst (1 frame)" "$big.zst"
run_form "zst (pzstd frames)" "$dir/many_frames.jsonl.zst"
run_form "gz (1 member)" "$big.gz"
run_form "gz (16 MB members)" "$dir/many_members.jsonl.gz"
run_form "directory (64)" "$dir/parts"
run_form "text files ($(find "$dir/texts" -type f | wc -l))" "$dir/texts" \
  "$(find "$dir/texts" -type f -printf '%s\n' | awk '{n += $1} END {print n}')" --input-format text

[ "$use_perf" = 1 ] || exit 0
# Stage shares from a one-thread profile: each sampled function is put in
# the stage it belongs to.
stages() {  # INPUT [ARGS...]
  local input=$1
  shift
  perf record -q -o "$dir/perf.data" -F 999 -- \
    "$neardup" fingerprint "--$sketch" --quiet --threads 1 "$@" "$input" > /dev/null 2>&1
  perf report -q -i "$dir/perf.data" --no-children --sort dso,symbol 2>/dev/null | awk '
    /^ *[0-9.]+%/ {
      share = $1; sub("%", "", share); line = $0
      if (line ~ /ZSTD|HUF_|FSE_|zstd/) s = "decompress"
      else if (line ~ /inflate|adler|crc32|libz|deflate/) s = "decompress"
      else if (line ~ /simdjson|JsonlRecordParser|ParseJsonlBlock|Validate|IsJsonNumber|ScanString|ScanAndUnescape|FlatRecord/) s = "parse"
      else if (line ~ /Unescape/) s = "unescape"
      else if (line ~ /AppendHex|AppendFingerprint|AppendJson|AppendBase64|AppendDecimal|to_chars|AppendId|WriteDigits|HexString/) s = "format"
      else if (line ~ /JsonlChunker|memrchr|copy_to_iter|filemap|FdStream|PrefixedStream|ParallelFrameStream|GzipMemberFormat|\[k\] .*read/) s = "read"
      else if (line ~ /ld-linux|do_lookup_x|_dl_/) s = "start-up"
      else if (line ~ /OutputFile|fwrite|_IO_/) s = "write"
      else if (line ~ /neardup::internal|Horner|Xxh3|Mix64|TokenScanner|Normaliz|BottomK|KValue|SimHash|Shingle|CountBits|BucketSort|Prefix|Filter|Append.*Avx/) s = "fingerprint"
      else if (line ~ /memmove|memcpy|memchr|memset|malloc|free|_int_|\[k\]/) s = "copy/alloc/kernel"
      else s = "other"
      total[s] += share
    }
    END { for (s in total) printf "  %-18s %5.1f%%\n", s, total[s] }' | sort -k2 -rn
}
echo "# stage shares, one thread (perf samples)"
echo "jsonl:"; stages "$big"
echo "zst (1 frame):"; stages "$big.zst"
echo "gz (1 member):"; stages "$big.gz"
echo "gz (16 MB members):"; stages "$dir/many_members.jsonl.gz"
echo "text files:"; stages "$dir/texts" --input-format text
