#include "neardup/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace neardup {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return InvalidArgumentError("x (" + std::to_string(x) + ") must be positive");
  return x;
}

Result<int> Doubled(int x) {
  NEARDUP_ASSIGN_OR_RETURN(int value, ParsePositive(x));
  return value * 2;
}

Status CheckBoth(int a, int b) {
  NEARDUP_RETURN_IF_ERROR(ParsePositive(a).status());
  NEARDUP_RETURN_IF_ERROR(ParsePositive(b).status());
  return Status::Ok();
}

TEST(StatusTest, OkByDefault) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status status = DataLossError("segment 3 truncated at byte 17");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(status.ToString(), "data_loss: segment 3 truncated at byte 17");
  EXPECT_EQ(status.WithContext("open index").message(),
            "open index: segment 3 truncated at byte 17");
}

TEST(StatusTest, ResultPropagates) {
  EXPECT_EQ(*Doubled(21), 42);
  Result<int> bad = Doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "x (-1) must be positive");
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(1, 0).code(), StatusCode::kInvalidArgument);
}

TEST(StatusTest, ResultHoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> result = std::make_unique<int>(7);
  ASSERT_TRUE(result.ok());
  std::unique_ptr<int> owned = std::move(result).value();
  EXPECT_EQ(*owned, 7);
}

TEST(StatusDeathTest, ValueOfErrorAborts) {
  Result<int> bad = ParsePositive(0);
  EXPECT_DEATH((void)bad.value(), "Result has no value");
}

}  // namespace
}  // namespace neardup
