// What the vectorised XXH3 span kernels (token_hash_avx2.cc,
// token_hash_avx512.cc) share: the default secret read as words for their
// broadcast constants, and the scalar routine for the spans a kernel does
// not take. Include it only from .cc files (it includes hash/xxh3_inline.h).
#ifndef NEARDUP_TEXT_TOKEN_HASH_SCALAR_H_
#define NEARDUP_TEXT_TOKEN_HASH_SCALAR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "hash/xxh3_inline.h"
#include "text/token_scan.h"

namespace neardup::internal {

// The default secret's 64- and 32-bit words at byte `offset`, in host order:
// little-endian, since only x86 runs the vector paths that use them.
inline uint64_t Xxh3SecretWord64(size_t offset) {
  uint64_t v;
  std::memcpy(&v, XXH3_kSecret + offset, sizeof(v));
  return v;
}

inline uint32_t Xxh3SecretWord32(size_t offset) {
  uint32_t v;
  std::memcpy(&v, XXH3_kSecret + offset, sizeof(v));
  return v;
}

// out[i] = XXH3-64 of span i of `text` with `seed`, one span at a time.
inline void Xxh3SpansScalar(std::string_view text, const TokenSpan* spans, size_t num_spans,
                            uint64_t seed, uint64_t* out) {
  for (size_t i = 0; i < num_spans; ++i) {
    out[i] = Xxh3HashInline(text.substr(spans[i].begin, spans[i].length), seed);
  }
}

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TOKEN_HASH_SCALAR_H_
