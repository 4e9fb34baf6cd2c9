// XXH3-64 compiled inline into the including translation unit, for hot loops
// that hash many short tokens: the same function as Xxh3Hash
// (hash/feature_hash.h), without a call per token. Include it only from .cc
// files: it defines xxHash's XXH_INLINE_ALL symbols.
#ifndef NEARDUP_HASH_XXH3_INLINE_H_
#define NEARDUP_HASH_XXH3_INLINE_H_

#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace neardup::internal {

inline uint64_t Xxh3HashInline(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_XXH3_INLINE_H_
