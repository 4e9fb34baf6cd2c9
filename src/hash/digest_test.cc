#include "hash/digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "util/json_writer.h"

namespace neardup::internal {
namespace {

std::string Hex(const uint8_t* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

std::string DigestHex(FeatureHashKind kind, std::string_view text) {
  Result<Digester> digester = Digester::Create(kind);
  NEARDUP_CHECK(digester.ok()) << digester.status();
  uint8_t out[kMaxDigestBytes];
  digester->Digest(text, out);
  return Hex(out, digester->size());
}

// RFC 1321 appendix A.5 and FIPS 180-2 appendices A and B ("abc").
TEST(DigestTest, PublishedTestVectors) {
  EXPECT_EQ(DigestHex(FeatureHashKind::kMd5, ""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(DigestHex(FeatureHashKind::kMd5, "abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(DigestHex(FeatureHashKind::kMd5, "message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(DigestHex(FeatureHashKind::kSha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(DigestHex(FeatureHashKind::kSha256, "abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(DigestTest, SizesMatchTheRecipeWidths) {
  EXPECT_EQ(Digester::Create(FeatureHashKind::kMd5)->size(), 16u);
  EXPECT_EQ(Digester::Create(FeatureHashKind::kSha1)->size(), 20u);
  EXPECT_EQ(Digester::Create(FeatureHashKind::kSha256)->size(), 32u);
}

TEST(DigestTest, RepeatedCallsGiveTheSameDigest) {
  Result<Digester> digester = Digester::Create(FeatureHashKind::kSha256);
  ASSERT_TRUE(digester.ok());
  uint8_t first[kMaxDigestBytes];
  uint8_t again[kMaxDigestBytes];
  digester->Digest("loremipsumdolor", first);
  digester->Digest("something else", again);
  digester->Digest("loremipsumdolor", again);
  EXPECT_EQ(Hex(first, 32), Hex(again, 32));
}

TEST(DigestTest, SixtyFourBitHashesAreNotDigests) {
  Result<Digester> digester = Digester::Create(FeatureHashKind::kXxh3);
  ASSERT_FALSE(digester.ok());
  EXPECT_THAT(digester.status().message(), ::testing::HasSubstr("is not a digest"));
}

}  // namespace
}  // namespace neardup::internal
