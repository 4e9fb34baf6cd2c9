// Test support for the stream's tests and its crash helper: a seeded stream of
// texts with planted near-duplicates (as engine/near_duplicates_test.cc's
// PlantedCorpus: every fifth text an edited copy of an earlier one, edit rates
// 0-8%, every 37th empty), and the batch leader-rule answers for it.
#ifndef NEARDUP_STREAM_STREAM_TEST_UTIL_H_
#define NEARDUP_STREAM_STREAM_TEST_UTIL_H_

#include <string>
#include <string_view>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/stream.h"
#include "util/mix.h"

namespace neardup::internal::testing {

inline std::vector<std::string> PlantedTexts(size_t count, uint64_t seed) {
  SplitMix64 rng(seed);
  auto word = [&] { return "w" + std::to_string(rng.Next() % 3000); };
  std::vector<std::string> texts;
  for (size_t i = 0; i < count; ++i) {
    std::string text;
    if (i % 5 == 4) {
      const std::string& source = texts[rng.Next() % i];
      const int rate_percent = static_cast<int>(rng.Next() % 9);
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
      text = "";
    } else {
      const size_t length = 60 + rng.Next() % 200;
      for (size_t w = 0; w < length; ++w) text += word() + " ";
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

inline std::string PlantedId(size_t i) { return "doc-" + std::to_string(i); }

// cluster_of of the batch clustering (`neardup clusters --rule ...`) over
// FindNearDuplicatePairs for `texts` in order, with the stream's settings.
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

}  // namespace neardup::internal::testing

#endif  // NEARDUP_STREAM_STREAM_TEST_UTIL_H_
