// HashFeature: the 64-bit feature hash of one token's bytes under a recipe's
// hash kind and seed -- the value every sketch is built from, exposed for
// callers that feed their own tokens into a sketch (the Python MinHash's
// update(), for example).
//
// Frozen: for a given (kind, bytes, seed) the value never changes between
// releases or platforms (known-answer vectors in src/hash/feature_hash_test.cc).
// Cost: O(bytes); no allocation. Thread safety: a pure function.
#ifndef NEARDUP_FEATURE_HASH_H_
#define NEARDUP_FEATURE_HASH_H_

#include <cstdint>
#include <string_view>

#include "neardup/recipe.h"

namespace neardup {

// XXH3-64, sdbm or FNV-1a 64 of `bytes` with `seed` (see FeatureHashKind).
uint64_t HashFeature(FeatureHashKind kind, std::string_view bytes, uint64_t seed);

}  // namespace neardup

#endif  // NEARDUP_FEATURE_HASH_H_
