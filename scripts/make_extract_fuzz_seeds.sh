#!/usr/bin/env bash
# Writes the seed corpus of fuzz/document_extractor_fuzz (one file per
# extractor: its selector byte, then a fixture of src/extract/extract_test_util.h).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/seeds.cc" <<'CC'
#include <fstream>

#include "extract/extract_test_util.h"
using namespace neardup::internal::testing;
int main(int, char** argv) {
  std::string dir = argv[1];
  auto w = [&](const char* n, char format, const std::string& s) {
    std::ofstream(dir + "/" + n, std::ios::binary) << format << s;
  };
  w("pdf", '\0', SamplePdf());
  w("docx", '\1', SampleDocx());
  w("odt", '\2', SampleOdt());
  w("html", '\3', SampleHtml());
  w("warc", '\4',
    WarcRecord("response", "http://a/", "2024-01-01T00:00:00Z", "application/http; msgtype=response",
               HttpResponse("text/html", "<p>x")) +
        WarcRecord("conversion", "http://b/", "2024-01-01T00:00:00Z", "text/plain", "y"));
  // Declared encodings (src/extract/html_charset.h).
  w("html_charset", '\3',
    "<html><head><meta http-equiv=Content-Type content='text/html; charset=shift_jis'>"
    "</head><body><p>\x93\xFA\x96\x7B\x8C\xEA \x85</p></body></html>");
  w("warc_charset", '\4',
    WarcRecord("response", "http://c/", "2024-01-01T00:00:00Z", "application/http; msgtype=response",
               HttpResponse("text/html; charset=gb18030", "<p>\xD6\xD0\xCE\xC4\xD6")));
}
CC
g++ -std=c++20 -Isrc $(pkg-config --cflags poppler-cpp libzip) "$tmp/seeds.cc" -o "$tmp/seeds" \
  $(pkg-config --libs poppler-cpp libzip) -lz -lgtest -lpthread
mkdir -p fuzz/corpus/document_extractor_fuzz
"$tmp/seeds" fuzz/corpus/document_extractor_fuzz
