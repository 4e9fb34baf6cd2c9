// Test support: the texts of a real corpus fetched into cache/corpora/
// (scripts/fetch_corpora.sh), for tests that skip when it is absent.
#ifndef NEARDUP_TESTS_SUPPORT_CORPUS_TEXTS_H_
#define NEARDUP_TESTS_SUPPORT_CORPUS_TEXTS_H_

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "neardup/document_reader.h"

namespace neardup::test_support {

// Hands each document text of cache/corpora/`name` (under NEARDUP_SOURCE_DIR),
// in order, to `take` until it returns false or the corpus ends. Nothing
// when the corpus is absent or unreadable.
inline void ForEachCorpusText(const std::string& name,
                              const std::function<bool(std::string&& text)>& take) {
  const std::string path = std::string(NEARDUP_SOURCE_DIR) + "/cache/corpora/" + name;
  if (!std::filesystem::exists(path)) return;
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
  if (!reader.ok()) return;
  Document doc;
  while (true) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok() || !*next || !take(std::move(doc.text))) return;
  }
}

}  // namespace neardup::test_support

#endif  // NEARDUP_TESTS_SUPPORT_CORPUS_TEXTS_H_
