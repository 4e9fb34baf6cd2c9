// Groups of SimHash copies (session 19): FindSimHashCopies,
// FindNearDuplicateGroups and ClusterDocumentGroups against the pairs of
// every copy (FindNearDuplicatePairs, ClusterDocuments) on seeded corpora
// with large groups, groups near each other, featureless documents holding
// a group's value, and groups that straddle the threads' chunks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/near_duplicates_test_util.h"
#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "support/planted_corpus.h"
#include "util/mix.h"

namespace neardup {
namespace {

using internal::SplitMix64;
using test_support::FingerprintTexts;

uint64_t FlipBits(uint64_t value, int bits, SplitMix64& rng) {
  for (int i = 0; i < bits; ++i) value ^= uint64_t{1} << (rng.Next() % 64);
  return value;
}

// A seeded corpus of SimHash fingerprints: `num_bases` values, half of them
// 1-2 bits from the one before (groups near groups); documents are copies of
// a base (most), near variants of a base, random values, or featureless
// documents that hold a base's value (never paired). `big` documents are
// copies of base 0, spread over the corpus.
std::vector<Fingerprint> CopiesCorpus(uint64_t seed, size_t n, size_t num_bases, size_t big) {
  SplitMix64 rng(seed);
  std::vector<uint64_t> bases(num_bases);
  for (size_t j = 0; j < num_bases; ++j) {
    bases[j] =
        j % 2 == 1 ? FlipBits(bases[j - 1], 1 + static_cast<int>(rng.Next() % 2), rng) : rng.Next();
  }
  std::vector<Fingerprint> fps(n);
  for (size_t i = 0; i < n; ++i) {
    Fingerprint& fp = fps[i];
    fp.num_tokens = 1 + rng.Next() % 50;
    const uint64_t base = bases[rng.Next() % num_bases];
    const uint64_t kind = rng.Next() % 100;
    if (kind < 70) {
      fp.simhash = base;
    } else if (kind < 85) {
      fp.simhash = FlipBits(base, 1 + static_cast<int>(rng.Next() % 5), rng);
    } else if (kind < 95) {
      fp.simhash = rng.Next();
    } else {
      fp.simhash = base;
      fp.num_tokens = 0;
    }
  }
  for (size_t k = 0; k < big && n > 0; ++k) {
    Fingerprint& fp = fps[rng.Next() % n];
    fp.simhash = bases[0];
    fp.num_tokens = 3;
  }
  return fps;
}

NearDuplicateOptions SimHashOptions(int max_distance, int num_blocks) {
  NearDuplicateOptions options;
  options.method = NearDuplicateMethod::kSimHash;
  options.max_distance = max_distance;
  options.num_blocks = num_blocks;
  return options;
}

// first_copy_of by definition: the first document with features and the
// same SimHash.
std::vector<uint64_t> CopiesByDefinition(const std::vector<Fingerprint>& fps) {
  std::map<uint64_t, uint64_t> first;
  std::vector<uint64_t> out(fps.size());
  for (uint64_t i = 0; i < fps.size(); ++i) {
    out[i] = i;
    if (fps[i].num_tokens == 0) continue;
    out[i] = first.try_emplace(fps[i].simhash, i).first->second;
  }
  return out;
}

// Every pair the groups stand for, sorted: within groups (distance 0) and
// between the members of two groups whose first members are a pair.
std::vector<SimilarPair> Expand(const NearDuplicateGroups& groups) {
  const uint64_t n = groups.first_copy_of.size();
  std::vector<std::vector<uint64_t>> members(n);
  for (uint64_t i = 0; i < n; ++i) members[groups.first_copy_of[i]].push_back(i);
  std::vector<SimilarPair> out;
  for (uint64_t r = 0; r < n; ++r) {
    for (size_t x = 0; x < members[r].size(); ++x) {
      for (size_t y = x + 1; y < members[r].size(); ++y) {
        out.push_back(SimilarPair{members[r][x], members[r][y], 1.0, 0});
      }
    }
  }
  for (const SimilarPair& pair : groups.pairs) {
    for (uint64_t x : members[pair.a]) {
      for (uint64_t y : members[pair.b]) {
        out.push_back(SimilarPair{std::min(x, y), std::max(x, y), pair.similarity, pair.distance});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const SimilarPair& x, const SimilarPair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  return out;
}

TEST(SimHashCopiesTest, FirstCopiesByDefinitionAcrossChunks) {
  // 60000 copies of one value: its run in the sorted entries spans several
  // chunks of the threads' pass.
  std::vector<Fingerprint> fps = CopiesCorpus(11, 90000, 40, 60000);
  const std::vector<uint64_t> expected = CopiesByDefinition(fps);
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    EXPECT_EQ(FindSimHashCopies(fps), expected) << threads;
  }
}

TEST(SimHashCopiesTest, GroupsExpandToEveryPairAndClusterTheSame) {
  const Recipe recipe = *PresetRecipe("default");
  struct Case {
    uint64_t seed;
    size_t n, bases, big;
    int max_distance, num_blocks;
  };
  // Large groups (1500 copies of base 0), many groups near each other, and
  // over 2^14 documents with features (groups straddle the chunks).
  for (const Case& c : {Case{1, 3000, 60, 600, 3, 0}, Case{2, 40000, 1000, 1500, 3, 0},
                        Case{3, 20000, 3000, 300, 5, 7}, Case{4, 500, 5, 0, 0, 2}}) {
    std::vector<Fingerprint> fps = CopiesCorpus(c.seed, c.n, c.bases, c.big);
    const NearDuplicateOptions options = SimHashOptions(c.max_distance, c.num_blocks);
    NearDuplicateReport all_report;
    Result<std::vector<SimilarPair>> all =
        FindNearDuplicatePairs(fps, recipe, options, &all_report);
    ASSERT_TRUE(all.ok()) << all.status();
    std::vector<uint64_t> lengths(fps.size());
    SplitMix64 rng(c.seed * 7);
    for (uint64_t& length : lengths) length = rng.Next() % 8;  // many ties
    std::vector<std::vector<uint64_t>> expected_clusters;
    std::vector<std::vector<bool>> expected_keep;
    for (ClusterRule rule : {ClusterRule::kLeader, ClusterRule::kComponents}) {
      expected_clusters.push_back(*ClusterDocuments(fps.size(), *all, rule));
      for (KeepRule keep : {KeepRule::kFirst, KeepRule::kLongest, KeepRule::kShortest}) {
        expected_keep.push_back(*ChooseKept(expected_clusters.back(), lengths, keep));
      }
    }
    // The rules differ here (groups near groups chain).
    if (c.n > 1000) {
      EXPECT_NE(expected_clusters[0], expected_clusters[1]);
    }
    for (int threads : {1, 2, 4}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      SCOPED_TRACE("seed " + std::to_string(c.seed) + ", threads " + std::to_string(threads));
      NearDuplicateReport report;
      Result<NearDuplicateGroups> groups = FindNearDuplicateGroups(fps, recipe, options, &report);
      ASSERT_TRUE(groups.ok()) << groups.status();
      EXPECT_EQ(groups->first_copy_of, CopiesByDefinition(fps));
      EXPECT_LT(groups->pairs.size(), all->size());
      EXPECT_EQ(Expand(*groups), *all);
      // The library's expansion: the same list, in order.
      Result<std::vector<SimilarPair>> expanded = ExpandNearDuplicateGroups(fps, *groups);
      ASSERT_TRUE(expanded.ok()) << expanded.status();
      EXPECT_EQ(*expanded, *all);
      EXPECT_EQ(report.documents, all_report.documents);
      EXPECT_EQ(report.empty_documents, all_report.empty_documents);
      EXPECT_EQ(report.candidates, all_report.candidates);
      EXPECT_EQ(report.pairs, all_report.pairs);
      EXPECT_EQ(report.num_blocks, all_report.num_blocks);
      size_t expected_index = 0;
      for (ClusterRule rule : {ClusterRule::kLeader, ClusterRule::kComponents}) {
        Result<std::vector<uint64_t>> clusters =
            ClusterDocumentGroups(groups->first_copy_of, groups->pairs, rule);
        ASSERT_TRUE(clusters.ok()) << clusters.status();
        const size_t r = rule == ClusterRule::kLeader ? 0 : 1;
        EXPECT_EQ(*clusters, expected_clusters[r]) << "rule " << r;
        for (KeepRule keep : {KeepRule::kFirst, KeepRule::kLongest, KeepRule::kShortest}) {
          EXPECT_EQ(*ChooseKept(*clusters, lengths, keep), expected_keep[expected_index++]);
        }
      }
    }
  }
}

TEST(SimHashCopiesTest, MinHashAndDigestGroupsAreSingletons) {
  // Not 64-bit SimHash (MinHash, a digest recipe's wide SimHash): every
  // group is one document and the pairs are FindNearDuplicatePairs', on a
  // corpus that has pairs and exact copies (which 64-bit SimHash groups).
  std::vector<std::string> texts = test_support::PlantedTexts(300, 19);
  for (int i = 0; i < 5; ++i) texts.push_back(texts[7]);
  Recipe digest = *PresetRecipe("exlsh");
  digest.hash = FeatureHashKind::kMd5;
  digest.simhash.bits = DigestBits(digest.hash);
  ASSERT_TRUE(IsDigestRecipe(digest));
  NearDuplicateOptions minhash;
  minhash.method = NearDuplicateMethod::kMinHash;
  NearDuplicateOptions wide;
  wide.method = NearDuplicateMethod::kSimHash;
  wide.max_distance = 12;
  const std::pair<Recipe, NearDuplicateOptions> cases[] = {{*PresetRecipe("default"), minhash},
                                                           {digest, wide}};
  for (const auto& [recipe, options] : cases) {
    SCOPED_TRACE(options.method == NearDuplicateMethod::kMinHash ? "minhash" : "digest");
    const std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
    NearDuplicateReport all_report;
    Result<std::vector<SimilarPair>> all =
        FindNearDuplicatePairs(fps, recipe, options, &all_report);
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_GE(all->size(), 10u);  // the copies' 10 pairs at least
    NearDuplicateReport report;
    Result<NearDuplicateGroups> groups = FindNearDuplicateGroups(fps, recipe, options, &report);
    ASSERT_TRUE(groups.ok()) << groups.status();
    std::vector<uint64_t> singletons(fps.size());
    std::iota(singletons.begin(), singletons.end(), uint64_t{0});
    EXPECT_EQ(groups->first_copy_of, singletons);
    EXPECT_EQ(groups->pairs, *all);
    EXPECT_EQ(*ExpandNearDuplicateGroups(fps, *groups), *all);
    EXPECT_EQ(report.candidates, all_report.candidates);
    EXPECT_EQ(report.pairs, all_report.pairs);
  }
  // No documents with features: no pairs.
  std::vector<Fingerprint> none(4);
  Result<NearDuplicateGroups> groups =
      FindNearDuplicateGroups(none, *PresetRecipe("default"), NearDuplicateOptions{});
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT(groups->first_copy_of, ::testing::ElementsAre(0, 1, 2, 3));
  EXPECT_TRUE(groups->pairs.empty());
}

TEST(SimHashCopiesTest, ClusterDocumentGroupsRejectsMalformedInput) {
  const std::vector<SimilarPair> none;
  // A first member after its member, and one that is not its own first.
  EXPECT_FALSE(
      ClusterDocumentGroups(std::vector<uint64_t>{0, 2, 2}, none, ClusterRule::kLeader).ok());
  EXPECT_FALSE(
      ClusterDocumentGroups(std::vector<uint64_t>{0, 0, 1}, none, ClusterRule::kLeader).ok());
  // A pair of a member that is not its group's first.
  const std::vector<SimilarPair> pairs = {{1, 2, 0.9, 1}};
  Result<std::vector<uint64_t>> bad =
      ClusterDocumentGroups(std::vector<uint64_t>{0, 0, 2}, pairs, ClusterRule::kComponents);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("pair (1, 2)"));
  // Out of range: ClusterDocuments' message.
  const std::vector<SimilarPair> far = {{0, 3, 0.9, 1}};
  EXPECT_FALSE(
      ClusterDocumentGroups(std::vector<uint64_t>{0, 1, 2}, far, ClusterRule::kLeader).ok());
  // Leader: 2 (a copy of 1) lands in 0's cluster with 1, though 2's own
  // pairs are not listed.
  const std::vector<SimilarPair> leader = {{0, 1, 0.9, 1}};
  EXPECT_THAT(
      *ClusterDocumentGroups(std::vector<uint64_t>{0, 1, 1, 3}, leader, ClusterRule::kLeader),
      ::testing::ElementsAre(0, 0, 0, 3));
}

TEST(SimHashCopiesTest, ExpandNearDuplicateGroupsRejectsMalformedInput) {
  std::vector<Fingerprint> fps(4);
  for (Fingerprint& fp : fps) fp.num_tokens = 3;
  const auto expand = [&](std::vector<uint64_t> first_copy_of, std::vector<SimilarPair> pairs) {
    return ExpandNearDuplicateGroups(fps, {std::move(first_copy_of), std::move(pairs)});
  };
  EXPECT_FALSE(expand({0, 1, 2}, {}).ok());     // one entry short
  EXPECT_FALSE(expand({0, 2, 2, 3}, {}).ok());  // a first member after its member
  EXPECT_FALSE(expand({0, 0, 1, 3}, {}).ok());  // not its own first
  Result<std::vector<SimilarPair>> bad = expand({0, 0, 2, 3}, {{1, 2, 0.9, 1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("pair (1, 2)"));
  EXPECT_FALSE(expand({0, 0, 2, 3}, {{2, 4, 0.9, 1}}).ok());  // out of range
  // 1 is a copy of 0, 3 of 2, and the groups are a pair; 1 has no
  // features (in no pair).
  fps[1].num_tokens = 0;
  EXPECT_EQ(*expand({0, 0, 2, 2}, {{0, 2, 0.9, 6}}),
            (std::vector<SimilarPair>{{0, 2, 0.9, 6}, {0, 3, 0.9, 6}, {2, 3, 1.0, 0}}));
}

TEST(SimHashCopiesTest, FirstCopyCandidatesRejectsMalformedInput) {
  std::vector<Fingerprint> fps = CopiesCorpus(5, 100, 10, 0);
  const Recipe recipe = *PresetRecipe("default");
  Result<NearDuplicateScheme> scheme =
      ChooseNearDuplicateScheme(recipe, SimHashOptions(3, 0), fps.size());
  ASSERT_TRUE(scheme.ok());
  const std::vector<uint64_t> short_copies(99, 0);
  EXPECT_FALSE(FindFirstCopyCandidates(fps, short_copies, *scheme, {0, scheme->num_parts}).ok());
  const std::vector<uint64_t> copies = FindSimHashCopies(fps);
  EXPECT_FALSE(FindFirstCopyCandidates(fps, copies, *scheme, {0, scheme->num_parts + 1}).ok());
  NearDuplicateOptions minhash;
  Result<NearDuplicateScheme> minhash_scheme =
      ChooseNearDuplicateScheme(recipe, minhash, fps.size());
  ASSERT_TRUE(minhash_scheme.ok());
  Result<std::vector<CandidatePair>> wrong_method =
      FindFirstCopyCandidates(fps, copies, *minhash_scheme, {0, 1});
  ASSERT_FALSE(wrong_method.ok());
  EXPECT_THAT(wrong_method.status().message(), ::testing::HasSubstr("(minhash)"));
}

}  // namespace
}  // namespace neardup
