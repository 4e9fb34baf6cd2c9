#!/usr/bin/env bash
# Installs the built neardup into a fresh prefix, builds the C++ examples
# against it as an outside project would (find_package(neardup)), runs them,
# and checks that what the examples print agrees with the installed CLI.
#   check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/neardup/fingerprinter.h"
test -f "$prefix/lib/cmake/neardup/neardupConfig.cmake"
test -x "$prefix/bin/neardup"
# The installed headers stand alone: none includes a private src/ header.
if grep -rlE '#include "(util|hash|recipe|text|sketch|io|index|store|engine)/' \
     "$prefix/include/neardup"; then
  echo "installed headers include private headers" >&2
  exit 1
fi

cmake -S "$source/examples/cpp" -B "$work/examples" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/examples" -j 2 >"$work/build.log"

news=$source/examples/news.jsonl
cli=$prefix/bin/neardup

# dedup_file keeps what `neardup dedup --threshold 0.8 --keep first` keeps.
"$work/examples/dedup_file" "$news" >"$work/example_kept.txt" 2>/dev/null
"$cli" dedup --threshold 0.8 --keep first --quiet "$news" |
  sed -E 's/^\{"id": ?"([^"]*)".*/\1/' >"$work/cli_kept.txt"
if ! cmp -s "$work/example_kept.txt" "$work/cli_kept.txt"; then
  echo "dedup_file and neardup dedup keep different documents:" >&2
  diff "$work/example_kept.txt" "$work/cli_kept.txt" >&2 || true
  exit 1
fi
test -s "$work/example_kept.txt"

# compare_texts: a text against itself is at distance 0 and Jaccard 1.
printf 'the quick brown fox jumps over the lazy dog again and again\n' >"$work/a.txt"
"$work/examples/compare_texts" "$work/a.txt" "$work/a.txt" >"$work/compare.txt"
grep -q 'distance 0 of 64' "$work/compare.txt"
grep -q 'minhash jaccard 1.0000' "$work/compare.txt"

# query_collection: a document of the archive is found in it, whole.
head -n 1 "$news" | sed -E 's/.*"text": ?"(([^"\\]|\\.)*)".*/\1/' >"$work/query.txt"
"$work/examples/query_collection" "$work/collection" "$work/query.txt" "$news" >"$work/query_out.txt"
grep -q '^added ' "$work/query_out.txt"
grep -q 'contains 1.000 of the query' "$work/query_out.txt"
# The installed CLI loads the format libraries with lib/neardup/neardup_extract.so
# on its first extraction, not at start: an HTML page of a.txt's words has
# its fingerprint.
test -f "$prefix/lib/neardup/neardup_extract.so"
if readelf -d "$cli" | grep -qE 'NEEDED.*(poppler|tesseract)'; then
  echo "the installed neardup links the format libraries at start" >&2
  exit 1
fi
# libpq too, where the PostgreSQL sink was built (its module installed).
if [ -f "$prefix/lib/neardup/neardup_postgres.so" ] && readelf -d "$cli" | grep -q 'NEEDED.*libpq'; then
  echo "the installed neardup links libpq at start" >&2
  exit 1
fi
# And cpp-httplib (OpenSSL, brotli), where `serve` was built (the CLI then
# lists it): the installed CLI loads lib/neardup/neardup_server.so when it
# serves, so the module must have been installed.
top_help=$("$cli" --help)  # (not piped into grep -q: pipefail and SIGPIPE)
if grep -q '^ *serve ' <<<"$top_help"; then
  if [ ! -f "$prefix/lib/neardup/neardup_server.so" ]; then
    echo "the installed neardup has \`serve\` but $prefix/lib/neardup/neardup_server.so is not installed" >&2
    exit 1
  fi
  if readelf -d "$cli" | grep -q 'NEEDED.*httplib'; then
    echo "the installed neardup links cpp-httplib at start" >&2
    exit 1
  fi
  "$cli" serve --help | grep -q -- '--listen'
fi
printf '<!DOCTYPE html><html><body><p>%s</p></body></html>\n' "$(cat "$work/a.txt")" >"$work/page.html"
"$cli" fingerprint -q "$work/page.html" | sed -E 's/.*"simhash":"([0-9a-f]+)".*/\1/' >"$work/page_simhash.txt"
"$cli" fingerprint -q "$work/a.txt" | sed -E 's/.*"simhash":"([0-9a-f]+)".*/\1/' >"$work/a_simhash.txt"
test -s "$work/page_simhash.txt"
cmp "$work/page_simhash.txt" "$work/a_simhash.txt"
# The shared library: an example linked against neardup::shared needs
# libneardup.so at run time and prints what the static one prints.
test -L "$prefix/lib/libneardup.so"
cmake -S "$source/examples/cpp" -B "$work/examples_shared" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DNEARDUP_EXAMPLES_LINK=shared >"$work/configure_shared.log"
cmake --build "$work/examples_shared" -j 2 --target compare_texts >"$work/build_shared.log"
readelf -d "$work/examples_shared/compare_texts" | grep -q 'NEEDED.*libneardup\.so'
"$work/examples_shared/compare_texts" "$work/a.txt" "$work/a.txt" >"$work/compare_shared.txt"
cmp "$work/compare.txt" "$work/compare_shared.txt"
echo "install check: headers, package, examples (static and shared), CLI and its extraction module agree"
