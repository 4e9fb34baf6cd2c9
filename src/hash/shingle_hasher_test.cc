#include "hash/shingle_hasher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// Streams `tokens` as one document and returns every feature emitted.
std::vector<uint64_t> Stream(ShingleHasher& hasher, const std::vector<uint64_t>& tokens) {
  std::vector<uint64_t> out;
  auto emit = [&](uint64_t f) { out.push_back(f); };
  for (uint64_t t : tokens) hasher.Push(t, emit);
  hasher.Finish(emit);
  return out;
}

// The oracle: Combine over every full window, or over the whole document
// when it is shorter than one window.
std::vector<uint64_t> Oracle(const std::vector<uint64_t>& tokens, int width, uint64_t seed) {
  std::vector<uint64_t> out;
  if (tokens.empty()) return out;
  if (tokens.size() < static_cast<size_t>(width)) {
    out.push_back(ShingleHasher::Combine(tokens, seed));
    return out;
  }
  for (size_t i = 0; i + width <= tokens.size(); ++i) {
    out.push_back(ShingleHasher::Combine(std::span(tokens).subspan(i, width), seed));
  }
  return out;
}

// Frozen: these pin the definition documented in shingle_hasher.h (checked
// once against an independent implementation of that text).
TEST(ShingleHasherTest, CombineKnownAnswers) {
  EXPECT_EQ(ShingleHasher::LeadingCoefficient(0), 0xe220a8397b1dcdafULL);
  const std::vector<uint64_t> one_two_three = {1, 2, 3};
  EXPECT_EQ(ShingleHasher::Combine(one_two_three, 0), 0x88f73e0b05e69987ULL);
  EXPECT_EQ(ShingleHasher::Combine(std::span(one_two_three).first(2), 0), 0x360e811b915fefffULL);
  EXPECT_EQ(ShingleHasher::Combine(one_two_three, 99), 0x1310f040ea26e657ULL);
  // sdbm("school"), sdbm("school"), sdbm("students"): the paper's first 3-shingle.
  const std::vector<uint64_t> paper = {0x18a4228558350ef4ULL, 0x18a4228558350ef4ULL,
                                       0x625419d288d39b38ULL};
  EXPECT_EQ(ShingleHasher::Combine(paper, 0), 0xbd2400384d246f7cULL);
}

TEST(ShingleHasherTest, SingleTokenIsItsOwnFeature) {
  const std::vector<uint64_t> one = {0x18a4228558350ef4ULL};
  EXPECT_EQ(ShingleHasher::Combine(one, 0), 0x18a4228558350ef4ULL);
  EXPECT_EQ(ShingleHasher::Combine(one, 12345), 0x18a4228558350ef4ULL);
}

TEST(ShingleHasherTest, WidthOneEmitsTokenHashesUnchanged) {
  ShingleHasher hasher(1, 7);
  const std::vector<uint64_t> tokens = {0x18a4228558350ef4ULL, 0x18a4228558350ef4ULL,
                                        0x625419d288d39b38ULL, 0xa62ee3cd272141b1ULL, 0};
  EXPECT_THAT(Stream(hasher, tokens), ElementsAreArray(tokens));
}

TEST(ShingleHasherTest, StreamingMatchesCombineOverEachWindow) {
  SplitMix64 rng(2024);
  for (int width : {1, 2, 3, 4, 5, 7, 8, 13, 63, 64}) {
    for (uint64_t seed : {0ULL, 1ULL, 0xfeedfaceULL}) {
      ShingleHasher hasher(width, seed);
      // Lengths around the window size, and several documents through one
      // hasher (Finish must reset it completely).
      for (size_t length : {size_t{0}, size_t{1}, size_t{2}, static_cast<size_t>(width) - 1,
                            static_cast<size_t>(width), static_cast<size_t>(width) + 1,
                            static_cast<size_t>(3 * width + 5), size_t{200}}) {
        std::vector<uint64_t> tokens(length);
        for (uint64_t& t : tokens) {
          // Small values too: weak hashes (sdbm of short words) and zeros.
          uint64_t r = rng.Next();
          t = (r % 4 == 0) ? (r >> 60) : r;
        }
        EXPECT_EQ(Stream(hasher, tokens), Oracle(tokens, width, seed))
            << "width " << width << " seed " << seed << " length " << length;
      }
    }
  }
}

TEST(ShingleHasherTest, PartialWindowGivesOneFeature) {
  ShingleHasher hasher(5, 0);
  const std::vector<uint64_t> tokens = {10, 20, 30};
  EXPECT_THAT(Stream(hasher, tokens), ElementsAre(ShingleHasher::Combine(tokens, 0)));
  // A full window emits nothing more at Finish.
  const std::vector<uint64_t> five = {1, 2, 3, 4, 5};
  EXPECT_THAT(Stream(hasher, five), ElementsAre(ShingleHasher::Combine(five, 0)));
  // No tokens, no features.
  EXPECT_TRUE(Stream(hasher, {}).empty());
}

TEST(ShingleHasherTest, ResetBetweenDocuments) {
  ShingleHasher hasher(3, 5);
  const std::vector<uint64_t> doc = {11, 22, 33, 44};
  Stream(hasher, {99, 98, 97, 96, 95});
  EXPECT_EQ(Stream(hasher, doc), Oracle(doc, 3, 5));
  // A document abandoned part-way through is forgotten by Reset.
  hasher.Push(7, [](uint64_t) {});
  hasher.Reset();
  EXPECT_EQ(Stream(hasher, doc), Oracle(doc, 3, 5));
}

TEST(ShingleHasherTest, OrderSensitive) {
  const std::vector<uint64_t> abc = {1, 2, 3};
  const std::vector<uint64_t> cba = {3, 2, 1};
  const std::vector<uint64_t> bac = {2, 1, 3};
  EXPECT_NE(ShingleHasher::Combine(abc, 0), ShingleHasher::Combine(cba, 0));
  EXPECT_NE(ShingleHasher::Combine(abc, 0), ShingleHasher::Combine(bac, 0));
  const std::vector<uint64_t> ab = {0x18a4228558350ef4ULL, 0x625419d288d39b38ULL};
  const std::vector<uint64_t> ba = {0x625419d288d39b38ULL, 0x18a4228558350ef4ULL};
  EXPECT_NE(ShingleHasher::Combine(ab, 0), ShingleHasher::Combine(ba, 0));
}

TEST(ShingleHasherTest, LengthAndSeedMatter) {
  // A leading zero hash must not vanish (h_0 is odd, never 0).
  const std::vector<uint64_t> with_zero = {0, 5, 6};
  const std::vector<uint64_t> without = {5, 6};
  EXPECT_NE(ShingleHasher::Combine(with_zero, 0), ShingleHasher::Combine(without, 0));
  EXPECT_NE(ShingleHasher::Combine(without, 0), ShingleHasher::Combine(without, 1));
}

TEST(ShingleHasherTest, RepeatedTokensGiveRepeatedFeatures) {
  ShingleHasher hasher(3, 0);
  std::vector<uint64_t> tokens(10, 42);
  std::vector<uint64_t> features = Stream(hasher, tokens);
  ASSERT_EQ(features.size(), 8u);
  EXPECT_TRUE(
      std::all_of(features.begin(), features.end(), [&](uint64_t f) { return f == features[0]; }));
}

TEST(ShingleHasherDeathTest, WidthOutOfRange) {
  EXPECT_DEATH(ShingleHasher(0, 0), "shingle_width \\(0\\)");
  EXPECT_DEATH(ShingleHasher(65, 0), "shingle_width \\(65\\)");
}

}  // namespace
}  // namespace neardup::internal
