// SimHash: a locality-sensitive fingerprint whose Hamming distance tracks the
// angle between two documents' weighted feature vectors (Charikar 2002,
// "Similarity estimation techniques from rounding algorithms"; used for web
// near-duplicate detection by Manku, Jain, Das Sarma 2007, "Detecting
// near-duplicates for web crawling").
//
// Each 64-bit feature hash votes +weight on bit i if its bit i is 1 and
// -weight otherwise; the fingerprint has bit i = 1 iff the signed sum of bit i
// is >= 0. The tie rule is the paper's: a sum of exactly 0 gives a 1 bit, so
// the fingerprint of a document with no features is all ones.
//
// Frozen: for the same feature sequence the 64- and 128-bit fingerprints never
// change between releases or platforms. The 128-bit form expands a feature f
// to (high = f, low = Mix64(f ^ kSimHash128LowSalt)) with Mix64 from
// src/util/mix.h, so its high word is always the 64-bit SimHash of the same
// features.
//
// Cost: Add is O(1) amortised (a few table lookups: votes are counted in
// byte-wide lanes and folded into the 64-bit sums every 255 features);
// AddMany counts with AVX-512BW or AVX2 where the CPU has them (3 to 10
// instructions per feature);
// AddWeighted is O(bits). Memory: a fixed ~1.3 KB per accumulator, no heap.
// Thread safety: an accumulator is not thread-safe, not even its const
// methods (sums() folds pending votes); use one per thread. HammingDistance is
// a pure function.
#ifndef NEARDUP_SIMHASH_H_
#define NEARDUP_SIMHASH_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace neardup {

// The salt of the low word of the 128-bit expansion (the first 64 bits of the
// fractional part of sqrt(2), as in SHA-512's first initial hash value).
// Frozen.
inline constexpr uint64_t kSimHash128LowSalt = 0x6a09e667f3bcc908ULL;

// A 128-bit SimHash. `high` equals the 64-bit SimHash of the same features.
struct SimHash128 {
  uint64_t high = 0;
  uint64_t low = 0;

  friend bool operator==(const SimHash128& a, const SimHash128& b) = default;
};

// Accumulates the signed per-bit sums of one document.
class SimHashAccumulator {
 public:
  // REQUIRES: bits == 64 || bits == 128 (recipes are validated earlier; a
  // violation is a programmer error and aborts).
  explicit SimHashAccumulator(int bits);

  int bits() const { return bits_; }

  // Adds one occurrence of `feature` with weight 1. Adding a feature n times
  // is the same as AddWeighted(feature, n): weight by term frequency.
  void Add(uint64_t feature);
  // Add() of each feature in order; the fast path for a document's features.
  void AddMany(std::span<const uint64_t> features);

  // Adds `feature` with an explicit weight (negative weights subtract).
  // REQUIRES: the absolute sum of all weights added stays below 2^62 (no
  // overflow of the 64-bit sums).
  void AddWeighted(uint64_t feature, int64_t weight);

  // The fingerprint: bit i is 1 iff sums()[i] >= 0. Neither call changes the
  // accumulated state. On a 128-bit accumulator Finish64 returns the high
  // word, which is the 64-bit SimHash of the same features.
  uint64_t Finish64() const;
  // REQUIRES: bits() == 128.
  SimHash128 Finish128() const;

  // sums()[i] is the signed sum of bit i, i = 0 the least significant. For
  // 128 bits, i in [0, 64) is the low word and [64, 128) the high word. The
  // span is valid until the next non-const call.
  std::span<const int64_t> sums() const;

  // Starts a new document (all sums 0).
  void Reset();

  // The 128-bit expansion's low word of a feature. Frozen.
  static uint64_t LowWord(uint64_t feature);

 private:
  // Pending votes are counted in 8-bit lanes, so at most 255 may wait.
  static constexpr int kMaxPending = 255;

  // word 0 counts the bits of the feature (the high word in 128-bit mode),
  // word 1 those of the low word.
  void AddVotes(int word, uint64_t value);
  // Folds the pending votes into sums_.
  void Flush() const;

  int bits_;
  // AddMany's vote counter (src/sketch/simhash_kernels.h), chosen at
  // construction from the CPU's features; every choice counts the same.
  void (*count_bits_)(const uint64_t* values, size_t count, uint64_t* lanes);
  // The same kernel's fold of 64 lanes into sums (zeroing the lanes) and its
  // sign bits of 64 sums.
  void (*fold_)(uint64_t* lanes, int64_t num_pending, int64_t* sums);
  uint64_t (*sign_bits_)(const int64_t* sums);
  // ones_[word][byte] holds eight 8-bit counters: lane j of byte b counts the
  // pending features whose bit 8*b + j is 1. Invariant: every lane <=
  // num_pending_ <= kMaxPending.
  mutable std::array<std::array<uint64_t, 8>, 2> ones_{};
  mutable int num_pending_ = 0;
  // Invariant: sums_ plus the pending votes are the true sums. Indexed as
  // sums(): [0, 64) the low word, [64, 128) the high word (128-bit mode).
  mutable std::array<int64_t, 128> sums_{};
};

// A SimHash of up to 256 bits, as the digest route computes it (128, 160 or
// 256 bits: the digest's width; see neardup/recipe.h). Bit i, i = 0 the
// first, is bit 63 - (i % 64) of words[i / 64]: the first bit is the most
// significant, as a digest's bytes are read, so the big-endian bytes of
// words[0], words[1], ... are the SimHash's bytes in order (ExLSH's binary).
// Invariant: bits past `bits` are 0. Frozen with the recipe.
struct WideSimHash {
  std::array<uint64_t, 4> words{};
  int bits = 0;  // 0: not computed (a 64-bit feature-hash recipe)

  friend bool operator==(const WideSimHash& a, const WideSimHash& b) = default;
};

// Number of differing bits.
inline int HammingDistance(uint64_t a, uint64_t b) { return std::popcount(a ^ b); }
// Over all four words (bits past `bits` are 0 in both). REQUIRES: a.bits ==
// b.bits.
inline int HammingDistance(const WideSimHash& a, const WideSimHash& b) {
  int distance = 0;
  for (size_t i = 0; i < a.words.size(); ++i) distance += std::popcount(a.words[i] ^ b.words[i]);
  return distance;
}
inline int HammingDistance(const SimHash128& a, const SimHash128& b) {
  return std::popcount(a.high ^ b.high) + std::popcount(a.low ^ b.low);
}

}  // namespace neardup

#endif  // NEARDUP_SIMHASH_H_
