#include "neardup/near_duplicates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <string>
#include <vector>

#include "neardup/similarity.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::HasSubstr;

// A corpus of random "word" documents with planted near-duplicates: every
// fifth document is an edited copy of an earlier one (edit rates 0-8%).
std::vector<std::string> PlantedCorpus(size_t count, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  auto word = [&] { return "w" + std::to_string(rng.Next() % 3000); };
  std::vector<std::string> texts;
  for (size_t i = 0; i < count; ++i) {
    std::string text;
    if (i % 5 == 4) {
      const std::string& source = texts[rng.Next() % i];
      int rate_percent = static_cast<int>(rng.Next() % 9);
      size_t start = 0;
      while (start < source.size()) {
        size_t end = source.find(' ', start);
        if (end == std::string::npos) end = source.size();
        std::string token = source.substr(start, end - start);
        if (static_cast<int>(rng.Next() % 100) < rate_percent) token = word();
        if (!text.empty()) text += ' ';
        text += token;
        start = end + 1;
      }
    } else if (i % 37 == 36) {
      text = "";  // empty documents are never paired
    } else {
      size_t length = 60 + rng.Next() % 200;
      for (size_t w = 0; w < length; ++w) text += word() + " ";
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

std::vector<Fingerprint> Fingerprints(const std::vector<std::string>& texts, const Recipe& recipe,
                                      const NearDuplicateOptions& options) {
  auto fingerprinter = std::move(CreateCpuFingerprinter(RecipeForNearDuplicates(recipe, options),
                                                        SketchesForNearDuplicates(options)))
                           .value();
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<Fingerprint> out;
  NEARDUP_CHECK(fingerprinter->ComputeBatch(views, &out).ok());
  return out;
}

bool SharesABand(const KValueSketch& x, const KValueSketch& y, const LshParams& params) {
  for (int band = 0; band < params.num_bands; ++band) {
    bool equal = true;
    for (int row = 0; row < params.rows_per_band; ++row) {
      int i = band * params.rows_per_band + row;
      equal = equal && x.values[i] == y.values[i];
    }
    if (equal) return true;
  }
  return false;
}

TEST(NearDuplicatesTest, SimHashPairsEqualALinearScan) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedCorpus(600, 1);
  for (int max_distance : {2, 3, 5}) {
    NearDuplicateOptions options;
    options.method = NearDuplicateMethod::kSimHash;
    options.max_distance = max_distance;
    // Explicit blocks, and 0 (chosen for the corpus size).
    options.num_blocks = max_distance == 3 ? 0 : max_distance + 3;
    std::vector<Fingerprint> fps = Fingerprints(texts, recipe, options);
    NearDuplicateReport report;
    Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, &report);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    std::vector<SimilarPair> expected;
    for (uint32_t a = 0; a < fps.size(); ++a) {
      for (uint32_t b = a + 1; b < fps.size(); ++b) {
        if (fps[a].num_tokens == 0 || fps[b].num_tokens == 0) continue;
        int d = HammingDistance(fps[a].simhash, fps[b].simhash);
        if (d <= max_distance) expected.push_back(SimilarPair{a, b, 1.0 - d / 64.0, d});
      }
    }
    EXPECT_EQ(*pairs, expected) << "max_distance " << max_distance;
    EXPECT_GT(expected.size(), 20u);  // the planted copies with few edits
    EXPECT_EQ(report.pairs, expected.size());
    size_t empty = 0;
    for (const Fingerprint& fp : fps) empty += fp.num_tokens == 0;
    EXPECT_EQ(report.empty_documents, empty);
    EXPECT_GT(empty, 10u);
  }
}

TEST(NearDuplicatesTest, MinHashPairsEqualBandingPlusVerificationByBruteForce) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedCorpus(600, 2);
  for (double threshold : {0.5, 0.8}) {
    NearDuplicateOptions options;
    options.threshold = threshold;
    options.verify_exact = false;
    std::vector<Fingerprint> fps = Fingerprints(texts, recipe, options);
    NearDuplicateReport report;
    Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, &report);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    std::vector<SimilarPair> expected;
    for (uint32_t a = 0; a < fps.size(); ++a) {
      for (uint32_t b = a + 1; b < fps.size(); ++b) {
        if (fps[a].num_tokens == 0 || fps[b].num_tokens == 0) continue;
        if (!SharesABand(fps[a].kvalue_minhash, fps[b].kvalue_minhash, report.lsh.params)) continue;
        double estimate = *EstimateJaccard(fps[a].minhash, fps[b].minhash);
        if (estimate >= threshold) expected.push_back(SimilarPair{a, b, estimate, -1});
      }
    }
    EXPECT_EQ(*pairs, expected) << "threshold " << threshold;
    EXPECT_GT(expected.size(), 30u);
  }
}

TEST(NearDuplicatesTest, ExactVerificationReportsExactJaccard) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedCorpus(400, 3);
  NearDuplicateOptions options;
  options.threshold = 0.7;
  options.verify_exact = true;
  std::vector<Fingerprint> fps = Fingerprints(texts, recipe, options);
  NearDuplicateReport report;
  Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, &report);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_GT(pairs->size(), 20u);
  EXPECT_GE(report.exact_checks, pairs->size());
  for (const SimilarPair& pair : *pairs) {
    double exact = ExactJaccard(fps[pair.a].chunks, fps[pair.b].chunks);
    EXPECT_EQ(pair.similarity, exact);
    EXPECT_GE(exact, 0.7);
  }
  // Every candidate pair whose estimate and exact Jaccard both reach the
  // threshold is found (exact verification only adds pairs the estimate
  // missed).
  for (uint32_t a = 0; a < fps.size(); ++a) {
    for (uint32_t b = a + 1; b < fps.size(); ++b) {
      if (fps[a].num_tokens == 0 || fps[b].num_tokens == 0) continue;
      if (!SharesABand(fps[a].kvalue_minhash, fps[b].kvalue_minhash, report.lsh.params)) continue;
      double exact = ExactJaccard(fps[a].chunks, fps[b].chunks);
      if (*EstimateJaccard(fps[a].minhash, fps[b].minhash) >= 0.7 && exact >= 0.7) {
        EXPECT_TRUE(std::binary_search(pairs->begin(), pairs->end(), SimilarPair{a, b, exact, -1},
                                       [](const SimilarPair& x, const SimilarPair& y) {
                                         return x.a != y.a ? x.a < y.a : x.b < y.b;
                                       }))
            << a << " " << b;
      }
    }
  }
}

TEST(NearDuplicatesTest, SameResultWhateverTheThreadCount) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedCorpus(500, 4);
  NearDuplicateOptions options;
  std::vector<Fingerprint> fps = Fingerprints(texts, recipe, options);
  std::vector<SimilarPair> all = *FindNearDuplicatePairs(fps, recipe, options);
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  EXPECT_EQ(*FindNearDuplicatePairs(fps, recipe, options), all);
}

TEST(NearDuplicatesTest, BadOptionsAreErrors) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<Fingerprint> none;
  NearDuplicateOptions simhash;
  simhash.method = NearDuplicateMethod::kSimHash;
  simhash.max_distance = 7;
  simhash.num_blocks = 6;
  Result<std::vector<SimilarPair>> bad = FindNearDuplicatePairs(none, recipe, simhash);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("max_distance (7)"));
  NearDuplicateOptions minhash;
  minhash.threshold = 1.5;
  EXPECT_FALSE(FindNearDuplicatePairs(none, recipe, minhash).ok());
  EXPECT_FALSE(ParseNearDuplicateMethod("tfidf").ok());
}

}  // namespace
}  // namespace neardup
