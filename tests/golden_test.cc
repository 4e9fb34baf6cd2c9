// Golden vectors: the fingerprints of a fixed set of texts under every preset
// (and variants covering every hash function, a seed and 128-bit SimHash),
// compared exactly with tests/golden/fingerprints_v<version>.jsonl.
//
// A difference means fingerprints moved: stored indexes would silently stop
// matching. That is allowed only together with a kRecipeFormatVersion bump;
// then regenerate with
//   NEARDUP_UPDATE_GOLDEN=1 build/release/tests/golden_test
// and commit the new file beside the old one.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "neardup/fingerprinter.h"
#include "util/json_writer.h"
#include "util/mix.h"

namespace neardup {
namespace {

struct GoldenText {
  const char* id;
  std::string text;
};

std::string LongText() {
  // 20,000 seeded words (about 150 KB) over a 2,000-word vocabulary.
  internal::SplitMix64 rng(20261122);
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    uint64_t word = rng.Next() % 2000;
    text.append("w");
    text.append(std::to_string(word));
    text.append(i % 17 == 16 ? ". " : " ");
  }
  return text;
}

std::vector<GoldenText> Texts() {
  return {
      {"ascii", "The quick brown fox jumps over the lazy dog. The dog sleeps in the sun."},
      {"paper", "A school is a school if it has students and teachers"},
      {"accented_latin",
       "\xc3\x87\xc3\xa0 et l\xc3\xa0, les \xc3\xa9l\xc3\xa8ves d\xc3\xa9j\xc3\xa0 partis; "
       "Stra\xc3\x9f"
       "e, na\xc3\xafve fa\xc3\xa7"
       "ade, cr\xc3\xa8me br\xc3\xbbl\xc3\xa9"
       "e."},
      {"greek",
       "\xce\x97 \xce\xb3\xcf\x81\xce\xae\xce\xb3\xce\xbf\xcf\x81\xce\xb7 \xce\xb1\xce\xbb\xce\xb5"
       "\xcf\x80\xce\xbf\xcf\x8d \xcf\x80\xce\xb7\xce\xb4\xce\xac. "
       "\xce\x9f\xce\x94\xce\x9f\xce\xa3 "
       "\xce\xbf\xce\xb4\xcf\x8c\xcf\x82"},
      {"cjk",
       "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf\xe6\x97\xa5\xe6\x9c\xac\xe3\x81\xae\xe9\xa6\x96\xe9"
       "\x83\xbd\xe3\x81\xa7\xe3\x81\x99\xe3\x80\x82 \xea\xb0\x80\xeb\x82\x98\xeb\x8b\xa4 "
       "\xe5\x8c\x97\xe4\xba\xac"},
      {"emoji",
       "I love pizza \xf0\x9f\x8d\x95\xf0\x9f\x8d\x95 and sushi \xf0\x9f\x8d\xa3! "
       "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd family \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9"},
      {"mixed",
       "R\xc3\xa9sum\xc3\xa9: na\xc3\xafve \xe6\x9d\xb1\xe4\xba\xac caf\xc3\xa9 "
       "\xce\x91\xce\x92\xce\x93 123 \xef\xac\x81nance \xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3"},
      {"invalid_utf8", "bad \xff\xfe bytes \xc3 and \xed\xa0\x80 surrogate \xf4\x90\x80\x80 end"},
      {"empty", ""},
      {"one_word", "Hello"},
      {"long", LongText()},
  };
}

struct GoldenRecipe {
  std::string name;
  Recipe recipe;
};

std::vector<GoldenRecipe> Recipes() {
  std::vector<GoldenRecipe> recipes;
  for (const std::string& name : PresetNames()) recipes.push_back({name, *PresetRecipe(name)});
  Recipe wide = *PresetRecipe("default");
  wide.simhash.bits = 128;
  recipes.push_back({"default+simhash128", wide});
  Recipe fnv = *PresetRecipe("default");
  fnv.hash = FeatureHashKind::kFnv1a;
  fnv.seed = 42;
  recipes.push_back({"default+fnv1a+seed42", fnv});
  Recipe plain = *PresetRecipe("default");
  plain.normalization.nfkc = false;
  plain.normalization.case_fold = false;
  plain.normalization.remove_punctuation = true;
  plain.stopwords = StopwordsKind::kEnglish;
  plain.seed = 7;
  recipes.push_back({"default+raw+punct+english+seed7", plain});
  return recipes;
}

template <typename T>
void AppendDigest(std::string* out, const std::vector<T>& values) {
  out->append("{\"size\":");
  out->append(std::to_string(values.size()));
  out->append(",\"first\":[");
  for (size_t i = 0; i < values.size() && i < 3; ++i) {
    if (i > 0) out->push_back(',');
    out->push_back('"');
    internal::AppendHex64(out, values[i]);
    out->push_back('"');
  }
  out->append("],\"xxh3\":\"");
  internal::AppendHex64(out, XXH3_64bits(values.data(), values.size() * sizeof(T)));
  out->append("\"}");
}

std::string GoldenLines() {
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  std::string lines;
  for (const GoldenRecipe& golden : Recipes()) {
    auto fingerprinter = std::move(CreateCpuFingerprinter(golden.recipe, all)).value();
    for (const GoldenText& text : Texts()) {
      Fingerprint fp;
      NEARDUP_CHECK(fingerprinter->Compute(text.text, &fp).ok());
      std::string line = "{\"recipe\":\"";
      line.append(golden.name);
      line.append("\",\"recipe_id\":\"");
      line.append(RecipeId(golden.recipe));
      line.append("\",\"text\":\"");
      line.append(text.id);
      line.append("\",\"tokens\":");
      line.append(std::to_string(fp.num_tokens));
      line.append(",\"simhash\":\"");
      if (golden.recipe.simhash.bits == 128) {
        line += internal::Hex64(fp.simhash128.high) + internal::Hex64(fp.simhash128.low);
      } else {
        line += internal::Hex64(fp.simhash);
      }
      line += "\",\"minhash\":";
      AppendDigest(&line, fp.minhash.values);
      line += ",\"kminhash\":";
      if (fp.kvalue_minhash.empty) {
        line += "\"empty\"";
      } else {
        AppendDigest(&line, fp.kvalue_minhash.values);
      }
      line += ",\"chunks\":";
      AppendDigest(&line, fp.chunks);
      lines += line + "}\n";
    }
  }
  return lines;
}

std::string GoldenPath() {
  return std::string(NEARDUP_SOURCE_DIR) + "/tests/golden/fingerprints_v" +
         std::to_string(kRecipeFormatVersion) + ".jsonl";
}

TEST(GoldenTest, FingerprintsMatchTheCommittedVectors) {
  std::string actual = GoldenLines();
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
  int line_number = 0;
  while (true) {
    bool has_want = static_cast<bool>(std::getline(expected_lines, want));
    bool has_got = static_cast<bool>(std::getline(actual_lines, got));
    ++line_number;
    if (!has_want && !has_got) break;
    ASSERT_EQ(has_want, has_got) << "line count differs at line " << line_number;
    ASSERT_EQ(got, want) << "golden line " << line_number << " differs";
  }
}

TEST(GoldenTest, PaperTextHasThePaperSimHash) {
  // The golden file must itself hold the published value.
  std::ifstream in(GoldenPath());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(
      text.str().find("\"recipe\":\"paper\",\"recipe_id\":\"" + RecipeId(*PresetRecipe("paper")) +
                      "\",\"text\":\"paper\",\"tokens\":4,\"simhash\":\"3aa423c558350ff4\""),
      std::string::npos);
}

}  // namespace
}  // namespace neardup
