// Golden vectors of the digest route (recipes whose feature hash is MD5,
// SHA-1 or SHA-256: the `exlsh` presets and variants), compared exactly with
// tests/golden/digest_fingerprints_v<version>.jsonl. The 64-bit route's
// vectors are golden_test.cc's.
//
// A difference means stored digest-route SimHashes moved; allowed only with
// a kRecipeFormatVersion bump. Regenerate with
//   NEARDUP_UPDATE_GOLDEN=1 build/release/tests/digest_golden_test
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "neardup/fingerprinter.h"
#include "sketch/digest_simhash.h"
#include "util/base64.h"
#include "util/mix.h"

namespace neardup {
namespace {

struct GoldenText {
  const char* id;
  std::string text;
};

std::string LongText() {
  // 5,000 seeded words over a 300-word vocabulary, with punctuation.
  internal::SplitMix64 rng(20261126);
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text.append(i % 3 == 0 ? "W" : "w");
    text.append(std::to_string(rng.Next() % 300));
    text.append(i % 11 == 10 ? ", " : " ");
  }
  return text;
}

std::vector<GoldenText> Texts() {
  return {
      {"lorem", "Lorem ipsum dolor sit amet"},
      {"lorem4", "lorem ipsum dolor sit"},
      {"username", "username"},
      {"punctuated", "  Hello, World -- it's snake_case_42! "},
      {"accented_latin",
       "\xc3\x87\xc3\xa0 et l\xc3\xa0, les \xc3\xa9l\xc3\xa8ves d\xc3\xa9j\xc3\xa0 partis; "
       "Stra\xc3\x9f"
       "e, na\xc3\xafve fa\xc3\xa7"
       "ade"},
      {"combining_and_dotted_i", "cafe\xcc\x81 \xc4\xb0stanbul \xe2\x84\xaa"},
      {"emoji_and_flags",
       "I love pizza \xf0\x9f\x8d\x95 \xf0\x9f\x87\xab\xf0\x9f\x87\xb7 family "
       "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9"},
      {"invalid_utf8", "bad \xff\xfe bytes \xc3 and \xed\xa0\x80 surrogate end"},
      {"empty", ""},
      {"two_words", "two words"},
      {"long", LongText()},
  };
}

struct GoldenRecipe {
  std::string name;
  Recipe recipe;
};

std::vector<GoldenRecipe> Recipes() {
  std::vector<GoldenRecipe> recipes;
  for (const std::string& name : DigestPresetNames()) {
    recipes.push_back({name, *PresetRecipe(name)});
  }
  Recipe sha1 = *PresetRecipe("exlsh");
  sha1.hash = FeatureHashKind::kSha1;
  sha1.simhash.bits = 160;
  sha1.simhash.shingle_width = 2;
  recipes.push_back({"exlsh+sha1+w2", sha1});
  Recipe sha256 = *PresetRecipe("exlsh");
  sha256.hash = FeatureHashKind::kSha256;
  sha256.simhash.bits = 256;
  sha256.simhash.shingle_width = 1;
  recipes.push_back({"exlsh+sha256+w1", sha256});
  // The Unicode normalizer and word tokens on the digest route, the paper's
  // tie rule, English stopwords (version 1's word tokens: every recipe of
  // this file is a version 1 recipe).
  Recipe unicode = *PresetRecipe("default-v1");
  unicode.hash = FeatureHashKind::kMd5;
  unicode.simhash.bits = 128;
  unicode.stopwords = StopwordsKind::kEnglish;
  recipes.push_back({"default+md5+english", unicode});
  Recipe graphemes = unicode;
  graphemes.stopwords = StopwordsKind::kNone;
  graphemes.tokenizer = TokenizerKind::kGrapheme;
  graphemes.hash = FeatureHashKind::kSha1;
  graphemes.simhash.bits = 160;
  graphemes.simhash.tie = SimHashTieRule::kZero;
  recipes.push_back({"default+grapheme+sha1+strict", graphemes});
  return recipes;
}

std::string GoldenLines() {
  SketchSelection simhash;
  simhash.simhash = true;
  std::string lines;
  for (const GoldenRecipe& golden : Recipes()) {
    auto fingerprinter = std::move(CreateCpuFingerprinter(golden.recipe, simhash)).value();
    for (const GoldenText& text : Texts()) {
      Fingerprint fp;
      NEARDUP_CHECK(fingerprinter->Compute(text.text, &fp).ok());
      const std::vector<uint8_t> bytes = internal::WideSimHashBytes(fp.simhash_wide);
      std::string line = "{\"recipe\":\"" + golden.name + "\",\"recipe_id\":\"" +
                         RecipeId(golden.recipe) + "\",\"text\":\"" + text.id +
                         "\",\"tokens\":" + std::to_string(fp.num_tokens) +
                         ",\"shingles\":" + std::to_string(fp.num_shingles) +
                         ",\"invalid_utf8\":" + std::to_string(fp.invalid_utf8_sequences) +
                         ",\"simhash_base64\":\"";
      internal::AppendBase64(&line, bytes);
      lines += line + "\"}\n";
    }
  }
  return lines;
}

std::string GoldenPath() {
  // Named by the recipe version of the recipes it holds (all version 1).
  return std::string(NEARDUP_SOURCE_DIR) + "/tests/golden/digest_fingerprints_v1.jsonl";
}

TEST(DigestGoldenTest, FingerprintsMatchTheCommittedVectors) {
  const std::string actual = GoldenLines();
  const char* update = std::getenv("NEARDUP_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(GoldenPath(), std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << GoldenPath();
  }
  std::ifstream in(GoldenPath(), std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing " << GoldenPath();
  std::stringstream expected;
  expected << in.rdbuf();
  std::istringstream expected_lines(expected.str());
  std::istringstream actual_lines(actual);
  std::string want;
  std::string got;
  for (int line_number = 1;; ++line_number) {
    const bool has_want = static_cast<bool>(std::getline(expected_lines, want));
    const bool has_got = static_cast<bool>(std::getline(actual_lines, got));
    if (!has_want && !has_got) break;
    ASSERT_EQ(has_want, has_got) << "line count differs at line " << line_number;
    ASSERT_EQ(got, want) << "golden line " << line_number << " differs";
  }
}

TEST(DigestGoldenTest, GoldenFileHoldsExLshsPublishedHashes) {
  std::ifstream in(GoldenPath());
  std::stringstream text;
  text << in.rdbuf();
  for (const char* row :
       {"\"recipe\":\"exlsh\",\"recipe_id\":\"%\",\"text\":\"lorem\",\"tokens\":5,\"shingles\":3,"
        "\"invalid_utf8\":0,\"simhash_base64\":\"uX05itKaghA0gQHCwDCIFg==\"",
        "\"recipe\":\"exlsh\",\"recipe_id\":\"%\",\"text\":\"lorem4\",\"tokens\":4,\"shingles\":2,"
        "\"invalid_utf8\":0,\"simhash_base64\":\"OEAhAhKSgBAwgQEAgCCAEg==\""}) {
    std::string want(row);
    want.replace(want.find('%'), 1, RecipeId(*PresetRecipe("exlsh")));
    EXPECT_NE(text.str().find(want), std::string::npos) << want;
  }
  std::string chars = "\"recipe\":\"exlsh-chars\",\"recipe_id\":\"" +
                      RecipeId(*PresetRecipe("exlsh-chars")) +
                      "\",\"text\":\"username\",\"tokens\":8,\"shingles\":6,\"invalid_utf8\":0,"
                      "\"simhash_base64\":\"FPIBaaBQGlKKARlqA9lb1g==\"";
  EXPECT_NE(text.str().find(chars), std::string::npos) << chars;
}

}  // namespace
}  // namespace neardup
