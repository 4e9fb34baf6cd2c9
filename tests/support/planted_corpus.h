// A seeded corpus of texts with planted near-duplicates, and the batch
// clustering of it: the test data and the oracle shared by the engine's, the
// stream's and the service's tests. Over the public API only, so front ends'
// tests may include it (target neardup_test_support, tests/support/).
//
// Texts are random "words" w0..w2999 (60-259 per text); every fifth text is
// an edited copy of an earlier one (each word replaced with probability
// 0-8%, drawn per copy); every 37th text is empty (never paired). The
// sequence depends only on (count, seed): std::mt19937_64's output is fixed
// by the standard, and no distribution (whose output is not) is used.
#ifndef NEARDUP_TESTS_SUPPORT_PLANTED_CORPUS_H_
#define NEARDUP_TESTS_SUPPORT_PLANTED_CORPUS_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "neardup/status.h"
#include "neardup/stream.h"

namespace neardup::test_support {

inline std::vector<std::string> PlantedTexts(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto word = [&] { return "w" + std::to_string(rng() % 3000); };
  std::vector<std::string> texts;
  texts.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    std::string text;
    if (i % 5 == 4) {
      const std::string& source = texts[rng() % i];
      const int rate_percent = static_cast<int>(rng() % 9);
      size_t start = 0;
      while (start < source.size()) {
        size_t end = source.find(' ', start);
        if (end == std::string::npos) end = source.size();
        std::string token = source.substr(start, end - start);
        if (static_cast<int>(rng() % 100) < rate_percent) token = word();
        if (!text.empty()) text += ' ';
        text += token;
        start = end + 1;
      }
    } else if (i % 37 == 36) {
      text = "";
    } else {
      const size_t length = 60 + rng() % 200;
      for (size_t w = 0; w < length; ++w) text += word() + " ";
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

inline std::string PlantedId(size_t i) { return "doc-" + std::to_string(i); }

// cluster_of of the batch clustering (`neardup clusters --rule ...`) over
// FindNearDuplicatePairs for `texts` in order, with a stream's settings: the
// oracle of a stream's answers.
inline Result<std::vector<uint64_t>> BatchClusters(const std::vector<std::string>& texts,
                                                   const StreamConfig& config, ClusterRule rule) {
  NearDuplicateOptions options;
  options.method = config.method;
  options.threshold = config.threshold;
  options.max_distance = config.max_distance;
  NEARDUP_ASSIGN_OR_RETURN(Recipe recipe, PresetRecipe(config.preset));
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Fingerprinter> fingerprinter,
                           CreateCpuFingerprinter(RecipeForNearDuplicates(recipe, options),
                                                  SketchesForNearDuplicates(options)));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<Fingerprint> fingerprints;
  NEARDUP_RETURN_IF_ERROR(fingerprinter->ComputeBatch(views, &fingerprints));
  NEARDUP_ASSIGN_OR_RETURN(std::vector<SimilarPair> pairs,
                           FindNearDuplicatePairs(fingerprints, recipe, options));
  return ClusterDocuments(texts.size(), pairs, rule);
}

// cluster_of of the batch leader rule (`neardup clusters --rule leader`).
inline Result<std::vector<uint64_t>> BatchLeaders(const std::vector<std::string>& texts,
                                                  const StreamConfig& config) {
  return BatchClusters(texts, config, ClusterRule::kLeader);
}

}  // namespace neardup::test_support

#endif  // NEARDUP_TESTS_SUPPORT_PLANTED_CORPUS_H_
