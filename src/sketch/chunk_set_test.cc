#include "neardup/chunk_set.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sketch/chunk_set_kernels.h"
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

// Finish's bucket pass against sort + unique, one builder reused across
// documents: sizes around the small-input cut (64), the powers of two that
// set the bucket count and past the bucket cap (2^20: several IDs per
// bucket), uniform IDs, IDs crowded into one bucket (the insertion sort's
// budget runs out: the std::sort fallback), 4 and 32 distinct IDs per
// bucket in descending order (the fast path's longer moves; the budget runs
// out), many duplicates, all equal, the extremes 0 and UINT32_MAX, and
// descending input.
TEST(ChunkSetTest, FinishEqualsSortUniqueForEveryShapeOfInput) {
  internal::SplitMix64 rng(5);
  ChunkSetBuilder builder;
  auto check = [&](const std::vector<uint32_t>& ids, const std::string& what) {
    builder.Reset();
    for (uint32_t id : ids) builder.Add((uint64_t{id} << 32) | (rng.Next() & 0xffffffffu));
    std::vector<uint32_t> expected = ids;
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    EXPECT_EQ(builder.Finish(), expected) << what << ", n = " << ids.size();
  };
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{63}, size_t{64}, size_t{65}, size_t{127},
                   size_t{128}, size_t{129}, size_t{1000}, size_t{4095}, size_t{4096}, size_t{4097},
                   size_t{50000}, (size_t{1} << 20) + 3, size_t{1} << 21}) {
    // The bucket of an ID is its top `bits` bits (as Finish computes them).
    const int bits = std::min<int>(std::bit_width(n), 20);
    const int shift = 32 - bits;
    std::vector<uint32_t> uniform, crowded, descending_4, descending_32, repeated, equal,
        descending;
    for (size_t i = 0; i < n; ++i) {
      uniform.push_back(static_cast<uint32_t>(rng.Next()));
      crowded.push_back(0x80000000u | static_cast<uint32_t>(rng.Next() % 1000));
      // k distinct IDs per bucket, descending within the bucket.
      descending_4.push_back(static_cast<uint32_t>((uint64_t{i / 4} << shift) | (3 - i % 4)));
      descending_32.push_back(static_cast<uint32_t>((uint64_t{i / 32} << shift) | (31 - i % 32)));
      repeated.push_back(static_cast<uint32_t>(rng.Next() % (n / 4 + 1)) * 0x9e3779b1u);
      equal.push_back(0x12345678u);
      descending.push_back(static_cast<uint32_t>(0xffffffffu - i * 7919u));
    }
    if (n > 2) {
      uniform[0] = 0;
      uniform[1] = 0xffffffffu;
    }
    check(uniform, "uniform");
    check(crowded, "crowded into one bucket");
    check(descending_4, "4 per bucket, descending");
    check(descending_32, "32 per bucket, descending");
    check(repeated, "repeated");
    check(equal, "all equal");
    check(descending, "descending");
  }
}

// Every sort kernel the CPU runs (sketch/chunk_set_kernels.h) against sort
// + unique, each kernel's buffers reused across inputs (and left with the
// previous input's contents): every size from 0 to 300 (the vector tail
// and the small-input cut), sizes around the powers of two that set the
// bucket count and past the bucket cap, and inputs shaped against the
// AVX-512 kernel's three transposition rounds: k distinct IDs per bucket in
// descending order for k = 2..9 and 32 (2-6 are sorted by the rounds alone:
// three rounds are six phases; 7-9 leave disorder for the insertion sort,
// 32 exhaust its budget),
// ascending and descending input, all equal, one bucket crowded, repeats
// (runs of equal IDs in a bucket), the extremes 0 and UINT32_MAX (the
// padding's value) and IDs that are all UINT32_MAX or 0.
TEST(ChunkSetKernelsTest, EveryKernelEqualsSortUnique) {
  const std::vector<internal::ChunkSetKernel> kernels = internal::SupportedChunkSetKernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.front().name, "portable");
  struct Buffers {
    std::vector<uint32_t> ids, scratch, counts;
  };
  std::vector<Buffers> buffers(kernels.size());
  internal::SplitMix64 rng(21);
  auto check = [&](const std::vector<uint32_t>& input, const std::string& what) {
    std::vector<uint32_t> expected = input;
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    for (size_t k = 0; k < kernels.size(); ++k) {
      Buffers& b = buffers[k];
      b.ids = input;
      kernels[k].sort_unique(&b.ids, &b.scratch, &b.counts);
      ASSERT_EQ(b.ids, expected) << kernels[k].name << ", " << what << ", n = " << input.size();
    }
  };
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {size_t{511}, size_t{512}, size_t{513}, size_t{1000}, size_t{4095}, size_t{4096},
                   size_t{4097}, size_t{65537}, (size_t{1} << 20) + 5}) {
    sizes.push_back(n);
  }
  for (size_t n : sizes) {
    const int bits = std::min<int>(std::bit_width(n), 20);
    const int shift = 32 - bits;
    std::vector<uint32_t> uniform, ascending, descending, equal, crowded, repeated, runs, max, zero;
    for (size_t i = 0; i < n; ++i) {
      uniform.push_back(static_cast<uint32_t>(rng.Next()));
      ascending.push_back(static_cast<uint32_t>(i * 0x9e3779b1ull % 0xffffffffull));
      descending.push_back(static_cast<uint32_t>(0xffffffffu - i * 7919u));
      equal.push_back(0x87654321u);
      crowded.push_back(0x40000000u | static_cast<uint32_t>(rng.Next() % 5000));
      repeated.push_back(static_cast<uint32_t>(rng.Next() % (n / 3 + 1)) * 0x9e3779b1u);
      runs.push_back(static_cast<uint32_t>(rng.Next() >> 40) << 8 | static_cast<uint32_t>(i % 3));
      max.push_back(0xffffffffu);
      zero.push_back(0);
    }
    std::sort(ascending.begin(), ascending.end());
    if (n > 3) {
      uniform[n / 2] = 0;
      uniform[n / 3] = 0xffffffffu;
      uniform[n - 1] = 0xffffffffu;
    }
    check(uniform, "uniform");
    check(ascending, "ascending");
    check(descending, "descending");
    check(equal, "all equal");
    check(crowded, "crowded into one bucket");
    check(repeated, "repeated");
    check(runs, "runs");
    check(max, "all UINT32_MAX");
    check(zero, "all 0");
    for (size_t per_bucket : {2, 3, 4, 5, 6, 7, 8, 9, 32}) {
      std::vector<uint32_t> descending_k;
      for (size_t i = 0; i < n; ++i) {
        descending_k.push_back(static_cast<uint32_t>((uint64_t{i / per_bucket} << shift) |
                                                     (per_bucket - 1 - i % per_bucket)));
      }
      check(descending_k, std::to_string(per_bucket) + " per bucket, descending");
    }
  }
  // One ID per bucket, ascending, except one bucket holding a group of g
  // IDs out of order, at every offset: the disorder is in one place only, so
  // an order check that skips part of the array (its last vector, say)
  // misses it. Groups of 5-6 are sorted by the rounds alone; groups of 7-8
  // (descending, or rotated by one place either way) are not, and reach the
  // insertion sort.
  for (size_t n : {size_t{64}, size_t{65}, size_t{79}, size_t{80}, size_t{100}, size_t{200}}) {
    const int shift = 32 - std::bit_width(n);
    for (size_t g : {size_t{5}, size_t{6}, size_t{7}, size_t{8}}) {
      for (int shape = 0; shape < 3; ++shape) {
        for (size_t o = 0; o + g <= n; ++o) {
          std::vector<uint32_t> input;
          for (size_t i = 0; i < n; ++i) {
            uint64_t bucket = i, low = 0;
            if (i >= o + g) bucket = i - g + 1;
            if (i >= o && i < o + g) {
              const size_t j = i - o;
              bucket = o;
              low = shape == 0 ? g - 1 - j : shape == 1 ? (j + g - 1) % g : (j + 1) % g;
            }
            input.push_back(static_cast<uint32_t>((bucket << shift) | low));
          }
          check(input, "one group of " + std::to_string(g) + " (shape " + std::to_string(shape) +
                           ") at " + std::to_string(o));
        }
      }
    }
  }
}

// The sampling test without a division (ChunkSetBuilder::Sampled) keeps
// exactly the IDs with id % modulus == 0: the extremes, the multiples of the
// modulus and their neighbours, and random IDs.
TEST(ChunkSetTest, SamplingIsExactForEveryModulus) {
  internal::SplitMix64 rng(11);
  for (uint32_t modulus : {1u, 2u, 3u, 5u, 7u, 64u, 641u, 1000u, 65537u, 0x7fffffffu, 0x80000000u,
                           0xfffffffeu, 0xffffffffu}) {
    std::vector<uint32_t> ids = {0u, 1u, 0xfffffffeu, 0xffffffffu};
    for (int i = 0; i < 2000; ++i) {
      const uint64_t multiple = (rng.Next() % (uint64_t{0xffffffffu} / modulus + 1)) * modulus;
      for (int64_t delta : {-1, 0, 1}) {
        const int64_t id = static_cast<int64_t>(multiple) + delta;
        if (id >= 0 && id <= 0xffffffffLL) ids.push_back(static_cast<uint32_t>(id));
      }
      ids.push_back(static_cast<uint32_t>(rng.Next()));
    }
    for (const uint32_t id : ids) {
      ChunkSetBuilder builder(modulus);
      builder.Add(uint64_t{id} << 32);
      EXPECT_EQ(builder.Finish().size(), id % modulus == 0 ? 1u : 0u)
          << "id " << id << ", modulus " << modulus;
    }
  }
}

// AddMany in pieces of 1 to 4000 features equals Add one at a time and the
// reference (std::sort + unique of the sampled IDs), for moduli from 1 to
// UINT32_MAX, with IDs 0 and UINT32_MAX and duplicates; one builder of each
// kind reused across documents.
TEST(ChunkSetTest, AddManyEqualsAddAndTheReference) {
  internal::SplitMix64 rng(23);
  for (uint32_t modulus : {1u, 2u, 3u, 7u, 64u, 1000u, 0xffffffffu}) {
    ChunkSetBuilder many(modulus);
    ChunkSetBuilder one(modulus);
    for (size_t piece : {1, 2, 3, 7, 63, 64, 65, 500, 1024, 4000}) {
      std::vector<uint64_t> features;
      const size_t n = 3 * piece + 5;
      for (size_t i = 0; i < n; ++i) {
        uint64_t f = rng.Next();
        // Small IDs (multiples of small moduli), the extremes and repeats.
        if (i % 5 == 1) f = (rng.Next() % 64) << 32 | (f & 0xffffffffu);
        if (i % 97 == 2) f = f & 0xffffffffu;
        if (i % 89 == 3) f = f | 0xffffffff00000000ULL;
        if (i % 4 == 3) f = features[rng.Next() % features.size()];
        features.push_back(f);
      }
      std::vector<uint32_t> expected;
      for (const uint64_t f : features) {
        if (ChunkId(f) % modulus == 0) expected.push_back(ChunkId(f));
      }
      std::sort(expected.begin(), expected.end());
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      many.Reset();
      one.Reset();
      for (size_t start = 0; start < n; start += piece) {
        many.AddMany(
            std::span<const uint64_t>(features).subspan(start, std::min(piece, n - start)));
      }
      many.AddMany({});
      for (const uint64_t f : features) one.Add(f);
      const std::string what =
          "modulus " + std::to_string(modulus) + ", piece " + std::to_string(piece);
      EXPECT_EQ(many.Finish(), expected) << what;
      EXPECT_EQ(one.Finish(), expected) << what;
    }
  }
}

TEST(ChunkSetDeathTest, RejectsZeroModulus) { EXPECT_DEATH(ChunkSetBuilder(0), "at least 1"); }

}  // namespace
}  // namespace neardup
