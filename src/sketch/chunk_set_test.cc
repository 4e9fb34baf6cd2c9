#include "neardup/chunk_set.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

TEST(ChunkSetTest, ChunkIdIsTheHigh32Bits) {
  EXPECT_EQ(ChunkId(0x0123456789abcdefULL), 0x01234567u);
  EXPECT_EQ(ChunkId(0xffffffff00000000ULL), 0xffffffffu);
  EXPECT_EQ(ChunkId(0x00000000ffffffffULL), 0u);
}

TEST(ChunkSetTest, SortedUniqueIds) {
  ChunkSetBuilder builder;
  builder.Add(0x0000000500000001ULL);
  builder.Add(0x0000000300000002ULL);
  builder.Add(0x0000000500000003ULL);  // same chunk id 5
  builder.Add(0x0000000100000000ULL);
  EXPECT_THAT(builder.Finish(), ElementsAre(1u, 3u, 5u));
  builder.Reset();
  EXPECT_TRUE(builder.Finish().empty());
}

TEST(ChunkSetTest, SamplingMatchesBruteForce) {
  internal::SplitMix64 rng(77);
  std::vector<uint64_t> features(20000);
  for (auto& f : features) f = rng.Next();
  // Repeat some so duplicates occur.
  for (size_t i = 0; i < 5000; ++i) features.push_back(features[i * 3]);
  for (uint32_t modulus : {1u, 2u, 8u, 1000u}) {
    std::set<uint32_t> expected;
    for (uint64_t f : features) {
      if (ChunkId(f) % modulus == 0) expected.insert(ChunkId(f));
    }
    ChunkSetBuilder builder(modulus);
    for (uint64_t f : features) builder.Add(f);
    EXPECT_THAT(builder.Finish(), ElementsAreArray(expected)) << "modulus " << modulus;
  }
}

TEST(ChunkSetTest, FinishContinues) {
  ChunkSetBuilder builder(1);
  builder.Add(uint64_t{9} << 32);
  EXPECT_THAT(builder.Finish(), ElementsAre(9u));
  builder.Add(uint64_t{2} << 32);
  EXPECT_THAT(builder.Finish(), ElementsAre(2u, 9u));
}

TEST(ChunkSetDeathTest, RejectsZeroModulus) { EXPECT_DEATH(ChunkSetBuilder(0), "at least 1"); }

}  // namespace
}  // namespace neardup
