#include "grouped_pairs.h"

#include <tbb/parallel_sort.h>

#include <algorithm>
#include <utility>

namespace neardup::mpi {

CopyGroups GroupCopies(std::vector<HammingEntry> entries) {
  CopyGroups groups;
  groups.copies = std::move(entries);
  tbb::parallel_sort(groups.copies.begin(), groups.copies.end());
  for (size_t i = 0; i < groups.copies.size(); ++i) {
    if (i == 0 || groups.copies[i].fingerprint != groups.copies[i - 1].fingerprint) {
      groups.first.push_back(groups.copies[i]);
      groups.start.push_back(i);
    }
  }
  groups.start.push_back(groups.copies.size());
  return groups;
}

GroupedPairs ListGroupedSimHashPairs(const CopyGroups& groups, std::span<const HammingPair> joined,
                                     const std::function<bool(uint64_t)>& lists_star) {
  // The group of a joined entry (one of groups.first).
  const auto group_of = [&](const HammingEntry& entry) {
    return static_cast<size_t>(std::lower_bound(groups.first.begin(), groups.first.end(), entry) -
                               groups.first.begin());
  };
  const auto size_of = [&](size_t k) { return groups.start[k + 1] - groups.start[k]; };
  GroupedPairs out;
  out.pairs.reserve(joined.size());
  for (const HammingPair& pair : joined) {
    out.pairs.push_back(SimilarPair{pair.a.id, pair.b.id,
                                    1.0 - static_cast<double>(pair.distance) / 64, pair.distance});
    out.expanded += size_of(group_of(pair.a)) * size_of(group_of(pair.b));
  }
  for (size_t k = 0; k < groups.first.size(); ++k) {
    const uint64_t g = size_of(k);
    if (g < 2 || !lists_star(groups.first[k].fingerprint)) continue;
    out.expanded += g * (g - 1) / 2;
    for (uint64_t copy = groups.start[k] + 1; copy < groups.start[k + 1]; ++copy) {
      out.pairs.push_back(SimilarPair{groups.first[k].id, groups.copies[copy].id, 1.0, 0});
    }
  }
  tbb::parallel_sort(out.pairs.begin(), out.pairs.end(),
                     [](const SimilarPair& x, const SimilarPair& y) {
                       return x.a != y.a ? x.a < y.a : x.b < y.b;
                     });
  return out;
}

}  // namespace neardup::mpi
