// JsonlRecordParser::ParseRecord, the copy-free form of Parse: a string
// without escapes is a view into the line, one with escapes is unescaped once
// into the arena, and ids, texts and errors are exactly Parse's (and so
// those of the reader before ParseRecord existed).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/jsonl_record_parser.h"
#include "io/line_reader.h"

namespace neardup::internal {
namespace {

// `line` in an exactly sized buffer plus the promised padding, so that ASan
// sees any read beyond it.
class PaddedLine {
 public:
  explicit PaddedLine(const std::string& line) : buffer_(line.size() + kLinePaddingBytes, '\0') {
    std::copy(line.begin(), line.end(), buffer_.begin());
    size_ = line.size();
  }
  std::string_view view() const { return {buffer_.data(), size_}; }

 private:
  std::vector<char> buffer_;
  size_t size_ = 0;
};

// Appends the UTF-8 of `code_point` (the oracle's own encoder).
void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

std::string Hex4(uint32_t value) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kDigits[(value >> shift) & 0xF]);
  return out;
}

// A random JSON string body (between the quotes) and what it decodes to:
// plain ASCII, multi-byte UTF-8, every short escape, \u escapes of the BMP
// and surrogate pairs.
void RandomEscapedString(std::mt19937_64& rng, int pieces, std::string* json,
                         std::string* decoded) {
  for (int i = 0; i < pieces; ++i) {
    switch (rng() % 8) {
      case 0: {
        static const char kShort[] = "\"\\/bfnrt";
        static const char kDecoded[] = "\"\\/\b\f\n\r\t";
        const size_t k = rng() % 8;
        json->push_back('\\');
        json->push_back(kShort[k]);
        decoded->push_back(kDecoded[k]);
        break;
      }
      case 1: {  // a BMP code point outside the surrogates, \u0000 included
        uint32_t cp = static_cast<uint32_t>(rng() % 0xF800);
        if (cp >= 0xD800) cp += 0x800;
        *json += "\\u" + Hex4(cp);
        AppendUtf8(cp, decoded);
        break;
      }
      case 2: {  // a surrogate pair
        const uint32_t cp = 0x10000 + static_cast<uint32_t>(rng() % 0x100000);
        const uint32_t v = cp - 0x10000;
        *json += "\\u" + Hex4(0xD800 + (v >> 10)) + "\\u" + Hex4(0xDC00 + (v & 0x3FF));
        AppendUtf8(cp, decoded);
        break;
      }
      case 3: {  // raw multi-byte UTF-8
        std::string utf8;
        AppendUtf8(0x80 + static_cast<uint32_t>(rng() % 0x700), &utf8);
        *json += utf8;
        *decoded += utf8;
        break;
      }
      default: {
        std::string word(1 + rng() % 12, static_cast<char>('a' + rng() % 26));
        *json += word + " ";
        *decoded += word + " ";
      }
    }
  }
}

TEST(JsonlRecordFieldsTest, AStringWithoutEscapesIsAViewIntoTheLine) {
  JsonlRecordParser parser("text", "id");
  TextArena arena;
  PaddedLine line(R"({"id": "doc-1" , "text": "caf\u00e9 plain", "n": 3})");
  PaddedLine plain(R"({"id": "doc-1" ,"text":"café plain"  })");
  JsonlRecord record;
  ASSERT_TRUE(parser.ParseRecord(plain.view(), &arena, &record).ok());
  EXPECT_FALSE(record.text.in_arena);
  EXPECT_FALSE(record.id.in_arena);
  EXPECT_EQ(arena.size(), 0u);
  EXPECT_EQ(FieldView(plain.view(), arena, record.text), "café plain");
  EXPECT_EQ(plain.view().substr(record.text.offset, record.text.size), "café plain");
  EXPECT_EQ(FieldView(plain.view(), arena, record.id), "doc-1");

  ASSERT_TRUE(parser.ParseRecord(line.view(), &arena, &record).ok());
  EXPECT_TRUE(record.text.in_arena);
  EXPECT_FALSE(record.id.in_arena);
  EXPECT_EQ(FieldView(line.view(), arena, record.text), "café plain");
  EXPECT_EQ(arena.size(), record.text.size);
}

TEST(JsonlRecordFieldsTest, EscapeHeavyStringsDecodeAsTheOracleSays) {
  std::mt19937_64 rng(13);
  JsonlRecordParser parser("text", "id");
  JsonlRecordParser reference("text", "id");
  TextArena arena;
  // Many records into one arena: offsets stay right as it grows and moves.
  std::vector<std::string> lines;
  std::vector<std::string> texts;
  std::vector<std::string> ids;
  std::vector<JsonlRecord> records;
  for (int i = 0; i < 300; ++i) {
    std::string text_json, text, id_json, id;
    RandomEscapedString(rng, static_cast<int>(rng() % 200), &text_json, &text);
    RandomEscapedString(rng, static_cast<int>(rng() % 4), &id_json, &id);
    lines.push_back("{\"id\": \"" + id_json + "\", \"x\": [\"" + text_json + "\"], \"text\": \"" +
                    text_json + "\"}");
    texts.push_back(text);
    ids.push_back(id);
  }
  std::vector<PaddedLine> padded;
  for (const std::string& line : lines) padded.emplace_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    JsonlRecord record;
    Status status = parser.ParseRecord(padded[i].view(), &arena, &record);
    ASSERT_TRUE(status.ok()) << status << " in " << lines[i];
    records.push_back(record);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(FieldView(padded[i].view(), arena, records[i].text), texts[i]) << lines[i];
    EXPECT_EQ(FieldView(padded[i].view(), arena, records[i].id), ids[i]) << lines[i];
    Document doc;
    bool has_id = false;
    ASSERT_TRUE(reference.Parse(padded[i].view(), &doc, &has_id).ok());
    EXPECT_EQ(doc.text, texts[i]);
    EXPECT_EQ(doc.id, ids[i]);
  }
}

TEST(JsonlRecordFieldsTest, InvalidEscapesGiveTheClearErrorTheyAlwaysGave) {
  const std::string kError = "invalid JSON: Problem while parsing a string";
  for (const char* line : {
           R"({"id": "a", "text": "bad \x escape"})",
           R"({"id": "a", "text": "short \u12 escape"})",
           R"({"id": "a", "text": "not hex \uZZZZ"})",
           R"({"id": "a", "text": "lone high \ud800 surrogate"})",
           R"({"id": "bad \q id", "text": "fine"})",
           R"({"text": "fine", "other": "bad \q elsewhere"})",
       }) {
    JsonlRecordParser parser("text", "id");
    TextArena arena;
    PaddedLine padded(line);
    JsonlRecord record;
    Status status = parser.ParseRecord(padded.view(), &arena, &record);
    EXPECT_FALSE(status.ok()) << line;
    EXPECT_EQ(status.message(), kError) << line;
    EXPECT_FALSE(record.has_id) << line;
    Document doc;
    bool has_id = true;
    status = parser.Parse(padded.view(), &doc, &has_id);
    EXPECT_EQ(status.message(), kError) << line;
    EXPECT_FALSE(has_id);
  }
}

TEST(JsonlRecordFieldsTest, ARepairedLineKeepsItsFieldsInTheArena) {
  JsonlRecordParser parser("text", "id");
  TextArena arena;
  // Invalid UTF-8 in a plain text and in an escaped one; the repaired line
  // is the parser's and is reused, so both must be copied out.
  PaddedLine first("{\"id\": 12, \"text\": \"caf\xE9 au lait\"}");
  PaddedLine second("{\"id\": \"x\\u0079\", \"text\": \"\\t\xFF\"}");
  JsonlRecord a, b;
  ASSERT_TRUE(parser.ParseRecord(first.view(), &arena, &a).ok());
  ASSERT_TRUE(parser.ParseRecord(second.view(), &arena, &b).ok());
  EXPECT_TRUE(a.replaced_utf8);
  EXPECT_TRUE(a.text.in_arena);
  EXPECT_TRUE(a.id.in_arena);
  EXPECT_EQ(FieldView(first.view(), arena, a.text), "caf\xEF\xBF\xBD au lait");
  EXPECT_EQ(FieldView(first.view(), arena, a.id), "12");
  EXPECT_EQ(FieldView(second.view(), arena, b.text), "\t\xEF\xBF\xBD");
  EXPECT_EQ(FieldView(second.view(), arena, b.id), "xy");
}

TEST(JsonlRecordFieldsTest, TextAndIdMayBeOneField) {
  JsonlRecordParser parser("body", "body");
  TextArena arena;
  for (const char* line : {R"({"body": "same \n field"})", R"({"body": "same field"})"}) {
    PaddedLine padded(line);
    JsonlRecord record;
    ASSERT_TRUE(parser.ParseRecord(padded.view(), &arena, &record).ok()) << line;
    EXPECT_TRUE(record.has_id);
    EXPECT_EQ(FieldView(padded.view(), arena, record.text),
              FieldView(padded.view(), arena, record.id));
  }
}

}  // namespace
}  // namespace neardup::internal
