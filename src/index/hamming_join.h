// The join inside runs of equal leading blocks of one sorted permuted table,
// and the pair form and order of a self-join (private): shared by
// HammingIndex's self-join and clustering (hamming_join.cc) and by
// HammingShards (hamming_shards.cc), so that both report the same pairs in the
// same order.
#ifndef NEARDUP_INDEX_HAMMING_JOIN_H_
#define NEARDUP_INDEX_HAMMING_JOIN_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "index/hamming_layout.h"
#include "neardup/hamming_index.h"

namespace neardup::internal {

// A pair found by a table's join, before its ids are attached.
struct FpPair {
  uint64_t a;  // fingerprints, not permuted
  uint64_t b;
  int distance;
};

// The order of a pair's two entries and of the pairs of SelfJoin().
inline bool EntryLess(const HammingEntry& a, const HammingEntry& b) {
  return a.id != b.id ? a.id < b.id : a.fingerprint < b.fingerprint;
}

inline HammingPair MakePair(HammingEntry a, HammingEntry b, int distance) {
  if (EntryLess(b, a)) std::swap(a, b);
  return {a, b, distance};
}

inline bool PairLess(const HammingPair& x, const HammingPair& y) {
  if (x.a != y.a) return EntryLess(x.a, y.a);
  return EntryLess(x.b, y.b);
}

// Calls emit(a, b, distance) (a, b: fingerprints, not permuted) for each pair
// of values of values[begin, end) within max_distance whose canonical table is
// `table`, and returns the number of value pairs compared (pairs inside runs
// of equal leading blocks). REQUIRES: `values` is the table's permuted values,
// sorted; begin and end are at boundaries of such runs. Inlined into the
// caller, which carries NEARDUP_POPCNT_CLONES.
template <typename Emit>
inline uint64_t JoinSortedRuns(const HammingTable& table, int max_distance,
                               std::span<const uint64_t> values, size_t begin, size_t end,
                               Emit&& emit) {
  const int shift = 64 - table.prefix_bits;
  uint64_t compared = 0;
  size_t i = begin;
  while (i < end) {
    size_t j = i + 1;
    while (j < end && (values[j] >> shift) == (values[i] >> shift)) ++j;
    compared += (j - i) * (j - i - 1) / 2;
    for (size_t x = i; x < j; ++x) {
      for (size_t y = x + 1; y < j; ++y) {
        const uint64_t diff = values[x] ^ values[y];
        const int distance = std::popcount(diff);
        if (distance <= max_distance && table.IsCanonical(diff)) {
          emit(table.inverse.Apply(values[x]), table.inverse.Apply(values[y]), distance);
        }
      }
    }
    i = j;
  }
  return compared;
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_HAMMING_JOIN_H_
