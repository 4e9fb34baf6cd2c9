// WideHammingSelfJoin: every pair of wide SimHashes (neardup/simhash.h
// WideSimHash: 128, 160 or 256 bits, the digest route) within max_distance
// bits of each other, by exact pigeonhole over blocks of bits.
//
// Invariant (pigeonhole): cut the bits into num_blocks > max_distance
// contiguous blocks; two values that differ in at most max_distance bits
// differ in at most max_distance blocks, so they agree exactly on at least
// one block. One table per block (values sorted by the block's bits) proposes
// every pair that agrees on that block; each candidate is verified on all
// bits, and reported only from the first block it agrees on, so each pair
// comes once. Exact: the same pairs as a brute-force scan (the test checks).
// Unlike the 64-bit HammingIndex (C(m, k) permuted tables) this builds only
// num_blocks tables; the blocks are narrower, so near-duplicate-free corpora
// see more candidates per table, which the full-width check discards.
//
// Cost: O(num_blocks * n log n) to sort, plus O(candidates) checks of 4
// words. Memory: 16 bytes per value per table being sorted, plus the pairs.
// Thread safety: a pure function; it uses all cores (oneTBB).
#ifndef NEARDUP_INDEX_WIDE_HAMMING_JOIN_H_
#define NEARDUP_INDEX_WIDE_HAMMING_JOIN_H_

#include <cstdint>
#include <span>
#include <vector>

#include "neardup/simhash.h"
#include "neardup/status.h"

namespace neardup::internal {

struct WideHammingMatch {
  uint32_t a = 0;  // Invariant: a < b, positions in the input
  uint32_t b = 0;
  int distance = 0;
  friend bool operator==(const WideHammingMatch&, const WideHammingMatch&) = default;
};

struct WideHammingJoinStats {
  uint64_t candidates = 0;  // pairs checked on all bits
};

// Pairs (a, b), a < b, with HammingDistance(values[a], values[b]) <=
// max_distance, sorted by (a, b). num_blocks 0 means max_distance + 1.
// Fails unless every value has the same bits (> 0), 0 <= max_distance <
// num_blocks <= bits, and there are fewer than 2^32 values.
Result<std::vector<WideHammingMatch>> WideHammingSelfJoin(std::span<const WideSimHash> values,
                                                          int max_distance, int num_blocks = 0,
                                                          WideHammingJoinStats* stats = nullptr);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_WIDE_HAMMING_JOIN_H_
