#include "grouped_pairs.h"

#include <tbb/parallel_sort.h>

#include <algorithm>

namespace neardup::mpi {

std::vector<HammingEntry> SortCopiesKeepFirst(std::vector<HammingEntry>* copies) {
  tbb::parallel_sort(copies->begin(), copies->end());
  std::vector<HammingEntry> first;
  first.reserve(copies->size());
  for (size_t i = 0; i < copies->size(); ++i) {
    if (i == 0 || (*copies)[i].fingerprint != (*copies)[i - 1].fingerprint) {
      first.push_back((*copies)[i]);
    }
  }
  return first;
}

GroupedPairs ListGroupedSimHashPairs(std::span<const HammingEntry> copies,
                                     std::span<const HammingPair> joined, bool later_copies,
                                     const std::function<bool(uint64_t)>& lists_star) {
  // The copies of one SimHash, [first, end) of `copies`.
  const auto copies_of = [&](uint64_t fingerprint) {
    return std::equal_range(
        copies.begin(), copies.end(), HammingEntry{fingerprint, 0},
        [](const HammingEntry& x, const HammingEntry& y) { return x.fingerprint < y.fingerprint; });
  };
  GroupedPairs out;
  out.pairs.reserve(joined.size());
  for (const HammingPair& pair : joined) {
    const double similarity = 1.0 - static_cast<double>(pair.distance) / 64;
    out.pairs.push_back(SimilarPair{pair.a.id, pair.b.id, similarity, pair.distance});
    const auto [a_begin, a_end] = copies_of(pair.a.fingerprint);
    const auto [b_begin, b_end] = copies_of(pair.b.fingerprint);
    out.expanded += static_cast<uint64_t>(a_end - a_begin) * static_cast<uint64_t>(b_end - b_begin);
    // Components need only (r, s) and the stars (the forest would keep
    // every (r, m), d (g - 1) pairs for d earlier neighbours of s).
    if (!later_copies) continue;
    for (auto copy = b_begin + 1; copy < b_end; ++copy) {
      out.pairs.push_back(SimilarPair{pair.a.id, copy->id, similarity, pair.distance});
    }
  }
  for (size_t begin = 0, end = 0; begin < copies.size(); begin = end) {
    end = begin + 1;
    while (end < copies.size() && copies[end].fingerprint == copies[begin].fingerprint) ++end;
    if (end - begin < 2 || !lists_star(copies[begin].fingerprint)) continue;
    const uint64_t g = end - begin;
    out.expanded += g * (g - 1) / 2;
    for (size_t copy = begin + 1; copy < end; ++copy) {
      out.pairs.push_back(SimilarPair{copies[begin].id, copies[copy].id, 1.0, 0});
    }
  }
  tbb::parallel_sort(out.pairs.begin(), out.pairs.end(),
                     [](const SimilarPair& x, const SimilarPair& y) {
                       return x.a != y.a ? x.a < y.a : x.b < y.b;
                     });
  return out;
}

}  // namespace neardup::mpi
