#include "text/normalizer.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text/text_kernels.h"
#include "text/text_samples_for_test.h"
#include "text/token_scan_test_util.h"
#include "text/utf8.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

NormalizationOptions Options(bool nfkc, bool case_fold, bool remove_punctuation) {
  NormalizationOptions options;
  options.nfkc = nfkc;
  options.case_fold = case_fold;
  options.remove_punctuation = remove_punctuation;
  return options;
}

std::string Describe(const NormalizationOptions& o) {
  return "nfkc=" + std::to_string(o.nfkc) + " case_fold=" + std::to_string(o.case_fold) +
         " remove_punctuation=" + std::to_string(o.remove_punctuation);
}

std::string Norm(std::string_view text, const NormalizationOptions& options,
                 uint64_t* invalid = nullptr, CpuPath path = CpuPath::kReference) {
  std::string out;
  NormalizeStats stats;
  Normalize(text, options, &out, &stats, path);
  if (invalid != nullptr) *invalid = stats.invalid_utf8_sequences;
  return out;
}

// The reference: utf8proc_map on the whole (valid UTF-8) text with the
// documented flags, then punctuation removed by utf8proc_category. It never
// takes an ASCII shortcut.
std::string Reference(const std::string& valid_utf8, const NormalizationOptions& o) {
  std::string mapped = valid_utf8;
  int flags = 0;
  if (o.nfkc) flags |= UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_IGNORE;
  if (o.case_fold) flags |= UTF8PROC_STABLE | UTF8PROC_CASEFOLD;
  if (flags != 0) {
    utf8proc_uint8_t* result = nullptr;
    utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(valid_utf8.data()),
                                      static_cast<utf8proc_ssize_t>(valid_utf8.size()), &result,
                                      static_cast<utf8proc_option_t>(flags));
    EXPECT_GE(n, 0) << utf8proc_errmsg(n);
    mapped.assign(reinterpret_cast<const char*>(result), n < 0 ? 0 : static_cast<size_t>(n));
    std::free(result);
  }
  if (!o.remove_punctuation) return mapped;
  std::string out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(mapped.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(mapped.size());
  while (left > 0) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    EXPECT_GT(n, 0);
    if (n <= 0) break;
    utf8proc_category_t c = utf8proc_category(cp);
    if (c < UTF8PROC_CATEGORY_PC || c > UTF8PROC_CATEGORY_PO) {
      out.append(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
    }
    p += n;
    left -= n;
  }
  return out;
}

TEST(NormalizerTest, ComposedDecomposedAndLowerCaseAreEqual) {
  const NormalizationOptions options = Options(true, true, false);
  const std::string want = "caf\xC3\xA9";
  EXPECT_EQ(Norm("CAF\xC3\x89", options), want);   // É as U+00C9
  EXPECT_EQ(Norm("CAFE\xCC\x81", options), want);  // E + U+0301
  EXPECT_EQ(Norm("caf\xC3\xA9", options), want);
  EXPECT_EQ(Norm("cafe\xCC\x81", options), want);
}

TEST(NormalizerTest, CompatibilityAndCaseFolding) {
  const NormalizationOptions both = Options(true, true, false);
  EXPECT_EQ(Norm("\xEF\xAC\x81", both), "fi");                           // ﬁ ligature
  EXPECT_EQ(Norm("\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3", both), "abc");  // ＡＢＣ
  EXPECT_EQ(Norm("Stra\xC3\x9F"
                 "e",
                 both),
            "strasse");
  EXPECT_EQ(Norm("\xE1\xBA\x9E", both), "ss");  // capital sharp s
  // Hangul jamo compose under NFKC.
  EXPECT_EQ(Norm("\xE1\x84\x80\xE1\x85\xA1", Options(true, false, false)), "\xEA\xB0\x80");
  // U+FDFA expands to 18 code points: the decomposition buffer must grow.
  EXPECT_EQ(Norm("\xEF\xB7\xBA", Options(true, false, false)),
            "\xD8\xB5\xD9\x84\xD9\x89 \xD8\xA7\xD9\x84\xD9\x84\xD9\x87 "
            "\xD8\xB9\xD9\x84\xD9\x8A\xD9\x87 \xD9\x88\xD8\xB3\xD9\x84\xD9\x85");
}

TEST(NormalizerTest, GreekSigmaFoldsToMedialSigma) {
  // Full case folding maps capital and final sigma alike to U+03C3; it is not
  // context-sensitive, so a final sigma does not survive.
  const NormalizationOptions both = Options(true, true, false);
  const std::string want = "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83";      // οδοσ
  EXPECT_EQ(Norm("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3", both), want);  // ΟΔΟΣ
  EXPECT_EQ(Norm("\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82", both), want);  // οδος
}

TEST(NormalizerTest, EachOptionAlone) {
  // Case folding without NFKC keeps a decomposed form decomposed.
  EXPECT_EQ(Norm("CAFE\xCC\x81", Options(false, true, false)), "cafe\xCC\x81");
  // NFKC without folding keeps case; ß has no compatibility decomposition.
  EXPECT_EQ(Norm("CAFE\xCC\x81 \xC3\x9F", Options(true, false, false)), "CAF\xC3\x89 \xC3\x9F");
  // Nothing on: bytes unchanged (valid input).
  EXPECT_EQ(Norm("CAFE\xCC\x81 \xEF\xAC\x81!", Options(false, false, false)),
            "CAFE\xCC\x81 \xEF\xAC\x81!");
  // Punctuation only: every P* code point, ASCII or not.
  EXPECT_EQ(Norm("\xC2\xAB"
                 "Bonjour!\xC2\xBB \xC2\xBFQu\xC3\xA9? a_b-c $5+1",
                 Options(false, false, true)),
            "Bonjour Qu\xC3\xA9 abc $5+1");
  // NFKC first: U+2026 becomes "..." and U+FF01 becomes "!", both removed.
  EXPECT_EQ(Norm("Wait\xE2\x80\xA6 no\xEF\xBC\x81", Options(true, true, true)), "wait no");
}

TEST(NormalizerTest, NfkcRemovesDefaultIgnorables) {
  const std::string soft_hyphen = "co\xC2\xADoperate";
  const std::string zero_width_space = "co\xE2\x80\x8Boperate";
  EXPECT_EQ(Norm(soft_hyphen, Options(true, false, false)), "cooperate");
  EXPECT_EQ(Norm(zero_width_space, Options(true, true, false)), "cooperate");
  EXPECT_EQ(Norm(soft_hyphen, Options(false, true, false)), soft_hyphen);
}

TEST(NormalizerTest, InvalidUtf8IsReplacedAndCounted) {
  for (const NormalizationOptions& options : AllNormalizationOptions()) {
    uint64_t invalid = 0;
    std::string out = Norm(
        "A\xFF"
        "B\xED\xA0\x80\xC3",
        options, &invalid);
    EXPECT_EQ(invalid, 5u) << Describe(options);
    std::string a = options.case_fold ? "a" : "A";
    std::string b = options.case_fold ? "b" : "B";
    const std::string r(kReplacementUtf8);
    EXPECT_EQ(out, a + r + b + r + r + r + r) << Describe(options);
    EXPECT_TRUE(IsValidUtf8(out));
  }
}

TEST(NormalizerTest, EmptyInputAndStats) {
  std::string out = "previous";
  NormalizeStats stats;
  stats.invalid_utf8_sequences = 3;  // added to, not reset
  for (const NormalizationOptions& options : AllNormalizationOptions()) {
    Normalize("", options, &out, &stats);
    EXPECT_EQ(out, "");
  }
  EXPECT_EQ(stats.invalid_utf8_sequences, 3u);
  Normalize("\xFF", Options(true, true, true), &out, nullptr);  // null stats allowed
  EXPECT_EQ(out, kReplacementUtf8);
}

TEST(NormalizerTest, ReusesOutputCapacity) {
  std::string out;
  out.reserve(1000);
  const char* before = out.data();
  Normalize("Hello, World", Options(true, true, true), &out, nullptr);
  EXPECT_EQ(out, "hello world");
  Normalize(
      "Gr\xC3\xBC\xC3\x9F"
      "e",
      Options(true, true, false), &out, nullptr);
  EXPECT_EQ(out, "gr\xC3\xBCsse");
  EXPECT_EQ(out.data(), before);
  // Whatever *out held before (longer or shorter text, on every path) is
  // replaced.
  for (CpuPath path : SupportedCpuPaths()) {
    for (const char* text : {"short", "", "\xC3\x89t\xC3\xA9", "A"}) {
      out.assign(300, 'x');
      Normalize(text, Options(true, true, false), &out, nullptr, path);
      EXPECT_EQ(out, Norm(text, Options(true, true, false))) << CpuPathName(path);
      Normalize(std::string(200, 'Q') + text, Options(true, true, true), &out, nullptr, path);
      EXPECT_EQ(out, std::string(200, 'q') + Norm(text, Options(true, true, true)));
    }
  }
}

// NormalizeKeepingRoom gives Normalize's form as a prefix of the reused
// buffer, followed by a zero byte, whatever the buffer held before: long
// and short texts in turn, ASCII, mixed, invalid UTF-8, empty; every option
// set and path.
TEST(NormalizerTest, KeepingRoomGivesTheSameFormAsAPrefix) {
  const std::vector<std::string> texts = {
      std::string(3000, 'A') + " Tail, End!",
      "Hi",
      "",
      "Gr\xC3\xBC\xC3\x9F" + std::string(500, 'e') + " \xEF\xBC\xA1",
      "x",
      std::string(130, ',') + "\xFF\xFE" + std::string(70, 'Z'),
      "The quick brown fox; the LAZY dog.",
      "\xC3\x89t\xC3\xA9",
      std::string(64, 'b'),
  };
  for (CpuPath path : SupportedCpuPaths()) {
    for (const NormalizationOptions& options : AllNormalizationOptions()) {
      std::string room;
      for (int round = 0; round < 2; ++round) {
        for (const std::string& text : texts) {
          std::string want;
          NormalizeStats want_stats;
          Normalize(text, options, &want, &want_stats, path);
          NormalizeStats stats;
          const size_t size_before = room.size();
          const size_t n = NormalizeKeepingRoom(text, options, &room, &stats, path);
          ASSERT_LE(n, room.size());
          // The point of it: with the one-pass ASCII kernel, an all-ASCII
          // text leaves the room at least as large as it was.
          const bool ascii = std::all_of(text.begin(), text.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x80;
          });
          const TextKernels& kernels = TextKernelsFor(path);
          const bool one_pass = kernels.ascii_normalizer_avx512 || kernels.ascii_copy_avx512bw;
          if (one_pass && ascii) {
            EXPECT_GE(room.size(), size_before) << "text of " << text.size();
          }
          EXPECT_EQ(std::string_view(room.data(), n), want) << CpuPathName(path);
          EXPECT_EQ(room.c_str()[n], '\0');
          EXPECT_EQ(stats.invalid_utf8_sequences, want_stats.invalid_utf8_sequences);
        }
      }
    }
  }
}

// FormTokenBits (the scanner's token bits from the normalizer's pass): when
// valid, bit i of word j is the class of form byte 64j + i for the kind
// (kWord: ASCII letter or digit; kWhitespace: not \t..\r or space) and
// every bit past the form is zero; valid exactly for all-ASCII texts on the
// AVX-512 ASCII copy without remove_punctuation, never elsewhere; the form
// is NormalizeKeepingRoom's either way. Texts: empty, every length 0..200
// of ASCII bytes with punctuation runs, tokens across block edges, NUL and
// control bytes, and texts with a byte >= 0x80 (valid or not) after ASCII
// blocks, one reused FormTokenBits throughout (a valid text after an
// invalid one and the other way round). The bits are checked against
// testing::ScalarTokenBits. It checks the kernel of the CPU it runs on (the
// VBMI one, AVX-512 VBMI and VBMI2, or the BW one, AVX-512 without them)
// and, on any AVX-512 CPU, the BW one through NormalizeKeepingRoomForTesting
// (its form against the reference path's: remove_punctuation over texts of
// up to 700 random ASCII bytes); on a CPU without AVX-512, valid is always
// false, so a run there checks the forms only.
TEST(FormTokenBitsTest, BitsAreTheFormsClassesForAsciiTexts) {
  SplitMix64 rng(1913);
  std::vector<std::string> texts = {"",
                                    " ",
                                    "a",
                                    ".",
                                    std::string(64, 'W'),
                                    std::string(64, ',') + "tail",
                                    std::string(200, 'x'),
                                    std::string(70, '.') + std::string(130, 'y') + "!"};
  const std::vector<std::string> pieces = {
      " ", "\t", "\n", "a", "Z",    "9",          "'",   ".",
      ",", "-",  "_",  "!", "word", "LONGERWORD", "...", std::string(1, '\0')};
  for (size_t length = 0; length <= 200; ++length) {
    std::string text;
    while (text.size() < length) text.append(pieces[rng.Next() % pieces.size()]);
    text.resize(length);
    texts.push_back(text);
  }
  for (int i = 0; i < 100; ++i) {
    std::string text(rng.Next() % 700, '\0');
    for (char& c : text) c = static_cast<char>(rng.Next() % 128);  // any ASCII byte
    texts.push_back(text);
  }
  // Non-ASCII after ASCII blocks: no bits, the form unchanged.
  for (const char* tail : {"\xC3\xA9", "\xFF", "\xE4\xB8\xAD word"}) {
    texts.push_back(std::string(130, 'A') + tail);
    texts.push_back(tail);
  }
  // Every CPU path's own table, and the AVX-512 BW copy on any AVX-512 CPU
  // (its form checked against the reference path's).
  std::vector<std::pair<std::string, TextKernels>> tables;
  for (CpuPath path : SupportedCpuPaths()) {
    tables.emplace_back(std::string(CpuPathName(path)), TextKernelsFor(path));
  }
  if (const std::optional<TextKernels> bw = testing::Avx512BwTextKernels()) {
    ASSERT_TRUE(bw->ascii_copy_avx512bw);
    tables.emplace_back("avx512bw", *bw);
  }
  for (const auto& [name, kernels] : tables) {
    const CpuPath path = kernels.path;
    const bool forced = name == "avx512bw";
    for (const NormalizationOptions& options : AllNormalizationOptions()) {
      for (TokenizerKind kind : {TokenizerKind::kWord, TokenizerKind::kWhitespace}) {
        FormTokenBits bits;
        bits.kind = kind;
        std::string room;
        for (const std::string& text : texts) {
          std::string want;
          Normalize(text, options, &want, nullptr, forced ? CpuPath::kReference : path);
          bits.valid = true;  // must be reset by the call
          const size_t n =
              forced ? NormalizeKeepingRoomForTesting(text, options, &room, kernels, &bits)
                     : NormalizeKeepingRoom(text, options, &room, nullptr, path, &bits);
          ASSERT_EQ(std::string_view(room.data(), n), want) << name;
          const bool ascii = std::all_of(text.begin(), text.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x80;
          });
          ASSERT_EQ(bits.valid,
                    ascii && (kernels.ascii_normalizer_avx512 || kernels.ascii_copy_avx512bw) &&
                        !options.remove_punctuation)
              << name << " text of " << text.size();
          if (!bits.valid) continue;
          // The bits of words 0 .. n / 64, the bits past the form (zero) included.
          const std::vector<uint64_t> want_bits = testing::ScalarTokenBits(kind, want);
          ASSERT_GE(bits.words.size(), want_bits.size());
          for (size_t j = 0; j < want_bits.size(); ++j) {
            ASSERT_EQ(bits.words[j], want_bits[j])
                << name << Describe(options) << " kind " << static_cast<int>(kind) << " word " << j
                << " of " << n << " bytes: " << ::testing::PrintToString(text);
          }
        }
      }
    }
  }
}

// The ASCII fast path against utf8proc, under all 8 option combinations, on
// every CPU path and on the AVX-512 BW ASCII copy (run on any AVX-512 CPU,
// VBMI or not: testing::Avx512BwTextKernels): (1) against the Reference;
// (2) against Normalize's own utf8proc path, forced by a trailing "é",
// which composes with nothing before it and which no option removes or
// changes. 3000 texts of one partial block, then 300 of up to 700 bytes
// (the copies' whole blocks: punctuation removed across block edges).
TEST(NormalizerTest, AsciiFastPathEqualsUtf8procPath) {
  SplitMix64 rng(99);
  const std::string e_acute = "\xC3\xA9";
  const std::optional<TextKernels> bw = testing::Avx512BwTextKernels();
  std::string room;
  for (int i = 0; i < 3300; ++i) {
    std::string s(rng.Next() % (i < 3000 ? 64 : 700), '\0');
    for (char& c : s) {
      uint64_t r = rng.Next();
      // Half printable, half any ASCII byte (controls and NUL included).
      c = static_cast<char>(r % 2 ? 0x20 + (r >> 8) % 95 : (r >> 8) % 128);
    }
    for (const NormalizationOptions& options : AllNormalizationOptions()) {
      const std::string want = Reference(s, options);
      ASSERT_EQ(Norm(s, options), want) << ::testing::PrintToString(s) << Describe(options);
      for (CpuPath path : SupportedCpuPaths()) {
        ASSERT_EQ(Norm(s, options, nullptr, path), want)
            << ::testing::PrintToString(s) << Describe(options) << CpuPathName(path);
        ASSERT_EQ(want + e_acute, Norm(s + e_acute, options, nullptr, path))
            << ::testing::PrintToString(s) << Describe(options) << CpuPathName(path);
      }
      if (!bw) continue;
      size_t n = NormalizeKeepingRoomForTesting(s, options, &room, *bw, nullptr);
      ASSERT_EQ(std::string_view(room.data(), n), want)
          << ::testing::PrintToString(s) << Describe(options) << " avx512bw";
      n = NormalizeKeepingRoomForTesting(s + e_acute, options, &room, *bw, nullptr);
      ASSERT_EQ(std::string_view(room.data(), n), want + e_acute)
          << ::testing::PrintToString(s) << Describe(options) << " avx512bw";
    }
  }
}

// Multi-script random text: Normalize equals the reference applied to the
// repaired bytes.
TEST(NormalizerTest, MatchesReferenceOnRandomUnicode) {
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           " ",
                                           ".",
                                           "!",
                                           "\t",
                                           "\xC3\x89",
                                           "e\xCC\x81",
                                           "\xC3\x9F",
                                           "\xCE\xA3",
                                           "\xCF\x82",
                                           "\xEF\xAC\x81",
                                           "\xEF\xBC\xA1",
                                           "\xE6\x88\x91",
                                           "\xE3\x80\x82",
                                           "\xF0\x9F\x8D\x95",
                                           "\xC2\xAD",
                                           "\xE2\x80\x8B",
                                           "\xE2\x80\xA6",
                                           "\xC2\xAB",
                                           "\xE1\x84\x80",
                                           "\xE1\x85\xA1",
                                           "\xEF\xB7\xBA",
                                           "\xCC\x88",
                                           "\xE2\x84\xAB",
                                           "\xC4\xB0",
                                           "\xFF",
                                           "\xE2\x82",
                                           "A",
                                           "\xCC\x8A",
                                           "\xCD\x85",
                                           "\xE1\x86\xA8"};
  SplitMix64 rng(5);
  std::string repaired;
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    // Half the texts start with an ASCII stretch of 0..139 bytes, so the
    // first byte >= 0x80 falls at every offset of the 64-byte blocks of the
    // AVX-512 copy, after a letter or a punctuation mark.
    if (i % 2 == 1) {
      const size_t ascii = rng.Next() % 140;
      for (size_t k = 0; k < ascii; ++k) s += "aB.,( "[rng.Next() % 6];
    }
    size_t n = rng.Next() % 40;
    for (size_t k = 0; k < n; ++k) s += pieces[rng.Next() % pieces.size()];
    uint64_t expected_invalid = SanitizeUtf8(s, &repaired);
    for (const NormalizationOptions& options : AllNormalizationOptions()) {
      const std::string want = Reference(repaired, options);
      for (CpuPath path : SupportedCpuPaths()) {
        uint64_t invalid = 0;
        std::string out = Norm(s, options, &invalid, path);
        ASSERT_EQ(invalid, expected_invalid) << CpuPathName(path);
        ASSERT_EQ(out, want) << ::testing::PrintToString(s) << Describe(options)
                             << CpuPathName(path);
        ASSERT_TRUE(IsValidUtf8(out));
      }
    }
  }
}

}  // namespace
}  // namespace neardup::internal

namespace neardup::internal {
namespace {

// Every BMP code point between combining marks and Hangul jamo (which
// compose or reorder with what is before them): the run-by-run path, with
// its table of context-free code points, against utf8proc on the whole text.
TEST(NormalizerTest, EveryBmpCodePointInContextMatchesReference) {
  const std::vector<NormalizationOptions> unicode = {
      Options(true, false, false), Options(false, true, true), Options(true, true, false)};
  for (char32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string x;
    AppendUtf8(cp, &x);
    // e X (acute) X (jamo V) (diaeresis) X X
    const std::string s = "e" + x + "\xCC\x81" + x + "\xE1\x85\xA1\xCC\x88" + x + x;
    for (const NormalizationOptions& options : unicode) {
      ASSERT_EQ(Norm(s, options, nullptr, CpuPath::kPortable), Reference(s, options))
          << "U+" << std::hex << static_cast<uint32_t>(cp) << " " << Describe(options) << " "
          << ::testing::PrintToString(s);
    }
  }
}

// Random code points of every kind, marks and jamo among them.
TEST(NormalizerTest, RandomCodePointsMatchReference) {
  SplitMix64 rng(31);
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    const size_t n = rng.Next() % 30;
    for (size_t k = 0; k < n; ++k) {
      const uint64_t r = rng.Next();
      char32_t cp;
      switch (r % 6) {
        case 0:
          cp = 0x300 + (r >> 8) % 0x70;  // combining diacritics
          break;
        case 1:
          cp = 0x1100 + (r >> 8) % 0x100;  // jamo
          break;
        case 2:
          cp = 0xAC00 + (r >> 8) % 0x2BA4;  // Hangul syllables
          break;
        case 3:
          cp = static_cast<char32_t>(0x20 + (r >> 8) % 0x5F);  // ASCII
          break;
        default:
          cp = static_cast<char32_t>(0x80 + (r >> 8) % (0x30000 - 0x80));
          break;
      }
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xE9;
      AppendUtf8(cp, &s);
    }
    for (const NormalizationOptions& options : AllNormalizationOptions()) {
      const std::string want = Reference(s, options);
      for (CpuPath path : SupportedCpuPaths()) {
        ASSERT_EQ(Norm(s, options, nullptr, path), want)
            << ::testing::PrintToString(s) << Describe(options) << CpuPathName(path);
      }
    }
  }
}

}  // namespace
}  // namespace neardup::internal

namespace neardup::internal {
namespace {

// Every path (the block kernel on kAvx512) against the reference on the
// repaired text, with the same count of invalid subparts.
void ExpectAllPathsMatchReference(const std::string& s,
                                  const std::vector<NormalizationOptions>& all_options) {
  std::string repaired;
  const uint64_t expected_invalid = SanitizeUtf8(s, &repaired);
  for (const NormalizationOptions& options : all_options) {
    const std::string want = Reference(repaired, options);
    for (CpuPath path : SupportedCpuPaths()) {
      uint64_t invalid = 0;
      const std::string got = Norm(s, options, &invalid, path);
      ASSERT_EQ(got, want) << ::testing::PrintToString(s) << " " << Describe(options) << " "
                           << CpuPathName(path);
      ASSERT_EQ(invalid, expected_invalid)
          << ::testing::PrintToString(s) << " " << Describe(options) << " " << CpuPathName(path);
    }
  }
}

// Every BMP code point repeated past several 64-byte windows of the block
// kernel, at every offset of the window, next to ASCII, itself and the
// context-free code points of other lengths.
TEST(NormalizerTest, EveryBmpCodePointAcrossWindowsMatchesReference) {
  const std::vector<NormalizationOptions> options = {
      Options(true, true, false), Options(true, true, true), Options(true, false, false),
      Options(false, true, true)};
  for (char32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string x;
    AppendUtf8(cp, &x);
    std::string s(cp % 64, 'A');
    for (int k = 0; k < 5; ++k) {
      s += x;
      s += x;
      s += " \xC3\xA9";  // é
      s += x;
      s += "\xE4\xB8\xAD"
           "Ab.";  // 中
    }
    ExpectAllPathsMatchReference(s, options);
  }
}

// The kernel's per-code-point pages (U+2000..U+20FF, U+3000..U+30FF):
// each of their code points among kana, CJK punctuation (unchanged, or
// removed with remove_punctuation) and other 3-byte text with no ASCII in
// the window, so the window takes the special-page test alone, at every
// offset; and next to a code point of another page, so it does not.
TEST(NormalizerTest, SpecialPageCodePointsAcrossWindowsMatchReference) {
  const std::vector<NormalizationOptions> options = {
      Options(true, true, false), Options(true, true, true), Options(true, false, false),
      Options(false, true, true)};
  for (char32_t base : {char32_t{0x2000}, char32_t{0x3000}}) {
    for (char32_t cp = base; cp < base + 0x100; ++cp) {
      std::string x;
      AppendUtf8(cp, &x);
      std::string s(cp % 64, 'a');
      for (int k = 0; k < 6; ++k) {
        s += "\xE3\x81\x82";  // あ
        s += x;
        s += "\xE3\x80\x82";  // 。 (punctuation)
        s += "\xE3\x82\xAB";  // カ
        s += x;
        s += x;
        s += "\xE2\x80\x94";                            // — (punctuation)
        s += k % 2 == 0 ? "\xE4\xB8\xAD" : "\xD0\x96";  // 中, or Ж (changed)
      }
      ExpectAllPathsMatchReference(s, options);
    }
  }
}

// Invalid UTF-8 (lone continuation bytes, bytes that never occur, truncated
// and overlong forms, surrogates) and 4-byte forms at every position of a
// text of 2- and 3-byte sequences and ASCII; and every prefix of the text,
// so sequences are cut at the end of the text.
TEST(NormalizerTest, InvalidSequencesAtEveryPositionMatchReference) {
  const std::string text =
      "Gr\xC3\xBC\xC3\x9F"
      "e \xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xE4\xB8\xAD\xE6\x96\x87 "
      "\xEA\xB0\x80\xEB\x82\x98 caf\xC3\xA9, \xC2\xAB\xC3\x89T\xC3\x89\xC2\xBB "
      "\xE3\x81\x82\xE3\x82\xA2\xEF\xBC\xA1 \xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 "
      "na\xC3\xAFve \xE2\x80\x9Cquoted\xE2\x80\x9D\xE2\x80\xA6 end";
  const std::vector<std::string> inserts = {"\x80",
                                            "\xBF",
                                            "\xC0",
                                            "\xC1\xBF",
                                            "\xF5",
                                            "\xFF",
                                            "\xC3",
                                            "\xE2\x82",
                                            "\xE4\xB8",
                                            "\xF0\x9F\x8D",
                                            "\xED\xA0\x80",
                                            "\xE0\x80\x80",
                                            "\xE0\x9F\xBF",
                                            "\xF0\x80\x80\x80",
                                            "\xF4\x90\x80\x80",
                                            "\xF0\x9F\x8D\x95",
                                            "\xCC\x81",
                                            "\xE1\x85\xA1",
                                            "\xC3\x83\x80"};
  const std::vector<NormalizationOptions> all = AllNormalizationOptions();
  for (size_t offset : {size_t{0}, size_t{37}, size_t{64}}) {
    const std::string padded = std::string(offset, 'x') + text;
    for (size_t i = 0; i <= padded.size(); ++i) {
      for (const std::string& insert : inserts) {
        ExpectAllPathsMatchReference(padded.substr(0, i) + insert + padded.substr(i), all);
      }
      // A byte overwritten: sequences broken in the middle.
      std::string broken = padded;
      if (i < broken.size()) {
        broken[i] = '\x80';
        ExpectAllPathsMatchReference(broken, all);
        broken[i] = 'q';
        ExpectAllPathsMatchReference(broken, all);
      }
      ExpectAllPathsMatchReference(padded.substr(0, i), all);
    }
  }
}

// Long texts of words from many scripts, so that the block kernel runs many
// windows and hands over to the code point loop and back: combining marks,
// code points whose output is longer than they are, 4-byte forms and invalid
// bytes among context-free words.
TEST(NormalizerTest, LongMixedTextsMatchReference) {
  const std::vector<std::string> common = {
      " ",
      "  ",
      "\n",
      "the",
      "Stra\xC3\x9F"
      "e",
      "\xC3\xBC"
      "ber",
      "\xC3\x89T\xC3\x89",
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
      "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3",
      "\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97",
      "\xEA\xB0\x80\xEB\x82\x98\xEB\x8B\xA4",
      "\xE3\x81\x82\xE3\x82\xA2\xE3\x80\x82",
      "\xC2\xAB",
      "\xC2\xBB",
      "\xE2\x80\x99",
      "\xE2\x80\xA6",
      ",",
      "(x)",
      "\xEF\xBC\xA1\xEF\xBC\x88",
      "\xC2\xA0",
  };
  const std::vector<std::string> rare = {"e\xCC\x81",
                                         "\xCC\x88",
                                         "\xE1\x84\x80\xE1\x85\xA1",
                                         "\xEF\xAC\x81",
                                         "\xC2\xBD",
                                         "\xEF\xB7\xBA",
                                         "\xF0\x9F\x8D\x95",
                                         "\xF0\xA0\x80\x80",
                                         "\xFF",
                                         "\xE2\x82",
                                         "\x80",
                                         "\xC2\xAD",
                                         "\xE2\x80\x8B",
                                         "\xC4\xB0",
                                         "\xE2\x84\xAB",
                                         "\xE3\x82\x99",
                                         "\xEF\xBE\x9E"};
  SplitMix64 rng(77);
  for (int i = 0; i < 400; ++i) {
    std::string s;
    const size_t pieces = 20 + rng.Next() % 300;
    const uint64_t rare_per_256 = rng.Next() % 24;
    for (size_t k = 0; k < pieces; ++k) {
      const uint64_t r = rng.Next();
      s += (r & 255) < rare_per_256 ? rare[(r >> 8) % rare.size()]
                                    : common[(r >> 8) % common.size()];
    }
    ExpectAllPathsMatchReference(s, AllNormalizationOptions());
  }
}

// Outputs much longer than the input (U+FDFA is 33 bytes under NFKC), so
// the output room grows while the block kernel and the code point loop take
// turns.
TEST(NormalizerTest, LongExpansionsMatchReference) {
  std::string s;
  for (int i = 0; i < 3000; ++i) {
    s += i % 7 == 0 ? "\xEF\xB7\xBA" : "\xC2\xBD";
    if (i % 5 == 0) s += "abc \xD0\x9F\xD1\x80\xD0\xB8 ";
  }
  ExpectAllPathsMatchReference(s, AllNormalizationOptions());
}

}  // namespace
}  // namespace neardup::internal
