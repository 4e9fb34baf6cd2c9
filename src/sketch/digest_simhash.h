// DigestSimHashAccumulator: SimHash over the bits of cryptographic digests,
// the digest route's sketch (neardup/recipe.h). Each digest votes +1 on bit i
// if its bit i is 1 and -1 otherwise, bit 0 being the most significant bit of
// the digest's first byte (as ExLSH reads them); the result has bit i = 1
// iff the sum is > 0, or >= 0 under the paper's tie rule (SimHashTieRule).
// A shingle that occurs n times votes n times (term-frequency weights).
//
// Cost: Add is O(bits) (counts of 1 bits per position; a digest costs far
// more). Memory: 2 KiB, no heap. Thread safety: not thread-safe; one per
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
  int64_t Sum(int i) const { return 2 * ones_[i] - static_cast<int64_t>(count_); }

  // Digests added since the last Reset.
  uint64_t count() const { return count_; }

  // The SimHash. Does not change the state.
  WideSimHash Finish(SimHashTieRule tie) const;

  void Reset();

 private:
  int bits_;
  uint64_t count_ = 0;
  // ones_[i]: digests whose bit i is 1.
  std::array<int64_t, kMaxBits> ones_{};
};

// The SimHash's bytes in order (bits / 8 of them; see WideSimHash): ExLSH's
// binary.
std::vector<uint8_t> WideSimHashBytes(const WideSimHash& simhash);

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_DIGEST_SIMHASH_H_
