#include "text/non_ascii_class.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash/cpu_path.h"
#include "text/char_class.h"
#include "text/text_kernels.h"
#include "text/token_scan.h"
#include "text/token_scan_test_util.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

constexpr size_t kBlock = 64;

// Whether the AVX-512 path's table emits tokens with VBMI2 (and VBMI).
bool HaveBlockKernel() {
  return CpuSupports(CpuPath::kAvx512) && TextKernelsFor(CpuPath::kAvx512).compress_tokens;
}

std::string Utf8(char32_t c) {
  std::string s;
  AppendUtf8(c, &s);
  return s;
}

// The token bytes >= 0x80 of a whole text, block by block as TokenScanner
// walks it (the spill of one block classifies the first bytes of the next).
// `block_kernel`: ClassifyNonAsciiAvx512 first, the scalar version where it
// declines. Counts the blocks it declined in *declined.
std::vector<bool> NonAsciiTokenBytes(bool word, std::string_view text, bool block_kernel,
                                     size_t* declined) {
  std::vector<bool> token(text.size(), false);
  uint32_t spill_length = 0;
  bool spill_in_token = false;
  for (size_t pos = 0; pos < text.size(); pos += kBlock) {
    const size_t available = text.size() - pos;
    uint64_t high = 0;
    for (size_t i = 0; i < kBlock && i < available; ++i) {
      if (static_cast<unsigned char>(text[pos + i]) >= 0x80) high |= uint64_t{1} << i;
    }
    for (uint32_t i = 0; i < spill_length && i < available; ++i) {
      token[pos + i] = spill_in_token;
      high &= ~(uint64_t{1} << i);
    }
    const uint32_t spill_before = spill_length;
    spill_length = 0;
    if (high == 0) continue;
    NonAsciiBlockClass c;
    if (!block_kernel ||
        !ClassifyNonAsciiAvx512(word, text.data() + pos, available, spill_before, &c)) {
      if (block_kernel) ++*declined;
      c = ClassifyNonAsciiScalar(word, text.data() + pos, available, high);
    } else if (word) {
      // kWord: the same result as the scalar version, block by block.
      const NonAsciiBlockClass want =
          ClassifyNonAsciiScalar(word, text.data() + pos, available, high);
      EXPECT_EQ(c.token_bits, want.token_bits) << "block at " << pos;
      EXPECT_EQ(c.spill_length, want.spill_length) << "block at " << pos;
      EXPECT_EQ(c.segment_leads, want.segment_leads) << "block at " << pos;
      if (want.spill_length > 0) {
        EXPECT_EQ(c.spill_in_token, want.spill_in_token);
      }
    }
    EXPECT_EQ(c.token_bits & ~high, 0u) << "block at " << pos;
    for (size_t i = 0; i < kBlock && i < available; ++i) {
      if ((c.token_bits >> i) & 1) token[pos + i] = true;
    }
    spill_length = c.spill_length;
    spill_in_token = c.spill_in_token;
  }
  return token;
}

// Both versions over `text`; the block kernel must never decline valid UTF-8.
void ExpectSameClasses(std::string_view text, const std::string& what) {
  for (bool word : {true, false}) {
    size_t declined = 0;
    const std::vector<bool> want = NonAsciiTokenBytes(word, text, false, &declined);
    const std::vector<bool> got = NonAsciiTokenBytes(word, text, true, &declined);
    ASSERT_EQ(got, want) << what << (word ? " kWord" : " kWhitespace");
    if (IsValidUtf8(text)) {
      EXPECT_EQ(declined, 0u) << what;
    }
  }
}

using testing::ExpectSameTokens;

// Every BMP code point (no surrogates) at every block offset, in three
// contexts: next to each other, between ASCII letters, between spaces.
TEST(NonAsciiClassTest, EveryBmpCodePointAtEveryOffset) {
  if (!HaveBlockKernel()) GTEST_SKIP() << "no AVX-512 VBMI2";
  for (std::string_view context :
       {std::string_view(), std::string_view("a"), std::string_view(" ")}) {
    std::string all;
    for (char32_t c = 0x80; c < 0x10000; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      all += Utf8(c);
      all += context;
    }
    // Shifting the whole text by 0..63 bytes puts each code point at every
    // block offset (and each 2- or 3-byte one across every block edge).
    for (size_t shift = 0; shift < kBlock; ++shift) {
      const std::string text = std::string(shift, 'x') + all;
      ExpectSameClasses(
          text, "shift " + std::to_string(shift) + " context '" + std::string(context) + "'");
    }
  }
}

// The White_Space code points and their near misses (one byte off), around
// every block edge.
TEST(NonAsciiClassTest, WhiteSpaceAndNearMissesAcrossBlockEdges) {
  if (!HaveBlockKernel()) GTEST_SKIP() << "no AVX-512 VBMI2";
  std::vector<char32_t> code_points;
  for (char32_t c = 0x80; c < 0x10000; ++c) {
    if (IsUnicodeWhiteSpace(c)) {
      for (char32_t near :
           {char32_t(c - 1), c, char32_t(c + 1), char32_t(c ^ 0x40), char32_t(c ^ 0x1000)}) {
        if (near >= 0x80 && !(near >= 0xD800 && near <= 0xDFFF)) code_points.push_back(near);
      }
    }
  }
  for (char32_t c : code_points) {
    for (size_t offset = 55; offset < 2 * kBlock + 2; ++offset) {
      for (std::string_view after : {"", "b", " ", "\xC3\xA9", "\xF0\x9F\x98\x80"}) {
        const std::string text = std::string(offset, 'q') + Utf8(c) + std::string(after) + "z";
        ExpectSameClasses(text, "U+" + std::to_string(c) + " at " + std::to_string(offset));
      }
    }
  }
}

// Random mixes of 1-, 2-, 3- and 4-byte code points (word and non-word of
// each length, White_Space ones), of random lengths so texts end anywhere in
// a block; then every prefix of some of them (a prefix may cut a code point:
// invalid at the end).
TEST(NonAsciiClassTest, RandomMixesOfSequenceLengths) {
  if (!HaveBlockKernel()) GTEST_SKIP() << "no AVX-512 VBMI2";
  SplitMix64 rng(2026);
  const std::vector<char32_t> special = {0x85,    0xA0,    0x1680,  0x2000,   0x200A,  0x2028,
                                         0x2029,  0x202F,  0x205F,  0x3000,   0xFFFD,  0xFEFF,
                                         0x10000, 0x1F600, 0x20000, 0x10FFFF, 0x1D400, 0xE0001};
  auto random_code_point = [&]() -> char32_t {
    switch (rng.Next() % 6) {
      case 0:
        return static_cast<char32_t>(rng.Next() % 0x80);
      case 1:
        return static_cast<char32_t>(0x80 + rng.Next() % (0x800 - 0x80));
      case 2: {
        char32_t c = static_cast<char32_t>(0x800 + rng.Next() % (0x10000 - 0x800));
        return (c >= 0xD800 && c <= 0xDFFF) ? 0x4E2D : c;
      }
      case 3:
        return static_cast<char32_t>(0x10000 + rng.Next() % (0x110000 - 0x10000));
      case 4:
        return special[rng.Next() % special.size()];
      default:
        return " aZ9.\n"[rng.Next() % 6];
    }
  };
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const size_t code_points = rng.Next() % 200;
    for (size_t i = 0; i < code_points; ++i) text += Utf8(random_code_point());
    ExpectSameClasses(text, "round " + std::to_string(round));
    if (round % 100 == 0) {
      ExpectSameTokens(text, "round " + std::to_string(round));
      for (size_t size = 0; size <= text.size(); ++size) {
        ExpectSameClasses(std::string_view(text).substr(0, size),
                          "round " + std::to_string(round) + " prefix " + std::to_string(size));
      }
    }
  }
}

// Ill-formed sequences (utf8.h): the block kernel declines them or agrees
// with the scalar version, at every offset around the block edges.
TEST(NonAsciiClassTest, InvalidSequencesKeepTheScalarBehaviour) {
  if (!HaveBlockKernel()) GTEST_SKIP() << "no AVX-512 VBMI2";
  const std::vector<std::string> invalid = {"\x80",
                                            "\xBF",
                                            "\xC0\x80",
                                            "\xC1\xBF",
                                            "\xC2",
                                            "\xC2\x41",
                                            "\xE0\x80\x80",
                                            "\xE0\x9F\xBF",
                                            "\xE0\xA0",
                                            "\xE1\x80",
                                            "\xE1\x80\x41",
                                            "\xED\xA0\x80",
                                            "\xED\xBF\xBF",
                                            "\xEF\xBF",
                                            "\xF0\x80\x80\x80",
                                            "\xF0\x8F\xBF\xBF",
                                            "\xF0\x90\x80",
                                            "\xF4\x90\x80\x80",
                                            "\xF5\x80\x80\x80",
                                            "\xFF",
                                            "\xFE",
                                            "\xC2\xA0\x80",
                                            "\xE3\x80\x80\x80",
                                            "\xC3\xA9\xA9",
                                            "\xE2\x80",
                                            "\xE2\x80\xE2\x80\x80"};
  for (const std::string& bad : invalid) {
    for (size_t offset = 0; offset < 2 * kBlock + 4; ++offset) {
      for (std::string_view after : {"", "\xC3\xA9", "\x80", " ", "\xE4\xB8\xAD"}) {
        const std::string text = std::string(offset, 'q') + bad + std::string(after);
        ExpectSameClasses(text, "invalid at " + std::to_string(offset));
        if (offset % 16 == 0) ExpectSameTokens(text, "invalid at " + std::to_string(offset));
      }
    }
  }
}

// Random bytes, and valid text with random bytes overwritten.
TEST(NonAsciiClassTest, RandomBytesAndCorruptedText) {
  if (!HaveBlockKernel()) GTEST_SKIP() << "no AVX-512 VBMI2";
  SplitMix64 rng(99);
  std::string valid;
  for (char32_t c : {0x4E2D, 0xE9, 0x430, 0xAC00, 0x3000, 0x20, 0x1F600, 0x61, 0xA0, 0x2028}) {
    valid += Utf8(c);
  }
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const size_t size = rng.Next() % 300;
    if (round % 2 == 0) {
      for (size_t i = 0; i < size; ++i) {
        // Mostly high bytes, so that sequences form by chance too.
        const uint64_t r = rng.Next();
        text += static_cast<char>((r & 3) == 0 ? (r >> 8) % 0x80 : 0x80 + (r >> 8) % 0x80);
      }
    } else {
      while (text.size() < size) text += valid.substr(rng.Next() % valid.size());
      for (int flips = 0; flips < 3; ++flips) {
        if (!text.empty()) text[rng.Next() % text.size()] = static_cast<char>(rng.Next());
      }
    }
    ExpectSameClasses(text, "round " + std::to_string(round));
    if (round % 10 == 0) ExpectSameTokens(text, "round " + std::to_string(round));
  }
}

// The scanner end to end on texts that end at every offset of a block, with
// a code point straddling every block edge.
TEST(NonAsciiClassTest, ScannerTokensAtEveryBlockOffset) {
  for (const std::string& cp :
       {Utf8(0xE9), Utf8(0x4E2D), Utf8(0x3000), Utf8(0xA0), Utf8(0x1F600), Utf8(0x20000)}) {
    for (size_t offset = 0; offset < 2 * kBlock + 4; ++offset) {
      const std::string text = std::string(offset, 'w') + cp + "x " + cp + cp;
      ExpectSameTokens(text, "offset " + std::to_string(offset));
      ExpectSameTokens(text.substr(0, text.size() - 1), "cut, offset " + std::to_string(offset));
    }
  }
}

}  // namespace
}  // namespace neardup::internal
