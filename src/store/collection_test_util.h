// Helpers of the collection tests (store_test): synthetic fingerprints,
// the index oracle (a search over the collection's tiers equals one over a
// rebuild from its live documents) and the data directory's file names.
#ifndef NEARDUP_STORE_COLLECTION_TEST_UTIL_H_
#define NEARDUP_STORE_COLLECTION_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment.h"
#include "util/mix.h"

namespace neardup::internal::testing {

// Synthetic fingerprints: the chunks of a text are the Mix64 of its words'
// positions in a tiny vocabulary (no Fingerprinter needed at this layer).
inline std::vector<uint32_t> ChunksOf(const std::string& text) {
  std::set<uint32_t> chunks;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    uint64_t h = 0;
    for (size_t i = start; i < end; ++i) h = internal::Mix64(h + static_cast<uint8_t>(text[i]));
    if (end > start) chunks.insert(static_cast<uint32_t>(h));
    start = end + 1;
  }
  return {chunks.begin(), chunks.end()};
}

struct Owned {
  std::string id, text;
};

inline std::vector<IncomingDocument> Incoming(const std::vector<Owned>& docs) {
  std::vector<IncomingDocument> out;
  for (const Owned& d : docs) {
    out.push_back({d.id, d.id + ".txt", d.text, ChunksOf(d.text), internal::Mix64(d.text.size())});
  }
  return out;
}

// The oracle of the tier tests: a search over the collection's tiered index
// equals a search over one index built from the live documents' chunks.
inline void ExpectIndexEqualsRebuild(const Collection& c) {
  std::vector<ChunkDocument> live;
  for (uint32_t doc : c.LiveDocuments()) live.push_back({doc, *c.Chunks(doc)});
  Result<ChunkIndex> rebuilt = ChunkIndex::Build(live);
  ASSERT_TRUE(rebuilt.ok());
  const TieredChunkIndex index = c.index();
  ContainmentSearcher over_tiers(index);
  ContainmentSearcher over_rebuilt(*rebuilt);
  for (const ChunkDocument& d : live) {
    for (uint32_t cap : {0u, 2u}) {
      ContainmentOptions options{cap, 5, 0.0};
      ASSERT_EQ(over_tiers.Search(d.chunks, options, d.doc),
                over_rebuilt.Search(d.chunks, options, d.doc))
          << d.doc;
    }
  }
  EXPECT_EQ(index.num_postings(), rebuilt->num_postings());
}

inline std::set<std::string> DataFiles(const std::string& dir) {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/data")) {
    files.insert(entry.path().filename().string());
  }
  return files;
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_STORE_COLLECTION_TEST_UTIL_H_
