#include "index/hamming_layout.h"

#include <bit>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/mix.h"

namespace neardup::internal {
namespace {

using ::testing::HasSubstr;

TEST(HammingLayoutTest, RejectsInvalidParametersWithClearMessages) {
  Status s = ValidateHammingIndexOptions({.num_blocks = 6, .max_distance = 7});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "max_distance (7) must be smaller than num_blocks (6)");
  EXPECT_THAT(ValidateHammingIndexOptions({.num_blocks = 4, .max_distance = 4}).message(),
              HasSubstr("max_distance (4) must be smaller than num_blocks (4)"));
  EXPECT_THAT(ValidateHammingIndexOptions({.num_blocks = 0, .max_distance = 0}).message(),
              HasSubstr("num_blocks (0)"));
  EXPECT_THAT(ValidateHammingIndexOptions({.num_blocks = 65, .max_distance = 3}).message(),
              HasSubstr("num_blocks (65)"));
  EXPECT_THAT(ValidateHammingIndexOptions({.num_blocks = 6, .max_distance = -1}).message(),
              HasSubstr("max_distance (-1)"));
  EXPECT_THAT(ValidateHammingIndexOptions({.num_blocks = 64, .max_distance = 3}).message(),
              HasSubstr("exceeds the limit 4096"));
  EXPECT_TRUE(ValidateHammingIndexOptions({.num_blocks = 64, .max_distance = 63}).ok());
  EXPECT_TRUE(ValidateHammingIndexOptions({.num_blocks = 1, .max_distance = 0}).ok());
  EXPECT_EQ(HammingIndex::Create({.num_blocks = 3, .max_distance = 3}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(HammingLayoutTest, CountsTables) {
  EXPECT_EQ(HammingNumTables(5, 3), 10u);
  EXPECT_EQ(HammingNumTables(6, 3), 20u);
  EXPECT_EQ(HammingNumTables(64, 2), 2016u);
  EXPECT_EQ(HammingNumTables(64, 3), 0u);  // 41664 > limit
  EXPECT_EQ(HammingNumTables(4, 4), 0u);
}

TEST(HammingLayoutTest, BlocksTilesAndPermutationsAreBijections) {
  SplitMix64 rng(1);
  for (int m = 1; m <= 64; ++m) {
    for (int k : {0, 1, 2, 3, m - 1}) {
      if (k < 0 || k >= m || HammingNumTables(m, k) == 0) continue;
      HammingLayout layout({.num_blocks = m, .max_distance = k});
      ASSERT_EQ(static_cast<uint64_t>(layout.num_tables()), HammingNumTables(m, k));
      int total = 0, lo = 64, hi = 0;
      for (int b = 0; b < m; ++b) {
        total += layout.block_size(b);
        lo = std::min(lo, layout.block_size(b));
        hi = std::max(hi, layout.block_size(b));
      }
      EXPECT_EQ(total, 64);
      EXPECT_LE(hi - lo, 1);
      for (int t = 0; t < layout.num_tables(); ++t) {
        const HammingTable& table = layout.table(t);
        EXPECT_EQ(std::popcount(table.chosen_blocks), m - k);
        for (int i = 0; i < 20; ++i) {
          uint64_t x = rng.Next(), y = rng.Next();
          uint64_t px = table.forward.Apply(x);
          EXPECT_EQ(table.inverse.Apply(px), x);
          if (t == 0) {
            EXPECT_EQ(px, x);  // table 0: identity
          }
          EXPECT_EQ(std::popcount(px ^ table.forward.Apply(y)), std::popcount(x ^ y));
        }
        // The chosen blocks lead: a value with only chosen blocks' bits set
        // permutes to exactly the top prefix_bits bits.
        uint64_t chosen_bits = 0;
        for (int b = 0, top = 64; b < m; ++b) {
          top -= layout.block_size(b);
          if ((table.chosen_blocks >> b) & 1) {
            chosen_bits |=
                (layout.block_size(b) == 64 ? ~0ULL : ((1ULL << layout.block_size(b)) - 1)) << top;
          }
        }
        uint64_t want = table.prefix_bits == 64 ? ~0ULL : ~0ULL << (64 - table.prefix_bits);
        EXPECT_EQ(table.forward.Apply(chosen_bits), want) << "m=" << m << " k=" << k << " t=" << t;
      }
    }
  }
}

TEST(HammingLayoutTest, ExactlyOneTableIsCanonicalForEachClosePair) {
  SplitMix64 rng(2);
  for (int m = 2; m <= 10; ++m) {
    for (int k = 1; k < m && k <= 6; ++k) {
      HammingLayout layout({.num_blocks = m, .max_distance = k});
      for (int i = 0; i < 200; ++i) {
        uint64_t x = rng.Next();
        uint64_t mask = 0;
        int flips = static_cast<int>(rng.Next() % (k + 1));
        while (std::popcount(mask) < flips) mask |= 1ULL << (rng.Next() % 64);
        uint64_t y = x ^ mask;
        int canonical = 0;
        for (int t = 0; t < layout.num_tables(); ++t) {
          const HammingTable& table = layout.table(t);
          uint64_t diff = table.forward.Apply(x) ^ table.forward.Apply(y);
          if (table.IsCanonical(diff)) {
            ++canonical;
            // The canonical table shares the leading blocks.
            EXPECT_EQ(diff >> (64 - table.prefix_bits), 0u);
          }
        }
        EXPECT_EQ(canonical, 1) << "m=" << m << " k=" << k;
      }
    }
  }
}

TEST(HammingLayoutTest, RecommendsParameters) {
  auto small = RecommendHammingParameters(3, 100'000);
  ASSERT_TRUE(small.ok());
  auto large = RecommendHammingParameters(3, 100'000'000);
  ASSERT_TRUE(large.ok());
  // Larger corpora need longer leading keys, hence more blocks.
  EXPECT_GT(large->num_blocks, small->num_blocks);
  EXPECT_EQ(large->num_tables, HammingNumTables(large->num_blocks, 3));
  EXPECT_EQ(large->expected_probes, static_cast<double>(large->num_tables));
  EXPECT_GT(large->bytes_per_entry, 8.0 * large->num_tables);
  auto capped = RecommendHammingParameters(3, 100'000'000, 4);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->num_blocks, 4);
  EXPECT_EQ(RecommendHammingParameters(64, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RecommendHammingParameters(3, 10, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RecommendHammingParameters(3, 10, 2).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neardup::internal
