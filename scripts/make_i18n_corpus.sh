#!/usr/bin/env bash
# Builds a UTF-8 corpus of real non-English text for the fingerprint bench:
# the translated manual pages installed on this machine (Debian's man-db,
# dpkg, passwd, vim, ... ship them under /usr/share/man/<lang>/), rendered
# to plain text, one JSON line per page. German, French, Spanish, Italian,
# Polish, Czech (Latin with diacritics, 2-byte UTF-8), Russian (Cyrillic),
# Japanese, Chinese (simplified zh_CN, traditional zh_TW) and Korean (3-byte
# UTF-8). The pages come with the packages installed (man-db, passwd, login
# ship zh_CN and ja pages); `apt-get install manpages-ja manpages-de
# manpages-fr manpages-pl manpages-ru manpages-zh` adds many more.
# Output: cache/corpora/manpages_i18n.jsonl (what is installed decides the
# size; docs/FINGERPRINT_SPEED.md names the figures it was measured with).
#   scripts/make_i18n_corpus.sh
#   NEARDUP_BENCH_CORPUS=cache/corpora/manpages_i18n.jsonl build/release/bench/fingerprint_bench
# Knobs (environment), for smaller or repeated corpora:
#   LANGS="de ru"  the languages, in this order (default: all listed below)
#   PAGES=25       at most the first N pages (C-sorted paths) per language
#   REPEAT=24      the pages REPEAT times over, ids "<r>/<page>" (r from 0)
#   ENSURE_ASCII=1 every non-ASCII code point written as a \u escape
#   OUT=FILE       the output (default cache/corpora/manpages_i18n.jsonl)
# The AVX-512BW unescape figures (docs/FINGERPRINT_SPEED.md) used
#   LANGS="de ru ja zh_CN ko" PAGES=25 REPEAT=24 [ENSURE_ASCII=1] OUT=...
set -euo pipefail
cd "$(dirname "$0")/.."
langs=${LANGS:-de fr es it pl cs ru ja ko zh_CN zh_TW}
pages=${PAGES:-}
repeat=${REPEAT:-1}
ensure_ascii=${ENSURE_ASCII:-0}
out=${OUT:-cache/corpora/manpages_i18n.jsonl}
mkdir -p "$(dirname "$out")"
tmp="$out.tmp"
: > "$tmp"
for lang in $langs; do
  [ -d "/usr/share/man/$lang" ] || continue
  find "/usr/share/man/$lang" -name '*.gz' | LC_ALL=C sort | { if [ -n "$pages" ]; then head -n "$pages"; else cat; fi; } |
    while read -r page; do
      text=$(MANWIDTH=80 LANG=C.UTF-8 timeout 20 man -l "$page" 2>/dev/null </dev/null | col -b || true)
      [ -n "$text" ] || continue
      python3 -c 'import json,sys; print(json.dumps({"id": sys.argv[1], "text": sys.stdin.read()}, ensure_ascii=False))' \
        "${page#/usr/share/man/}" <<<"$text" >> "$tmp"
    done
done
if [ "$repeat" != 1 ] || [ "$ensure_ascii" != 0 ]; then
  python3 - "$tmp" "$repeat" "$ensure_ascii" <<'PY'
import json, sys
path, repeat, ensure_ascii = sys.argv[1], int(sys.argv[2]), sys.argv[3] != "0"
with open(path, encoding="utf-8") as f:
    docs = [json.loads(line) for line in f]
with open(path, "w", encoding="utf-8") as f:
    for r in range(repeat):
        for d in docs:
            d2 = {"id": f"{r}/{d['id']}" if repeat > 1 else d["id"], "text": d["text"]}
            f.write(json.dumps(d2, ensure_ascii=ensure_ascii) + "\n")
PY
fi
mv "$tmp" "$out"
echo "$out: $(wc -l < "$out") documents, $(wc -c < "$out") bytes"
