#include "text/token_hasher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "hash/cpu_path.h"
#include "hash/feature_hash.h"
#include "text/token_scan.h"
#include "text/token_scan_test_util.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The text stages of the `paper` preset (the SimHash FPGA paper).
Recipe PaperRecipe() {
  Recipe recipe;
  recipe.normalization.nfkc = true;
  recipe.normalization.case_fold = true;
  recipe.normalization.remove_punctuation = true;
  recipe.tokenizer = TokenizerKind::kWhitespace;
  recipe.stopwords = StopwordsKind::kEnglish;
  recipe.hash = FeatureHashKind::kSdbm;
  recipe.seed = 0;
  return recipe;
}

std::vector<uint64_t> Hashes(const TokenHasher& hasher, std::string_view text,
                             TextStats* stats = nullptr) {
  std::vector<uint64_t> hashes;
  std::string scratch;
  hasher.ForEachTokenHash(
      text, &scratch, [&](uint64_t h) { hashes.push_back(h); }, stats);
  return hashes;
}

TEST(TokenHasherTest, SdbmHashInTextMatchesSdbmHash) {
  // Every length 0..20 (the table path is 1..8 bytes), every count of bytes
  // after the token up to 12 (below 8 takes the loop), random bytes with
  // NUL and 0xFF frequent, random and edge seeds. The buffer is exactly the
  // text, so ASan flags any read past text_end.
  SplitMix64 rng(99);
  for (size_t n = 0; n <= 20; ++n) {
    for (size_t after = 0; after <= 12; ++after) {
      for (int round = 0; round < 20; ++round) {
        std::vector<char> text(n + after);
        for (char& c : text) {
          const uint64_t r = rng.Next();
          c = static_cast<char>(r % 4 == 0 ? 0 : r % 4 == 1 ? 0xFF : r >> 8);
        }
        const uint64_t seed = round == 0 ? 0 : round == 1 ? ~uint64_t{0} : rng.Next();
        const std::string_view token(text.data(), n);
        ASSERT_EQ(SdbmHashInText(token, seed, text.data() + text.size()), SdbmHash(token, seed))
            << n << " bytes, " << after << " after";
      }
    }
  }
}

TEST(TokenHasherTest, SimHashFpgaPaperExample) {
  Result<TokenHasher> hasher = TokenHasher::Create(PaperRecipe());
  ASSERT_TRUE(hasher.ok()) << hasher.status();
  TextStats stats;
  const std::string text = "A school is a school if it has students and teachers";
  EXPECT_THAT(Hashes(*hasher, text, &stats),
              ElementsAre(0x18a4228558350ef4ULL,    // school
                          0x18a4228558350ef4ULL,    // school
                          0x625419d288d39b38ULL,    // students
                          0xa62ee3cd272141b1ULL));  // teachers
  EXPECT_EQ(stats.bytes, text.size());
  EXPECT_EQ(stats.tokens, 11u);
  EXPECT_EQ(stats.stopwords_removed, 7u);
  EXPECT_EQ(stats.invalid_utf8_sequences, 0u);
  // Punctuation and case do not matter in this recipe.
  EXPECT_EQ(Hashes(*hasher, "A SCHOOL, is a school... If it has students & teachers!"),
            Hashes(*hasher, text));
}

TEST(TokenHasherTest, DeterministicAndNormalizationInvariant) {
  Result<TokenHasher> hasher = TokenHasher::Create(Recipe());  // default: kWord, xxh3
  ASSERT_TRUE(hasher.ok()) << hasher.status();
  const std::string text = "The CAF\xC3\x89 is open";
  EXPECT_EQ(Hashes(*hasher, text), Hashes(*hasher, text));
  const std::vector<uint64_t> composed = Hashes(*hasher, "CAF\xC3\x89");
  const std::vector<uint64_t> decomposed = Hashes(*hasher, "cafe\xCC\x81");
  ASSERT_EQ(composed.size(), 1u);
  EXPECT_EQ(composed, decomposed);
  EXPECT_EQ(composed[0], Xxh3Hash("caf\xC3\xA9", 0));
}

TEST(TokenHasherTest, EachHashKindHashesTheNormalizedTokens) {
  for (FeatureHashKind kind :
       {FeatureHashKind::kXxh3, FeatureHashKind::kSdbm, FeatureHashKind::kFnv1a}) {
    Recipe recipe;
    recipe.hash = kind;
    recipe.seed = 77;
    Result<TokenHasher> hasher = TokenHasher::Create(recipe);
    ASSERT_TRUE(hasher.ok()) << hasher.status();
    EXPECT_THAT(Hashes(*hasher, "Hello, \xEF\xAC\x81ne World"),
                ElementsAre(HashFeatureBytes(kind, "hello", 77), HashFeatureBytes(kind, "fine", 77),
                            HashFeatureBytes(kind, "world", 77)));
  }
}

TEST(TokenHasherTest, CustomStopwords) {
  Recipe recipe;
  recipe.stopwords = StopwordsKind::kCustom;
  recipe.custom_stopwords = {"SCHOOL"};  // normalized with the recipe's options
  Result<TokenHasher> hasher = TokenHasher::Create(recipe);
  ASSERT_TRUE(hasher.ok()) << hasher.status();
  TextStats stats;
  EXPECT_THAT(Hashes(*hasher, "a School is a school", &stats),
              ElementsAre(Xxh3Hash("a", 0), Xxh3Hash("is", 0), Xxh3Hash("a", 0)));
  EXPECT_EQ(stats.tokens, 5u);
  EXPECT_EQ(stats.stopwords_removed, 2u);
}

TEST(TokenHasherTest, CustomStopwordsMustNotBeEmpty) {
  Recipe recipe;
  recipe.stopwords = StopwordsKind::kCustom;
  Result<TokenHasher> hasher = TokenHasher::Create(recipe);
  ASSERT_FALSE(hasher.ok());
  EXPECT_EQ(hasher.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(hasher.status().message(), HasSubstr("custom_stopwords"));

  recipe.normalization.remove_punctuation = true;
  recipe.custom_stopwords = {"!!", "..."};
  hasher = TokenHasher::Create(recipe);
  ASSERT_FALSE(hasher.ok());
  EXPECT_EQ(hasher.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(hasher.status().message(), HasSubstr("custom_stopwords (2 words)"));
}

TEST(TokenHasherTest, CharTokensIgnoreStopwords) {
  Recipe recipe;
  recipe.tokenizer = TokenizerKind::kChar;
  recipe.stopwords = StopwordsKind::kEnglish;
  Result<TokenHasher> hasher = TokenHasher::Create(recipe);
  ASSERT_TRUE(hasher.ok()) << hasher.status();
  EXPECT_EQ(hasher->stopwords(), nullptr);
  TextStats stats;
  EXPECT_THAT(Hashes(*hasher, " A  i\xE6\x88\x91", &stats),
              ElementsAre(Xxh3Hash("a", 0), Xxh3Hash(" ", 0), Xxh3Hash("i", 0),
                          Xxh3Hash("\xE6\x88\x91", 0)));
  EXPECT_EQ(stats.stopwords_removed, 0u);
}

TEST(TokenHasherTest, HostileInput) {
  Result<TokenHasher> hasher = TokenHasher::Create(PaperRecipe());
  ASSERT_TRUE(hasher.ok()) << hasher.status();
  TextStats stats;
  EXPECT_TRUE(Hashes(*hasher, "", &stats).empty());
  EXPECT_TRUE(Hashes(*hasher, "   \t\n ", &stats).empty());
  // U+FFFD is a symbol (So): it stays, and is hashed as a token of its own.
  EXPECT_THAT(Hashes(*hasher, "school\xFF\xFE school", &stats),
              ElementsAre(SdbmHash("school\xEF\xBF\xBD\xEF\xBF\xBD", 0), SdbmHash("school", 0)));
  EXPECT_EQ(stats.invalid_utf8_sequences, 2u);
  EXPECT_EQ(stats.bytes, 6u + 15u);
  std::string binary(4096, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 131 % 256);
  std::vector<uint64_t> hashes = Hashes(*hasher, binary, &stats);
  EXPECT_FALSE(hashes.empty());
  EXPECT_GT(stats.invalid_utf8_sequences, 2u);
}

}  // namespace
}  // namespace neardup::internal

namespace neardup::internal {
namespace {

// Random bytes biased towards what stresses the block scanner: separators,
// multi-byte UTF-8 (letters, marks, white space, Han), truncated and invalid
// sequences, upper case and punctuation.
std::string RandomText(SplitMix64* rng, size_t length) {
  static const char* const kPieces[] = {" ", "\t", "\n", "a", "Z", "9", "'", ".", ",", "-", "_",
                                        "!",
                                        "\xC3\xA9",          // é
                                        "\xCC\x81",          // combining acute
                                        "\xC2\xA0",          // no-break space
                                        "\xE3\x80\x80",      // ideographic space
                                        "\xE4\xB8\xAD",      // 中
                                        "\xF0\x9F\x98\x80",  // emoji
                                        "\xEF\xBC\xA1",      // fullwidth A
                                        "\xE2\x80\x8B",      // zero-width space
                                        "\xC3",              // truncated
                                        "\x80",              // lone continuation
                                        "\xFF",              // never valid
                                        "\xED\xA0\x80",      // surrogate
                                        "word", "Straße", "co\xC2\xADoperate",
                                        // Scripts that segmentation cuts.
                                        "ひらがな", "カタカナー", "漢字", "ภาษาไทย",
                                        "\xF0\xA0\x80\x80",      // CJK extension B
                                        "\xE4\xB8\xAD\xCC\x81",  // Han + combining acute
                                        "\xE3\x82\x99",          // combining dakuten
                                        "\xEA\xB0\x80",          // Hangul
                                        "\xE2\x80\x9C"};         // left double quote
  std::string text;
  while (text.size() < length) {
    const uint64_t r = rng->Next();
    if (r % 4 == 0) {
      text.push_back(static_cast<char>(rng->Next()));  // any byte
    } else if (r % 4 == 1) {
      text.append(std::string(1 + rng->Next() % 70, static_cast<char>('a' + rng->Next() % 26)));
    } else {
      text.append(kPieces[rng->Next() % (sizeof(kPieces) / sizeof(kPieces[0]))]);
    }
  }
  return text;
}

std::vector<Recipe> DifferentialRecipes() {
  std::vector<Recipe> recipes;
  for (TokenizerKind tokenizer : {TokenizerKind::kWord, TokenizerKind::kWhitespace}) {
    for (FeatureHashKind hash :
         {FeatureHashKind::kXxh3, FeatureHashKind::kSdbm, FeatureHashKind::kFnv1a}) {
      for (int norm = 0; norm < 8; ++norm) {
        Recipe recipe;
        recipe.tokenizer = tokenizer;
        recipe.hash = hash;
        recipe.seed = 17;
        recipe.normalization.nfkc = norm & 1;
        recipe.normalization.case_fold = norm & 2;
        recipe.normalization.remove_punctuation = norm & 4;
        recipe.stopwords = norm % 3 == 0 ? StopwordsKind::kEnglish : StopwordsKind::kNone;
        // Half the word recipes without script segmentation (version 1).
        if (norm % 2 == 1) {
          recipe.version = 1;
          recipe.segment_scripts = ScriptSegmentation::kNone;
        }
        recipes.push_back(recipe);
      }
    }
  }
  recipes.push_back(PaperRecipe());
  return recipes;
}

struct Stream {
  std::vector<uint64_t> hashes;
  TextStats stats;
  std::string normalized;
};

Stream RunPath(const TokenHasher& hasher, std::string_view text, bool batch) {
  Stream s;
  if (batch) {
    const size_t normalized_size = hasher.ForEachTokenHashBatch(
        text, &s.normalized,
        [&](std::span<const uint64_t> hashes) {
          EXPECT_FALSE(hashes.empty());
          EXPECT_LE(hashes.size(), TokenHasher::kBatchCapacity);
          s.hashes.insert(s.hashes.end(), hashes.begin(), hashes.end());
        },
        &s.stats);
    // The form, then a zero byte; room for the next text may follow.
    EXPECT_LE(normalized_size, s.normalized.size());
    if (normalized_size < s.normalized.size()) {
      EXPECT_EQ(s.normalized[normalized_size], '\0');
    }
    s.normalized.resize(normalized_size);
  } else {
    hasher.ForEachTokenHash(
        text, &s.normalized, [&](uint64_t h) { s.hashes.push_back(h); }, &s.stats);
  }
  return s;
}

TEST(TokenHasherDifferentialTest, EveryPathEqualsTheReference) {
  SplitMix64 rng(2024);
  std::vector<std::string> texts = {"",
                                    " ",
                                    "a",
                                    std::string(64, 'x'),
                                    std::string(63, 'x') + " ",
                                    " " + std::string(64, 'y'),
                                    std::string(1000, 'z'),
                                    "The quick brown fox, jumps over the lazy dog!"};
  for (size_t length : {1, 5, 31, 63, 64, 65, 127, 128, 129, 300, 1000, 4000}) {
    for (int i = 0; i < 3; ++i) texts.push_back(RandomText(&rng, length));
  }
  // A multi-byte code point straddling each offset around a block boundary.
  for (size_t offset = 58; offset < 70; ++offset) {
    texts.push_back(std::string(offset, 'q') + "\xE4\xB8\xAD" + "\xC2\xA0" + "tail");
  }
  // Japanese after every ASCII prefix length 0..64 (every block offset), and
  // a token that opens in an ASCII-only stretch and ends in CJK blocks.
  for (size_t offset = 0; offset <= 64; ++offset) {
    texts.push_back(std::string(offset, 'k') + "東京はカタカナの首都、ภาษาไทย。" +
                    std::string(offset, ' ') + "漢\xE6\x97字");
  }
  texts.push_back(std::string(5000, 'a') + "漢字" + std::string(100, 'b') + " end");
  for (const Recipe& recipe : DifferentialRecipes()) {
    Result<TokenHasher> reference = TokenHasher::Create(recipe, CpuPath::kReference);
    ASSERT_TRUE(reference.ok()) << reference.status();
    for (CpuPath path : SupportedCpuPaths()) {
      Result<TokenHasher> fast = TokenHasher::Create(recipe, path);
      ASSERT_TRUE(fast.ok()) << fast.status();
      for (const std::string& text : texts) {
        const Stream want = RunPath(*reference, text, false);
        for (bool batch : {false, true}) {
          const Stream got = RunPath(*fast, text, batch);
          ASSERT_EQ(got.normalized, want.normalized) << CpuPathName(path);
          ASSERT_EQ(got.hashes, want.hashes)
              << CpuPathName(path) << " batch " << batch << " tokenizer "
              << static_cast<int>(recipe.tokenizer) << " text of " << text.size();
          EXPECT_EQ(got.stats.tokens, want.stats.tokens);
          EXPECT_EQ(got.stats.stopwords_removed, want.stats.stopwords_removed);
          EXPECT_EQ(got.stats.invalid_utf8_sequences, want.stats.invalid_utf8_sequences);
          EXPECT_EQ(got.stats.bytes, want.stats.bytes);
        }
      }
    }
  }
}

// One scratch through texts of changing size (short after long: leftovers
// past the form; long after short or in SSO: the buffer grows during the
// call): the batch hashes equal those through a fresh scratch, and the form
// is followed by a zero byte.
TEST(TokenHasherDifferentialTest, OneScratchThroughLongThenShortTexts) {
  SplitMix64 rng(77);
  const std::vector<std::string> texts = {"tiny",
                                          std::string(3000, 'l') + " long text, ASCII only",
                                          "short one",
                                          "",
                                          RandomText(&rng, 5000),
                                          "a b",
                                          std::string(200, 'm') + " \xC3\x89t\xC3\xA9 caf\xC3\xA9",
                                          "x",
                                          RandomText(&rng, 40),
                                          std::string(8000, 'w')};
  for (const Recipe& recipe : DifferentialRecipes()) {
    for (CpuPath path : SupportedCpuPaths()) {
      Result<TokenHasher> hasher = TokenHasher::Create(recipe, path);
      ASSERT_TRUE(hasher.ok()) << hasher.status();
      std::string scratch;  // starts in SSO
      for (int round = 0; round < 2; ++round) {
        for (const std::string& text : texts) {
          std::vector<uint64_t> got;
          const size_t normalized_size = hasher->ForEachTokenHashBatch(
              text, &scratch,
              [&](std::span<const uint64_t> hashes) {
                got.insert(got.end(), hashes.begin(), hashes.end());
              },
              nullptr);
          const Stream want = RunPath(*hasher, text, true);
          ASSERT_EQ(got, want.hashes) << CpuPathName(path) << " text of " << text.size();
          ASSERT_LE(normalized_size, scratch.size());
          ASSERT_EQ(scratch.substr(0, normalized_size), want.normalized) << CpuPathName(path);
          if (normalized_size < scratch.size()) {
            ASSERT_EQ(scratch[normalized_size], '\0');
          }
        }
      }
    }
  }
}

// Random CJK, Thai and mixed text: the segmented tokens of every path equal
// the reference's, whatever the block offsets.
std::string RandomCjkText(SplitMix64* rng, size_t length) {
  static const char* const kPieces[] = {"漢",
                                        "字",
                                        "は",
                                        "の",
                                        "カ",
                                        "タ",
                                        "ー",
                                        "ﾊﾝ",
                                        "ไ",
                                        "ม่",
                                        "ี",
                                        "a",
                                        "Z",
                                        "7",
                                        " ",
                                        "、",
                                        "。",
                                        "\xE3\x82\x99",
                                        "\xF0\xA0\x80\x80",
                                        "\xE6\x97",
                                        "\xFF",
                                        "한국어",
                                        "é"};
  std::string text;
  while (text.size() < length) text.append(kPieces[rng->Next() % std::size(kPieces)]);
  return text;
}

TEST(TokenHasherDifferentialTest, SegmentedCjkEqualsTheReferenceOnEveryPath) {
  SplitMix64 rng(20);
  Recipe recipe;  // version 2 default: segment_scripts "characters"
  ASSERT_EQ(recipe.segment_scripts, ScriptSegmentation::kCharacters);
  Result<TokenHasher> reference = TokenHasher::Create(recipe, CpuPath::kReference);
  ASSERT_TRUE(reference.ok());
  for (int round = 0; round < 60; ++round) {
    const std::string text =
        std::string(round % 64, 'x') + " " + RandomCjkText(&rng, 1 + rng.Next() % 900);
    const Stream want = RunPath(*reference, text, false);
    for (CpuPath path : SupportedCpuPaths()) {
      Result<TokenHasher> fast = TokenHasher::Create(recipe, path);
      ASSERT_TRUE(fast.ok());
      for (bool batch : {false, true}) {
        ASSERT_EQ(RunPath(*fast, text, batch).hashes, want.hashes)
            << CpuPathName(path) << " round " << round;
      }
    }
    testing::ExpectSameTokens(text, "cjk round " + std::to_string(round));
  }
}

// Segment leads outside tokens (U+FFFD from invalid bytes, lead EF; the
// fullwidth comma U+FF0C) and inside them only in 4-byte code points (CJK
// extension B, lead F0) or 3-byte ones far apart: the scanner's flag for
// "a token may need segmentation" counts only leads of token code points, and
// must still see every one (the 4-byte ones are classified last).
std::string RandomSparseLeadText(SplitMix64* rng, size_t length) {
  static const char* const kPieces[] = {"word",
                                        " ",
                                        "  ",
                                        "\xFF",
                                        "\xEF\xBF\xBD",
                                        "\n",
                                        "caf\xC3\xA9",
                                        "\xEF\xBC\x8C",
                                        "\xF0\xA0\x80\x80",
                                        "\xF0\x9F\x98\x80",
                                        "x",
                                        "12",
                                        "\xE6\xBC\xA2"};
  std::string text;
  while (text.size() < length) {
    const uint64_t r = rng->Next();
    // Mostly ASCII words and invalid bytes; a lead-byte piece rarely.
    const size_t piece = r % 64 < 60 ? r % 8 : 8 + (r >> 8) % 5;
    text.append(kPieces[piece]);
  }
  return text;
}

TEST(TokenHasherDifferentialTest, SparseSegmentLeadsEqualTheReferenceOnEveryPath) {
  SplitMix64 rng(31);
  Recipe recipe;  // segment_scripts "characters"
  Result<TokenHasher> reference = TokenHasher::Create(recipe, CpuPath::kReference);
  ASSERT_TRUE(reference.ok());
  for (int round = 0; round < 120; ++round) {
    const std::string text =
        std::string(round % 64, 'y') + RandomSparseLeadText(&rng, 1 + rng.Next() % 3000);
    const Stream want = RunPath(*reference, text, false);
    for (CpuPath path : SupportedCpuPaths()) {
      Result<TokenHasher> fast = TokenHasher::Create(recipe, path);
      ASSERT_TRUE(fast.ok());
      ASSERT_EQ(RunPath(*fast, text, true).hashes, want.hashes)
          << CpuPathName(path) << " round " << round;
    }
  }
}

TEST(TokenScannerTest, SpansEqualForEachTokenOnEveryPath) {
  SplitMix64 rng(77);
  for (int round = 0; round < 200; ++round) {
    const std::string text = RandomText(&rng, rng.Next() % 700);
    testing::ExpectSameTokens(text, "round " + std::to_string(round));
  }
}

// The densest blocks: one-byte tokens every other byte (32 tokens end in a
// block, the most), with a token left open into the block or not, at every
// offset of the run within the block, ending inside a token or after one:
// the span emitters' largest stores (the scanner's buffer is exactly
// kMaxTokensPerBlock, so an emitter that writes past it fails under ASan).
TEST(TokenScannerTest, DensestBlocksAtEveryOffset) {
  for (size_t offset = 0; offset < 130; ++offset) {
    for (const char* lead : {"", " "}) {
      std::string text = lead + std::string(offset, 'q');
      for (int i = 0; i < 100; ++i) text += (i % 2 == 0) ? "a " : "b\t";
      testing::ExpectSameTokens(text, "offset " + std::to_string(offset));
      text += "z";
      testing::ExpectSameTokens(text, "offset " + std::to_string(offset) + " open end");
    }
  }
}

// The scanner given the normalizer's token bits (FormTokenBits) on ASCII
// text: empty, every length 0..260 of short and long tokens (tokens across
// one and several block edges, a token ending exactly at a block's end, the
// text ending inside a token), separators only, NUL and control bytes; the
// spans equal ForEachToken's on every path (ExpectSameTokens runs both
// scanners). Through TokenHasher the hashes of every differential recipe
// equal the reference's: the recipes without remove_punctuation take the
// bits scanner on the AVX-512 paths, the others (and every other path)
// check the classifying scanner.
TEST(TokenScannerTest, TokenBitsGiveTheSameSpans) {
  SplitMix64 rng(1319);
  std::vector<std::string> texts = {"",
                                    " ",
                                    "a",
                                    std::string(64, 'x'),
                                    std::string(64, ' '),
                                    std::string(63, 'x') + " " + std::string(65, 'y'),
                                    std::string(300, 'z'),
                                    std::string(1, '\0')};
  const std::vector<std::string> pieces = {" ",
                                           "\t",
                                           "\r\n",
                                           "a",
                                           "Zz",
                                           "9",
                                           "'",
                                           ".",
                                           ",",
                                           "-",
                                           "_",
                                           "!",
                                           "word",
                                           std::string(70, 'L'),
                                           std::string(130, 'm'),
                                           std::string(1, '\0'),
                                           "\x01",
                                           "...,,,"};
  for (size_t length = 0; length <= 260; ++length) {
    for (int i = 0; i < 2; ++i) {
      std::string text;
      while (text.size() < length) text.append(pieces[rng.Next() % pieces.size()]);
      text.resize(length);
      texts.push_back(text);
    }
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    testing::ExpectSameTokens(texts[i], "ascii text " + std::to_string(i));
  }
  for (const Recipe& recipe : DifferentialRecipes()) {
    Result<TokenHasher> reference = TokenHasher::Create(recipe, CpuPath::kReference);
    ASSERT_TRUE(reference.ok()) << reference.status();
    for (CpuPath path : SupportedCpuPaths()) {
      Result<TokenHasher> fast = TokenHasher::Create(recipe, path);
      ASSERT_TRUE(fast.ok()) << fast.status();
      // The bits path is taken wherever the kernels allow it.
      const TextKernels& kernels = TextKernelsFor(path);
      EXPECT_EQ(fast->uses_form_token_bits(),
                ((kernels.ascii_normalizer_avx512 && kernels.compress_tokens) ||
                 kernels.ascii_copy_avx512bw) &&
                    !recipe.normalization.remove_punctuation)
          << CpuPathName(path);
      for (const std::string& text : texts) {
        ASSERT_EQ(RunPath(*fast, text, true).hashes, RunPath(*reference, text, false).hashes)
            << CpuPathName(path) << " text of " << text.size();
      }
    }
  }
}

// An on_batch that hashes another text on the same thread (the thread's
// token-bit words are taken out for each call): the outer text's hashes are
// still the reference's, and so are the inner one's.
TEST(TokenScannerTest, TokenBitsWithANestedText) {
  Recipe recipe;  // default: kWord, no remove_punctuation
  Result<TokenHasher> reference = TokenHasher::Create(recipe, CpuPath::kReference);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::string outer;
  for (int i = 0; i < 400; ++i) outer += "word" + std::to_string(i) + (i % 7 == 0 ? ". " : " ");
  // Shorter than the outer text (no reallocation) with other token edges:
  // shared words would be overwritten under the outer scanner.
  std::string inner;
  while (inner.size() + 4 < outer.size() - 8) inner += "ab  ";
  const std::vector<uint64_t> want_outer = RunPath(*reference, outer, false).hashes;
  const std::vector<uint64_t> want_inner = RunPath(*reference, inner, false).hashes;
  for (CpuPath path : SupportedCpuPaths()) {
    Result<TokenHasher> fast = TokenHasher::Create(recipe, path);
    ASSERT_TRUE(fast.ok()) << fast.status();
    std::string scratch;
    std::vector<uint64_t> got_outer;
    int nested = 0;
    fast->ForEachTokenHashBatch(
        outer, &scratch,
        [&](std::span<const uint64_t> hashes) {
          got_outer.insert(got_outer.end(), hashes.begin(), hashes.end());
          if (nested++ < 2) {
            EXPECT_EQ(RunPath(*fast, inner, true).hashes, want_inner) << CpuPathName(path);
          }
        },
        nullptr);
    EXPECT_EQ(got_outer, want_outer) << CpuPathName(path);
    EXPECT_GE(nested, 2) << CpuPathName(path);
  }
}

}  // namespace
}  // namespace neardup::internal
