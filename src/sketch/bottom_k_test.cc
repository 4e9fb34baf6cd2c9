#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "neardup/minhash.h"
#include "sketch/bottom_k_kernels.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// The definition: sort, drop duplicates, keep the k smallest.
std::vector<uint64_t> Oracle(std::vector<uint64_t> stream, size_t k) {
  std::sort(stream.begin(), stream.end());
  stream.erase(std::unique(stream.begin(), stream.end()), stream.end());
  if (stream.size() > k) stream.resize(k);
  return stream;
}

// A stream of `length` hashes drawn from a pool of about length / 3 values,
// so most values repeat; includes the extremes 0 and UINT64_MAX.
std::vector<uint64_t> StreamWithDuplicates(uint64_t seed, size_t length) {
  internal::SplitMix64 rng(seed);
  std::vector<uint64_t> pool(length / 3 + 2);
  for (auto& v : pool) v = rng.Next();
  pool[0] = 0;
  pool[1] = UINT64_MAX;
  std::vector<uint64_t> stream(length);
  for (auto& v : stream) v = pool[rng.Next() % pool.size()];
  return stream;
}

TEST(BottomKTest, EqualsSortUniqueTakeK) {
  for (int k : {1, 2, 16, 128, 256}) {
    const size_t uk = static_cast<size_t>(k);
    for (size_t length : {size_t{0}, size_t{1}, uk / 2, uk, uk + 1, 3 * uk, 40 * uk + 7}) {
      const std::vector<uint64_t> stream = StreamWithDuplicates(k * 1000 + length, length);
      BottomKBuilder builder(k);
      for (uint64_t h : stream) builder.Add(h);
      const BottomKSketch sketch = builder.Finish();
      EXPECT_EQ(sketch.k, static_cast<uint32_t>(k));
      EXPECT_THAT(sketch.values, ElementsAreArray(Oracle(stream, uk)))
          << "k " << k << " length " << length;
    }
  }
}

TEST(BottomKTest, DescendingAndRepeatedStreams) {
  // Descending input makes every hash enter the sketch: the worst case.
  std::vector<uint64_t> descending;
  for (uint64_t v = 5000; v > 0; --v) descending.push_back(v * 0x9e3779b97f4a7c15ULL >> 8);
  BottomKBuilder builder(64);
  for (uint64_t h : descending) builder.Add(h);
  EXPECT_THAT(builder.Finish().values, ElementsAreArray(Oracle(descending, 64)));

  // One small hash repeated many times fills no more than one slot.
  builder.Reset();
  for (int r = 0; r < 10000; ++r) builder.Add(7);
  builder.Add(3);
  EXPECT_THAT(builder.Finish().values, ElementsAre(3, 7));
}

TEST(BottomKTest, OrderDoesNotMatter) {
  std::vector<uint64_t> stream = StreamWithDuplicates(99, 5000);
  BottomKBuilder forward(128);
  for (uint64_t h : stream) forward.Add(h);
  std::reverse(stream.begin(), stream.end());
  BottomKBuilder backward(128);
  for (uint64_t h : stream) backward.Add(h);
  EXPECT_EQ(forward.Finish(), backward.Finish());
}

TEST(BottomKTest, FinishContinuesAndResetStartsOver) {
  const std::vector<uint64_t> stream = StreamWithDuplicates(5, 3000);
  BottomKBuilder builder(16);
  for (size_t i = 0; i < 1000; ++i) builder.Add(stream[i]);
  EXPECT_THAT(
      builder.Finish().values,
      ElementsAreArray(Oracle(std::vector<uint64_t>(stream.begin(), stream.begin() + 1000), 16)));
  for (size_t i = 1000; i < stream.size(); ++i) builder.Add(stream[i]);
  EXPECT_THAT(builder.Finish().values, ElementsAreArray(Oracle(stream, 16)));

  builder.Reset();
  EXPECT_TRUE(builder.Finish().values.empty());
  builder.Add(UINT64_MAX);
  EXPECT_THAT(builder.Finish().values, ElementsAre(UINT64_MAX));
}

TEST(BottomKTest, FinishIntoReplacesTheOldValues) {
  const std::vector<uint64_t> stream = StreamWithDuplicates(6, 2000);
  BottomKBuilder builder(32);
  BottomKSketch sketch{7, {1, 2, 3}};
  for (uint64_t h : stream) builder.Add(h);
  builder.Finish(&sketch);
  EXPECT_EQ(sketch.k, 32u);
  EXPECT_THAT(sketch.values, ElementsAreArray(Oracle(stream, 32)));
  // A shorter sketch into the same object (its capacity is reused).
  builder.Reset();
  builder.Add(9);
  builder.Add(4);
  builder.Add(9);
  builder.Finish(&sketch);
  EXPECT_THAT(sketch.values, ElementsAre(4, 9));
  builder.Reset();
  builder.Finish(&sketch);
  EXPECT_TRUE(sketch.values.empty());
}

// FinishView flushes like Finish and shows the same values; more hashes
// extend the same document.
TEST(BottomKTest, FinishViewEqualsFinish) {
  const std::vector<uint64_t> stream = StreamWithDuplicates(8, 3000);
  BottomKBuilder builder(128);
  BottomKBuilder reference(128);
  for (size_t i = 0; i < stream.size(); ++i) {
    builder.Add(stream[i]);
    reference.Add(stream[i]);
    if (i % 997 == 5 || i + 1 == stream.size()) {
      const std::span<const uint64_t> view = builder.FinishView();
      EXPECT_EQ(std::vector<uint64_t>(view.begin(), view.end()), reference.Finish().values) << i;
    }
  }
  builder.Reset();
  EXPECT_TRUE(builder.FinishView().empty());
}

TEST(BottomKTest, ThresholdSelectionEqualsOracleOnHardStreams) {
  // Streams that defeat Flush's uniform-hash threshold guess or its bucket
  // sort: clustered values, few distinct values, small integers, ascending.
  internal::SplitMix64 rng(99);
  std::vector<std::vector<uint64_t>> streams;
  std::vector<uint64_t> clustered(5000);
  for (auto& v : clustered) v = UINT64_MAX - (rng.Next() % 3000);
  streams.push_back(clustered);
  std::vector<uint64_t> few(5000);
  for (auto& v : few) v = rng.Next() % 2 == 0 ? rng.Next() : 12345;  // half one value
  streams.push_back(few);
  std::vector<uint64_t> tiny(5000);
  for (auto& v : tiny) v = rng.Next() % 200;  // fewer distinct than k
  streams.push_back(tiny);
  std::vector<uint64_t> ascending(3000);
  for (size_t i = 0; i < ascending.size(); ++i) ascending[i] = i << 50;
  streams.push_back(ascending);
  std::vector<uint64_t> uniform(20000);
  for (auto& v : uniform) v = rng.Next();
  streams.push_back(uniform);
  for (int k : {1, 7, 128, 256}) {
    for (const std::vector<uint64_t>& stream : streams) {
      BottomKBuilder builder(k);
      for (uint64_t v : stream) builder.Add(v);
      EXPECT_THAT(builder.Finish().values, ElementsAreArray(Oracle(stream, static_cast<size_t>(k))))
          << "k " << k << " stream of " << stream.size();
    }
  }
}

TEST(BottomKTest, AddManyEqualsOracleInAnyBatching) {
  internal::SplitMix64 rng(7);
  for (int k : {1, 5, 128, 300}) {
    for (size_t length : {size_t{0}, size_t{3}, size_t{200}, size_t{1000}, size_t{20000}}) {
      const std::vector<uint64_t> stream = StreamWithDuplicates(k + length, length);
      BottomKBuilder builder(k);
      // Batches of random sizes up to 700, so some overflow the buffer.
      size_t at = 0;
      while (at < stream.size()) {
        const size_t take = std::min<size_t>(stream.size() - at, rng.Next() % 700);
        builder.AddMany(std::span<const uint64_t>(stream.data() + at, take));
        at += take;
        if (rng.Next() % 4 == 0 && at < stream.size()) builder.Add(stream[at++]);
      }
      EXPECT_THAT(builder.Finish().values, ElementsAreArray(Oracle(stream, static_cast<size_t>(k))))
          << "k " << k << " length " << length;
    }
  }
}

// Inputs for the kernels: uniform, small integers (many equal), clustered at
// the top of the range, and with the extremes; then ascending, descending,
// k values per group in descending order (a group lies in one bucket of
// the whole range, so the sort's insertion pass moves each value across its
// group) and k per group with the largest first, for every length from 33
// to 80 (the vector tails) and a few more.
std::vector<std::vector<uint64_t>> KernelInputs() {
  internal::SplitMix64 rng(11);
  std::vector<std::vector<uint64_t>> inputs;
  std::vector<size_t> ordered_lengths = {100, 170, 255, 256, 257, 700, 5000};
  for (size_t length = 33; length <= 80; ++length) ordered_lengths.push_back(length);
  for (size_t length : ordered_lengths) {
    std::vector<uint64_t> ascending(length);
    for (uint64_t& v : ascending) v = rng.Next();
    std::sort(ascending.begin(), ascending.end());
    inputs.push_back(ascending);
    inputs.emplace_back(ascending.rbegin(), ascending.rend());
    for (size_t per_group : {2, 3, 4, 5, 6, 8, 9}) {
      std::vector<uint64_t> groups(length);
      const uint64_t spacing = UINT64_MAX / (length / per_group + 1);
      for (size_t i = 0; i < length; ++i) {
        groups[i] = (i / per_group) * spacing + (per_group - 1 - i % per_group);
      }
      inputs.push_back(groups);
    }
    // The group's largest value first, then the rest ascending: from the
    // fifth on, a value is at or above the three before it but below a
    // group-mate more than three places back (an insertion pass that
    // looks only three back misses it; the AVX-512 pass of branch
    // s15-minhash, commit 08d0495, needed its bucket test for these).
    for (size_t per_group : {5, 6, 7, 9}) {
      std::vector<uint64_t> groups(length);
      const uint64_t spacing = UINT64_MAX / (length / per_group + 1);
      for (size_t i = 0; i < length; ++i) {
        const size_t at = i % per_group;
        groups[i] = (i / per_group) * spacing + (at == 0 ? per_group : at);
      }
      inputs.push_back(groups);
    }
  }
  for (size_t length : {0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 100, 170, 255, 256, 257, 700, 5000}) {
    std::vector<uint64_t> uniform(length), small(length), top(length);
    for (size_t i = 0; i < length; ++i) {
      uniform[i] = rng.Next();
      small[i] = rng.Next() % 50;
      top[i] = UINT64_MAX - rng.Next() % 1000;
    }
    if (length > 2) {
      uniform[0] = 0;
      uniform[1] = UINT64_MAX;
    }
    inputs.push_back(uniform);
    inputs.push_back(small);
    inputs.push_back(top);
  }
  return inputs;
}

TEST(BottomKKernelTest, EveryKernelFiltersAndSortsLikeTheDefinition) {
  const std::vector<internal::BottomKKernel> kernels = internal::SupportedBottomKKernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.front().name, "portable");
  internal::SplitMix64 rng(3);
  for (const internal::BottomKKernel& kernel : kernels) {
    SCOPED_TRACE(kernel.name);
    for (const std::vector<uint64_t>& input : KernelInputs()) {
      const uint64_t r = rng.Next();
      const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
          {0, 0},   {0, 25},    {0, r},          {0, UINT64_MAX - 500},    {0, UINT64_MAX},
          {10, 30}, {r / 2, r}, {r, UINT64_MAX}, {UINT64_MAX, UINT64_MAX}, {26, UINT64_MAX}};
      for (const auto& [first, last] : ranges) {
        std::vector<uint64_t> expected;
        for (uint64_t v : input) {
          if (v >= first && v <= last) expected.push_back(v);
        }
        std::vector<uint64_t> out(input.size() + internal::kFilterSlack);
        const size_t kept =
            kernel.filter_in_range(input.data(), input.size(), first, last, out.data());
        out.resize(kept);
        EXPECT_EQ(out, expected) << "size " << input.size() << " range " << first << ".." << last;
      }
      std::vector<uint64_t> expected = input;
      std::sort(expected.begin(), expected.end());
      // The whole range, and the tightest bound (all values clustered at
      // the top or bottom of the whole range defeat the buckets).
      std::vector<std::pair<uint64_t, uint64_t>> bounds = {{0, UINT64_MAX}};
      if (!input.empty()) bounds.emplace_back(expected.front(), expected.back());
      for (const auto& [first, last] : bounds) {
        std::vector<uint64_t> sorted(input.size());
        // Scratch as a builder reuses it: holding anything. A bucket number
        // a kernel leaves unwritten (a vector tail) is then out of range:
        // the counting pass writes past the counts (count[0xFFFF], or far
        // past for 32-bit numbers), which ASan reports and a Release build
        // shows as a crash or a wrong sort, not reliably.
        std::vector<uint64_t> scratch(internal::SortScratchSize(input.size()), UINT64_MAX);
        kernel.sort_ascending(input.data(), input.size(), first, last, sorted.data(),
                              scratch.data());
        EXPECT_EQ(sorted, expected)
            << "size " << input.size() << " bound " << first << ".." << last;
      }
    }
  }
}

TEST(BottomKKernelTest, EveryKernelDropsRepeatsLikeStdUnique) {
  const std::vector<internal::BottomKKernel> kernels = internal::SupportedBottomKKernels();
  internal::SplitMix64 rng(5);
  std::vector<std::vector<uint64_t>> inputs = KernelInputs();
  // Runs of repeats of every length across the vector boundaries.
  for (size_t length : {size_t{9}, size_t{16}, size_t{17}, size_t{64}, size_t{300}}) {
    std::vector<uint64_t> runs;
    while (runs.size() < length) runs.insert(runs.end(), 1 + rng.Next() % 10, rng.Next());
    inputs.push_back(runs);
  }
  for (const internal::BottomKKernel& kernel : kernels) {
    SCOPED_TRACE(kernel.name);
    for (std::vector<uint64_t> input : inputs) {
      std::sort(input.begin(), input.end());
      std::vector<uint64_t> distinct = input;
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      for (size_t room : {size_t{1}, size_t{2}, size_t{7}, size_t{8}, size_t{9}, size_t{128},
                          distinct.size(), input.size() + 1}) {
        if (room == 0) continue;
        std::vector<uint64_t> out(room + internal::kUniqueSlack);
        const size_t kept = kernel.unique(input.data(), input.size(), out.data(), room);
        out.resize(kept);
        const std::vector<uint64_t> want(distinct.begin(),
                                         distinct.begin() + std::min(room, distinct.size()));
        EXPECT_EQ(out, want) << "size " << input.size() << " room " << room;
      }
    }
  }
}

// MergeUnique against std::merge + std::unique: every pair of lengths 0-40
// (every tail of eight on both sides), longer ones, repeats within and
// across the two inputs (values from a small range), 0 and UINT64_MAX (the
// AVX-512 kernel pads its loads with UINT64_MAX), and rooms that stop the
// merge inside a vector, at its end, and never.
TEST(BottomKKernelTest, EveryKernelMergesAndDropsRepeatsLikeTheDefinition) {
  const std::vector<internal::BottomKKernel> kernels = internal::SupportedBottomKKernels();
  internal::SplitMix64 rng(17);
  auto sorted_values = [&](size_t n, int kind) {
    std::vector<uint64_t> v(n);
    for (uint64_t& x : v) {
      switch (kind) {
        case 0:
          x = rng.Next();
          break;
        case 1:
          x = rng.Next() % 24;
          break;  // many repeats
        default: {
          const uint64_t r = rng.Next() % 4;
          x = r == 0 ? 0 : r == 1 ? UINT64_MAX : r == 2 ? UINT64_MAX - 1 : rng.Next();
        }
      }
    }
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> cases;
  for (int kind = 0; kind < 3; ++kind) {
    for (size_t na = 0; na <= 40; ++na) {
      for (size_t nb = 0; nb <= 40; ++nb)
        cases.emplace_back(sorted_values(na, kind), sorted_values(nb, kind));
    }
    for (size_t na : {size_t{127}, size_t{128}, size_t{129}, size_t{300}}) {
      for (size_t nb : {size_t{0}, size_t{1}, size_t{33}, size_t{170}, size_t{513}}) {
        cases.emplace_back(sorted_values(na, kind), sorted_values(nb, kind));
        cases.emplace_back(sorted_values(nb, kind), sorted_values(na, kind));
      }
    }
  }
  for (const internal::BottomKKernel& kernel : kernels) {
    SCOPED_TRACE(kernel.name);
    for (const auto& [a, b] : cases) {
      std::vector<uint64_t> distinct;
      std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(distinct));
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      for (size_t room : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{128}, distinct.size(),
                          a.size() + b.size() + 1}) {
        if (room == 0) continue;
        std::vector<uint64_t> out(room + internal::kUniqueSlack);
        const size_t kept =
            kernel.merge_unique(a.data(), a.size(), b.data(), b.size(), out.data(), room);
        out.resize(kept);
        const std::vector<uint64_t> want(distinct.begin(),
                                         distinct.begin() + std::min(room, distinct.size()));
        ASSERT_EQ(out, want) << "sizes " << a.size() << " + " << b.size() << " room " << room;
      }
    }
  }
}

TEST(BottomKDeathTest, RejectsNonPositiveK) {
  EXPECT_DEATH(BottomKBuilder(0), "at least 1");
  EXPECT_DEATH(BottomKBuilder(-3), "at least 1");
}

}  // namespace
}  // namespace neardup
