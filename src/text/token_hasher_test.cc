#include "text/token_hasher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hash/feature_hash.h"

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
