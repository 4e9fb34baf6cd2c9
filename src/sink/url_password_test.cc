#include "sink/url_password.h"

#include <gtest/gtest.h>

#include "neardup/result_sink.h"

namespace neardup {
namespace {

TEST(RedactUrlPasswordTest, HidesTheUserInfoPasswordAndPasswordParameters) {
  EXPECT_EQ(RedactUrlPassword("postgresql://user:s3cret@db.example:5432/results"),
            "postgresql://user:***@db.example:5432/results");
  EXPECT_EQ(RedactUrlPassword("postgresql://user:p%40ss@host/db?sslmode=require"),
            "postgresql://user:***@host/db?sslmode=require");
  // An unencoded '@' in the password: everything up to the last '@' goes.
  EXPECT_EQ(RedactUrlPassword("postgres://u:a@b@host/db"), "postgres://u:***@host/db");
  EXPECT_EQ(RedactUrlPassword("postgresql:///db?host=/tmp&password=pw&user=u"),
            "postgresql:///db?host=/tmp&password=***&user=u");
  EXPECT_EQ(RedactUrlPassword("postgresql://h/db?password=a&password=b"),
            "postgresql://h/db?password=***&password=***");
}

TEST(RedactUrlPasswordTest, LeavesUrlsWithoutPasswordsAlone) {
  for (const char* url : {"postgresql://", "postgresql://user@host/db", "postgresql://host/db",
                          "postgresql://h/db?user=a@b", "postgresql://u:@h/db", "not a url"}) {
    EXPECT_EQ(RedactUrlPassword(url), url);
  }
}

TEST(UrlPasswordsTest, DecodesPercentEscapes) {
  std::vector<std::string_view> spans = internal::UrlPasswords("postgresql://u:p%40ss%2f@h/db");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0], "p%40ss%2f");
  EXPECT_EQ(internal::PercentDecode(spans[0]), "p@ss/");
  EXPECT_EQ(internal::PercentDecode("100%"), "100%");
}

TEST(OpenResultSinkTest, RejectsOtherUrlsWithoutShowingThePassword) {
  Result<std::unique_ptr<ResultSink>> sink = OpenResultSink("mysql://u:hunter2@h/db");
  ASSERT_FALSE(sink.ok());
  EXPECT_EQ(sink.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sink.status().message().find("hunter2"), std::string::npos);
  EXPECT_FALSE(IsResultSinkUrl("mysql://h"));
  EXPECT_TRUE(IsResultSinkUrl("postgres://h"));
  EXPECT_TRUE(IsResultSinkUrl("postgresql:///db"));
}

}  // namespace
}  // namespace neardup
