#include "hash/feature_hash.h"

// The inline build of xxHash: the hash is computed in this translation unit,
// with no call through the shared library's PLT. Bit-identical to the library.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "neardup/check.h"
#include "neardup/feature_hash.h"

namespace neardup::internal {

uint64_t Xxh3Hash(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

uint64_t HashFeatureBytes(FeatureHashKind kind, std::string_view bytes, uint64_t seed) {
  switch (kind) {
    case FeatureHashKind::kXxh3:
      return Xxh3Hash(bytes, seed);
    case FeatureHashKind::kSdbm:
      return SdbmHash(bytes, seed);
    case FeatureHashKind::kFnv1a:
      return Fnv1aHash(bytes, seed);
    case FeatureHashKind::kMd5:
    case FeatureHashKind::kSha1:
    case FeatureHashKind::kSha256:
      break;  // digests are not 64-bit feature hashes (hash/digest.h)
  }
  NEARDUP_CHECK(false) << "unknown FeatureHashKind " << static_cast<int>(kind);
  return 0;
}

}  // namespace neardup::internal

namespace neardup {

uint64_t HashFeature(FeatureHashKind kind, std::string_view bytes, uint64_t seed) {
  return internal::HashFeatureBytes(kind, bytes, seed);
}

}  // namespace neardup
