// Lookups at every directory size (format version 3: the directory has as
// many bits as the key count calls for), the batched lookup against the
// one-at-a-time one, and search over random tiers against the merged index
// and brute force.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <ranges>
#include <set>
#include <string>
#include <vector>

#include "index/chunk_index_io.h"
#include "index/chunk_index_test_util.h"
#include "neardup/chunk_index.h"
#include "neardup/containment.h"
#include "neardup/tiered_chunk_index.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

using internal::testing::BruteForce;
using internal::testing::BuildOrDie;
using internal::testing::Docs;
using ::testing::HasSubstr;

// `num_docs` documents numbered first_doc, first_doc + 1, ... over a
// universe of `universe` chunk IDs spread over the 32-bit range (the
// extremes 0 and 2^32 - 1 included), skewed so that some are shared widely.
Docs WideDocs(uint64_t seed, int num_docs, uint32_t first_doc, uint32_t universe, int max_chunks) {
  internal::SplitMix64 rng(seed);
  Docs docs;
  for (int d = 0; d < num_docs; ++d) {
    std::set<uint32_t> chunks;
    const int size = 1 + static_cast<int>(rng.Next() % static_cast<uint64_t>(max_chunks));
    for (int i = 0; i < size; ++i) {
      uint64_t r = rng.Next() % universe;
      if (rng.Next() % 4 == 0) r %= 8;  // boilerplate
      const uint32_t chunk = r == 0   ? 0u
                             : r == 1 ? std::numeric_limits<uint32_t>::max()
                                      : static_cast<uint32_t>(internal::Mix64(seed * 1000003 + r));
      chunks.insert(chunk);
    }
    docs[first_doc + static_cast<uint32_t>(d)] = {chunks.begin(), chunks.end()};
  }
  return docs;
}

// Keys of the index (a sample of a large one), each one above and below (absent or not), the
// extremes, and random IDs: what a lookup must answer.
std::vector<uint32_t> LookupProbes(const ChunkIndex& index, uint64_t seed) {
  std::vector<uint32_t> probes = {0, 1, std::numeric_limits<uint32_t>::max(), 0x80000000u};
  // At most about 3000 keys (every key of a small index).
  const size_t stride = index.num_keys() / 3000 + 1;
  for (size_t k = 0; k < index.num_keys(); k += stride) {
    const uint32_t key = index.keys()[k];
    probes.push_back(key);
    probes.push_back(key + 1);
    probes.push_back(key - 1);
  }
  internal::SplitMix64 rng(seed);
  for (int i = 0; i < 200; ++i) probes.push_back(static_cast<uint32_t>(rng.Next()));
  return probes;
}

void ExpectLookupsMatch(const ChunkIndex& index, const Docs& docs, uint64_t seed) {
  // (chunk, doc) pairs sorted: each chunk's postings in a row.
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (const auto& [doc, chunks] : docs) {
    for (uint32_t c : chunks) pairs.emplace_back(c, doc);
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<uint32_t> keys;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i == 0 || pairs[i].first != pairs[i - 1].first) keys.push_back(pairs[i].first);
  }
  ASSERT_TRUE(std::ranges::equal(index.keys(), keys));
  std::vector<uint32_t> probes = LookupProbes(index, seed);
  std::vector<std::span<const uint32_t>> batch(probes.size());
  index.PostingsOfEach(probes, batch);
  // Also in ascending order (as a search asks) and in pieces of odd sizes.
  std::vector<uint32_t> sorted = probes;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::span<const uint32_t>> sorted_batch(sorted.size());
  for (size_t at = 0, piece = 1; at < sorted.size(); at += piece, piece = piece * 3 % 97 + 1) {
    const size_t n = std::min(piece, sorted.size() - at);
    index.PostingsOfEach(std::span(sorted).subspan(at, n), std::span(sorted_batch).subspan(at, n));
  }
  for (size_t i = 0; i < probes.size(); ++i) {
    std::vector<uint32_t> want;
    auto it = std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(probes[i], 0u));
    for (; it != pairs.end() && it->first == probes[i]; ++it) want.push_back(it->second);
    // (std::ranges::equal: a matcher per probe is slow at 700k probes.)
    ASSERT_TRUE(std::ranges::equal(index.Postings(probes[i]), want)) << probes[i];
    ASSERT_TRUE(std::ranges::equal(batch[i], want)) << probes[i];
  }
  for (size_t i = 0; i < sorted.size(); ++i) {
    ASSERT_TRUE(std::ranges::equal(sorted_batch[i], index.Postings(sorted[i]))) << sorted[i];
  }
}

uint32_t FileVersion(const std::string& path) {
  const std::string bytes = test_support::ReadFileBytes(path);
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  return version;
}

// Key counts across the directory sizes: empty, one key, the bucket-count
// steps (4 keys per bucket), and past 196,608 keys (the 16-bit directory of
// versions 1 and 2).
TEST(ChunkIndexLookupTest, LookupsAreExactAtEveryDirectorySize) {
  test_support::TempDir temp;
  struct Case {
    int docs;
    uint32_t universe;
    int max_chunks;
  };
  const Case cases[] = {{1, 1, 1},    {1, 2, 2},       {3, 5, 3},        {2, 9, 9},
                        {40, 60, 20}, {300, 2000, 40}, {800, 30000, 90}, {2400, 1u << 30, 250}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    const Docs docs =
        WideDocs(seed, c.docs, static_cast<uint32_t>(seed * 7), c.universe, c.max_chunks);
    const ChunkIndex index = BuildOrDie(docs);
    ExpectLookupsMatch(index, docs, seed);
    const std::string path = (temp.dir() / ("i" + std::to_string(seed) + ".ndi")).string();
    ASSERT_TRUE(index.WriteFile(path).ok());
    Result<ChunkIndex> opened = ChunkIndex::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status();
    EXPECT_TRUE(opened->SameContents(index));
    ExpectLookupsMatch(*opened, docs, seed);
    // The directory holds at most 1 byte per key, or 65,537 entries.
    const uint64_t keys = index.num_keys();
    const uint64_t arrays = 4 * index.doc_sizes().size() + 12 * keys + 8 + 4 * index.num_postings();
    const uint64_t directory = opened->MemoryBytes() - arrays;
    if (keys > 196'608) {
      EXPECT_EQ(directory, 4u * 65'537);
      EXPECT_EQ(FileVersion(path), 2u);  // readable by builds before version 3
    } else {
      EXPECT_LE(directory, std::max<uint64_t>(8, 2 * keys)) << keys;
      EXPECT_EQ(FileVersion(path), 3u);
    }
    EXPECT_EQ(index.MemoryBytes(), opened->MemoryBytes());
    ++seed;
  }
}

// Version 1 and 2 files (a 16-bit directory and no directory_bits) are still
// read; a header whose directory bits are impossible is refused.
TEST(ChunkIndexLookupTest, DirectoryBitsOfTheHeaderAreChecked) {
  test_support::TempDir temp;
  const Docs big = WideDocs(40, 2400, 0, 1u << 30, 250);
  const std::string v1 = (temp.dir() / "v1.ndi").string();
  ASSERT_TRUE(BuildOrDie(big).WriteFile(v1).ok());
  EXPECT_EQ(FileVersion(v1), 1u);
  Result<ChunkIndex> opened = ChunkIndex::Open(v1);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const ChunkIndex built = BuildOrDie(big);
  ASSERT_GT(built.num_keys(), 196'608u);  // a 16-bit directory
  EXPECT_TRUE(opened->SameContents(built));
  for (size_t k = 0; k < opened->num_keys(); k += 101) {
    const uint32_t key = opened->keys()[k];
    ASSERT_TRUE(std::ranges::equal(opened->Postings(key), built.Postings(key))) << key;
    ASSERT_FALSE(opened->Postings(key).empty());
  }

  const std::string v3 = (temp.dir() / "v3.ndi").string();
  ASSERT_TRUE(BuildOrDie(WideDocs(41, 20, 3, 500, 30)).WriteFile(v3).ok());
  EXPECT_EQ(FileVersion(v3), 3u);
  // Rewrites the header's directory_bits (bytes 72..80) with a valid
  // header checksum (bytes 120..128).
  auto with_bits = [&](const std::string& from, uint64_t bits) {
    std::string bytes = test_support::ReadFileBytes(from);
    std::memcpy(bytes.data() + 72, &bits, 8);
    const uint64_t checksum =
        internal::StoredChecksum({reinterpret_cast<const uint8_t*>(bytes.data()), size_t{120}});
    std::memcpy(bytes.data() + 120, &checksum, 8);
    const std::string path = from + ".bits";
    test_support::WriteFileBytes(path, bytes);
    return ChunkIndex::Open(path).status();
  };
  for (uint64_t bits : {uint64_t{17}, uint64_t{32}, uint64_t{1} << 40}) {
    const Status status = with_bits(v3, bits);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << bits;
    EXPECT_THAT(status.message(), HasSubstr("directory bits"));
  }
  EXPECT_EQ(with_bits(v1, 16).code(), StatusCode::kDataLoss);  // not a field of version 1
  // Another bit count gives another layout: caught as a wrong size.
  EXPECT_EQ(with_bits(v3, 2).code(), StatusCode::kDataLoss);
}

// Search over random tiers, from one-document tiers to large ones (their
// directories of every size), with dead documents, against the merged
// index (answers and statistics) and brute force, in memory and from files.
TEST(ChunkIndexLookupTest, SearchOverRandomTiersEqualsMergedAndBruteForce) {
  test_support::TempDir temp;
  internal::SplitMix64 rng(77);
  for (int round = 0; round < 6; ++round) {
    Docs all;
    std::vector<ChunkIndex> built;
    std::vector<ChunkIndex> from_files;
    const int num_tiers = 1 + static_cast<int>(rng.Next() % 7);
    uint32_t next_doc = static_cast<uint32_t>(rng.Next() % 5);
    for (int t = 0; t < num_tiers; ++t) {
      const int docs = 1 + static_cast<int>(rng.Next() % (t % 3 == 0 ? 150 : 4));
      Docs part = WideDocs(round * 100 + t, docs, next_doc, 3000, 60);
      next_doc += static_cast<uint32_t>(docs + rng.Next() % 3);
      built.push_back(BuildOrDie(part));
      const std::string path =
          (temp.dir() / ("t" + std::to_string(round) + "_" + std::to_string(t))).string();
      ASSERT_TRUE(built.back().WriteFile(path).ok());
      Result<ChunkIndex> opened = ChunkIndex::Open(path);
      ASSERT_TRUE(opened.ok()) << opened.status();
      from_files.push_back(std::move(opened).value());
      all.insert(part.begin(), part.end());
    }
    Docs live;
    std::vector<uint32_t> live_numbers;
    for (const auto& [doc, chunks] : all) {
      if (round % 2 == 1 && rng.Next() % 4 == 0) continue;  // dead
      live[doc] = chunks;
      live_numbers.push_back(doc);
    }
    Result<TieredChunkIndex> tiered = TieredChunkIndex::Create(built, live_numbers);
    Result<TieredChunkIndex> tiered_files = TieredChunkIndex::Create(from_files, live_numbers);
    ASSERT_TRUE(tiered.ok() && tiered_files.ok());
    const ChunkIndex merged = BuildOrDie(live);
    ContainmentSearcher over_tiers(*tiered);
    ContainmentSearcher over_files(*tiered_files);
    ContainmentSearcher over_merged(merged);
    // Queries: indexed documents (dead ones too) and new ones, some longer
    // than a lookup group.
    std::vector<std::vector<uint32_t>> queries;
    for (const auto& [doc, chunks] : all) queries.push_back(chunks);
    for (const auto& [doc, chunks] : WideDocs(round + 900, 20, 0, 3000, 400)) {
      queries.push_back(chunks);
    }
    for (uint32_t cap : {0u, 2u, 9u}) {
      const ContainmentOptions options{cap, 5, 0.0};
      for (size_t q = 0; q < queries.size(); ++q) {
        ContainmentSearchStats tier_stats;
        ContainmentSearchStats merged_stats;
        const std::vector<ContainmentMatch> want =
            over_merged.Search(queries[q], options, kNoDocument, &merged_stats);
        ASSERT_EQ(over_tiers.Search(queries[q], options, kNoDocument, &tier_stats), want)
            << "round " << round << " query " << q << " cap " << cap;
        ASSERT_EQ(over_files.Search(queries[q], options), want);
        EXPECT_EQ(tier_stats.postings_visited, merged_stats.postings_visited);
        EXPECT_EQ(tier_stats.boilerplate_chunks, merged_stats.boilerplate_chunks);
        if (q % 19 == 0) {
          ASSERT_EQ(want, BruteForce(live, queries[q], options, kNoDocument));
        }
      }
    }
  }
}

}  // namespace
}  // namespace neardup
