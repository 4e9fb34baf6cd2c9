// Near-duplicates in scripts written without spaces (issue 20): the version 2
// `default` recipe finds copies of Japanese, Chinese and Thai documents with
// 1 in 100 characters changed; version 1 (a whole clause one token) misses
// most of them.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "text/utf8.h"
#include "util/mix.h"

namespace neardup {
namespace {

// A document of `length` code points drawn from `letters`, in clauses of 20
// to 60 letters ended by `stop` (as Japanese is written: no spaces).
std::u32string RandomScriptText(internal::SplitMix64* rng, const std::u32string& letters,
                                size_t length, char32_t stop) {
  std::u32string text;
  size_t clause = 0;
  const size_t clause_length = 20 + rng->Next() % 41;
  while (text.size() < length) {
    text.push_back(letters[rng->Next() % letters.size()]);
    if (++clause == clause_length) {
      text.push_back(stop);
      clause = 0;
    }
  }
  return text;
}

std::string Utf8(const std::u32string& text) {
  std::string out;
  for (char32_t c : text) internal::AppendUtf8(c, &out);
  return out;
}

// Sources and their copies with 1 in 100 letters replaced: documents 2i and
// 2i + 1.
std::vector<std::string> Corpus(const std::u32string& letters, char32_t stop, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  std::vector<std::string> texts;
  for (int i = 0; i < 30; ++i) {
    const std::u32string source = RandomScriptText(&rng, letters, 1500, stop);
    std::u32string copy = source;
    for (char32_t& c : copy) {
      if (c != stop && rng.Next() % 100 == 0) c = letters[rng.Next() % letters.size()];
    }
    texts.push_back(Utf8(source));
    texts.push_back(Utf8(copy));
  }
  return texts;
}

// How many of the planted (source, copy) pairs FindNearDuplicatePairs finds
// at Jaccard 0.8 with `preset`.
size_t PlantedPairsFound(const std::vector<std::string>& texts, const std::string& preset) {
  const Recipe recipe = *PresetRecipe(preset);
  NearDuplicateOptions options;
  options.threshold = 0.8;
  auto fingerprinter = std::move(CreateCpuFingerprinter(RecipeForNearDuplicates(recipe, options),
                                                        SketchesForNearDuplicates(options)))
                           .value();
  std::vector<Fingerprint> fps(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_TRUE(fingerprinter->Compute(texts[i], &fps[i]).ok());
  }
  Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, nullptr);
  EXPECT_TRUE(pairs.ok()) << pairs.status();
  size_t found = 0;
  for (const SimilarPair& pair : *pairs) found += pair.a % 2 == 0 && pair.b == pair.a + 1;
  return found;
}

std::u32string Range(char32_t first, char32_t last) {
  std::u32string out;
  for (char32_t c = first; c <= last; ++c) out.push_back(c);
  return out;
}

TEST(ScriptNearDuplicatesTest, JapaneseCopiesAreFoundByVersion2NotVersion1) {
  // Kanji, Hiragana and a few Katakana.
  const std::u32string letters = Range(0x4E00, 0x4EFF) + Range(0x3041, 0x3093) + U"カタナ";
  const std::vector<std::string> texts = Corpus(letters, U'。', 20);
  const size_t v2 = PlantedPairsFound(texts, "default");
  const size_t v1 = PlantedPairsFound(texts, "default-v1");
  EXPECT_GE(v2, 29u) << "of 30";
  EXPECT_LE(v1, 10u) << "of 30";
}

TEST(ScriptNearDuplicatesTest, ChineseAndThaiCopiesAreFound) {
  const std::vector<std::string> chinese = Corpus(Range(0x4E00, 0x51FF), U'，', 21);
  EXPECT_GE(PlantedPairsFound(chinese, "default"), 29u);
  // Thai consonants (one token each; no marks here).
  const std::vector<std::string> thai = Corpus(Range(0x0E01, 0x0E2E), U' ', 22);
  EXPECT_GE(PlantedPairsFound(thai, "default"), 29u);
}

}  // namespace
}  // namespace neardup
