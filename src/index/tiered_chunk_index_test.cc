#include "neardup/tiered_chunk_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "index/chunk_index_test_util.h"
#include "neardup/containment.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using internal::testing::AsInput;
using internal::testing::BruteForce;
using internal::testing::BuildOrDie;
using internal::testing::Docs;
using internal::testing::RandomDocs;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Four tiers of ascending document ranges (as a collection's commits make
// them), with every fifth document dead.
struct Tiered {
  Docs all;   // every document of every tier
  Docs live;  // the live ones
  TieredChunkIndex index;
};

Tiered MakeTiered(uint64_t seed, int tiers, int docs_per_tier) {
  Tiered t;
  std::vector<ChunkIndex> parts;
  for (int i = 0; i < tiers; ++i) {
    // RandomDocs numbers documents first_doc + 2k; tiers do not overlap.
    Docs part = RandomDocs(seed + i, docs_per_tier, static_cast<uint32_t>(i * 2 * docs_per_tier));
    parts.push_back(BuildOrDie(part));
    t.all.insert(part.begin(), part.end());
  }
  std::vector<uint32_t> live_numbers;
  int n = 0;
  for (const auto& [doc, chunks] : t.all) {
    if (n++ % 5 == 3) continue;
    t.live[doc] = chunks;
    live_numbers.push_back(doc);
  }
  Result<TieredChunkIndex> index = TieredChunkIndex::Create(std::move(parts), live_numbers);
  EXPECT_TRUE(index.ok()) << index.status();
  t.index = std::move(index).value();
  return t;
}

TEST(TieredChunkIndexTest, SearchOverTiersEqualsTheMergedIndexAndBruteForce) {
  Tiered t = MakeTiered(21, 4, 60);
  ASSERT_EQ(t.index.num_tiers(), 4u);
  ASSERT_GT(t.index.num_dead_postings(), 0u);
  Result<ChunkIndex> merged = t.index.Merged();
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(merged->SameContents(BuildOrDie(t.live)));
  ContainmentSearcher over_tiers(t.index);
  ContainmentSearcher over_merged(*merged);
  for (uint32_t cap : {0u, 3u, 25u}) {
    for (size_t top_n : {size_t{1}, size_t{7}, size_t{1000}}) {
      for (double min : {0.0, 0.25}) {
        ContainmentOptions options{cap, top_n, min};
        // Queries: every document, the dead ones included (a query need not
        // be indexed).
        for (const auto& [doc, chunks] : t.all) {
          ContainmentSearchStats tier_stats;
          ContainmentSearchStats merged_stats;
          std::vector<ContainmentMatch> got = over_tiers.Search(chunks, options, doc, &tier_stats);
          ASSERT_EQ(got, over_merged.Search(chunks, options, doc, &merged_stats))
              << "doc " << doc << " cap " << cap << " top " << top_n << " min " << min;
          // The oracle recounts df per call: a third of the queries.
          if (doc % 3 == 0) {
            ASSERT_EQ(got, BruteForce(t.live, chunks, options, doc));
          }
          EXPECT_EQ(tier_stats.postings_visited, merged_stats.postings_visited);
          EXPECT_EQ(tier_stats.boilerplate_chunks, merged_stats.boilerplate_chunks);
        }
      }
    }
  }
}

// Work split by chunk-ID range (neardup-mpi): each query cut into the
// pieces of 1..4 equal ranges of the 32-bit chunk space, counted piece by
// piece, summed per document and ranked gives exactly Search's matches,
// over tiers with dead documents and under a cap.
TEST(TieredChunkIndexTest, CountsOfChunkRangesSumToSearch) {
  Tiered t = MakeTiered(24, 3, 60);
  ContainmentSearcher searcher(t.index);
  for (uint32_t cap : {0u, 3u, 25u}) {
    for (size_t top_n : {size_t{1}, size_t{7}, size_t{1000}}) {
      for (double min : {0.0, 0.25}) {
        const ContainmentOptions options{cap, top_n, min};
        for (uint64_t ranges = 1; ranges <= 4; ++ranges) {
          for (const auto& [doc, chunks] : t.all) {
            std::map<uint32_t, uint32_t> summed;
            size_t pieces_size = 0;
            for (uint64_t r = 0; r < ranges; ++r) {
              const std::span<const uint32_t> piece =
                  QueryChunksInRange(chunks, (r << 32) / ranges, ((r + 1) << 32) / ranges);
              pieces_size += piece.size();
              for (const SharedChunks& c : searcher.CountShared(piece, cap, doc)) {
                ASSERT_GT(c.shared, 0u);
                ASSERT_NE(c.doc, doc);
                summed[c.doc] += c.shared;
              }
            }
            ASSERT_EQ(pieces_size, chunks.size()) << "the ranges tile the chunk space";
            std::vector<SharedChunks> counts;
            for (const auto& [other, shared] : summed) counts.push_back({other, shared});
            // The order of the counts does not matter.
            std::reverse(counts.begin(), counts.end());
            ASSERT_EQ(RankSharedChunks(counts, chunks.size(), t.index, options),
                      searcher.Search(chunks, options, doc))
                << "doc " << doc << " ranges " << ranges << " cap " << cap << " top " << top_n;
          }
        }
      }
    }
  }
}

TEST(TieredChunkIndexTest, EmptyPiecesCountAndRankNothing) {
  Tiered t = MakeTiered(25, 2, 20);
  ContainmentSearcher searcher(t.index);
  EXPECT_TRUE(searcher.CountShared({}, 0).empty());
  const std::vector<SharedChunks> counts = {{0, 3}};
  EXPECT_TRUE(RankSharedChunks(counts, 0, t.index, {}).empty()) << "an empty query matches nothing";
}

TEST(TieredChunkIndexTest, QueryChunksInRangeCutsAtTheBounds) {
  const std::vector<uint32_t> chunks = {0, 5, 9, 0xffffffffu};
  EXPECT_THAT(QueryChunksInRange(chunks, 0, 5), ElementsAreArray({0u}));
  EXPECT_THAT(QueryChunksInRange(chunks, 5, 10), ElementsAreArray({5u, 9u}));
  EXPECT_THAT(QueryChunksInRange(chunks, 10, uint64_t{1} << 32), ElementsAreArray({0xffffffffu}));
  EXPECT_TRUE(QueryChunksInRange(chunks, 6, 9).empty());
}

TEST(TieredChunkIndexTest, LookupsAndCountsEqualTheMergedIndex) {
  Tiered t = MakeTiered(22, 3, 80);
  const ChunkIndex merged = BuildOrDie(t.live);
  EXPECT_EQ(t.index.num_postings(), merged.num_postings());
  EXPECT_EQ(t.index.num_documents(), merged.num_documents());
  EXPECT_EQ(t.index.CountKeys(), merged.num_keys());
  for (uint32_t cap : {1u, 3u, 10u}) {
    EXPECT_EQ(t.index.CountKeysAbove(cap), merged.CountKeysAbove(cap)) << cap;
  }
  for (const auto& [doc, chunks] : t.all) {
    EXPECT_EQ(t.index.DocumentSize(doc), merged.DocumentSize(doc)) << doc;
    for (uint32_t chunk : chunks) {
      EXPECT_THAT(t.index.Postings(chunk), ElementsAreArray(merged.Postings(chunk)));
      EXPECT_EQ(t.index.DocumentFrequency(chunk), merged.Postings(chunk).size());
    }
  }
  // A run of tiers merges to the index of its live documents.
  Result<ChunkIndex> tail = t.index.MergeTiers(1, 3);
  ASSERT_TRUE(tail.ok()) << tail.status();
  Docs tail_live;
  for (const auto& [doc, chunks] : t.live) {
    if (doc >= t.index.tiers()[1].first_doc()) tail_live[doc] = chunks;
  }
  EXPECT_TRUE(tail->SameContents(BuildOrDie(tail_live)));
  EXPECT_GT(tail->first_doc(), 0u);
}

TEST(TieredChunkIndexTest, CapCrossingOverTiersEqualsOverMergedIndexes) {
  Tiered before = MakeTiered(23, 3, 50);
  // After: one more tier, and two more documents dead.
  std::vector<ChunkIndex> tiers(before.index.tiers().begin(), before.index.tiers().end());
  Docs added = RandomDocs(99, 20, 1000);
  tiers.push_back(BuildOrDie(added));
  Docs after_live = before.live;
  std::vector<std::span<const uint32_t>> changed;
  for (int i = 0; i < 2; ++i) {
    auto it = std::next(after_live.begin(), 7 * i);
    changed.push_back(before.all.at(it->first));
    after_live.erase(it);
  }
  after_live.insert(added.begin(), added.end());
  for (const auto& [doc, chunks] : added) changed.push_back(chunks);
  std::vector<uint32_t> live_numbers;
  for (const auto& [doc, chunks] : after_live) live_numbers.push_back(doc);
  Result<TieredChunkIndex> after = TieredChunkIndex::Create(tiers, live_numbers);
  ASSERT_TRUE(after.ok());
  for (uint32_t cap : {2u, 4u, 8u}) {
    EXPECT_EQ(CapCrossingDocuments(before.index, *after, changed, cap),
              CapCrossingDocuments(BuildOrDie(before.live), BuildOrDie(after_live), changed, cap))
        << cap;
  }
}

TEST(TieredChunkIndexTest, OverlappingTiersAreDataLoss) {
  std::vector<ChunkIndex> tiers = {BuildOrDie(RandomDocs(1, 10, 0)),
                                   BuildOrDie(RandomDocs(2, 10, 5))};
  Result<TieredChunkIndex> index = TieredChunkIndex::Create(tiers, {});
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(index.status().message(), HasSubstr("inside the documents of an older tier"));
}

TEST(TieredChunkIndexTest, AChunkIndexIsAOneTierIndex) {
  Docs docs = RandomDocs(5, 40);
  const ChunkIndex index = BuildOrDie(docs);
  const TieredChunkIndex one = index;
  EXPECT_EQ(one.num_tiers(), 1u);
  EXPECT_EQ(one.num_postings(), index.num_postings());
  EXPECT_EQ(one.CountKeys(), index.num_keys());
  Result<ChunkIndex> merged = one.Merged();
  ASSERT_TRUE(merged.ok());
  EXPECT_TRUE(merged->SameContents(index));
}

TEST(TieredChunkIndexTest, ATierOfNewDocumentsStoresNoOlderSlots) {
  test_support::TempDir temp;
  Docs docs = RandomDocs(6, 3, 1'000'000);
  const ChunkIndex tier = BuildOrDie(docs);
  EXPECT_EQ(tier.first_doc(), 1'000'000u);
  EXPECT_EQ(tier.doc_sizes().size(), 5u);  // numbers 1000000, 1000002, 1000004
  const std::string path = (temp.dir() / "tier.ndi").string();
  ASSERT_TRUE(tier.WriteFile(path).ok());
  EXPECT_LT(std::filesystem::file_size(path), 300'000u);  // not 4 MB of empty slots
  Result<ChunkIndex> reopened = ChunkIndex::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_TRUE(reopened->SameContents(tier));
  EXPECT_EQ(reopened->first_doc(), 1'000'000u);
  for (const auto& [doc, chunks] : docs) EXPECT_EQ(reopened->DocumentSize(doc), chunks.size());
  EXPECT_EQ(reopened->DocumentSize(999'998), 0u);
  // A tier of few keys has a directory of a few entries (format version 3),
  // not the 256 KiB one of 65,537.
  EXPECT_LT(std::filesystem::file_size(path), 8'000u);
}

TEST(TierMergeStartTest, KeepsTierSizesGeometric) {
  auto start = [](std::vector<TierSize> sizes) { return TierMergeStart(sizes, 4); };
  EXPECT_EQ(start({{100, 0}}), 0u);
  EXPECT_EQ(start({{100, 0}, {1, 0}}), 1u);   // written alone
  EXPECT_EQ(start({{100, 0}, {30, 0}}), 0u);  // 100 < 4 * 30
  EXPECT_EQ(start({{1000, 0}, {100, 0}, {30, 0}}), 1u);
  EXPECT_EQ(start({{1000, 0}, {200, 0}, {60, 0}}), 0u);  // 1000 < 4 * 260
  // Dead postings do not count as size, and a tier more than half dead is
  // rewritten.
  EXPECT_EQ(start({{400, 300}, {30, 0}}), 0u);
  EXPECT_EQ(start({{10000, 6000}, {1000, 0}, {1, 0}}), 0u);
}

TEST(TierMergeStartTest, OneDocumentCommitsKeepFewTiersAndBoundedRewrites) {
  // 4000 commits of 10 postings each onto a tier of 100000: the tiers stay
  // few and every posting is rewritten a bounded number of times.
  std::vector<TierSize> tiers = {{100000, 0}};
  uint64_t written = 0;
  size_t most_tiers = 0;
  for (int commit = 0; commit < 4000; ++commit) {
    tiers.push_back({10, 0});
    const size_t start = TierMergeStart(tiers, 4);
    uint64_t merged = 0;
    for (size_t t = start; t < tiers.size(); ++t) merged += tiers[t].postings;
    written += merged;
    tiers.resize(start);
    tiers.push_back({merged, 0});
    most_tiers = std::max(most_tiers, tiers.size());
  }
  EXPECT_LE(most_tiers, 10u);
  // 40000 postings added: each written about ratio times per level
  // (log4(40000 / 10) levels), and the first tier rewritten once or twice.
  EXPECT_LT(written, 2u * 100000 + 40000u * 4 * 6);
  EXPECT_GT(written, 40000u);  // the merges did happen
}

}  // namespace
}  // namespace neardup
