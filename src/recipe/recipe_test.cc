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

TEST(RecipeTest, DigestPresetsRoundTripAndAreListed) {
  EXPECT_EQ(DigestPresetNames(), (std::vector<std::string>{"exlsh", "exlsh-chars"}));
  std::vector<std::string> all = AllPresetNames();
  EXPECT_EQ(all, (std::vector<std::string>{"default", "default-v1", "paper", "short", "exlsh",
                                           "exlsh-chars"}));
  std::set<std::string> ids;
  for (const std::string& name : all) {
    Result<Recipe> recipe = PresetRecipe(name);
    ASSERT_TRUE(recipe.ok()) << name;
    EXPECT_TRUE(ValidateRecipe(*recipe).ok()) << name;
    Result<Recipe> parsed = ParseRecipeJson(CanonicalJson(*recipe));
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    EXPECT_EQ(CanonicalJson(*parsed), CanonicalJson(*recipe));
    ids.insert(RecipeId(*recipe));
    EXPECT_EQ(IsDigestRecipe(*recipe), name.rfind("exlsh", 0) == 0) << name;
  }
  EXPECT_EQ(ids.size(), all.size());
}

TEST(RecipeTest, ExLshPresetsAreExLshsDefaults) {
  Recipe words = *PresetRecipe("exlsh");
  EXPECT_EQ(words.normalization.kind, NormalizerKind::kAsciiWord);
  EXPECT_EQ(words.tokenizer, TokenizerKind::kWhitespace);
  EXPECT_EQ(words.hash, FeatureHashKind::kMd5);
  EXPECT_EQ(words.simhash.bits, 128);
  EXPECT_EQ(words.simhash.shingle_width, 3);
  EXPECT_EQ(words.simhash.tie, SimHashTieRule::kZero);
  EXPECT_EQ(PresetRecipe("exlsh-chars")->tokenizer, TokenizerKind::kGrapheme);
  // Frozen, like the other presets' forms.
  EXPECT_EQ(CanonicalJson(words),
            "{\"format\":\"neardup-recipe\",\"version\":1,\"normalize\":\"ascii_word\","
            "\"tokenizer\":\"whitespace\",\"stopwords\":\"none\",\"hash\":\"md5\",\"seed\":0,"
            "\"simhash\":{\"bits\":128,\"shingle_width\":3,\"tie\":\"zero\"},\"minhash\":{"
            "\"num_hashes\":128,\"shingle_width\":5},\"chunks\":{\"shingle_width\":5,"
            "\"sample_modulus\":1}}");
}

TEST(RecipeTest, NewOptionsParseFromHandWrittenJson) {
  Result<Recipe> recipe = ParseRecipeJson(
      R"({"version": 1, "normalize": "ascii_word", "tokenizer": "grapheme", "hash": "sha256",
          "simhash": {"bits": 256, "shingle_width": 2, "tie": "zero"}})");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  EXPECT_EQ(recipe->normalization.kind, NormalizerKind::kAsciiWord);
  EXPECT_EQ(recipe->tokenizer, TokenizerKind::kGrapheme);
  EXPECT_EQ(recipe->hash, FeatureHashKind::kSha256);
  EXPECT_EQ(recipe->simhash.bits, 256);
  EXPECT_EQ(recipe->simhash.tie, SimHashTieRule::kZero);
  EXPECT_EQ(DigestBits(FeatureHashKind::kSha1), 160);
  EXPECT_EQ(DigestBits(FeatureHashKind::kXxh3), 0);
  // The default tie rule, written out, is the same recipe as left out.
  Result<Recipe> one = ParseRecipeJson(R"({"version": 1, "simhash": {"tie": "one"}})");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(RecipeId(*one), RecipeId(*PresetRecipe("default-v1")));
  // The strict rule alone is a 64-bit recipe of its own.
  Result<Recipe> zero = ParseRecipeJson(R"({"version": 1, "simhash": {"tie": "zero"}})");
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_NE(RecipeId(*zero), RecipeId(*PresetRecipe("default-v1")));
}

TEST(RecipeTest, DigestOptionsAreCheckedWithClearMessages) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"version": 1, "hash": "sha1"})", "simhash.bits (64) must be 160"},
      {R"({"version": 1, "hash": "sha256", "simhash": {"bits": 128}})",
       "simhash.bits (128) must be 256, the width of hash (\"sha256\")"},
      {R"({"version": 1, "hash": "md5", "seed": 3, "simhash": {"bits": 128}})",
       "seed (3) must be 0 with hash (\"md5\")"},
      {R"({"version": 1, "normalize": "ascii_word"})", "needs a digest hash"},
      {R"({"version": 1, "tokenizer": "grapheme"})", "needs a digest hash"},
      {R"({"version": 1, "normalize": "nfc"})", "normalize (\"nfc\") must be \"ascii_word\""},
      {R"({"version": 1, "simhash": {"tie": "half"}})", "simhash.tie (\"half\")"},
      {R"({"version": 1, "simhash": {"tie": 0}})", "simhash.tie"},
      {R"({"version": 1, "simhash": {"width": 3}})", "unknown key \"width\" in simhash"},
  };
  for (const Case& c : cases) {
    Result<Recipe> recipe = ParseRecipeJson(c.json);
    ASSERT_FALSE(recipe.ok()) << c.json;
    EXPECT_THAT(recipe.status().message(), HasSubstr(c.message)) << c.json;
  }
}

}  // namespace
}  // namespace neardup
