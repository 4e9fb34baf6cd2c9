// The fingerprint JSON line (engine/fingerprint_json.h) against an
// independent writer: every 64-bit value printed with snprintf("%016llx"),
// for values whose nibbles cover 0-f in every position, 0, 2^64-1 and
// random ones, for SimHash 64 and 128, bottom-k, k-value MinHash and chunks.
#include "engine/fingerprint_json.h"
#include "engine/hex_strings.h"
#include "hash/cpu_path.h"
#include "util/json_writer.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace neardup::internal {
namespace {

std::string OracleHex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016" PRIx64, value);
  return buffer;
}

std::string OracleHexArray(const std::vector<uint64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += "\"" + OracleHex(values[i]) + "\"";
  }
  return out + "]";
}

std::vector<uint64_t> HexTestValues() {
  std::vector<uint64_t> values = {
      0, ~uint64_t{0}, 1, uint64_t{1} << 63, 0x0123456789abcdefu, 0xfedcba9876543210u};
  // Every nibble value at every position.
  for (uint64_t nibble = 0; nibble < 16; ++nibble) {
    for (int shift = 0; shift < 64; shift += 4) values.push_back(nibble << shift);
    values.push_back(nibble * 0x1111111111111111u);
  }
  std::mt19937_64 random(13);
  for (int i = 0; i < 500; ++i) values.push_back(random());
  return values;
}

TEST(FingerprintJsonTest, HexValuesEqualAnIndependentWriter) {
  const std::vector<uint64_t> values = HexTestValues();
  for (size_t start = 0; start < values.size(); start += 128) {
    Fingerprint fingerprint;
    fingerprint.num_tokens = 1234567890123u + start;
    fingerprint.simhash = values[start];
    fingerprint.simhash128 = {values[start], values[values.size() - 1 - start]};
    const size_t count = std::min<size_t>(128, values.size() - start);
    fingerprint.minhash.k = 128;
    fingerprint.minhash.values.assign(values.begin() + start, values.begin() + start + count);
    fingerprint.kvalue_minhash.values.assign(values.rbegin(), values.rbegin() + count);
    fingerprint.kvalue_minhash.empty = false;
    fingerprint.chunks = {0, 7, 4294967295u};
    const SketchSelection all{true, true, true, true};
    for (int bits : {64, 128}) {
      std::string line = "prefix";
      AppendFingerprintJson(&line, "doc\"1", fingerprint, all, bits, "0011223344556677");
      const std::string simhash = bits == 64 ? OracleHex(fingerprint.simhash)
                                             : OracleHex(fingerprint.simhash128.high) +
                                                   OracleHex(fingerprint.simhash128.low);
      const std::string expected =
          "prefix{\"id\":\"doc\\\"1\",\"recipe\":\"0011223344556677\",\"tokens\":" +
          std::to_string(fingerprint.num_tokens) + ",\"simhash\":\"" + simhash +
          "\",\"minhash\":" + OracleHexArray(fingerprint.minhash.values) +
          ",\"kminhash\":" + OracleHexArray(fingerprint.kvalue_minhash.values) +
          ",\"chunks\":[0,7,4294967295]}";
      EXPECT_EQ(line, expected) << "values from " << start << ", " << bits << " bits";
    }
  }
}

// Every path of the array writer, every length 0..40 (the vector paths'
// four- and eight-value groups and their tails) and 127-129 (k = 128, the default),
// appended after existing bytes.
TEST(FingerprintJsonTest, HexArrayPathsEqualAnIndependentWriter) {
  const std::vector<uint64_t> values = HexTestValues();
  using Append = void (*)(std::string*, std::span<const uint64_t>);
  std::vector<std::pair<const char*, Append>> paths = {{"portable", &AppendHexStringArrayPortable},
                                                       {"dispatched", &AppendHexStringArray}};
  if (HexStringsAvx512Supported()) paths.emplace_back("avx512", &AppendHexStringArrayAvx512);
  if (CpuSupports(CpuPath::kAvx2)) paths.emplace_back("avx2", &AppendHexStringArrayAvx2);
  for (const auto& [name, append] : paths) {
    std::vector<size_t> counts;
    for (size_t count = 0; count <= 40; ++count) counts.push_back(count);
    counts.insert(counts.end(), {127, 128, 129});
    for (size_t start = 0; start < values.size(); start += 37) {
      for (const size_t count : counts) {
        if (start + count > values.size()) continue;
        const std::vector<uint64_t> part(values.begin() + start, values.begin() + start + count);
        std::string out = "x";
        append(&out, part);
        ASSERT_EQ(out, "x" + OracleHexArray(part)) << name << " " << start << "+" << count;
      }
    }
  }
}

// Plain ids are appended whole; any other takes the escaping writer.
TEST(FingerprintJsonTest, IdsAreEscapedAsJsonStrings) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain id 1", R"("plain id 1")"},
      {"", R"("")"},
      {"a\"b", R"("a\"b")"},
      {"back\\slash", R"("back\\slash")"},
      {"tab\there", R"("tab\there")"},
      {std::string("nul\0", 4), R"("nul\u0000")"},
      {"caf\xC3\xA9", "\"caf\xC3\xA9\""},
      {"bad\xFF", R"("bad\ufffd")"}};
  const SketchSelection none;
  for (const auto& [id, json] : cases) {
    std::string line;
    AppendFingerprintJson(&line, id, Fingerprint(), none, 64, "r");
    EXPECT_EQ(line, "{\"id\":" + json + R"(,"recipe":"r","tokens":0})") << id;
  }
}

// The id's plain check (ids without a byte to escape are copied as they
// are): every byte that needs escaping, and its neighbours that do not, at
// every position of ids of 0-24 bytes: the line's id is AppendJsonString's.
TEST(FingerprintJsonTest, EveryEscapedByteAtEveryIdPositionTakesTheEscapingWriter) {
  std::vector<char> bytes = {'"', '\\', 0x1F, 0x20, 0x21, 0x7E, 0x7F, '#', '[', ']', 'a'};
  for (int b = 0; b < 0x20; ++b) bytes.push_back(static_cast<char>(b));
  for (int b = 0x80; b < 0x100; b += 7) bytes.push_back(static_cast<char>(b));
  const SketchSelection none;
  for (size_t size = 1; size <= 24; ++size) {
    for (size_t at = 0; at < size; ++at) {
      for (const char byte : bytes) {
        std::string id(size, 'x');
        id[at] = byte;
        std::string line;
        AppendFingerprintJson(&line, id, Fingerprint(), none, 64, "r");
        std::string want = "{\"id\":";
        AppendJsonString(&want, id);
        want += R"(,"recipe":"r","tokens":0})";
        ASSERT_EQ(line, want) << "size " << size << " byte " << int(byte) << " at " << at;
      }
    }
  }
}

// The head of a line (a plain id, or an escaped one through
// AppendJsonString, then recipe, token count and the 64-bit SimHash in one
// resize) against concatenation, after earlier bytes in the string, for ids
// and recipes of 0-300 bytes, every digit count of the tokens (0, 9, 10,
// ..., UINT64_MAX), SimHash 64 (every nibble value), 128 and none.
TEST(FingerprintJsonTest, HeadsEqualConcatenation) {
  std::vector<uint64_t> counts = {0, ~uint64_t{0}};
  for (uint64_t power = 1; power <= uint64_t{1000000000000000000}; power *= 10) {
    counts.push_back(power - 1);
    counts.push_back(power);
  }
  const std::vector<uint64_t> hashes = HexTestValues();
  size_t next_hash = 0;
  std::vector<std::string> ids;
  for (const size_t id_size : {0, 1, 7, 64, 300}) {
    ids.emplace_back(id_size, 'i');
    if (id_size > 0) {
      ids.emplace_back(id_size, 'i');
      ids.back()[id_size / 2] = '"';
    }
  }
  for (const std::string& id : ids) {
    for (const size_t recipe_size : {0, 16, 300}) {
      const std::string recipe(recipe_size, 'r');
      for (const uint64_t count : counts) {
        for (const int mode : {0, 64, 128}) {
          Fingerprint fingerprint;
          fingerprint.num_tokens = count;
          fingerprint.simhash = hashes[next_hash++ % hashes.size()];
          fingerprint.simhash128 = {fingerprint.simhash, ~fingerprint.simhash};
          const SketchSelection selection{mode != 0, false, false, false};
          std::string line = "earlier line\n";
          AppendFingerprintJson(&line, id, fingerprint, selection, mode == 128 ? 128 : 64, recipe);
          std::string want = "earlier line\n{\"id\":";
          AppendJsonString(&want, id);
          want += ",\"recipe\":\"" + recipe + "\",\"tokens\":" + std::to_string(count);
          if (mode == 64) want += ",\"simhash\":\"" + OracleHex(fingerprint.simhash) + "\"";
          if (mode == 128) {
            want += ",\"simhash\":\"" + OracleHex(fingerprint.simhash128.high) +
                    OracleHex(fingerprint.simhash128.low) + "\"";
          }
          want += "}";
          ASSERT_EQ(line, want) << id << " " << recipe_size << " " << count << " " << mode;
        }
      }
    }
  }
}

TEST(FingerprintJsonTest, EmptySketchesAndOneValue) {
  Fingerprint fingerprint;
  const SketchSelection minhash_only{false, true, true, false};
  std::string line;
  AppendFingerprintJson(&line, "", fingerprint, minhash_only, 64, "r");
  EXPECT_EQ(line, R"({"id":"","recipe":"r","tokens":0,"minhash":[],"kminhash":[]})");
  fingerprint.minhash.values = {0xa};
  line.clear();
  AppendFingerprintJson(&line, "x", fingerprint, minhash_only, 64, "r");
  EXPECT_EQ(line,
            R"({"id":"x","recipe":"r","tokens":0,"minhash":["000000000000000a"],"kminhash":[]})");
}

}  // namespace
}  // namespace neardup::internal
