// XXH3-64 compiled inline into the including translation unit, for hot loops
// that hash many short tokens: the same function as Xxh3Hash
// (hash/feature_hash.h), without a call per token. Inputs of at most 16
// bytes (most words) go straight to xxHash's short-input routine with the
// default secret, which is what XXH3_64bits_withSeed does for them after its
// length dispatch; feature_hash_test.cc checks every length 0..300 against
// the library. Include it only from .cc files: it defines xxHash's
// XXH_INLINE_ALL symbols.
#ifndef NEARDUP_HASH_XXH3_INLINE_H_
#define NEARDUP_HASH_XXH3_INLINE_H_

#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace neardup::internal {

static_assert(XXH_VERSION_MAJOR == 0 && XXH_VERSION_MINOR == 8,
              "Xxh3HashInline calls xxHash 0.8's short-input routine");

inline uint64_t Xxh3HashInline(std::string_view bytes, uint64_t seed) {
  if (bytes.size() <= 16) {
    return XXH3_len_0to16_64b(reinterpret_cast<const xxh_u8*>(bytes.data()), bytes.size(),
                              XXH3_kSecret, seed);
  }
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_XXH3_INLINE_H_
