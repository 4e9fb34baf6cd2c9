#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "neardup/minhash.h"
#include "sketch/similarity_test_util.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::Each;
using ::testing::ElementsAreArray;

using testing_util::RandomFeatures;

// The frozen definition from the header, written out plainly.
std::vector<uint64_t> Reference(const std::vector<uint64_t>& features, uint64_t k, uint64_t seed) {
  std::vector<bool> filled(k, false);
  std::vector<uint64_t> mins(k, UINT64_MAX);
  for (uint64_t h : features) {
    const auto bin = static_cast<uint64_t>((static_cast<unsigned __int128>(h) * k) >> 64);
    filled[bin] = true;
    mins[bin] = std::min(mins[bin], h);
  }
  std::vector<uint64_t> values(k);
  for (uint64_t i = 0; i < k; ++i) {
    if (filled[i]) {
      values[i] = mins[i];
      continue;
    }
    uint64_t source = k;
    for (uint64_t attempt = 1; attempt <= 16 * k; ++attempt) {
      const uint64_t j =
          internal::Mix64(internal::Mix64(seed + internal::kGoldenGamma * (i + 1)) ^ attempt) % k;
      if (filled[j]) {
        source = j;
        break;
      }
    }
    if (source == k) {
      source = (i + 1) % k;
      while (!filled[source]) source = (source + 1) % k;
    }
    values[i] = mins[source];
  }
  return values;
}

TEST(KValueTest, EmptyDocument) {
  KValueBuilder builder(64, 1);
  const KValueSketch sketch = builder.Finish();
  EXPECT_TRUE(sketch.empty);
  EXPECT_EQ(sketch.values.size(), 64u);
  EXPECT_THAT(sketch.values, Each(0u));
}

// FinishInto writes the whole span for an empty document: the batch's
// ResetForSetMinHash leaves its k-value rows unfilled (a reused batch holds
// the previous call's values), so these zeros are the row's only writer.
TEST(KValueTest, FinishIntoZeroesAWrittenSpanForAnEmptyDocument) {
  KValueBuilder builder(64, 1);
  std::vector<uint64_t> values(64, 0xAAAAAAAAAAAAAAAAULL);
  EXPECT_TRUE(builder.FinishInto(values));
  EXPECT_THAT(values, Each(0u));
  // Also after a document with features and a Reset.
  builder.Add(12345);
  EXPECT_FALSE(builder.FinishInto(values));
  builder.Reset();
  std::fill(values.begin(), values.end(), 0xAAAAAAAAAAAAAAAAULL);
  EXPECT_TRUE(builder.FinishInto(values));
  EXPECT_THAT(values, Each(0u));
}

TEST(KValueTest, MatchesReferenceDefinition) {
  // k around FinishInto's groups of eight flags; n from a few hashes (most
  // bins empty) to many (none).
  for (uint64_t k : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 128u, 129u, 256u}) {
    for (size_t n : {1u, 3u, 50u, 300u, 5000u}) {
      const std::vector<uint64_t> features = RandomFeatures(k * 31 + n, n);
      KValueBuilder builder(static_cast<int>(k), 0xfeedULL);
      for (uint64_t h : features) builder.Add(h);
      const KValueSketch sketch = builder.Finish();
      EXPECT_FALSE(sketch.empty);
      EXPECT_THAT(sketch.values, ElementsAreArray(Reference(features, k, 0xfeedULL)))
          << "k " << k << " n " << n;
    }
  }
}

TEST(KValueTest, AddManyMatchesAddInPieces) {
  // Descending runs (every hash lowers its bin's minimum), ascending runs
  // (none does), repeats, UINT64_MAX and 0, in pieces of every size.
  for (uint64_t k : {1u, 7u, 128u}) {
    std::vector<uint64_t> features = RandomFeatures(k + 5, 3000);
    std::sort(features.begin(), features.begin() + 500, std::greater<>());
    std::sort(features.begin() + 500, features.begin() + 1000);
    for (size_t i = 1000; i < 1200; ++i) features[i] = features[i - 1000];
    features.push_back(UINT64_MAX);
    features.push_back(0);
    KValueBuilder one(static_cast<int>(k), 77);
    for (uint64_t h : features) one.Add(h);
    for (size_t piece : {1u, 2u, 7u, 256u, 4000u}) {
      KValueBuilder many(static_cast<int>(k), 77);
      for (size_t i = 0; i < features.size(); i += piece) {
        const size_t n = std::min(piece, features.size() - i);
        many.AddMany(std::span<const uint64_t>(features.data() + i, n));
      }
      EXPECT_EQ(many.Finish(), one.Finish()) << "k " << k << " piece " << piece;
    }
    EXPECT_THAT(one.Finish().values, ElementsAreArray(Reference(features, k, 77)));
  }
}

TEST(KValueTest, FrozenValues) {
  // Three features in 8 bins: 5 bins are densified. Pinned: these values
  // are stored in indexes and must never change.
  KValueBuilder builder(8, 42);
  builder.Add(0x1000000000000000ULL);  // bin 0
  builder.Add(0x9000000000000000ULL);  // bin 4
  builder.Add(0xf000000000000000ULL);  // bin 7
  builder.Add(0xf000000000000001ULL);  // bin 7, not its minimum
  const KValueSketch sketch = builder.Finish();
  EXPECT_EQ(sketch.values[0], 0x1000000000000000ULL);
  EXPECT_EQ(sketch.values[4], 0x9000000000000000ULL);
  EXPECT_EQ(sketch.values[7], 0xf000000000000000ULL);
  constexpr uint64_t kBin0 = 0x1000000000000000ULL;
  constexpr uint64_t kBin4 = 0x9000000000000000ULL;
  constexpr uint64_t kBin7 = 0xf000000000000000ULL;
  const std::vector<uint64_t> frozen = {kBin0, kBin0, kBin7, kBin7, kBin4, kBin4, kBin4, kBin7};
  EXPECT_THAT(sketch.values, ElementsAreArray(frozen));
}

TEST(KValueTest, MaxHashCountsAsAFeature) {
  KValueBuilder builder(16, 0);
  builder.Add(UINT64_MAX);
  const KValueSketch sketch = builder.Finish();
  EXPECT_FALSE(sketch.empty);
  EXPECT_THAT(sketch.values, Each(UINT64_MAX));
}

TEST(KValueTest, OrderResetAndDuplicatesDoNotMatter) {
  std::vector<uint64_t> features = RandomFeatures(8, 400);
  KValueBuilder builder(128, 9);
  for (uint64_t h : features) builder.Add(h);
  const KValueSketch first = builder.Finish();
  builder.Reset();
  EXPECT_TRUE(builder.Finish().empty);
  for (auto it = features.rbegin(); it != features.rend(); ++it) {
    builder.Add(*it);
    builder.Add(*it);
  }
  EXPECT_EQ(builder.Finish(), first);
}

TEST(KValueTest, SeedChangesOnlyDensifiedPositions) {
  const std::vector<uint64_t> features = RandomFeatures(10, 20);  // sparse: many empty bins
  KValueBuilder a(128, 1);
  KValueBuilder b(128, 2);
  for (uint64_t h : features) {
    a.Add(h);
    b.Add(h);
  }
  const KValueSketch sa = a.Finish();
  const KValueSketch sb = b.Finish();
  EXPECT_NE(sa.values, sb.values);
  for (uint64_t h : features) {
    const auto bin = static_cast<size_t>((static_cast<unsigned __int128>(h) * 128) >> 64);
    EXPECT_EQ(sa.values[bin], sb.values[bin]);
  }
}

TEST(KValueDeathTest, RejectsNonPositiveK) { EXPECT_DEATH(KValueBuilder(0, 1), "at least 1"); }

}  // namespace
}  // namespace neardup
