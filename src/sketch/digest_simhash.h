// DigestSimHashAccumulator: SimHash over the bits of cryptographic digests,
// the digest route's sketch (neardup/recipe.h). Each digest votes +1 on bit i
// if its bit i is 1 and -1 otherwise, bit 0 being the most significant bit of
// the digest's first byte (as ExLSH reads them); the result has bit i = 1
// iff the sum is > 0, or >= 0 under the paper's tie rule (SimHashTieRule).
// A shingle that occurs n times votes n times (term-frequency weights).
//
// Cost: Add is one table lookup and one add per digest byte (16 for MD5):
// each byte's 8 bits are counted in 8 byte-wide lanes of one 64-bit word and
// folded into the 64-bit counts every 255 digests. A digest costs far more.
// Memory: about 2.3 KiB, no heap. Thread safety: not thread-safe; one per
// thread.
#ifndef NEARDUP_SKETCH_DIGEST_SIMHASH_H_
#define NEARDUP_SKETCH_DIGEST_SIMHASH_H_

#include <array>
#include <cstdint>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/simhash.h"

namespace neardup::internal {

class DigestSimHashAccumulator {
 public:
  static constexpr int kMaxBits = 256;

  // REQUIRES: bits is a multiple of 8 in [8, kMaxBits] (128, 160, 256 from a
  // validated recipe).
  explicit DigestSimHashAccumulator(int bits);

  int bits() const { return bits_; }

  // Adds one digest of bits() / 8 bytes.
  void Add(const uint8_t* digest);

  // The signed sum of bit i: 2 * (digests with bit i set) - digests.
  int64_t Sum(int i) const { return 2 * Ones(i) - static_cast<int64_t>(count_); }

  // Digests added since the last Reset.
  uint64_t count() const { return count_; }

  // The SimHash. Does not change the state.
  WideSimHash Finish(SimHashTieRule tie) const;

  void Reset();

 private:
  // Pending lanes are 8 bits wide, so at most 255 digests may wait.
  static constexpr int kMaxPending = 255;

  int64_t Ones(int i) const {
    return ones_[static_cast<size_t>(i)] +
           static_cast<int64_t>((lanes_[static_cast<size_t>(i / 8)] >> (8 * (i % 8))) & 0xFF);
  }
  void Fold();

  int bits_;
  uint64_t count_ = 0;
  int pending_ = 0;
  // Invariant: ones_[i] plus lane i % 8 of lanes_[i / 8] is the number of
  // digests whose bit i is 1; every lane <= pending_ <= kMaxPending.
  std::array<int64_t, kMaxBits> ones_{};
  std::array<uint64_t, kMaxBits / 8> lanes_{};
};

// The SimHash's bytes in order (bits / 8 of them; see WideSimHash): ExLSH's
// binary.
std::vector<uint8_t> WideSimHashBytes(const WideSimHash& simhash);

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_DIGEST_SIMHASH_H_
