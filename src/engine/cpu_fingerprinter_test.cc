#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <string>
#include <vector>

#include "neardup/fingerprinter.h"
#include "neardup/similarity.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::HasSubstr;

SketchSelection All() {
  SketchSelection selection;
  selection.simhash = true;
  selection.minhash = true;
  selection.kvalue_minhash = true;
  selection.chunks = true;
  return selection;
}

std::unique_ptr<Fingerprinter> Make(const Recipe& recipe,
                                    const SketchSelection& selection = All()) {
  Result<std::unique_ptr<Fingerprinter>> fingerprinter = CreateCpuFingerprinter(recipe, selection);
  NEARDUP_CHECK(fingerprinter.ok()) << fingerprinter.status();
  return std::move(fingerprinter).value();
}

Fingerprint Compute(const Fingerprinter& fingerprinter, std::string_view text) {
  Fingerprint out;
  NEARDUP_CHECK(fingerprinter.Compute(text, &out).ok());
  return out;
}

void ExpectSameFingerprint(const Fingerprint& a, const Fingerprint& b) {
  EXPECT_EQ(a.simhash, b.simhash);
  EXPECT_EQ(a.simhash128, b.simhash128);
  EXPECT_EQ(a.minhash.values, b.minhash.values);
  EXPECT_EQ(a.kvalue_minhash.values, b.kvalue_minhash.values);
  EXPECT_EQ(a.chunks, b.chunks);
  EXPECT_EQ(a.num_tokens, b.num_tokens);
}

// A seeded English-like text: words drawn from a small vocabulary.
std::vector<std::string> RandomWords(uint64_t seed, size_t count) {
  static const char* const kVocabulary[] = {
      "river",   "stone",  "market", "window",  "garden",  "letter", "winter", "silver",
      "forest",  "engine", "harbor", "valley",  "candle",  "mirror", "ladder", "pocket",
      "thunder", "meadow", "bridge", "lantern", "orchard", "saddle", "kettle", "compass",
      "velvet",  "anchor", "quarry", "timber",  "beacon",  "canyon", "fabric", "glacier",
      "island",  "jungle", "kernel", "lagoon"};
  constexpr size_t kSize = sizeof(kVocabulary) / sizeof(kVocabulary[0]);
  internal::SplitMix64 rng(seed);
  std::vector<std::string> words;
  for (size_t i = 0; i < count; ++i) {
    // Append a number so that shingles rarely repeat by chance.
    words.push_back(std::string(kVocabulary[rng.Next() % kSize]) + std::to_string(rng.Next() % 50));
  }
  return words;
}

std::string Join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) {
    if (!text.empty()) text += ' ';
    text += w;
  }
  return text;
}

// Replaces a fraction `rate` of the words by new ones.
std::vector<std::string> Edit(std::vector<std::string> words, double rate, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  for (std::string& word : words) {
    if (static_cast<double>(rng.Next() % 1000000) < rate * 1e6) {
      word = "edit" + std::to_string(rng.Next() % 100000);
    }
  }
  return words;
}

TEST(CpuFingerprinterTest, ReproducesTheSimHashPaperExample) {
  auto fingerprinter = Make(*PresetRecipe("paper"));
  Fingerprint fp = Compute(*fingerprinter, "A school is a school if it has students and teachers");
  EXPECT_EQ(fp.simhash, 0x3aa423c558350ff4ULL);
  EXPECT_EQ(fp.num_tokens, 4u);  // school, school, students, teachers
}

TEST(CpuFingerprinterTest, PaperExampleIgnoresCaseAndPunctuation) {
  auto fingerprinter = Make(*PresetRecipe("paper"));
  Fingerprint fp =
      Compute(*fingerprinter, "A SCHOOL is a school, if it has... students and teachers!");
  EXPECT_EQ(fp.simhash, 0x3aa423c558350ff4ULL);
}

TEST(CpuFingerprinterTest, IdenticalTextsGiveIdenticalFingerprints) {
  for (const std::string& preset : PresetNames()) {
    auto fingerprinter = Make(*PresetRecipe(preset));
    std::string text = Join(RandomWords(7, 300));
    ExpectSameFingerprint(Compute(*fingerprinter, text), Compute(*fingerprinter, text));
  }
}

TEST(CpuFingerprinterTest, ComposedAndDecomposedAccentsAreTheSameToken) {
  auto fingerprinter = Make(*PresetRecipe("default"));
  Fingerprint upper = Compute(*fingerprinter, "Le CAF\xc3\x89 de la gare");        // U+00C9
  Fingerprint decomposed = Compute(*fingerprinter, "le cafe\xcc\x81 de la gare");  // e + U+0301
  Fingerprint lower = Compute(*fingerprinter, "le caf\xc3\xa9 de la gare");        // U+00E9
  ExpectSameFingerprint(upper, lower);
  ExpectSameFingerprint(decomposed, lower);
  Fingerprint other = Compute(*fingerprinter, "le cafe de la gare");
  EXPECT_NE(other.simhash, lower.simhash);
}

TEST(CpuFingerprinterTest, EmptyDocumentHasNoFeatures) {
  auto fingerprinter = Make(*PresetRecipe("default"));
  for (std::string_view text :
       {std::string_view(""), std::string_view(" \n\t "), std::string_view("!!! ... ???")}) {
    Fingerprint fp = Compute(*fingerprinter, text);
    EXPECT_EQ(fp.num_tokens, 0u);
    EXPECT_EQ(fp.simhash, ~0ULL);  // every sum is 0, and the tie rule gives 1
    EXPECT_TRUE(fp.minhash.values.empty());
    EXPECT_TRUE(fp.kvalue_minhash.empty);
    EXPECT_TRUE(fp.chunks.empty());
    EXPECT_EQ(*EstimateJaccard(fp.minhash, fp.minhash), 0.0);
  }
}

TEST(CpuFingerprinterTest, InvalidUtf8IsCountedNotFatal) {
  auto fingerprinter = Make(*PresetRecipe("default"));
  Fingerprint fp = Compute(*fingerprinter, "valid words \xff\xfe then \xc3 more words here");
  EXPECT_GT(fp.invalid_utf8_sequences, 0u);
  EXPECT_GT(fp.num_tokens, 0u);
  Fingerprint binary = Compute(*fingerprinter, std::string("\x00\x01\x02\x80\x90\xa0", 6));
  EXPECT_GT(binary.invalid_utf8_sequences, 0u);
}

TEST(CpuFingerprinterTest, SimHashDistanceGrowsWithEditRate) {
  auto fingerprinter = Make(*PresetRecipe("default"));
  const double rates[] = {0.0, 0.02, 0.05, 0.1, 0.2, 0.4};
  std::vector<double> mean_distance;
  for (double rate : rates) {
    double total = 0;
    constexpr int kTrials = 24;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<std::string> words = RandomWords(100 + trial, 400);
      Fingerprint a = Compute(*fingerprinter, Join(words));
      Fingerprint b = Compute(*fingerprinter, Join(Edit(words, rate, 900 + trial)));
      total += HammingDistance(a.simhash, b.simhash);
    }
    mean_distance.push_back(total / kTrials);
  }
  EXPECT_EQ(mean_distance[0], 0.0);
  for (size_t i = 1; i < mean_distance.size(); ++i) {
    EXPECT_GT(mean_distance[i], mean_distance[i - 1]) << "rate " << rates[i];
  }
  EXPECT_LT(mean_distance[1], 8.0);       // 2% edits stay near-duplicates
  EXPECT_GT(mean_distance.back(), 16.0);  // 40% edits do not
}

TEST(CpuFingerprinterTest, MinHashEstimatesTrackExactJaccardOfShingles) {
  auto fingerprinter = Make(*PresetRecipe("default"));
  const int k = PresetRecipe("default")->minhash.num_hashes;
  int checked = 0;
  for (double rate : {0.01, 0.03, 0.08, 0.15, 0.3}) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<std::string> words = RandomWords(300 + trial, 1500);
      Fingerprint a = Compute(*fingerprinter, Join(words));
      Fingerprint b = Compute(*fingerprinter, Join(Edit(words, rate, 700 + trial)));
      // The chunk set holds every 5-shingle id (same width as MinHash).
      double exact = ExactJaccard(a.chunks, b.chunks);
      double standard_error = std::sqrt(exact * (1 - exact) / k);
      double tolerance = 3 * standard_error + 1e-9;
      EXPECT_NEAR(*EstimateJaccard(a.minhash, b.minhash), exact, tolerance)
          << "rate " << rate << " trial " << trial;
      EXPECT_NEAR(*EstimateJaccard(a.kvalue_minhash, b.kvalue_minhash), exact, tolerance)
          << "rate " << rate << " trial " << trial;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
}

TEST(CpuFingerprinterTest, HighWordOf128BitSimHashIsThe64BitSimHash) {
  Recipe recipe64 = *PresetRecipe("default");
  Recipe recipe128 = recipe64;
  recipe128.simhash.bits = 128;
  SketchSelection simhash_only;
  simhash_only.simhash = true;
  auto fp64 = Make(recipe64, simhash_only);
  auto fp128 = Make(recipe128, simhash_only);
  for (int seed = 0; seed < 10; ++seed) {
    std::string text = Join(RandomWords(seed, 50 + seed * 20));
    Fingerprint a = Compute(*fp64, text);
    Fingerprint b = Compute(*fp128, text);
    EXPECT_EQ(a.simhash, b.simhash128.high);
    EXPECT_EQ(b.simhash, b.simhash128.high);
  }
}

TEST(CpuFingerprinterTest, BatchEqualsOneByOneWhateverTheThreadCount) {
  auto fingerprinter = Make(*PresetRecipe("default"));
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back(Join(RandomWords(i, 20 + i % 50)));
  std::vector<std::string_view> views(texts.begin(), texts.end());

  std::vector<Fingerprint> parallel;
  ASSERT_TRUE(fingerprinter->ComputeBatch(views, &parallel).ok());
  std::vector<Fingerprint> single;
  {
    tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
    ASSERT_TRUE(fingerprinter->ComputeBatch(views, &single).ok());
  }
  ASSERT_EQ(parallel.size(), texts.size());
  ASSERT_EQ(single.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    Fingerprint one = Compute(*fingerprinter, texts[i]);
    ExpectSameFingerprint(parallel[i], one);
    ExpectSameFingerprint(single[i], one);
  }
}

// The sampled chunk set is exactly the full set's IDs with id % 4 == 0 (not
// merely a subset: a batched path that dropped sampled IDs would fail).
TEST(CpuFingerprinterTest, SampledChunksAreTheFullSetsMultiplesOfTheModulus) {
  Recipe all = *PresetRecipe("default");
  Recipe sampled = all;
  sampled.chunks.sample_modulus = 4;
  SketchSelection chunks_only;
  chunks_only.chunks = true;
  std::string text = Join(RandomWords(5, 2000));
  Fingerprint full = Compute(*Make(all, chunks_only), text);
  Fingerprint part = Compute(*Make(sampled, chunks_only), text);
  ASSERT_FALSE(part.chunks.empty());
  EXPECT_LT(part.chunks.size(), full.chunks.size() / 2);
  std::vector<uint32_t> expected;
  for (uint32_t id : full.chunks) {
    if (id % 4 == 0) expected.push_back(id);
  }
  EXPECT_EQ(part.chunks, expected);
}

TEST(CpuFingerprinterTest, RejectsInvalidRecipeAndEmptySelection) {
  Recipe recipe = *PresetRecipe("default");
  recipe.simhash.bits = 32;
  Result<std::unique_ptr<Fingerprinter>> bad = CreateCpuFingerprinter(recipe, All());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("simhash.bits (32)"));
  Result<std::unique_ptr<Fingerprinter>> none =
      CreateCpuFingerprinter(*PresetRecipe("default"), SketchSelection{});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no sketch selected"));
}

}  // namespace
}  // namespace neardup
