// Feature hashes: the 64-bit hash of one token's (or shingle's) bytes, the
// values every sketch is built from.
//
// Frozen: for a given (kind, bytes, seed) the value never changes between
// releases or platforms; stored fingerprints depend on it (known-answer
// vectors in feature_hash_test.cc).
// - xxh3:  XXH3_64bits_withSeed (xxHash 0.8, Collet). The default: fast and of
//          high quality.
// - sdbm:  the sdbm database library's string hash widened to 64 bits, with the
//          seed as its initial value. Weak (short strings give small values),
//          kept to reproduce the SimHash FPGA paper's published vectors.
// - FNV-1a 64 (Fowler, Noll, Vo), with the seed XORed into the offset basis;
//          seed 0 is the standard FNV-1a 64.
// Cost: O(bytes); no allocation. Thread safety: pure functions.
#ifndef NEARDUP_HASH_FEATURE_HASH_H_
#define NEARDUP_HASH_FEATURE_HASH_H_

#include <cstdint>
#include <string_view>

#include "neardup/recipe.h"

namespace neardup::internal {

// XXH3-64 of `bytes` with `seed`.
uint64_t Xxh3Hash(std::string_view bytes, uint64_t seed);

// h = seed; per byte c (unsigned): h = c + (h << 6) + (h << 16) - h, mod 2^64.
inline uint64_t SdbmHash(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed;
  for (char ch : bytes) {
    uint64_t c = static_cast<unsigned char>(ch);
    h = c + (h << 6) + (h << 16) - h;
  }
  return h;
}

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ULL;

// h = kFnv1aOffsetBasis ^ seed; per byte c (unsigned): h ^= c; h *= kFnv1aPrime.
inline uint64_t Fnv1aHash(std::string_view bytes, uint64_t seed) {
  uint64_t h = kFnv1aOffsetBasis ^ seed;
  for (char ch : bytes) {
    h ^= static_cast<unsigned char>(ch);
    h *= kFnv1aPrime;
  }
  return h;
}

// Dispatches on `kind`. Hot loops should switch on the kind once, outside the
// loop, and call the function directly.
uint64_t HashFeatureBytes(FeatureHashKind kind, std::string_view bytes, uint64_t seed);

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_FEATURE_HASH_H_
