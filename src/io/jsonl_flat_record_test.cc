// TryParseFlatRecord (the shortcut) against JsonlRecordParser's simdjson
// route: for every line, the parser with the shortcut gives the same status
// (message included), id, text and repair flag as without it; the AVX-512
// and byte-loop scanners (and, on AVX-512, the one-pass BW route of CPUs
// without VBMI2) agree; and the shortcut does take the common lines.
#include "io/jsonl_flat_record.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/json_unescape.h"
#include "io/jsonl_record_parser.h"
#include "io/line_reader.h"

namespace neardup::internal {
namespace {

// The line in an exactly sized buffer plus the padding (ASan sees overreads).
std::vector<char> FlatLineBuffer(const std::string& line) {
  std::vector<char> buffer(line.size() + kLinePaddingBytes, '\0');
  std::copy(line.begin(), line.end(), buffer.begin());
  return buffer;
}

struct RouteResult {
  bool ok = false;
  std::string message;
  bool has_id = false;
  std::string id;
  std::string text;
  bool replaced_utf8 = false;
};

RouteResult ParseByRoute(JsonlRecordParser* parser, const std::string& line) {
  const std::vector<char> buffer = FlatLineBuffer(line);
  const std::string_view view(buffer.data(), line.size());
  TextArena arena;
  arena.Reserve(3);  // fields must be found past earlier arena contents
  arena.Commit(3);
  JsonlRecord record;
  const Status status = parser->ParseRecord(view, &arena, &record);
  RouteResult result;
  result.ok = status.ok();
  result.message = status.message();
  result.has_id = record.has_id;
  if (record.has_id) result.id = std::string(FieldView(view, arena, record.id));
  if (status.ok()) result.text = std::string(FieldView(view, arena, record.text));
  result.replaced_utf8 = record.replaced_utf8;
  return result;
}

// Both scanners directly: the same answer and, when true, the same fields.
// Returns whether the shortcut took the line.
bool ExpectScannersAgree(const std::string& line) {
  const std::vector<char> buffer = FlatLineBuffer(line);
  const std::string_view view(buffer.data(), line.size());
  TextArena fast_arena;
  TextArena portable_arena;
  JsonlRecord fast;
  JsonlRecord portable;
  const bool took = TryParseFlatRecord(view, "text", "id", &fast_arena, &fast);
  EXPECT_EQ(TryParseFlatRecordPortable(view, "text", "id", &portable_arena, &portable), took)
      << line;
  if (JsonUnescapeAvx512BwSupported()) {
    // The one-pass AVX-512BW route of CPUs without VBMI/VBMI2, on any
    // host that can run it.
    TextArena bw_arena;
    JsonlRecord bw;
    EXPECT_EQ(TryParseFlatRecordAvx512Bw(view, "text", "id", &bw_arena, &bw), took) << line;
    if (took) {
      EXPECT_EQ(FieldView(view, bw_arena, bw.text), FieldView(view, portable_arena, portable.text))
          << line;
      EXPECT_EQ(bw.has_id, portable.has_id) << line;
      if (bw.has_id) {
        EXPECT_EQ(FieldView(view, bw_arena, bw.id), FieldView(view, portable_arena, portable.id))
            << line;
      }
    }
  }
  if (!took) {
    EXPECT_EQ(fast_arena.size(), 0u) << "the arena is left as found: " << line;
    return false;
  }
  EXPECT_EQ(FieldView(view, fast_arena, fast.text), FieldView(view, portable_arena, portable.text));
  EXPECT_EQ(fast.has_id, portable.has_id);
  if (fast.has_id) {
    EXPECT_EQ(FieldView(view, fast_arena, fast.id), FieldView(view, portable_arena, portable.id));
  }
  return true;
}

// The two routes of JsonlRecordParser, the shortcut's off in one.
struct Routes {
  Routes() { simdjson_route.SetFlatShortcutForTest(false); }
  JsonlRecordParser simdjson_route{"text", "id"};
  JsonlRecordParser shortcut_route{"text", "id"};
  size_t taken = 0;    // lines the shortcut took
  size_t refused = 0;  // lines simdjson refused

  void ExpectSame(const std::string& line) {
    const RouteResult want = ParseByRoute(&simdjson_route, line);
    const RouteResult got = ParseByRoute(&shortcut_route, line);
    EXPECT_EQ(got.ok, want.ok) << line;
    EXPECT_EQ(got.message, want.message) << line;
    EXPECT_EQ(got.has_id, want.has_id) << line;
    EXPECT_EQ(got.id, want.id) << line;
    EXPECT_EQ(got.text, want.text) << line;
    EXPECT_EQ(got.replaced_utf8, want.replaced_utf8) << line;
    if (ExpectScannersAgree(line)) {
      EXPECT_TRUE(want.ok) << "the shortcut took a line simdjson refuses: " << line;
      ++taken;
    }
    refused += want.ok ? 0 : 1;
  }
};

TEST(JsonlFlatRecordTest, HandPickedLinesMatchTheSimdjsonRoute) {
  const std::vector<std::string> lines = {
      R"({"id": "d1", "text": "hello world"})",
      R"({"text":"a\nb\"c\\d\/e\u00e9\ud83d\ude00","id":7})",
      R"(  {  "id" : -1.5e+3 ,"text" : "x" }  )",
      "{\"id\": \"d\", \"text\": \"tab\there\"}\r",
      R"({"text": "no id"})",
      R"({"id": "only id"})",
      R"({"id": null, "text": "null id"})",
      R"({"id": true, "text": "bool id"})",
      R"({"id": "d", "text": 5})",
      R"({"id": "d", "text": "t", "meta": {"a": [1, 2]}})",
      R"({"id": "d", "text": "t", "n": 01})",
      R"({"id": "d", "text": "t", "n": 1.})",
      R"({"id": 123456789012345678901234567890, "text": "big"})",
      R"({"text": "first", "text": "second"})",
      R"({"text": "a\qb"})",
      R"({"text": "a\u12"})",
      R"({"text": "\ud800"})",
      R"({"text": "\udc00\ud800"})",
      R"({"te\u0078t": "escaped key"})",
      "{\"text\": \"caf\xC3\xA9 \xE6\xBC\xA2\"}",
      "{\"text\": \"bad \xC3 utf8\"}",
      "{\"text\": \"bad \xFF\", \"id\": \"\xE9\"}",
      "{\"t\xC3\xA9xt\": \"x\", \"text\": \"y\"}",
      "{\"text\": \"raw \x01 control\"}",
      "{\"text\": \"raw \x7F del\"}",
      R"({"text": "unterminated})",
      R"({"text": "x"} trailing)",
      R"({"text": "x"},)",
      R"({"text": "x",})",
      R"({"text" "x"})",
      R"({"text": "x" "id": "y"})",
      R"({})",
      R"([1, 2])",
      R"("just a string")",
      R"(42)",
      R"({"text": "\\"})",
      R"({"text": "\\\"quoted\\\""})",
      R"({"text": "ends in backslash\\\\"})",
      std::string("{\"text\": \"x\"}\0", 14),
      "{\"text\": \"x\"}\n",
      "{\"text\": \"" + std::string(200, 'a') + "\\n" + std::string(100, '"') + "\"}",
      "{\"text\": \"" + std::string(63, 'b') + "\\\"" + std::string(64, 'c') + "\"}",
  };
  Routes routes;
  for (const std::string& line : lines) routes.ExpectSame(line);
  // The common shapes do take the shortcut (else this test compares
  // simdjson with itself).
  EXPECT_GE(routes.taken, 8u);
  EXPECT_TRUE(ExpectScannersAgree(R"({"id": "d1", "text": "hello world"})"));
}

// Runs of backslashes and quotes at every offset around the 64-byte windows
// of the AVX-512 scanner (its escape carry between windows): both scanners
// find the same end.
TEST(JsonlFlatRecordTest, BackslashRunsAcrossWindowsAgreeWithTheByteLoop) {
  std::mt19937_64 rng(64);
  Routes routes;
  size_t taken = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string body(static_cast<size_t>(rng() % 140), 'a');
    const size_t marks = 1 + rng() % 6;
    for (size_t m = 0; m < marks && !body.empty(); ++m) {
      const size_t at = static_cast<size_t>(rng() % body.size());
      const size_t run = 1 + static_cast<size_t>(rng() % 5);
      for (size_t k = at; k < at + run && k < body.size(); ++k) body[k] = '\\';
      if (at + run < body.size() && rng() % 2 == 0) body[at + run] = '"';
    }
    const std::string line = "{\"text\": \"" + body + "\"}";
    taken += ExpectScannersAgree(line) ? 1 : 0;
    if (round % 16 == 0) routes.ExpectSame(line);
  }
  EXPECT_GT(taken, 500u);
}

// Bodies of `\u` escapes (JSON written with ensure_ascii) and runs of
// short escapes, starting at every offset, so escapes of 2, 6 and 12 bytes
// straddle every window edge, some with a refused escape after them.
TEST(JsonlFlatRecordTest, EscapeRunsAcrossWindowsMatchBothRoutes) {
  static const char* const kRuns[] = {"\\u4e2d\\u6587\\u7684", "\\ud83d\\ude00\\n",
                                      "\\n\\n\\t\\\\\\\"", "\\u00e9a\\/"};
  static const char* const kEnds[] = {"", "\\u12", "\\ud83d", "\\x", "\x01"};
  Routes routes;
  size_t taken = 0;
  for (size_t at = 0; at < 80; ++at) {
    for (const char* run : kRuns) {
      for (const char* end : kEnds) {
        std::string body(at, 'a');
        for (int i = 0; i < 8; ++i) body += run;
        const std::string line = "{\"id\": \"" + body + "\", \"text\": \"" + body + end + "\"}";
        taken += ExpectScannersAgree(line) ? 1 : 0;
        routes.ExpectSame(line);
      }
    }
  }
  EXPECT_GT(taken, 300u);
  EXPECT_GT(routes.refused, 1000u);
}

// Escapes of every kind (short ones, runs of backslashes, `\u` and
// surrogate pairs, ones simdjson refuses), raw UTF-8 and a control character
// at every offset around the 64-byte windows, with or without an escape
// before them: the AVX-512 scanner that unescapes in its own pass agrees
// with the byte loop and with simdjson (values, and refusals).
TEST(JsonlFlatRecordTest, EscapesAtEveryWindowOffsetMatchBothRoutes) {
  static const char* const kEscapes[] = {
      "\\n",     "\\\\",    "\\\"", "\\/",     "\\\\\\n", "\\u00e9",  "\\u4e2d", "\\ud83d\\ude00",
      "\\ud83d", "\\ude00", "\\x",  "\\u12g4", "\\u00",   "\xC3\xA9", "\x01",    "\\\xC3\xA9"};
  Routes routes;
  size_t taken = 0;
  for (const std::string first : {"", "\\t", "\\u0041"}) {
    for (const char* escape : kEscapes) {
      for (size_t at = 0; at < 140; ++at) {
        const std::string body =
            first + std::string(at, 'a') + escape + std::string(at % 7 * 11, 'b') + "\\n";
        const std::string line = "{\"id\": \"" + first + "x\", \"text\": \"" + body + "\"}";
        taken += ExpectScannersAgree(line) ? 1 : 0;
        routes.ExpectSame(line);
      }
    }
  }
  EXPECT_GT(taken, 4000u);
  EXPECT_GT(routes.refused, 1000u);
}

// Random lines from fragments: keys, strings with escapes (valid or not),
// raw control characters, valid and invalid UTF-8, numbers good and bad,
// other values, whitespace, and now and then a byte dropped or inserted.
std::string RandomFlatLine(std::mt19937_64* rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>((*rng)() % n); };
  static const char* const kKeys[] = {"id", "text", "meta", "te\\u0078t", "i\xC3\xA9", ""};
  static const char* const kPieces[] = {"plain words ",
                                        "\\n",
                                        "\\\"",
                                        "\\\\",
                                        "\\/",
                                        "\\t",
                                        "\\u00e9",
                                        "\\u4e2d",
                                        "\\ud83d\\ude00",
                                        "\\ud83d",
                                        "\\x",
                                        "\\u12g4",
                                        "\x01",
                                        "\x7F",
                                        "\xC3\xA9",
                                        "\xE6\xBC\xA2",
                                        "\xF0\x9F\x98\x80",
                                        "\xC3",
                                        "\xFF",
                                        "\xED\xA0\x80",
                                        "\\",
                                        "\"",
                                        "'",
                                        "\t"};
  static const char* const kOthers[] = {
      "0",     "-12.5e3",       "01", "1.",   "-",  "true", "null",
      "false", "[1,{\"a\":2}]", "{}", "\"\"", "1e", "9x"};
  static const char* const kSpace[] = {"", " ", "  ", "\t", "\r", " \r\t"};
  std::string line = kSpace[pick(6)];
  line += "{";
  const size_t fields = pick(8) == 0 ? 0 : 1 + pick(3);
  const size_t text_at = pick(3);
  for (size_t f = 0; f < fields; ++f) {
    if (f > 0) line += std::string(kSpace[pick(6)]) + "," + kSpace[pick(6)];
    const char* key = f == text_at ? "text" : kKeys[pick(4) != 0 ? pick(2) : pick(6)];
    line += "\"" + std::string(key) + "\"" + kSpace[pick(6)] + ":" + kSpace[pick(6)];
    if (pick(8) == 0) {
      line += kOthers[pick(std::size(kOthers))];
    } else {
      line += "\"";
      const size_t pieces = pick(4) == 0 ? pick(120) : pick(12);
      for (size_t i = 0; i < pieces; ++i) {
        // Mostly benign pieces, so that many lines are valid.
        line += kPieces[pick(16) != 0 ? pick(9) : pick(std::size(kPieces))];
      }
      line += "\"";
    }
  }
  line += std::string(kSpace[pick(6)]) + "}" + kSpace[pick(6)];
  if (pick(10) == 0) {
    const size_t at = pick(line.size() + 1);
    if (pick(2) == 0 && at < line.size()) {
      line.erase(at, 1);
    } else {
      line.insert(at, 1, static_cast<char>(pick(256)));
    }
  }
  return line;
}

TEST(JsonlFlatRecordTest, RandomLinesMatchTheSimdjsonRoute) {
  std::mt19937_64 rng(2026);
  Routes routes;
  for (int i = 0; i < 20000 && !HasFailure(); ++i) routes.ExpectSame(RandomFlatLine(&rng));
  // Both outcomes occur often enough for the comparison to mean something.
  EXPECT_GT(routes.taken, 4000u);
  EXPECT_GT(routes.refused, 4000u);
}

}  // namespace
}  // namespace neardup::internal
