// Bit mixers shared by every module that derives stored values from hashes.
// Frozen: changing any constant changes stored fingerprints (a recipe
// version bump).
#ifndef NEARDUP_UTIL_MIX_H_
#define NEARDUP_UTIL_MIX_H_

#include <cstdint>

namespace neardup::internal {

// A bijective 64-bit finalizer (xor-shift-multiply, the SplitMix64/Stafford
// "variant 13" constants): every input bit affects every output bit.
constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// The golden-ratio increment of SplitMix64; used to derive independent
// streams from one seed.
inline constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

// SplitMix64 (Steele, Lea, Flood 2014): a deterministic generator for
// seeded test data and derived seeds. Never seeded from the clock.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t seed) : state_(seed) {}
  constexpr uint64_t Next() {
    state_ += kGoldenGamma;
    return Mix64(state_);
  }

 private:
  uint64_t state_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_MIX_H_
