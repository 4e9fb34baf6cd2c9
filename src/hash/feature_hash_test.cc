#include "hash/feature_hash.h"
#include "hash/xxh3_inline.h"
#include "neardup/feature_hash.h"
#include "util/mix.h"

#include <gtest/gtest.h>

#include <string>

namespace neardup::internal {
namespace {

TEST(SdbmHashTest, SimHashFpgaPaperVectors) {
  // The token hashes printed in the SimHash FPGA paper's worked example.
  EXPECT_EQ(SdbmHash("school", 0), 0x18a4228558350ef4ULL);
  EXPECT_EQ(SdbmHash("students", 0), 0x625419d288d39b38ULL);
  EXPECT_EQ(SdbmHash("teachers", 0), 0xa62ee3cd272141b1ULL);
}

TEST(SdbmHashTest, EmptyIsSeedAndBytesAreUnsigned) {
  EXPECT_EQ(SdbmHash("", 0), 0u);
  EXPECT_EQ(SdbmHash("", 12345), 12345u);
  // One byte from h = 0 is the byte itself; 0xE9 must not sign-extend.
  EXPECT_EQ(SdbmHash("a", 0), 97u);
  EXPECT_EQ(SdbmHash("\xe9", 0), 0xe9u);
}

TEST(Fnv1aHashTest, StandardVectors) {
  EXPECT_EQ(Fnv1aHash("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1aHash("a", 0), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1aHash("foobar", 0), 0x85944171f73967e8ULL);
}

TEST(Xxh3HashTest, StandardVectors) { EXPECT_EQ(Xxh3Hash("", 0), 0x2d06800538d394c2ULL); }

// Frozen values for seeded variants, computed once with this implementation
// and asserted so that any change to a stored feature hash is caught.
TEST(FeatureHashTest, FrozenSeededValues) {
  EXPECT_EQ(Xxh3Hash("school", 42), 0x7b9c34281590d5e5ULL);
  EXPECT_EQ(Xxh3Hash("neardup", 0), 0x7a9c10a417354e44ULL);
  EXPECT_EQ(Xxh3Hash(std::string(300, 'x'), 7), 0x65afa05e0f083a41ULL);
  EXPECT_EQ(SdbmHash("school", 42), 0x5b202c227b40301eULL);
  EXPECT_EQ(Fnv1aHash("school", 42), 0xa8d25150b5219bfbULL);
  EXPECT_EQ(Fnv1aHash("caf\xc3\xa9", 0), 0x48e8823acfa40d89ULL);
}

TEST(FeatureHashTest, DispatchMatchesDirectCalls) {
  for (std::string s : {"", "a", "school", "caf\xc3\xa9", "longer token with spaces"}) {
    for (uint64_t seed : {0ULL, 1ULL, 0xdeadbeefULL}) {
      EXPECT_EQ(HashFeatureBytes(FeatureHashKind::kXxh3, s, seed), Xxh3Hash(s, seed));
      EXPECT_EQ(HashFeatureBytes(FeatureHashKind::kSdbm, s, seed), SdbmHash(s, seed));
      EXPECT_EQ(HashFeatureBytes(FeatureHashKind::kFnv1a, s, seed), Fnv1aHash(s, seed));
      // The public seam is the same function.
      EXPECT_EQ(neardup::HashFeature(FeatureHashKind::kXxh3, s, seed), Xxh3Hash(s, seed));
      EXPECT_EQ(neardup::HashFeature(FeatureHashKind::kSdbm, s, seed), SdbmHash(s, seed));
    }
  }
}

TEST(FeatureHashTest, SeedChangesValue) {
  EXPECT_NE(Xxh3Hash("school", 0), Xxh3Hash("school", 1));
  EXPECT_NE(SdbmHash("school", 0), SdbmHash("school", 1));
  EXPECT_NE(Fnv1aHash("school", 0), Fnv1aHash("school", 1));
}

TEST(Xxh3InlineTest, EqualsTheLibraryAtEveryLengthAndSeed) {
  SplitMix64 rng(1);
  std::string bytes(300, '\0');
  for (char& c : bytes) c = static_cast<char>(rng.Next());
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{42}, rng.Next(), ~uint64_t{0}}) {
    for (size_t length = 0; length <= bytes.size(); ++length) {
      for (size_t offset : {size_t{0}, size_t{3}}) {
        if (offset + length > bytes.size()) continue;
        const std::string_view s = std::string_view(bytes).substr(offset, length);
        ASSERT_EQ(Xxh3HashInline(s, seed), Xxh3Hash(s, seed)) << length << " " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace neardup::internal
