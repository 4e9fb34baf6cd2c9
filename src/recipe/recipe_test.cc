#include "neardup/recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace neardup {
namespace {

using ::testing::HasSubstr;

TEST(RecipeTest, PresetsValidateAndRoundTrip) {
  for (const std::string& name : PresetNames()) {
    Result<Recipe> recipe = PresetRecipe(name);
    ASSERT_TRUE(recipe.ok()) << name;
    EXPECT_TRUE(ValidateRecipe(*recipe).ok()) << name;
    Result<Recipe> parsed = ParseRecipeJson(CanonicalJson(*recipe));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(CanonicalJson(*parsed), CanonicalJson(*recipe));
    EXPECT_EQ(RecipeId(*parsed), RecipeId(*recipe));
  }
}

TEST(RecipeTest, PresetIdsDifferAndAreStable) {
  std::set<std::string> ids;
  for (const std::string& name : PresetNames()) ids.insert(RecipeId(*PresetRecipe(name)));
  EXPECT_EQ(ids.size(), PresetNames().size());
  // Frozen: a change here means every stored fingerprint's recipe id moved.
  // Version 1's `default` (today's `default-v1`) keeps its string and id.
  EXPECT_EQ(CanonicalJson(*PresetRecipe("default-v1")),
            "{\"format\":\"neardup-recipe\",\"version\":1,\"normalize\":{\"nfkc\":true,"
            "\"case_fold\":true,\"remove_punctuation\":false},\"tokenizer\":\"word\","
            "\"stopwords\":\"none\",\"hash\":\"xxh3\",\"seed\":0,\"simhash\":{\"bits\":64,"
            "\"shingle_width\":3},\"minhash\":{\"num_hashes\":128,\"shingle_width\":5},"
            "\"chunks\":{\"shingle_width\":5,\"sample_modulus\":1}}");
  EXPECT_EQ(RecipeId(*PresetRecipe("default-v1")), "1b6dd7a19890a092");
  EXPECT_EQ(RecipeId(*PresetRecipe("paper")), "8ba6f2adf1e3e522");
  EXPECT_EQ(RecipeId(*PresetRecipe("short")), "c0f0181a9fab1def");
  EXPECT_EQ(CanonicalJson(*PresetRecipe("default")),
            "{\"format\":\"neardup-recipe\",\"version\":2,\"normalize\":{\"nfkc\":true,"
            "\"case_fold\":true,\"remove_punctuation\":false},\"tokenizer\":\"word\","
            "\"segment_scripts\":\"characters\",\"stopwords\":\"none\",\"hash\":\"xxh3\","
            "\"seed\":0,\"simhash\":{\"bits\":64,\"shingle_width\":3},\"minhash\":{"
            "\"num_hashes\":128,\"shingle_width\":5},\"chunks\":{\"shingle_width\":5,"
            "\"sample_modulus\":1}}");
  EXPECT_EQ(RecipeId(*PresetRecipe("default")).size(), 16u);
}

TEST(RecipeTest, VersionIsKeptAndDecidesTheSegmentationDefault) {
  // A version 1 recipe, as a collection made by version 1 stored it: parses
  // as version 1 without segmentation, and writes the same string back.
  const std::string v1 = CanonicalJson(*PresetRecipe("default-v1"));
  Result<Recipe> parsed = ParseRecipeJson(v1);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->version, 1);
  EXPECT_EQ(parsed->segment_scripts, ScriptSegmentation::kNone);
  EXPECT_EQ(CanonicalJson(*parsed), v1);
  EXPECT_EQ(RecipeId(*parsed), "1b6dd7a19890a092");
  // A hand-written version 2 recipe without the key: characters.
  parsed = ParseRecipeJson(R"({"version": 2})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->segment_scripts, ScriptSegmentation::kCharacters);
  EXPECT_EQ(RecipeId(*parsed), RecipeId(*PresetRecipe("default")));
  parsed = ParseRecipeJson(R"({"segment_scripts": "none", "version": 2})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->segment_scripts, ScriptSegmentation::kNone);
  EXPECT_NE(RecipeId(*parsed), RecipeId(*PresetRecipe("default")));
  EXPECT_NE(RecipeId(*parsed), RecipeId(*PresetRecipe("default-v1")));
}

TEST(RecipeTest, VersionOneHasNoSegmentation) {
  Recipe recipe = *PresetRecipe("default-v1");
  recipe.segment_scripts = ScriptSegmentation::kCharacters;
  Status status = ValidateRecipe(recipe);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("segment_scripts (\"characters\") needs recipe version 2"));
  recipe.version = 0;
  EXPECT_THAT(ValidateRecipe(recipe).message(), HasSubstr("version (0) must be between 1 and"));
}

TEST(RecipeTest, PaperPresetMatchesThePaper) {
  Recipe paper = *PresetRecipe("paper");
  EXPECT_TRUE(paper.normalization.case_fold);
  EXPECT_TRUE(paper.normalization.remove_punctuation);
  EXPECT_EQ(paper.tokenizer, TokenizerKind::kWhitespace);
  EXPECT_EQ(paper.stopwords, StopwordsKind::kEnglish);
  EXPECT_EQ(paper.hash, FeatureHashKind::kSdbm);
  EXPECT_EQ(paper.simhash.bits, 64);
  EXPECT_EQ(paper.simhash.shingle_width, 1);
}

TEST(RecipeTest, NameIsNotPartOfTheId) {
  Recipe a = *PresetRecipe("default");
  Recipe b = a;
  b.name = "renamed";
  EXPECT_EQ(RecipeId(a), RecipeId(b));
  b.seed = 1;
  EXPECT_NE(RecipeId(a), RecipeId(b));
}

TEST(RecipeTest, HandWrittenJsonTakesDefaultsForMissingKeys) {
  Result<Recipe> recipe = ParseRecipeJson(
      R"({"version": 1, "tokenizer": "char", "seed": 18446744073709551615,
          "stopwords": ["the", "a", "the"], "minhash": {"num_hashes": 64}})");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  EXPECT_EQ(recipe->tokenizer, TokenizerKind::kChar);
  EXPECT_EQ(recipe->seed, ~0ULL);
  EXPECT_EQ(recipe->stopwords, StopwordsKind::kCustom);
  EXPECT_EQ(recipe->custom_stopwords, (std::vector<std::string>{"a", "the"}));
  EXPECT_EQ(recipe->minhash.num_hashes, 64);
  EXPECT_EQ(recipe->minhash.shingle_width, 5);
  EXPECT_EQ(recipe->simhash.bits, 64);
}

TEST(RecipeTest, RejectsBadRecipesWithClearMessages) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {"", "not valid JSON"},
      {"[1]", "top level"},
      {R"({"tokenizer": "word"})", "\"version\" is missing"},
      {R"({"version": 1, "tokenizer": "bigram"})", "tokenizer (\"bigram\")"},
      {R"({"version": 1, "hash": "md5"})", "hash (\"md5\")"},
      {R"({"version": 1, "simhash": {"bits": 96}})", "simhash.bits (96) must be 64 or 128"},
      {R"({"version": 1, "minhash": {"shingle_width": 0}})",
       "minhash.shingle_width (0) must be between 1 and 64"},
      {R"({"version": 1, "minhash": {"num_hashes": 99999999999}})",
       "minhash.num_hashes (99999999999) must be between 0 and 2147483647"},
      {R"({"version": 1, "simhash": {"bits": -64}})", "simhash.bits (-64)"},
      {R"({"version": 1, "chunks": {"sample_modulus": 0}})", "chunks.sample_modulus (0)"},
      {R"({"version": 1, "stopwords": []})", "custom stopword list is empty"},
      {R"({"version": 1, "stopwords": "french"})", "stopwords (\"french\")"},
      {R"({"version": 1, "normalize": {"nfc": true}})", "unknown key \"nfc\" in normalize"},
      {R"({"version": 1, "colour": "red"})", "unknown key \"colour\""},
      {R"({"version": 1, "seed": -1})", "seed"},
      {R"({"format": "other", "version": 1})", "format (\"other\")"},
      {R"({"version": 1, "segment_scripts": "characters"})",
       "segment_scripts (\"characters\") needs recipe version 2"},
      {R"({"version": 2, "segment_scripts": "bigrams"})", "segment_scripts (\"bigrams\")"},
      {R"({"version": 2, "segment_scripts": 1})", "segment_scripts"},
  };
  for (const Case& c : cases) {
    Result<Recipe> recipe = ParseRecipeJson(c.json);
    ASSERT_FALSE(recipe.ok()) << c.json;
    EXPECT_THAT(recipe.status().message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(RecipeTest, NewerVersionIsAFailedPrecondition) {
  Result<Recipe> recipe = ParseRecipeJson(R"({"version": 99})");
  ASSERT_FALSE(recipe.ok());
  EXPECT_EQ(recipe.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(recipe.status().message(), HasSubstr("newer than this build supports"));
}

TEST(RecipeTest, UnknownPresetListsTheKnownOnes) {
  Result<Recipe> recipe = PresetRecipe("fast");
  ASSERT_FALSE(recipe.ok());
  EXPECT_THAT(recipe.status().message(), HasSubstr("default, default-v1, paper, short"));
}

}  // namespace
}  // namespace neardup
