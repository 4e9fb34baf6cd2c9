#include "json_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
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

// ParseDocumentViews (session 14: ids and texts viewed in the body, each
// line parsed in place) against ParseDocuments (every string unescaped by
// simdjson and copied): the same documents and the same errors, for seeded
// bodies of lines mixing escapes (\", \\, \n, \u00e9, surrogate pairs, a
// lone surrogate), raw UTF-8 and bad UTF-8, raw control characters,
// whitespace around values, other fields, texts that are not strings, and
// garbage after a value; with the body's spare capacity (in place) and
// without (the last lines from a copy).
TEST(JsonInputTest, ViewedDocumentsEqualCopiedOnes) {
  const std::vector<std::string> pieces = {"plain words",
                                           "a\\\"b",
                                           "back\\\\slash",
                                           "line\\nbreak",
                                           "\\u00e9t\\u00e9",
                                           "\\ud83d\\ude00",
                                           "\\ud800 lone",
                                           "caf\xc3\xa9",
                                           "bad \xc3(",
                                           "tab\there",
                                           "",
                                           "\\/",
                                           "x\\u0000y",
                                           "  spaced  ",
                                           "\\"};
  std::mt19937_64 random(14);
  size_t compared = 0;
  size_t errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string body;
    const size_t lines = 1 + random() % 4;
    for (size_t l = 0; l < lines; ++l) {
      const std::string& id = pieces[random() % pieces.size()];
      const std::string& text = pieces[random() % pieces.size()];
      std::string line;
      switch (random() % 8) {
        case 0:
          line = "{\"text\" : \"" + text + "\"  , \"id\":\"" + id + "x\" }";
          break;
        case 1:
          line = "{\"id\": \"" + id + "y\", \"text\": " + std::to_string(random() % 9) + "}";
          break;
        case 2:
          line = "{\"id\": \"" + id + "z\", \"url\": \"u\", \"text\": \"" + text + "\"x}";
          break;
        case 3:
          line = "{\"id\": \"i\", \"time\": 17, \"text\":\"" + text + "\"\t}\r";
          break;
        default:
          line = "{\"id\": \"" + id + "w\", \"text\": \"" + text + "\"}";
      }
      body += line + "\n";
    }
    if (random() % 2) body.pop_back();
    for (bool json_lines : {true, false}) {
      const std::string line_body = json_lines ? body : body.substr(0, body.find('\n'));
      Result<std::vector<DocumentInput>> copied =
          ParseDocuments(line_body, json_lines, /*id_optional=*/false, 1 << 20);
      // Spare capacity that is fresh, none, or stale: a reused body buffer
      // holds earlier bodies' bytes past size() + 1, which simdjson reads
      // as padding (quotes, backslashes, digits, braces: the parse must not
      // depend on them).
      for (int variant : {0, 1, 2}) {
        const bool spare = variant != 1;
        std::string owned;
        if (variant == 2) {
          static constexpr char kStale[] = {'"', '\\', '7', '}'};
          owned.assign(line_body.size() + 200, kStale[random() % 4]);
          owned.assign(line_body);
        } else {
          owned = line_body;
        }
        if (variant == 0) {
          owned.reserve(owned.size() + 64);
        } else if (variant == 1) {
          owned.shrink_to_fit();
        }
        Result<ParsedDocuments> viewed =
            ParseDocumentViews(owned, json_lines, /*id_optional=*/false, 1 << 20);
        ASSERT_EQ(viewed.ok(), copied.ok()) << line_body << "\n"
                                            << viewed.status() << "\n"
                                            << copied.status();
        if (!copied.ok()) {
          EXPECT_EQ(viewed.status(), copied.status()) << line_body;
          ++errors;
          continue;
        }
        ASSERT_EQ(viewed->documents.size(), copied->size()) << line_body;
        for (size_t i = 0; i < copied->size(); ++i) {
          EXPECT_EQ(viewed->documents[i].id, (*copied)[i].id) << line_body;
          EXPECT_EQ(viewed->documents[i].text, (*copied)[i].text) << line_body;
          EXPECT_EQ(viewed->documents[i].time, (*copied)[i].time) << line_body;
          ++compared;
        }
        // The views of strings without escapes point into the body.
        if (spare && !viewed->documents.empty() &&
            viewed->documents[0].text.find_first_of("\"\\\n\t") == std::string::npos &&
            owned.find("\\", 0) == std::string::npos && !viewed->documents[0].text.empty()) {
          EXPECT_GE(viewed->documents[0].text.data(), owned.data());
          EXPECT_LT(viewed->documents[0].text.data(), owned.data() + owned.size());
        }
      }
    }
  }
  EXPECT_GT(compared, 3000u);
  EXPECT_GT(errors, 500u);
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
