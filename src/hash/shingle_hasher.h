// ShingleHasher turns a stream of token hashes into shingle features: one
// 64-bit feature per window of `shingle_width` consecutive tokens (w-shingling,
// Broder 1997), streamed through a ring buffer so no list of tokens or words is
// ever built.
//
// Frozen definition (it determines stored fingerprints; pinned by known-answer
// tests in shingle_hasher_test.cc). For token hashes t[0..n), n >= 1:
//   Combine(t, seed) = t[0]                                      if n == 1
//   Combine(t, seed) = Mix64(h_n)                                if n >= 2, where
//     h_0     = SplitMix64(seed).Next() | 1   (= Mix64(seed + kGoldenGamma) | 1)
//     h_{i+1} = h_i * kShingleMultiplier + Mix64(t[i])           (mod 2^64)
// i.e. Mix64 of a polynomial in the mixed token hashes (Horner form), with a
// seed-derived leading coefficient. Why this form:
// - A single token is its own feature, so shingle_width 1 gives the token
//   hashes unchanged (unigram SimHash, as in the SimHash FPGA paper).
// - The polynomial can be slid in O(1) per token (subtract the oldest term,
//   multiply, add the newest) instead of re-hashing the whole window: the cost
//   per token does not grow with shingle_width.
// - Order-sensitive: swapping t[i] != t[j] changes h by
//   (Mix64(t[i]) - Mix64(t[j])) * (P^a - P^b), which is nonzero unless the
//   mixed hashes differ by a multiple of 2^63 (P = kShingleMultiplier is
//   3 mod 4). Mix64 per token spreads weak token hashes (sdbm of short words
//   is small) before they are combined; the final Mix64 makes every output bit
//   depend on every token.
// - The leading coefficient h_0 is odd, hence never 0: windows of different
//   lengths (a short document's single feature versus a full window) differ
//   even when a token hash is 0.
//
// Cost: O(1) time per token, 64 * 8 bytes of state. Thread safety: one
// ShingleHasher per thread (it holds the window); Combine is a pure function.
#ifndef NEARDUP_HASH_SHINGLE_HASHER_H_
#define NEARDUP_HASH_SHINGLE_HASHER_H_

#include <array>
#include <cstdint>
#include <span>

#include "neardup/check.h"
#include "util/mix.h"

namespace neardup::internal {

inline constexpr int kMaxShingleWidth = 64;
// Murmur3's second finalizer constant; odd and 3 mod 4 (see above). Frozen.
inline constexpr uint64_t kShingleMultiplier = 0xc4ceb9fe1a85ec53ULL;

class ShingleHasher {
 public:
  // REQUIRES: 1 <= shingle_width <= kMaxShingleWidth.
  explicit ShingleHasher(int shingle_width, uint64_t seed);

  // Adds the next token's hash; once `shingle_width` tokens have been seen,
  // calls emit(uint64_t feature) for the window ending at this token.
  template <class Emit>
  void Push(uint64_t token_hash, Emit&& emit);

  // Ends the document: if it had 0 < tokens < shingle_width, emits ONE
  // feature, Combine of all its tokens (so short documents still have a
  // feature). Then resets for the next document.
  template <class Emit>
  void Finish(Emit&& emit);

  // Forgets the current document without emitting anything.
  void Reset();

  int shingle_width() const { return shingle_width_; }

  // The frozen definition above. REQUIRES: !token_hashes.empty().
  static uint64_t Combine(std::span<const uint64_t> token_hashes, uint64_t seed);

  // h_0 of the definition above.
  static constexpr uint64_t LeadingCoefficient(uint64_t seed) {
    return Mix64(seed + kGoldenGamma) | 1;
  }

 private:
  int shingle_width_;
  // LeadingCoefficient(seed) * P^shingle_width: h_0's term in a full window.
  uint64_t full_window_offset_;
  // P^(shingle_width - 1): the weight of the oldest token in a full window.
  uint64_t oldest_weight_;
  // Invariant: when count_ < shingle_width_, partial_offset_ =
  // h_0 * P^count_ and sum_ = sum over the count_ tokens t[i] seen of
  // Mix64(t[i]) * P^(count_ - 1 - i); when full, sum_ is that sum over the
  // last shingle_width_ tokens.
  uint64_t partial_offset_;
  uint64_t sum_ = 0;
  uint64_t count_ = 0;  // tokens seen in this document
  int next_slot_ = 0;   // ring position of the oldest token once full
  // Mixed hashes (Mix64(t)) of the last shingle_width_ tokens, ring-ordered.
  std::array<uint64_t, kMaxShingleWidth> ring_;
  // The raw hash of the first token, for a width-1-like single-token document.
  uint64_t first_token_ = 0;
  uint64_t seed_;
};

template <class Emit>
void ShingleHasher::Push(uint64_t token_hash, Emit&& emit) {
  if (shingle_width_ == 1) {
    emit(token_hash);
    ++count_;
    return;
  }
  uint64_t mixed = Mix64(token_hash);
  if (count_ < static_cast<uint64_t>(shingle_width_)) {
    if (count_ == 0) first_token_ = token_hash;
    sum_ = sum_ * kShingleMultiplier + mixed;
    partial_offset_ *= kShingleMultiplier;
    ring_[static_cast<size_t>(count_)] = mixed;
    ++count_;
    if (count_ == static_cast<uint64_t>(shingle_width_)) emit(Mix64(full_window_offset_ + sum_));
    return;
  }
  uint64_t oldest = ring_[next_slot_];
  sum_ = (sum_ - oldest * oldest_weight_) * kShingleMultiplier + mixed;
  ring_[next_slot_] = mixed;
  next_slot_ = next_slot_ + 1 == shingle_width_ ? 0 : next_slot_ + 1;
  ++count_;
  emit(Mix64(full_window_offset_ + sum_));
}

template <class Emit>
void ShingleHasher::Finish(Emit&& emit) {
  if (count_ > 0 && count_ < static_cast<uint64_t>(shingle_width_)) {
    // A single token is its own feature (Combine with n == 1).
    emit(count_ == 1 ? first_token_ : Mix64(partial_offset_ + sum_));
  }
  Reset();
}

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_SHINGLE_HASHER_H_
