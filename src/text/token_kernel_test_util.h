// Inputs shared by the tests of the vectorised token kernels
// (token_hash_kernels_test.cc, sdbm_avx512_test.cc): seeds with the edge
// values of a 64-bit seed, reproducible random bytes to cut tokens from, and
// every short span of such a text.
#ifndef NEARDUP_TEXT_TOKEN_KERNEL_TEST_UTIL_H_
#define NEARDUP_TEXT_TOKEN_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "text/token_scan.h"
#include "util/mix.h"

namespace neardup::internal::testing {

inline std::vector<uint64_t> TokenKernelTestSeeds() {
  std::vector<uint64_t> seeds = {0, 1, 17, 42, 0xffffffffULL, 0x8000000000000001ULL, ~uint64_t{0}};
  SplitMix64 rng(6);
  for (int i = 0; i < 6; ++i) seeds.push_back(rng.Next());
  return seeds;
}

inline std::string RandomTokenBytes(size_t size, uint64_t seed) {
  SplitMix64 rng(seed);
  std::string text(size, '\0');
  for (char& c : text) c = static_cast<char>(rng.Next());
  return text;
}

// Every span of 0..max_length bytes of a text of text_size bytes, ordered
// by start, then length: each length class at every offset, including the
// spans that end at the text's last byte.
inline std::vector<TokenSpan> EverySpanUpTo(size_t text_size, size_t max_length) {
  std::vector<TokenSpan> spans;
  for (size_t begin = 0; begin < text_size; ++begin) {
    for (size_t length = 0; length <= max_length && begin + length <= text_size; ++length) {
      spans.push_back({begin, length});
    }
  }
  return spans;
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_TEXT_TOKEN_KERNEL_TEST_UTIL_H_
