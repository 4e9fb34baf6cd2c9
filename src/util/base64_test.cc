#include "util/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace neardup::internal {
namespace {

std::string Encode(std::string_view text) {
  std::string out;
  AppendBase64(
      &out, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  return out;
}

TEST(Base64Test, Rfc4648Vectors) {
  EXPECT_EQ(Encode(""), "");
  EXPECT_EQ(Encode("f"), "Zg==");
  EXPECT_EQ(Encode("fo"), "Zm8=");
  EXPECT_EQ(Encode("foo"), "Zm9v");
  EXPECT_EQ(Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Encode("\xfb\xff\xbf"), "+/+/");
}

}  // namespace
}  // namespace neardup::internal
