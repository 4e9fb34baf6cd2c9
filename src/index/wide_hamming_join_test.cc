#include "index/wide_hamming_join.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

using ::testing::HasSubstr;

std::vector<WideHammingMatch> BruteForce(const std::vector<WideSimHash>& values, int max_distance) {
  std::vector<WideHammingMatch> out;
  for (uint32_t a = 0; a < values.size(); ++a) {
    for (uint32_t b = a + 1; b < values.size(); ++b) {
      const int distance = HammingDistance(values[a], values[b]);
      if (distance <= max_distance) out.push_back({a, b, distance});
    }
  }
  return out;
}

WideSimHash Random(SplitMix64* rng, int bits) {
  WideSimHash value;
  value.bits = bits;
  for (int w = 0; w * 64 < bits; ++w) value.words[w] = rng->Next();
  if (bits % 64 != 0) value.words[bits / 64] &= ~uint64_t{0} << (64 - bits % 64);
  return value;
}

// Clusters of near copies (a few bits flipped) so that every distance up to
// about 2 * max_distance occurs, plus unrelated values.
std::vector<WideSimHash> Corpus(int bits, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<WideSimHash> values;
  for (int cluster = 0; cluster < 40; ++cluster) {
    const WideSimHash base = Random(&rng, bits);
    values.push_back(base);
    for (int copy = 0; copy < 6; ++copy) {
      WideSimHash near = base;
      const int flips = static_cast<int>(rng.Next() % 14);
      for (int f = 0; f < flips; ++f) {
        const int bit = static_cast<int>(rng.Next() % static_cast<uint64_t>(bits));
        near.words[bit / 64] ^= uint64_t{1} << (63 - bit % 64);
      }
      values.push_back(near);
    }
  }
  for (int i = 0; i < 100; ++i) values.push_back(Random(&rng, bits));
  values.push_back(values[3]);  // an exact duplicate
  return values;
}

TEST(WideHammingJoinTest, EqualsBruteForceForEveryWidthAndDistance) {
  for (const int bits : {128, 160, 256}) {
    const std::vector<WideSimHash> values = Corpus(bits, 1000 + bits);
    for (const int max_distance : {0, 1, 3, 6, 10}) {
      for (const int num_blocks : {0, max_distance + 3}) {
        Result<std::vector<WideHammingMatch>> joined =
            WideHammingSelfJoin(values, max_distance, num_blocks);
        ASSERT_TRUE(joined.ok()) << joined.status();
        EXPECT_EQ(*joined, BruteForce(values, max_distance))
            << bits << " bits, max_distance " << max_distance << ", blocks " << num_blocks;
      }
    }
  }
}

TEST(WideHammingJoinTest, EmptyInputGivesNoPairs) {
  Result<std::vector<WideHammingMatch>> joined = WideHammingSelfJoin({}, 3);
  ASSERT_TRUE(joined.ok());
  EXPECT_TRUE(joined->empty());
}

TEST(WideHammingJoinTest, RejectsBadParametersAndMixedWidths) {
  SplitMix64 rng(7);
  std::vector<WideSimHash> values = {Random(&rng, 128), Random(&rng, 128)};
  EXPECT_THAT(WideHammingSelfJoin(values, -1).status().message(), HasSubstr("max_distance (-1)"));
  EXPECT_THAT(WideHammingSelfJoin(values, 128).status().message(),
              HasSubstr("at most the 128 bits"));
  EXPECT_THAT(WideHammingSelfJoin(values, 4, 3).status().message(),
              HasSubstr("smaller than num_blocks (3)"));
  values.push_back(Random(&rng, 256));
  EXPECT_THAT(WideHammingSelfJoin(values, 3).status().message(), HasSubstr("value 2 has 256"));
}

}  // namespace
}  // namespace neardup::internal
