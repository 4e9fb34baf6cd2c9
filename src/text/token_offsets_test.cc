#include "text/token_offsets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/normalizer.h"
#include "text/text_samples_for_test.h"
#include "text/token_hasher.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;

TEST(NormalizeWithOffsetsTest, TextEqualsNormalizeAndRangesAreSane) {
  for (const NormalizationOptions& options : AllNormalizationOptions()) {
    for (uint32_t seed = 0; seed < 60; ++seed) {
      const std::string text = RandomMixedText(seed, 1 + seed % 40);
      NormalizedText out;
      ASSERT_TRUE(NormalizeWithOffsets(text, options, &out).ok()) << seed;
      std::string expected;
      Normalize(text, options, &expected, nullptr);
      ASSERT_EQ(out.text, expected) << seed;
      ASSERT_EQ(out.source_begin.size(), out.text.size());
      ASSERT_EQ(out.source_end.size(), out.text.size());
      for (size_t i = 0; i < out.text.size(); ++i) {
        ASSERT_LT(out.source_begin[i], out.source_end[i]);
        ASSERT_LE(out.source_end[i], text.size());
        if (i > 0) {
          ASSERT_LE(out.source_begin[i - 1], out.source_begin[i]);
        }
      }
    }
  }
}

TEST(NormalizeWithOffsetsTest, KnownOffsets) {
  NormalizationOptions options;  // the defaults: NFKC, case folding, punctuation removed
  options.nfkc = true;
  options.case_fold = true;
  options.remove_punctuation = true;
  NormalizedText out;
  // "Hi, Straße!" : ß (bytes 8..9) folds to "ss", both bytes mapped to it.
  ASSERT_TRUE(NormalizeWithOffsets("Hi, Stra\xC3\x9F"
                                   "e!",
                                   options, &out)
                  .ok());
  EXPECT_EQ(out.text, "hi strasse");
  EXPECT_THAT(out.source_begin, ElementsAre(0, 1, 3, 4, 5, 6, 7, 8, 8, 10));
  EXPECT_THAT(out.source_end, ElementsAre(1, 2, 4, 5, 6, 7, 8, 10, 10, 11));
  // "e" + U+0301 composes to é: the composing pair is one unit with the
  // ASCII base before it ("ab" + space are per byte).
  ASSERT_TRUE(NormalizeWithOffsets("ab e\xCC\x81", options, &out).ok());
  EXPECT_EQ(out.text, "ab \xC3\xA9");
  EXPECT_THAT(out.source_begin, ElementsAre(0, 1, 2, 3, 3));
  EXPECT_THAT(out.source_end, ElementsAre(1, 2, 3, 6, 6));
  // Invalid bytes become U+FFFD mapped to the invalid byte.
  ASSERT_TRUE(NormalizeWithOffsets("a\xFF"
                                   "b",
                                   options, &out)
                  .ok());
  EXPECT_EQ(out.text,
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_THAT(out.source_begin, ElementsAre(0, 1, 1, 1, 2));
  EXPECT_THAT(out.source_end, ElementsAre(1, 2, 2, 2, 3));
}

TEST(NormalizeWithOffsetsTest, EmptyAndPunctuationOnly) {
  NormalizationOptions options;
  options.remove_punctuation = true;
  NormalizedText out;
  ASSERT_TRUE(NormalizeWithOffsets("", options, &out).ok());
  EXPECT_TRUE(out.text.empty());
  ASSERT_TRUE(NormalizeWithOffsets("!?,\xE2\x80\x94.", options, &out).ok());
  EXPECT_TRUE(out.text.empty());
  EXPECT_TRUE(out.source_begin.empty());
}

std::vector<Recipe> Recipes() {
  std::vector<Recipe> recipes;
  recipes.push_back(Recipe{});
  Recipe english;
  english.stopwords = StopwordsKind::kEnglish;
  recipes.push_back(english);
  Recipe whitespace;
  whitespace.tokenizer = TokenizerKind::kWhitespace;
  whitespace.normalization.remove_punctuation = false;
  whitespace.hash = FeatureHashKind::kSdbm;
  recipes.push_back(whitespace);
  Recipe chars;
  chars.tokenizer = TokenizerKind::kChar;
  chars.hash = FeatureHashKind::kFnv1a;
  chars.seed = 7;
  recipes.push_back(chars);
  Recipe raw;
  raw.normalization.nfkc = false;
  raw.normalization.case_fold = false;
  recipes.push_back(raw);
  return recipes;
}

TEST(TokenSpannerTest, HashesEqualTokenHasher) {
  for (const Recipe& recipe : Recipes()) {
    Result<TokenHasher> hasher = TokenHasher::Create(recipe);
    ASSERT_TRUE(hasher.ok());
    Result<TokenSpanner> spanner = TokenSpanner::Create(recipe);
    ASSERT_TRUE(spanner.ok());
    for (uint32_t seed = 0; seed < 80; ++seed) {
      const std::string text = RandomMixedText(1000 + seed, seed % 60);
      std::vector<uint64_t> expected;
      std::string scratch;
      hasher->ForEachTokenHash(
          text, &scratch, [&](uint64_t h) { expected.push_back(h); }, nullptr);
      Result<std::vector<SourceTokenSpan>> tokens = spanner->Tokens(text);
      ASSERT_TRUE(tokens.ok()) << tokens.status();
      std::vector<uint64_t> actual;
      for (const SourceTokenSpan& t : *tokens) {
        actual.push_back(t.hash);
        ASSERT_LE(t.begin, t.end);
        ASSERT_LE(t.end, text.size());
      }
      ASSERT_EQ(actual, expected) << "seed " << seed;
    }
  }
}

TEST(TokenSpannerTest, SlicesOfTheOriginalNormalizeToTheTokens) {
  Recipe recipe;  // word tokens, NFKC + case folding + punctuation removal
  Result<TokenSpanner> spanner = TokenSpanner::Create(recipe);
  ASSERT_TRUE(spanner.ok());
  const std::string text = "  \xC2\xABHello\xC2\xBB, W\xC3\x96RLD!  \xEF\xAC\x81le 42";
  Result<std::vector<SourceTokenSpan>> tokens = spanner->Tokens(text);
  ASSERT_TRUE(tokens.ok());
  std::vector<std::string> slices;
  for (const SourceTokenSpan& t : *tokens) slices.push_back(text.substr(t.begin, t.end - t.begin));
  EXPECT_THAT(slices, ElementsAre("Hello", "W\xC3\x96RLD", "\xEF\xAC\x81le", "42"));
}

TEST(TokenSpannerTest, CharSpaceTokenIsEmptyAfterThePreviousToken) {
  Recipe recipe;
  recipe.tokenizer = TokenizerKind::kChar;
  Result<TokenSpanner> spanner = TokenSpanner::Create(recipe);
  ASSERT_TRUE(spanner.ok());
  Result<std::vector<SourceTokenSpan>> tokens = spanner->Tokens("a  b");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 3u);
  EXPECT_EQ((*tokens)[1].begin, 1u);
  EXPECT_EQ((*tokens)[1].end, 1u);
  EXPECT_EQ((*tokens)[2].begin, 3u);
}

TEST(TokenSpannerTest, CustomStopwordsWithoutWordsAreRefused) {
  Recipe recipe;
  recipe.stopwords = StopwordsKind::kCustom;
  EXPECT_EQ(TokenSpanner::Create(recipe).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neardup::internal
