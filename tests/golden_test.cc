// Golden vectors: the fingerprints of a fixed set of texts under every preset
// (and variants covering every hash function, a seed and 128-bit SimHash),
// compared exactly with tests/golden/fingerprints_v<version>.jsonl, one file
// per recipe version: each version's recipes must keep giving its vectors.
//
// A difference means fingerprints moved: stored indexes would silently stop
// matching. That is allowed only together with a kRecipeFormatVersion bump;
// then write the new version's file with
//   NEARDUP_UPDATE_GOLDEN=<new version> build/release/tests/golden_test
// and commit it beside the old ones (which are never rewritten).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdlib>
#include <fstream>
#include <map>
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

// Version 2 adds texts in the scripts it segments (text/script_segments.h).
std::vector<GoldenText> TextsV2() {
  std::vector<GoldenText> texts = Texts();
  std::vector<GoldenText> more = {
      {"japanese",
       "東京は日本の首都です。コンピュータのプログラムはneardupで重複を検出します。"
       "ひらがなとカタカナと漢字が混ざった文章、第3章。"},
      {"chinese", "我们的近似重复检测工具可以处理中文文本，不需要空格。这是第二句话。"},
      {"thai_lao_khmer_myanmar", "ภาษาไทยเขียนโดยไม่มีช่องว่างระหว่างคำ ພາສາລາວ ភាសាខ្មែរ မြန်မာဘာသာ"},
      {"cjk_rare",
       "\xe3\x90\x80\xe4\xb6\xb5 \xf0\xa0\x80\x80\xf0\xaa\x9a\xb2 \xef\xa4\x80 "
       "\xef\xbd\xb6\xef\xbe\x80\xef\xbd\xb6\xef\xbe\x85 \xe3\x80\x85 "
       "\xe3\x81\x8b\xe3\x82\x99"},
      {"cjk_invalid_utf8", "漢\xe6\x97字\xe3\x81 か\xff な\xed\xa0\x80カナ\xf0\xa0\x80"},
  };
  texts.insert(texts.end(), more.begin(), more.end());
  return texts;
}

struct GoldenRecipe {
  std::string name;
  Recipe recipe;
};

// The recipes of `version`. Version 1's are labelled as version 1 wrote them
// ("default" is today's `default-v1`).
std::vector<GoldenRecipe> Recipes(int version) {
  std::vector<GoldenRecipe> recipes;
  const std::string base = version == 1 ? "default-v1" : "default";
  recipes.push_back({"default", *PresetRecipe(base)});
  if (version == 1) {
    recipes.push_back({"paper", *PresetRecipe("paper")});
    recipes.push_back({"short", *PresetRecipe("short")});
  }
  Recipe wide = *PresetRecipe(base);
  wide.simhash.bits = 128;
  recipes.push_back({"default+simhash128", wide});
  Recipe fnv = *PresetRecipe(base);
  fnv.hash = FeatureHashKind::kFnv1a;
  fnv.seed = 42;
  recipes.push_back({"default+fnv1a+seed42", fnv});
  Recipe plain = *PresetRecipe(base);
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

// With `flat`, every recipe's texts go through one flat ComputeBatch
// (neardup/fingerprint_batch.h) and each line is written from its document.
std::string GoldenLines(int version, bool flat = false) {
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  std::string lines;
  for (const GoldenRecipe& golden : Recipes(version)) {
    NEARDUP_CHECK(golden.recipe.version == version) << golden.name;
    auto fingerprinter = std::move(CreateCpuFingerprinter(golden.recipe, all)).value();
    const std::vector<GoldenText> texts = version == 1 ? Texts() : TextsV2();
    FingerprintBatch batch;
    if (flat) {
      std::vector<std::string_view> views;
      for (const GoldenText& text : texts) views.push_back(text.text);
      NEARDUP_CHECK(fingerprinter->ComputeBatch(views, &batch).ok());
    }
    for (size_t t = 0; t < texts.size(); ++t) {
      const GoldenText& text = texts[t];
      Fingerprint fp;
      if (flat) {
        batch.CopyTo(t, &fp);
      } else {
        NEARDUP_CHECK(fingerprinter->Compute(text.text, &fp).ok());
      }
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

std::string GoldenPath(int version) {
  return std::string(NEARDUP_SOURCE_DIR) + "/tests/golden/fingerprints_v" +
         std::to_string(version) + ".jsonl";
}

void ExpectGoldenFile(int version, bool flat = false) {
  std::string actual = GoldenLines(version, flat);
  const char* update = std::getenv("NEARDUP_UPDATE_GOLDEN");
  if (!flat && update != nullptr && std::string(update) == std::to_string(version)) {
    std::ofstream(GoldenPath(version), std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << GoldenPath(version);
  }
  std::ifstream in(GoldenPath(version), std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing " << GoldenPath(version);
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

TEST(GoldenTest, Version1RecipesKeepTheirVectors) { ExpectGoldenFile(1); }

TEST(GoldenTest, Version2RecipesMatchTheCommittedVectors) { ExpectGoldenFile(2); }

TEST(GoldenTest, FlatBatchesGiveTheGoldenVectors) {
  for (int version = 1; version <= kRecipeFormatVersion; ++version) {
    SCOPED_TRACE(version);
    ExpectGoldenFile(version, /*flat=*/true);
  }
}

TEST(GoldenTest, EveryVersionHasItsFile) {
  for (int version = 1; version <= kRecipeFormatVersion; ++version) {
    EXPECT_TRUE(std::ifstream(GoldenPath(version)).good()) << GoldenPath(version);
  }
}

TEST(GoldenTest, Version2ChangesNothingForTextWithoutSegmentedScripts) {
  // English, Latin, Greek, emoji: the version 1 and 2 lines agree but for
  // the recipe id; only the texts with Han or kana differ.
  const std::string v1 = GoldenLines(1);
  const std::string v2 = GoldenLines(2);
  auto by_key = [](const std::string& lines) {
    std::map<std::string, std::string> out;
    std::istringstream in(lines);
    for (std::string line; std::getline(in, line);) {
      const size_t id = line.find("\"recipe_id\":\"");
      const size_t text = line.find("\"text\":\"");
      const size_t text_end = line.find('"', text + 8);
      out[line.substr(0, id) + line.substr(text, text_end - text)] = line.substr(text_end);
    }
    return out;
  };
  const std::map<std::string, std::string> old_lines = by_key(v1);
  size_t same = 0;
  for (const auto& [key, rest] : by_key(v2)) {
    auto it = old_lines.find(key);
    if (it == old_lines.end()) continue;  // a text or recipe only version 2 has
    const bool segmented = key.find("\"text\":\"cjk") != std::string::npos ||
                           key.find("\"text\":\"mixed") != std::string::npos;
    if (segmented) {
      EXPECT_NE(rest, it->second) << key;
    } else {
      EXPECT_EQ(rest, it->second) << key;
      ++same;
    }
  }
  EXPECT_EQ(same, 4u * 9u);  // four recipe variants x nine texts
}

TEST(GoldenTest, Version2CutsJapaneseIntoMoreTokensThanVersion1) {
  // The point of version 2, seen in the vectors' token counts: the same
  // Japanese text, many more tokens.
  SketchSelection simhash_only;
  simhash_only.simhash = true;
  auto v1 = std::move(CreateCpuFingerprinter(*PresetRecipe("default-v1"), simhash_only)).value();
  auto v2 = std::move(CreateCpuFingerprinter(*PresetRecipe("default"), simhash_only)).value();
  Fingerprint fp1;
  Fingerprint fp2;
  const std::string text = "東京は日本の首都です。";  // 東 京 は 日 本 の 首 都 で す
  ASSERT_TRUE(v1->Compute(text, &fp1).ok());
  ASSERT_TRUE(v2->Compute(text, &fp2).ok());
  EXPECT_EQ(fp1.num_tokens, 1u);
  EXPECT_EQ(fp2.num_tokens, 10u);
}

TEST(GoldenTest, PaperTextHasThePaperSimHash) {
  // The golden file must itself hold the published value.
  std::ifstream in(GoldenPath(1));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(
      text.str().find("\"recipe\":\"paper\",\"recipe_id\":\"" + RecipeId(*PresetRecipe("paper")) +
                      "\",\"text\":\"paper\",\"tokens\":4,\"simhash\":\"3aa423c558350ff4\""),
      std::string::npos);
}

}  // namespace
}  // namespace neardup
