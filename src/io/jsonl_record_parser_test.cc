#include "io/jsonl_record_parser.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/line_reader.h"

namespace neardup::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Parsed {
  Status status;
  Document doc;
  bool has_id = false;
};

Parsed Parse(JsonlRecordParser& parser, const std::string& line) {
  // An exactly sized buffer plus the promised padding, so ASan sees any read
  // beyond it.
  std::vector<char> buffer(line.size() + kLinePaddingBytes, '\0');
  std::copy(line.begin(), line.end(), buffer.begin());
  Parsed out;
  out.status = parser.Parse(std::string_view(buffer.data(), line.size()), &out.doc, &out.has_id);
  return out;
}

Parsed Parse(const std::string& line) {
  JsonlRecordParser parser("text", "id");
  return Parse(parser, line);
}

TEST(JsonlRecordParserTest, ReadsTextAndStringId) {
  Parsed p = Parse(R"({"id": "doc-1", "text": "hello world", "extra": [1, {"x": null}]})");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.doc.id, "doc-1");
  EXPECT_EQ(p.doc.text, "hello world");
  EXPECT_TRUE(p.has_id);
}

TEST(JsonlRecordParserTest, DecodesEscapes) {
  Parsed p = Parse(
      R"({"text": "a\nb\t\"q\"\\ \/ \u00e9 \u20ac \ud83d\ude00 \u0000 end", "id": "\u0041"})");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.doc.text, std::string("a\nb\t\"q\"\\ / \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 ") +
                            std::string(1, '\0') + " end");
  EXPECT_EQ(p.doc.id, "A");
}

TEST(JsonlRecordParserTest, NumericIdKeepsItsJsonText) {
  for (const char* id : {"42", "-7", "0", "-0", "1.50", "1e3", "-2.5E-10",
                         "123456789012345678901234567890", "1e400"}) {
    Parsed p = Parse(std::string(R"({"id": )") + id + R"( , "text": "t"})");
    ASSERT_TRUE(p.status.ok()) << id << ": " << p.status;
    EXPECT_EQ(p.doc.id, id);
    EXPECT_TRUE(p.has_id);
  }
}

TEST(JsonlRecordParserTest, AbsentOrNullIdGivesNoId) {
  for (const char* line : {R"({"text": "t"})", R"({"text": "t", "id": null})"}) {
    Parsed p = Parse(line);
    ASSERT_TRUE(p.status.ok()) << line << ": " << p.status;
    EXPECT_FALSE(p.has_id);
    EXPECT_EQ(p.doc.id, "");
  }
}

TEST(JsonlRecordParserTest, LastDuplicateKeyWins) {
  Parsed p = Parse(R"({"text": "first", "id": 1, "text": "second", "id": "two"})");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.doc.text, "second");
  EXPECT_EQ(p.doc.id, "two");
}

TEST(JsonlRecordParserTest, CustomFieldsIncludingEscapedKeys) {
  JsonlRecordParser parser("content", "url");
  Parsed p = Parse(parser, R"({"text": "no", "cont\u0065nt": "yes", "url": "http://x"})");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.doc.text, "yes");
  EXPECT_EQ(p.doc.id, "http://x");
  // One field may serve as both.
  JsonlRecordParser same("body", "body");
  p = Parse(same, R"({"body": "both"})");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.doc.text, "both");
  EXPECT_EQ(p.doc.id, "both");
}

TEST(JsonlRecordParserTest, SkipReasons) {
  struct Case {
    const char* line;
    const char* reason_prefix;
  };
  const Case cases[] = {
      {R"({"id": 1})", "text field \"text\" is missing"},
      {R"({"text": 5})", "text field \"text\" is a number, not a string"},
      {R"({"text": null})", "text field \"text\" is null, not a string"},
      {R"({"text": ["a"]})", "text field \"text\" is an array, not a string"},
      {R"({"text": "t", "id": true})", "id field \"id\" is a boolean, not a string or a number"},
      {R"({"text": "t", "id": {"a": 1}})", "id field \"id\" is an object"},
      {R"(["text", "t"])", "not a JSON object: the line is an array"},
      {R"("text")", "not a JSON object: the line is a string"},
      {"42", "not a JSON object: the line is a number"},
  };
  for (const Case& c : cases) {
    Parsed p = Parse(c.line);
    EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument) << c.line;
    EXPECT_THAT(p.status.message(), StartsWith(c.reason_prefix)) << c.line;
  }
  // The id is known when only the text is wrong.
  Parsed p = Parse(R"({"id": "k", "text": 1})");
  EXPECT_EQ(p.doc.id, "k");
}

// Each is invalid per RFC 8259 (checked against Python's json.loads).
TEST(JsonlRecordParserTest, RejectsInvalidJsonAnywhereInTheLine) {
  const char* lines[] = {
      R"({"text": "t")",
      R"({"text": "t",})",
      R"({"text": "t"} {"x": 1})",
      R"({"text": "t"} x)",
      R"({"text": "t", "x": tru})",
      R"({"text": "t", "x": nul})",
      R"({"text": "t", "x": falsey})",
      R"({"text": "t", "x": 01})",
      R"({"text": "t", "x": 1.})",
      R"({"text": "t", "x": .5})",
      R"({"text": "t", "x": 1e})",
      R"({"text": "t", "x": +1})",
      R"({"text": "t", "x": 0x10})",
      R"({"text": "t", "x": NaN})",
      R"({"text": "t", "x": [1, 2,]})",
      R"({"text": "t", "x": [1 2]})",
      R"({"text": "t", "x": {"a" 1}})",
      R"({"text": "t", "x": {"a": 1})",
      R"({"text": "t", "x": "\q"})",
      R"({"text": "t", "x": "\u12"})",
      R"({"text": "t", "x": 'single'})",
      R"({text: "t"})",
      "{\"text\": \"raw\tcontrol\"}",
      R"({"text": "unterminated)",
      R"({"text": "t", "x": [[[[[[]]]]]})",
      R"({"text": "t", "x": [)",
      "{",
      "}",
      "",
      "nul",
  };
  for (const char* line : lines) {
    Parsed p = Parse(line);
    EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument) << line;
    EXPECT_FALSE(p.status.ok()) << line;
  }
}

TEST(JsonlRecordParserTest, InvalidUtf8IsReplacedNotARejection) {
  // As for a text file: each maximal ill-formed subpart becomes U+FFFD
  // (text/utf8.h), in the text, the id and any other string; the record is
  // kept and flagged.
  JsonlRecordParser parser("text", "id");
  for (const auto& [line, text] : std::vector<std::pair<std::string, std::string>>{
           {"{\"id\": \"a\xff\", \"text\": \"bad utf8 \xff!\"}", "bad utf8 \xEF\xBF\xBD!"},
           {"{\"text\": \"truncated \xe2\x82\", \"x\": \"\xc0\"}", "truncated \xEF\xBF\xBD"},
           {"{\"text\": \"surrogate \xed\xa0\x80\"}",
            "surrogate \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
       }) {
    std::vector<char> buffer(line.size() + kLinePaddingBytes, '\0');
    std::copy(line.begin(), line.end(), buffer.begin());
    Document doc;
    bool has_id = false;
    bool replaced = false;
    Status status =
        parser.Parse(std::string_view(buffer.data(), line.size()), &doc, &has_id, &replaced);
    ASSERT_TRUE(status.ok()) << status << " for " << line;
    EXPECT_EQ(doc.text, text);
    EXPECT_TRUE(replaced);
  }
  Document doc;
  bool has_id = false;
  bool replaced = true;
  std::string valid = "{\"text\": \"caf\xc3\xa9\"}" + std::string(kLinePaddingBytes, '\0');
  ASSERT_TRUE(parser
                  .Parse(std::string_view(valid.data(), valid.size() - kLinePaddingBytes), &doc,
                         &has_id, &replaced)
                  .ok());
  EXPECT_FALSE(replaced);
  // Still invalid JSON when the bad byte is outside a string.
  EXPECT_EQ(Parse(parser, "{\"text\": \"t\", \"x\": \xff}").status.code(),
            StatusCode::kInvalidArgument);
}

TEST(JsonlRecordParserTest, PlainTextLineIsInvalidJsonNotABoolean) {
  // simdjson types a root by its first byte; "this is text" starts like true.
  for (const char* line : {"this is not json", "true story", "nothing here", "-dash", "fals"}) {
    Parsed p = Parse(line);
    EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument) << line;
    EXPECT_THAT(p.status.message(), HasSubstr("invalid JSON")) << line;
    EXPECT_THAT(p.status.message(), ::testing::Not(HasSubstr("boolean"))) << line;
  }
  EXPECT_EQ(Parse("true").status.message(), "not a JSON object: the line is a boolean");
  EXPECT_EQ(Parse(" null ").status.message(), "not a JSON object: the line is null");
  EXPECT_EQ(Parse("12").status.message(), "not a JSON object: the line is a number");
}

TEST(JsonlRecordParserTest, DeepNestingIsBoundedNotACrash) {
  std::string deep =
      R"({"text": "t", "x": )" + std::string(5000, '[') + std::string(5000, ']') + "}";
  Parsed p = Parse(deep);
  EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument);
  std::string fine = R"({"text": "t", "x": )" + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_TRUE(Parse(fine).status.ok());
}

TEST(JsonlRecordParserTest, ParserIsReusableAcrossLinesOfGrowingSize) {
  JsonlRecordParser parser("text", "id");
  for (size_t size : {10, 100000, 5, 3000000, 7}) {
    std::string text(size, 'q');
    Parsed p = Parse(parser, R"({"text": ")" + text + R"("})");
    ASSERT_TRUE(p.status.ok()) << size << ": " << p.status;
    EXPECT_EQ(p.doc.text, text);
    Parsed bad = Parse(parser, "{\"text\": ");
    EXPECT_FALSE(bad.status.ok());
  }
}

TEST(IsJsonNumberTest, FollowsTheGrammar) {
  for (const char* ok : {"0", "-0", "7", "-12", "1.5", "0.0", "1e5", "1E+5", "1e-05", "-0.5e10",
                         "99999999999999999999999999999999"}) {
    EXPECT_TRUE(IsJsonNumber(ok)) << ok;
  }
  for (const char* bad : {"", "-", "01", "-01", "1.", ".1", "1e", "1e+", "+1", "1.5.2", "0x1",
                          "Infinity", "1 ", " 1", "--1", "1e5e5"}) {
    EXPECT_FALSE(IsJsonNumber(bad)) << bad;
  }
}

}  // namespace
}  // namespace neardup::internal
