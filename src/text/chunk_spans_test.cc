#include "text/chunk_spans.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "neardup/fingerprinter.h"
#include "text/text_samples_for_test.h"

namespace neardup::internal {
namespace {

using ::testing::ElementsAre;

std::vector<Recipe> Recipes() {
  std::vector<Recipe> recipes;
  recipes.push_back(Recipe{});
  Recipe sampled;
  sampled.chunks.sample_modulus = 3;
  sampled.stopwords = StopwordsKind::kEnglish;
  recipes.push_back(sampled);
  Recipe unigram_sdbm;  // remixed chunk features
  unigram_sdbm.hash = FeatureHashKind::kSdbm;
  unigram_sdbm.chunks.shingle_width = 1;
  recipes.push_back(unigram_sdbm);
  Recipe chars;
  chars.tokenizer = TokenizerKind::kChar;
  chars.chunks.shingle_width = 8;
  chars.normalization.remove_punctuation = true;
  recipes.push_back(chars);
  Recipe whitespace;
  whitespace.tokenizer = TokenizerKind::kWhitespace;
  whitespace.hash = FeatureHashKind::kFnv1a;
  whitespace.seed = 99;
  whitespace.chunks.shingle_width = 2;
  recipes.push_back(whitespace);
  return recipes;
}

// The equality the passages rely on: the IDs of Extract are exactly the
// Fingerprinter's chunk set, for every recipe kind, on texts with non-ASCII,
// composing marks, ignorable characters and invalid UTF-8.
TEST(ChunkSpansTest, IdsEqualTheFingerprintersChunkSet) {
  for (const Recipe& recipe : Recipes()) {
    SketchSelection selection;
    selection.chunks = true;
    Result<std::unique_ptr<Fingerprinter>> fingerprinter =
        CreateCpuFingerprinter(recipe, selection);
    ASSERT_TRUE(fingerprinter.ok()) << fingerprinter.status();
    Result<ChunkSpanExtractor> extractor = ChunkSpanExtractor::Create(recipe);
    ASSERT_TRUE(extractor.ok());
    for (uint32_t seed = 0; seed < 120; ++seed) {
      const std::string text = RandomMixedText(seed * 7 + 3, seed % 90);
      Fingerprint fingerprint;
      ASSERT_TRUE((*fingerprinter)->Compute(text, &fingerprint).ok());
      Result<std::vector<ChunkSpan>> spans = extractor->Extract(text);
      ASSERT_TRUE(spans.ok()) << spans.status();
      std::vector<uint32_t> ids;
      for (const ChunkSpan& s : *spans) {
        ids.push_back(s.id);
        ASSERT_LE(s.first_token, s.last_token);
        ASSERT_LE(s.begin, s.end);
        ASSERT_LE(s.end, text.size());
      }
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      ASSERT_EQ(ids, fingerprint.chunks) << "seed " << seed;
    }
  }
}

TEST(ChunkSpansTest, WindowsCoverTheirTokens) {
  Recipe recipe;
  recipe.chunks.shingle_width = 3;
  Result<ChunkSpanExtractor> extractor = ChunkSpanExtractor::Create(recipe);
  ASSERT_TRUE(extractor.ok());
  const std::string text = "One, two; THREE four.";
  Result<std::vector<ChunkSpan>> spans = extractor->Extract(text);
  ASSERT_TRUE(spans.ok());
  std::vector<std::string> slices;
  for (const ChunkSpan& s : *spans) slices.push_back(text.substr(s.begin, s.end - s.begin));
  EXPECT_THAT(slices, ElementsAre("One, two; THREE", "two; THREE four"));
  EXPECT_EQ((*spans)[1].first_token, 1u);
  EXPECT_EQ((*spans)[1].last_token, 3u);
}

TEST(ChunkSpansTest, ShortTextHasOneChunkAndEmptyTextNone) {
  Recipe recipe;  // shingle_width 5
  Result<ChunkSpanExtractor> extractor = ChunkSpanExtractor::Create(recipe);
  ASSERT_TRUE(extractor.ok());
  Result<std::vector<ChunkSpan>> spans = extractor->Extract("  just two ");
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 1u);
  EXPECT_EQ((*spans)[0].begin, 2u);
  EXPECT_EQ((*spans)[0].end, 10u);
  spans = extractor->Extract("");
  ASSERT_TRUE(spans.ok());
  EXPECT_TRUE(spans->empty());
  spans = extractor->Extract("\xFF\xFE !!");
  ASSERT_TRUE(spans.ok());
  EXPECT_TRUE(spans->empty());
}

TEST(ChunkSpansTest, BadShingleWidthIsAnError) {
  Recipe recipe;
  recipe.chunks.shingle_width = 0;
  EXPECT_EQ(ChunkSpanExtractor::Create(recipe).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neardup::internal
