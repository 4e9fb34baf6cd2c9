// Test helper of engine_test: fingerprints texts the way the near-duplicate
// stages expect (the recipe and sketches FindNearDuplicatePairs derives from
// its options). Shared by near_duplicates_test.cc and simhash_copies_test.cc.
#ifndef NEARDUP_ENGINE_NEAR_DUPLICATES_TEST_UTIL_H_
#define NEARDUP_ENGINE_NEAR_DUPLICATES_TEST_UTIL_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/check.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"

namespace neardup::test_support {

inline std::vector<Fingerprint> FingerprintTexts(const std::vector<std::string>& texts,
                                                 const Recipe& recipe,
                                                 const NearDuplicateOptions& options) {
  auto fingerprinter = std::move(CreateCpuFingerprinter(RecipeForNearDuplicates(recipe, options),
                                                        SketchesForNearDuplicates(options)))
                           .value();
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<Fingerprint> out;
  NEARDUP_CHECK(fingerprinter->ComputeBatch(views, &out).ok());
  return out;
}

}  // namespace neardup::test_support

#endif  // NEARDUP_ENGINE_NEAR_DUPLICATES_TEST_UTIL_H_
