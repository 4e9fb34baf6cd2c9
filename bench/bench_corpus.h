// The documents a text benchmark runs on: the JSONL (or any input
// DocumentReader reads) named by NEARDUP_BENCH_CORPUS, else the SpamAssassin
// bodies that scripts/fetch_corpora.sh puts in cache/corpora. Exits with a
// message naming the benchmark when the input cannot be opened, so a missing
// corpus never runs as an empty benchmark.
// REQUIRES: the including target defines NEARDUP_SOURCE_DIR.
#ifndef NEARDUP_BENCH_BENCH_CORPUS_H_
#define NEARDUP_BENCH_BENCH_CORPUS_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "neardup/document_reader.h"

namespace neardup::bench {

inline std::vector<std::string> LoadBenchTexts(const char* bench_name) {
  const char* env = std::getenv("NEARDUP_BENCH_CORPUS");
  const std::string path =
      env != nullptr ? env : NEARDUP_SOURCE_DIR "/cache/corpora/spamassassin.jsonl";
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
  if (!reader.ok()) {
    std::fprintf(stderr, "%s: %s (run scripts/fetch_corpora.sh)\n", bench_name,
                 reader.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<std::string> texts;
  Document doc;
  while (true) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok() || !*next) break;
    texts.push_back(std::move(doc.text));
  }
  return texts;
}

}  // namespace neardup::bench

#endif  // NEARDUP_BENCH_BENCH_CORPUS_H_
