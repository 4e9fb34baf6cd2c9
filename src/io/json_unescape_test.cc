// UnescapeJsonString (every path) against simdjson's own unescaper
// (`ondemand::parser::unescape`, what the JSONL reader used before): the
// same bytes, and a refusal exactly where simdjson refuses, on every short
// escape, `\u` escapes of every length class, surrogate pairs (well formed,
// lone, reversed, with a non-surrogate second half), invalid escapes, runs
// of backslashes across the 64-byte windows, raw UTF-8, and 20,000 seeded
// random strings built from those pieces; runs of `\u` escapes across the
// windows (JSON written with ensure_ascii); bodies whose 12 readable bytes
// end at a page end (no path reads past them).
#include "io/json_unescape.h"

#include "io/jsonl_record_parser.h"
#include "io/line_reader.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace neardup::internal {
namespace {

// simdjson's answer for the string whose body is `body`.
std::optional<std::string> SimdjsonUnescape(simdjson::ondemand::parser& parser,
                                            const std::string& body) {
  std::string quoted = "\"" + body + "\"";
  quoted.resize(quoted.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::vector<uint8_t> out(body.size() + simdjson::SIMDJSON_PADDING);
  uint8_t* dst = out.data();
  std::string_view value;
  if (parser
          .unescape(simdjson::ondemand::raw_json_string(
                        reinterpret_cast<const uint8_t*>(quoted.data()) + 1),
                    dst)
          .get(value) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return std::string(value);
}

// unescape() runs the implementation allocate() picks (the one the reader
// uses once it has parsed a line).
std::unique_ptr<simdjson::ondemand::parser> NewParser() {
  auto parser = std::make_unique<simdjson::ondemand::parser>();
  EXPECT_EQ(parser->allocate(1 << 16), simdjson::SUCCESS);
  return parser;
}

using UnescapeFunction = std::optional<size_t> (*)(std::string_view, char*);

std::optional<std::string> Ours(UnescapeFunction unescape, const std::string& body) {
  // The body in a line with its closing quote and padding after it, as the
  // reader hands it over; dst filled with garbage first.
  std::string line = body + "\"";
  line.resize(line.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::string out(body.size() + kUnescapeSlackBytes, '\x5a');
  std::optional<size_t> size = unescape(std::string_view(line.data(), body.size()), out.data());
  if (!size.has_value()) return std::nullopt;
  EXPECT_LE(*size, body.size());
  out.resize(*size);
  return out;
}

std::vector<std::pair<std::string, UnescapeFunction>> Paths() {
  std::vector<std::pair<std::string, UnescapeFunction>> paths = {
      {"portable", &UnescapeJsonStringPortable}, {"dispatched", &UnescapeJsonString}};
  if (JsonUnescapeAvx512Supported()) paths.emplace_back("avx512", &UnescapeJsonStringAvx512);
  // The kernel of CPUs without VBMI, run on every AVX-512BW host.
  if (JsonUnescapeAvx512BwSupported()) {
    paths.emplace_back("avx512bw", &UnescapeJsonStringAvx512Bw);
  }
  return paths;
}

void ExpectAsSimdjson(simdjson::ondemand::parser& parser, const std::string& body) {
  const std::optional<std::string> expected = SimdjsonUnescape(parser, body);
  for (const auto& [name, unescape] : Paths()) {
    EXPECT_EQ(Ours(unescape, body), expected) << name << " on \"" << body << "\"";
  }
}

TEST(JsonUnescapeTest, HandPickedStringsAsSimdjson) {
  auto owned = NewParser();
  simdjson::ondemand::parser& parser = *owned;
  const std::vector<std::string> bodies = {
      "", "plain", R"(\")", R"(\\)", R"(\/)", R"(\b\f\n\r\t)", R"(a\"b\\c\/d\be\ff\ng\rh\ti)",
      R"(\\\\\\\")", R"(\\n)", R"(\\\n)",
      // \u: one, two, three and four UTF-8 bytes, NUL, upper-case hex.
      R"(\u0041\u00e9\u20AC\u0000x)", R"(\uD83D\uDE00)", R"(\ud83d\ude00 tail)",
      // Surrogates: pairs, and the halves simdjson refuses.
      R"(\ud83d\u0041)", R"(\udc00)", R"(\ude00\ud83d\ude00)", R"(\ud83d)", R"(\ud83dx)",
      R"(\ud83d\n)", R"(\ud83d\uZZZZ)", R"(\udbff\udfff)", R"(\ud800\udc00)",
      // Refusals.
      R"(\x)", R"(\a)", R"(\0)", R"(\U0041)", R"(\u)", R"(\u1)", R"(\u12)", R"(\u123)", R"(\u12G4)",
      R"(\ug000)", "\\\xC3\xA9", R"(ok\q)",
      // Raw UTF-8 around escapes.
      "caf\xC3\xA9\\n\xE2\x82\xAC\\t\xF0\x9F\x98\x80"};
  for (const std::string& body : bodies) ExpectAsSimdjson(parser, body);
}

TEST(JsonUnescapeTest, EscapesAtEveryWindowPosition) {
  auto owned = NewParser();
  simdjson::ondemand::parser& parser = *owned;
  // An escape (or a run of backslashes) starting at every offset around the
  // 64-byte window edges, so the escape and its byte straddle windows.
  const std::vector<std::string> escapes = {R"(\n)",   R"(\\)",   R"(\\\")",         R"(\u00e9)",
                                            R"(\q)",   R"(\\\\)", R"(\ud83d\ude00)", R"(\u12)",
                                            R"(\\\t)", R"(\")"};
  for (size_t prefix = 0; prefix < 140; ++prefix) {
    for (const std::string& escape : escapes) {
      const std::string body = std::string(prefix, 'a') + escape + std::string(prefix % 7, 'b');
      ExpectAsSimdjson(parser, body);
      ExpectAsSimdjson(parser, body + escape + body);
    }
  }
}

TEST(JsonUnescapeTest, RandomStringsAsSimdjson) {
  auto owned = NewParser();
  simdjson::ondemand::parser& parser = *owned;
  std::mt19937 random(2026);
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           " ",
                                           "0",
                                           "u",
                                           "\xC3\xA9",
                                           "\xE2\x82\xAC",
                                           "\xF0\x9F\x98\x80",
                                           "\\n",
                                           "\\t",
                                           "\\\"",
                                           "\\\\",
                                           "\\/",
                                           "\\b",
                                           "\\f",
                                           "\\r",
                                           "\\u0041",
                                           "\\u00e9",
                                           "\\u20ac",
                                           "\\u0000",
                                           "\\ud83d\\ude00",
                                           "\\udbff\\udfff",
                                           "\\ud83d",
                                           "\\udc00",
                                           "\\u12",
                                           "\\uXYZW",
                                           "\\x",
                                           "\\'",
                                           "\\\\\\\\",
                                           "\\u",
                                           "\\\\u0041"};
  size_t refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body;
    const int count = static_cast<int>(random() % 80);
    // Mostly valid strings: invalid pieces only in every fourth.
    const size_t usable = i % 4 == 0 ? pieces.size() : 21;
    for (int j = 0; j < count; ++j) body += pieces[random() % usable];
    const std::optional<std::string> expected = SimdjsonUnescape(parser, body);
    refused += !expected.has_value();
    for (const auto& [name, unescape] : Paths()) {
      ASSERT_EQ(Ours(unescape, body), expected) << name << " on \"" << body << "\"";
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(refused, 1000u);
  EXPECT_LT(refused, 10000u);
}

TEST(JsonUnescapeTest, UnicodeEscapeRunsAcrossWindowsAsSimdjson) {
  auto owned = NewParser();
  simdjson::ondemand::parser& parser = *owned;
  // Text as Python's json.dumps writes it by default: every non-ASCII code
  // point a `\u` escape (6 or 12 bytes), so they straddle every window edge,
  // with short escapes and plain bytes between.
  const std::vector<std::string> runs = {
      R"(\u4e2d\u6587\u7684\u6587\u672c)", R"(\u041f\u0440\u0438\u0432\u0435\u0442 )",
      R"(\ud83d\ude00\ud83d\ude01)", R"(\u00e9\n\u00e8\t\u00ea)", R"(\u0041\\\u0042\")"};
  for (size_t prefix = 0; prefix < 80; ++prefix) {
    for (const std::string& run : runs) {
      std::string body(prefix, 'a');
      for (int i = 0; i < 6; ++i) body += run;
      ExpectAsSimdjson(parser, body);
      ExpectAsSimdjson(parser, body + R"(\u12)");  // refused after many windows
      ExpectAsSimdjson(parser, body + R"(\ud83d)");
    }
  }
}

// Bodies whose closing quote and 11 more readable bytes end at a page end,
// with nothing mapped after it: no path reads past what its REQUIRES grants
// (the AVX-512 kernels load the last window masked).
TEST(JsonUnescapeTest, BodiesEndingAtAPageEnd) {
  auto owned = NewParser();
  simdjson::ondemand::parser& parser = *owned;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapped =
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  // Unmapped however the test returns (a failed ASSERT_EQ returns early).
  auto unmap = [page](char* p) { munmap(p, 2 * page); };
  const std::unique_ptr<char, decltype(unmap)> owned_pages(static_cast<char*>(mapped), unmap);
  char* const base = owned_pages.get();
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  const std::vector<std::string> tails = {
      "",        R"(\n)",     R"(\\)",    R"(\")", R"(\u00e9)", R"(\ud83d\ude00)",
      R"(\u12)", R"(\ud83d)", "\xC3\xA9", R"(\q)", R"(\\\\\n)", R"(x\u4e2d)"};
  const std::vector<std::pair<std::string, UnescapeFunction>> paths = Paths();
  for (size_t length = 0; length < 200; ++length) {
    for (const std::string& tail : tails) {
      const std::string body = std::string(length, 'b') + tail;
      const std::optional<std::string> expected = SimdjsonUnescape(parser, body);
      // The body, its quote and 11 zero bytes, flush against the page end.
      char* const start = base + page - 12 - body.size();
      std::memcpy(start, body.data(), body.size());
      start[body.size()] = '"';
      std::memset(start + body.size() + 1, 0, 11);
      std::string out(body.size() + kUnescapeSlackBytes, '\x5a');
      for (const auto& [name, unescape] : paths) {
        const std::optional<size_t> size =
            unescape(std::string_view(start, body.size()), out.data());
        const std::optional<std::string> got =
            size.has_value() ? std::optional<std::string>(out.substr(0, *size)) : std::nullopt;
        ASSERT_EQ(got, expected) << name << " on \"" << body << "\"";
      }
    }
  }
}

// Through the reader: the text and id ParseRecord returns (the body found
// from the raw token, the prefix copied, the rest unescaped) equal
// simdjson's get_string of the same line, whatever the white space around
// the values and wherever the escapes stand in the body.
TEST(JsonUnescapeTest, ReaderFieldsEqualSimdjsonGetString) {
  JsonlRecordParser reader("text", "id");
  simdjson::ondemand::parser oracle;
  const std::vector<std::string> bodies = {R"(\n at the start)",
                                           R"(at the end\n)",
                                           R"(\\)",
                                           R"(ends in a backslash \\)",
                                           R"(\"quoted\")",
                                           R"(\u00e9\ud83d\ude00)",
                                           std::string(200, 'x') + R"(\t)" + std::string(70, 'y'),
                                           "no escape at all",
                                           ""};
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {R"({"id": "i\n1", "text": ")", R"("})"},
      {R"({ "text" :  ")", "\"  \t , \"id\" : 7 }"},
      {"{\"text\":\"", "\"\r\n\t}"},
      {R"({"other": [1, "x\n"], "text": ")", R"(", "id": "z"})"}};
  for (const std::string& body : bodies) {
    for (const auto& [before, after] : shapes) {
      const std::string json = before + body + after;
      std::string line = json;
      line.resize(json.size() + kLinePaddingBytes, '\0');
      TextArena arena;
      JsonlRecord record;
      ASSERT_TRUE(
          reader.ParseRecord(std::string_view(line.data(), json.size()), &arena, &record).ok())
          << json;
      simdjson::ondemand::document document;
      ASSERT_EQ(oracle.iterate(simdjson::padded_string_view(line.data(), json.size(), line.size()))
                    .get(document),
                simdjson::SUCCESS);
      std::string_view expected;
      ASSERT_EQ(document["text"].get_string().get(expected), simdjson::SUCCESS) << json;
      EXPECT_EQ(FieldView(line, arena, record.text), expected) << json;
    }
  }
}

}  // namespace
}  // namespace neardup::internal
