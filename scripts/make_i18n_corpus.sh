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
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p cache/corpora
out=cache/corpora/manpages_i18n.jsonl
tmp="$out.tmp"
: > "$tmp"
for lang in de fr es it pl cs ru ja ko zh_CN zh_TW; do
  [ -d "/usr/share/man/$lang" ] || continue
  find "/usr/share/man/$lang" -name '*.gz' | LC_ALL=C sort | while read -r page; do
    text=$(MANWIDTH=80 LANG=C.UTF-8 timeout 20 man -l "$page" 2>/dev/null </dev/null | col -b || true)
    [ -n "$text" ] || continue
    python3 -c 'import json,sys; print(json.dumps({"id": sys.argv[1], "text": sys.stdin.read()}, ensure_ascii=False))' \
      "${page#/usr/share/man/}" <<<"$text" >> "$tmp"
  done
done
mv "$tmp" "$out"
echo "$out: $(wc -l < "$out") documents, $(wc -c < "$out") bytes"
