#include "json_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neardup::server {
namespace {

using ::testing::HasSubstr;

TEST(JsonInputTest, DocumentsWithEveryFormOfTime) {
  DocumentInput doc =
      *ParseDocument(R"({"id": "a\"b", "text": "x\ny", "time": 1796000000, "url": "u"})");
  EXPECT_EQ(doc.id, "a\"b");
  EXPECT_EQ(doc.text, "x\ny");
  EXPECT_EQ(doc.time, 1796000000);
  EXPECT_EQ(ParseDocument(R"({"id": "a", "text": ""})")->time, std::nullopt);
  EXPECT_EQ(ParseDocument(R"({"id": "a", "text": "", "time": "2026-11-26T10:00:00Z"})")->time,
            1795687200);
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseRfc3339("1970-01-01T01:00:00.123+01:00"), 0);
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:00-00:30"), 1800);
  for (const char* bad :
       {"", "2026-11-26", "2026-11-26T10:00:00", "2026-13-01T00:00:00Z", "2026-11-26T10:00:00Zjunk",
        "2026-11-26T10:00:00.Z", "2026-11-26T10:00:00+1:00"}) {
    EXPECT_THAT(ParseRfc3339(bad).status().message(), HasSubstr("field \"time\"")) << bad;
  }
  EXPECT_TRUE(ParseDocument(R"({"text": "t"})", /*id_optional=*/true).ok());
  EXPECT_THAT(ParseDocument(R"({"id": "", "text": "t"})").status().message(), HasSubstr("\"id\""));
  EXPECT_THAT(ParseDocument(R"({"id": "a", "text": "t"} x)").status().message(), HasSubstr("JSON"));
}

TEST(JsonInputTest, StreamConfigs) {
  StreamConfig config = *ParseStreamConfig(
      R"({"method": "simhash", "threshold": 0.7, "max_distance": 5, "preset": "short",
          "window_seconds": 60, "max_documents": 10})");
  EXPECT_EQ(config.method, NearDuplicateMethod::kSimHash);
  EXPECT_EQ(config.threshold, 0.7);
  EXPECT_EQ(config.max_distance, 5);
  EXPECT_EQ(config.preset, "short");
  EXPECT_EQ(config.window_seconds, 60);
  EXPECT_EQ(config.max_documents, 10u);
  EXPECT_EQ(*ParseStreamConfig(""), StreamConfig{});
  EXPECT_THAT(ParseStreamConfig(R"({"max_documents": -1})").status().message(),
              HasSubstr("max_documents"));
  EXPECT_THAT(ParseStreamConfig(R"({"max_distance": 64})").status().message(),
              HasSubstr("max_distance"));
}

TEST(JsonInputTest, StreamNames) {
  EXPECT_TRUE(IsValidStreamName("news_EN-2"));
  EXPECT_TRUE(IsValidStreamName(std::string(64, 'a')));
  for (const std::string& bad :
       std::vector<std::string>{"", "..", "a/b", "a.b", "a b", std::string(65, 'a'), "\xc3\xa9"}) {
    EXPECT_FALSE(IsValidStreamName(bad)) << bad;
  }
}

}  // namespace
}  // namespace neardup::server
