#include "neardup/simhash.h"
#include "sketch/simhash_kernels.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hash/cpu_path.h"
#include "sketch/similarity_test_util.h"
#include "sketch/sketch_kernels.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::ElementsAreArray;

// The worked example of the SimHash FPGA paper: "school" (weight 2),
// and two more words, as 64-bit feature hashes.
constexpr uint64_t kSchool = 0x18a4228558350ef4ULL;
constexpr uint64_t kWord2 = 0x625419d288d39b38ULL;
constexpr uint64_t kWord3 = 0xa62ee3cd272141b1ULL;
constexpr uint64_t kExpectedSimHash = 0x3aa423c558350ff4ULL;
// The signed sums, most significant bit first.
const std::vector<int64_t> kExpectedSumsMsbFirst = {
    -2, -2, 0,  0, 0,  -2, 0,  -4, 0,  -2, 2,  -2, -2, 4, -2, -4, -2, -2, 2,  -2, -2, -4,
    2,  0,  4,  0, -4, -2, -2, 2,  -2, 2,  -2, 0,  -2, 0, 2,  -2, -2, -2, -2, -2, 2,  2,
    -4, 0,  -2, 4, -2, -2, -4, -2, 2,  0,  2,  0,  2,  0, 4,  4,  -2, 0,  -4, -2};

std::vector<int64_t> LsbFirst(std::vector<int64_t> msb_first) {
  return std::vector<int64_t>(msb_first.rbegin(), msb_first.rend());
}

// The definition, one bit at a time.
std::vector<int64_t> NaiveSums(const std::vector<uint64_t>& features, int bits) {
  std::vector<int64_t> sums(bits, 0);
  for (uint64_t f : features) {
    for (int i = 0; i < 64; ++i) {
      if (bits == 64) {
        sums[i] += ((f >> i) & 1) ? 1 : -1;
      } else {
        const uint64_t low = internal::Mix64(f ^ kSimHash128LowSalt);
        sums[i] += ((low >> i) & 1) ? 1 : -1;
        sums[64 + i] += ((f >> i) & 1) ? 1 : -1;
      }
    }
  }
  return sums;
}

using testing_util::RandomFeatures;

TEST(SimHashTest, PaperExampleWithRepeatedFeature) {
  SimHashAccumulator acc(64);
  acc.Add(kSchool);
  acc.Add(kSchool);
  acc.Add(kWord2);
  acc.Add(kWord3);
  EXPECT_THAT(acc.sums(), ElementsAreArray(LsbFirst(kExpectedSumsMsbFirst)));
  EXPECT_EQ(acc.Finish64(), kExpectedSimHash);
}

TEST(SimHashTest, PaperExampleWithWeight) {
  SimHashAccumulator acc(64);
  acc.AddWeighted(kSchool, 2);
  acc.AddWeighted(kWord2, 1);
  acc.Add(kWord3);
  EXPECT_THAT(acc.sums(), ElementsAreArray(LsbFirst(kExpectedSumsMsbFirst)));
  EXPECT_EQ(acc.Finish64(), kExpectedSimHash);
}

TEST(SimHashTest, PaperExample128HighWordIsThe64BitSimHash) {
  SimHashAccumulator acc(128);
  acc.AddWeighted(kSchool, 2);
  acc.Add(kWord2);
  acc.Add(kWord3);
  const SimHash128 fingerprint = acc.Finish128();
  EXPECT_EQ(fingerprint.high, kExpectedSimHash);
  EXPECT_EQ(acc.Finish64(), kExpectedSimHash);
  const std::vector<int64_t> sums(acc.sums().begin(), acc.sums().end());
  EXPECT_THAT(std::vector<int64_t>(sums.begin() + 64, sums.end()),
              ElementsAreArray(LsbFirst(kExpectedSumsMsbFirst)));
  // Frozen: the low word of the 128-bit expansion.
  EXPECT_EQ(fingerprint.low, 0x3f57a61ff7099de0ULL);
}

TEST(SimHashTest, TieGivesOneBit) {
  SimHashAccumulator acc(64);
  EXPECT_EQ(acc.Finish64(), ~uint64_t{0});  // no features: every sum is 0
  acc.Add(0x00000000000000ffULL);
  acc.Add(0x000000000000ff00ULL);
  // Bits 0-15 have sum 0 (one +1, one -1); the rest -2.
  EXPECT_EQ(acc.Finish64(), 0xffffULL);
}

TEST(SimHashTest, MatchesNaiveSumsAcrossPendingFlushes) {
  for (int bits : {64, 128}) {
    for (size_t n : {1u, 254u, 255u, 256u, 1000u}) {
      const std::vector<uint64_t> features = RandomFeatures(n * 7 + bits, n);
      SimHashAccumulator acc(bits);
      for (uint64_t f : features) acc.Add(f);
      EXPECT_THAT(acc.sums(), ElementsAreArray(NaiveSums(features, bits)))
          << "bits " << bits << " n " << n;
      SimHashAccumulator many(bits);
      many.AddMany(std::span<const uint64_t>(features).first(n / 2));
      many.AddMany(std::span<const uint64_t>(features).subspan(n / 2));
      EXPECT_THAT(many.sums(), ElementsAreArray(NaiveSums(features, bits)));
      if (bits == 128) {
        EXPECT_EQ(many.Finish128(), acc.Finish128());
      } else {
        EXPECT_EQ(many.Finish64(), acc.Finish64());
      }
    }
  }
}

TEST(SimHashTest, WeightEqualsRepetitionAndNegativeWeightRemoves) {
  const std::vector<uint64_t> features = RandomFeatures(42, 300);
  for (int bits : {64, 128}) {
    SimHashAccumulator repeated(bits);
    SimHashAccumulator weighted(bits);
    for (size_t i = 0; i < features.size(); ++i) {
      const int64_t weight = static_cast<int64_t>(i % 4);
      for (int64_t r = 0; r < weight; ++r) repeated.Add(features[i]);
      weighted.AddWeighted(features[i], weight);
    }
    EXPECT_THAT(weighted.sums(), ElementsAreArray(repeated.sums()));
    // Adding then subtracting leaves the sums as they were.
    const std::vector<int64_t> before(weighted.sums().begin(), weighted.sums().end());
    weighted.Add(0x123456789abcdefULL);
    weighted.AddWeighted(0x123456789abcdefULL, -1);
    EXPECT_THAT(weighted.sums(), ElementsAreArray(before));
  }
}

TEST(SimHashTest, FinishKeepsStateAndResetClears) {
  SimHashAccumulator acc(128);
  const std::vector<uint64_t> features = RandomFeatures(3, 500);
  acc.AddMany(features);
  const SimHash128 first = acc.Finish128();
  EXPECT_EQ(acc.Finish128(), first);
  acc.Reset();
  EXPECT_EQ(acc.Finish128(), (SimHash128{~uint64_t{0}, ~uint64_t{0}}));
  acc.AddMany(features);
  EXPECT_EQ(acc.Finish128(), first);
}

TEST(SimHashTest, HammingDistance) {
  EXPECT_EQ(HammingDistance(uint64_t{0}, uint64_t{0}), 0);
  EXPECT_EQ(HammingDistance(uint64_t{0}, ~uint64_t{0}), 64);
  EXPECT_EQ(HammingDistance(0xf0ULL, 0x0fULL), 8);
  EXPECT_EQ(HammingDistance(SimHash128{1, 0}, SimHash128{0, 3}), 3);
  EXPECT_EQ(HammingDistance(SimHash128{~uint64_t{0}, ~uint64_t{0}}, SimHash128{}), 128);
  EXPECT_NE((SimHash128{1, 2}), (SimHash128{2, 1}));
}

TEST(SimHashDeathTest, RejectsUnsupportedWidths) {
  EXPECT_DEATH(SimHashAccumulator(32), "must be 64 or 128");
  EXPECT_DEATH(SimHashAccumulator(64).Finish128(), "Finish128");
}

TEST(SimHashKernelTest, EveryKernelCountsLikeTheScalarOne) {
  std::vector<internal::SimHashKernel> kernels = internal::SupportedSimHashKernels();
  ASSERT_FALSE(kernels.empty());
  ASSERT_EQ(kernels[0].name, "scalar");
  internal::SplitMix64 rng(5);
  std::vector<uint64_t> values(255);
  for (auto& v : values) v = rng.Next();
  values[0] = 0;
  values[1] = ~uint64_t{0};
  values[2] = 0x8000000000000001ULL;
  for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{100}, size_t{255}}) {
    std::array<uint64_t, 8> want{};
    kernels[0].count_bits(values.data(), count, want.data());
    // The definition: lane j of word b counts bit 8b + j.
    for (int bit = 0; bit < 64; ++bit) {
      uint64_t ones = 0;
      for (size_t i = 0; i < count; ++i) ones += (values[i] >> bit) & 1;
      ASSERT_EQ((want[bit / 8] >> (8 * (bit % 8))) & 0xff, ones) << "bit " << bit;
    }
    for (const internal::SimHashKernel& kernel : kernels) {
      std::array<uint64_t, 8> got{};
      kernel.count_bits(values.data(), count, got.data());
      EXPECT_EQ(got, want) << kernel.name << " count " << count;
    }
  }
  // Counting onto non-zero lanes adds.
  for (const internal::SimHashKernel& kernel : kernels) {
    std::array<uint64_t, 8> got{};
    kernel.count_bits(values.data(), 100, got.data());
    kernel.count_bits(values.data() + 100, 155, got.data());
    std::array<uint64_t, 8> want{};
    kernels[0].count_bits(values.data(), 255, want.data());
    EXPECT_EQ(got, want) << kernel.name;
  }
}

TEST(SimHashKernelTest, EveryCountAndSaturatedLanes) {
  // Every count 0..255 (the GFNI kernel takes eight values per step and
  // masks the rest), onto lanes that already hold counts, and 255 all-ones
  // values (every lane reaches 255, the most a lane may hold).
  std::vector<internal::SimHashKernel> kernels = internal::SupportedSimHashKernels();
  internal::SplitMix64 rng(12);
  std::vector<uint64_t> values(255);
  for (auto& v : values) v = rng.Next();
  for (size_t count = 0; count <= 255; ++count) {
    std::array<uint64_t, 8> want{};
    kernels[0].count_bits(values.data(), count, want.data());
    for (const internal::SimHashKernel& kernel : kernels) {
      std::array<uint64_t, 8> got{};
      kernel.count_bits(values.data(), count, got.data());
      ASSERT_EQ(got, want) << kernel.name << " count " << count;
    }
  }
  const std::vector<uint64_t> all_ones(255, ~uint64_t{0});
  for (const internal::SimHashKernel& kernel : kernels) {
    std::array<uint64_t, 8> got{};
    kernel.count_bits(all_ones.data(), 13, got.data());
    kernel.count_bits(all_ones.data(), 242, got.data());
    for (uint64_t lanes : got) EXPECT_EQ(lanes, ~uint64_t{0}) << kernel.name;
  }
}

TEST(SimHashKernelTest, EveryKernelFoldsAndSignsLikeTheScalarOne) {
  const std::vector<internal::SimHashKernel> kernels = internal::SupportedSimHashKernels();
  internal::SplitMix64 rng(13);
  for (int round = 0; round < 100; ++round) {
    std::array<uint64_t, 8> lanes;
    for (auto& l : lanes) l = rng.Next();
    std::array<int64_t, 64> sums;
    // Sums around zero (the sign bit's edge) and far from it.
    for (auto& s : sums) {
      s = round % 2 == 0 ? static_cast<int64_t>(rng.Next() % 7) - 3
                         : static_cast<int64_t>(rng.Next() >> 2) - (int64_t{1} << 61);
    }
    const int64_t pending = static_cast<int64_t>(rng.Next() % 256);
    std::array<uint64_t, 8> want_lanes = lanes;
    std::array<int64_t, 64> want_sums = sums;
    kernels[0].fold(want_lanes.data(), pending, want_sums.data());
    EXPECT_EQ(want_lanes, (std::array<uint64_t, 8>{}));
    EXPECT_EQ(want_sums[9], sums[9] + 2 * static_cast<int64_t>((lanes[1] >> 8) & 0xff) - pending);
    const uint64_t want_bits = kernels[0].sign_bits(want_sums.data());
    for (int k = 0; k < 64; ++k) ASSERT_EQ((want_bits >> k) & 1, want_sums[k] >= 0 ? 1u : 0u);
    for (const internal::SimHashKernel& kernel : kernels) {
      std::array<uint64_t, 8> got_lanes = lanes;
      std::array<int64_t, 64> got_sums = sums;
      kernel.fold(got_lanes.data(), pending, got_sums.data());
      EXPECT_EQ(got_lanes, want_lanes) << kernel.name;
      EXPECT_EQ(got_sums, want_sums) << kernel.name;
      EXPECT_EQ(kernel.sign_bits(got_sums.data()), want_bits) << kernel.name;
    }
  }
}

TEST(SimHashKernelTest, EachPathGetsTheFastestKernelOfItsLevel) {
  const std::vector<internal::SimHashKernel> kernels = internal::SupportedSimHashKernels();
  for (internal::CpuPath path : internal::SupportedCpuPaths()) {
    const std::string_view name = internal::CpuPathName(path);
    // The last supported kernel of that path or a lower one.
    std::string_view want = "scalar";
    for (const internal::SimHashKernel& kernel : kernels) {
      const bool allowed = kernel.cpu_path == "portable" ||
                           (kernel.cpu_path == "avx2" && (name == "avx2" || name == "avx512")) ||
                           (kernel.cpu_path == "avx512" && name == "avx512");
      if (allowed) want = kernel.name;
    }
    EXPECT_EQ(internal::SketchKernelsFor(path).simhash.name, want) << name;
  }
}

TEST(SimHashKernelTest, AddManyEqualsAddOneByOne) {
  // AddMany uses the best kernel, Add the scalar table; 64 and 128 bits,
  // across several 255-feature flushes.
  internal::SplitMix64 rng(8);
  std::vector<uint64_t> features(1000);
  for (auto& f : features) f = rng.Next();
  for (int bits : {64, 128}) {
    SimHashAccumulator one_by_one(bits);
    SimHashAccumulator many(bits);
    for (uint64_t f : features) one_by_one.Add(f);
    many.Add(features[0]);  // an odd start, so AddMany flushes mid-span
    many.AddMany(std::span<const uint64_t>(features).subspan(1, 700));
    many.AddMany(std::span<const uint64_t>(features).subspan(701));
    EXPECT_TRUE(std::equal(many.sums().begin(), many.sums().end(), one_by_one.sums().begin()));
    EXPECT_EQ(many.Finish64(), one_by_one.Finish64());
  }
}

}  // namespace
}  // namespace neardup
