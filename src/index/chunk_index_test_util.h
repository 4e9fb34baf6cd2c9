// Test helpers shared by the chunk index tests: random documents over a
// skewed chunk universe, and the brute-force containment oracle.
#ifndef NEARDUP_INDEX_CHUNK_INDEX_TEST_UTIL_H_
#define NEARDUP_INDEX_CHUNK_INDEX_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "neardup/chunk_index.h"
#include "neardup/containment.h"
#include "util/mix.h"

namespace neardup::internal::testing {

using Docs = std::map<uint32_t, std::vector<uint32_t>>;

// Documents over a small universe of chunk IDs spread over the whole 32-bit
// range (and over the directory's buckets), with heavy sharing.
inline Docs RandomDocs(uint64_t seed, int num_docs, uint32_t first_doc = 0, int universe = 400) {
  SplitMix64 rng(seed);
  std::vector<uint32_t> chunk_universe;
  for (int i = 0; i < universe; ++i) {
    chunk_universe.push_back(static_cast<uint32_t>(Mix64(i + 1)));
  }
  Docs docs;
  for (int d = 0; d < num_docs; ++d) {
    std::set<uint32_t> chunks;
    int size = static_cast<int>(rng.Next() % 60);
    for (int i = 0; i < size; ++i) {
      // Skewed: low universe indexes are common ("boilerplate").
      uint64_t r = rng.Next() % universe;
      if (rng.Next() % 2) r = r % 20;
      chunks.insert(chunk_universe[r]);
    }
    docs[first_doc + static_cast<uint32_t>(d) * 2] = {chunks.begin(), chunks.end()};
  }
  return docs;
}

inline std::vector<ChunkDocument> AsInput(const Docs& docs) {
  std::vector<ChunkDocument> input;
  for (const auto& [doc, chunks] : docs) input.push_back({doc, chunks});
  return input;
}

inline ChunkIndex BuildOrDie(const Docs& docs) {
  Result<ChunkIndex> index = ChunkIndex::Build(AsInput(docs));
  EXPECT_TRUE(index.ok()) << index.status();
  return std::move(index).value();
}

// The oracle: a linear scan with the same definitions as containment.h.
inline std::vector<ContainmentMatch> BruteForce(const Docs& docs,
                                                const std::vector<uint32_t>& query,
                                                const ContainmentOptions& options,
                                                uint32_t exclude) {
  std::map<uint32_t, uint32_t> df;
  for (const auto& [doc, chunks] : docs) {
    for (uint32_t c : chunks) ++df[c];
  }
  std::vector<ContainmentMatch> all;
  for (const auto& [doc, chunks] : docs) {
    if (doc == exclude || chunks.empty() || query.empty()) continue;
    uint32_t shared = 0;
    for (uint32_t c : query) {
      bool counted = options.max_document_frequency == 0 || df[c] <= options.max_document_frequency;
      if (counted && std::binary_search(chunks.begin(), chunks.end(), c)) ++shared;
    }
    if (shared == 0) continue;
    ContainmentMatch m{doc, shared, double(shared) / query.size(), double(shared) / chunks.size()};
    if (m.score() >= options.min_similarity) all.push_back(m);
  }
  std::sort(all.begin(), all.end(), RanksBefore);
  if (all.size() > options.top_n) all.resize(options.top_n);
  return all;
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_INDEX_CHUNK_INDEX_TEST_UTIL_H_
