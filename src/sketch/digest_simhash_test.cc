#include "sketch/digest_simhash.h"

#include <gtest/gtest.h>

#include <vector>

#include "util/mix.h"

namespace neardup::internal {
namespace {

// Bit i of a digest, bit 0 the most significant bit of byte 0.
int DigestBit(const std::vector<uint8_t>& digest, int i) {
  return (digest[i / 8] >> (7 - i % 8)) & 1;
}

int SimHashBit(const WideSimHash& simhash, int i) {
  return static_cast<int>((simhash.words[i / 64] >> (63 - i % 64)) & 1);
}

TEST(DigestSimHashTest, EqualsTheBitwiseVoteOracle) {
  SplitMix64 rng(99);
  for (const int bits : {128, 160, 256}) {
    for (const int count : {0, 1, 2, 3, 10, 101, 255, 256, 600}) {
      std::vector<std::vector<uint8_t>> digests(static_cast<size_t>(count),
                                                std::vector<uint8_t>(bits / 8));
      for (auto& digest : digests) {
        // Few distinct byte values, so that ties (sum 0) occur.
        for (uint8_t& byte : digest) byte = static_cast<uint8_t>(rng.Next() % 4 == 0 ? 0xF0 : 0x0F);
      }
      DigestSimHashAccumulator accumulator(bits);
      for (const auto& digest : digests) accumulator.Add(digest.data());
      for (SimHashTieRule tie : {SimHashTieRule::kOne, SimHashTieRule::kZero}) {
        const WideSimHash simhash = accumulator.Finish(tie);
        EXPECT_EQ(simhash.bits, bits);
        EXPECT_EQ(accumulator.count(), static_cast<uint64_t>(count));
        for (int i = 0; i < 256; ++i) {
          if (i >= bits) {
            EXPECT_EQ(SimHashBit(simhash, i), 0) << "past the width";
            continue;
          }
          int sum = 0;
          for (const auto& digest : digests) sum += DigestBit(digest, i) ? 1 : -1;
          EXPECT_EQ(accumulator.Sum(i), sum);
          const int want = sum > 0 || (sum == 0 && tie == SimHashTieRule::kOne);
          EXPECT_EQ(SimHashBit(simhash, i), want) << bits << " bits, bit " << i;
        }
      }
    }
  }
}

TEST(DigestSimHashTest, OneDigestIsItsOwnSimHashAndResetForgets) {
  DigestSimHashAccumulator accumulator(128);
  std::vector<uint8_t> digest(16);
  for (size_t i = 0; i < digest.size(); ++i) digest[i] = static_cast<uint8_t>(0x11 * i + 3);
  accumulator.Add(digest.data());
  const WideSimHash one = accumulator.Finish(SimHashTieRule::kZero);
  EXPECT_EQ(one.words[0], 0x031425364758697aULL);
  EXPECT_EQ(one.words[1], 0x8b9cadbecfe0f102ULL);
  accumulator.Reset();
  EXPECT_EQ(accumulator.Finish(SimHashTieRule::kZero), (WideSimHash{{0, 0, 0, 0}, 128}));
  EXPECT_EQ(accumulator.Finish(SimHashTieRule::kOne).words[1], ~uint64_t{0});
}

TEST(DigestSimHashTest, WideSimHashBytesAreBigEndianWordsCutToTheWidth) {
  WideSimHash simhash;
  simhash.bits = 160;
  simhash.words = {0x0102030405060708ULL, 0x090a0b0c0d0e0f10ULL, 0x1112131400000000ULL, 0};
  std::vector<uint8_t> bytes = WideSimHashBytes(simhash);
  ASSERT_EQ(bytes.size(), 20u);
  for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(bytes[i], i + 1) << i;
}

}  // namespace
}  // namespace neardup::internal
