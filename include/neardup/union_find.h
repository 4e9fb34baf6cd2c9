// UnionFind: disjoint sets over the integers 0..n-1 (Tarjan 1975), used to
// turn near-duplicate pairs into clusters.
//
// Union links the larger root under the smaller one, so the root of every set
// is its smallest member: the partition and the representatives are the same
// whatever the order of the Union calls (deterministic output). Find halves
// paths, which keeps trees shallow (amortised O(log n) per call without union
// by rank; near-constant in practice).
//
// Cost: sizeof(Index) bytes per element: UnionFind (32-bit, up to 2^32 - 1
// elements) 4, UnionFind64 8.
// Thread safety: Find mutates (path halving); use one object per thread or a
// lock. Distinct objects may be used concurrently.
#ifndef NEARDUP_UNION_FIND_H_
#define NEARDUP_UNION_FIND_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "neardup/check.h"

namespace neardup {

template <typename Index>
class BasicUnionFind {
 public:
  // REQUIRES: size <= the largest Index.
  explicit BasicUnionFind(size_t size) : parent_(size) {
    NEARDUP_CHECK(uint64_t{size} <= std::numeric_limits<Index>::max()) << "UnionFind size " << size;
    for (size_t i = 0; i < size; ++i) parent_[i] = static_cast<Index>(i);
  }

  size_t size() const { return parent_.size(); }

  // The smallest member of the set holding `x`. REQUIRES: x < size().
  Index Find(Index x) {
    NEARDUP_DCHECK(x < parent_.size());
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // Merges the sets of `a` and `b`; returns false if they were already one.
  // REQUIRES: a < size() and b < size().
  bool Union(Index a, Index b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    if (a < b) {
      parent_[b] = a;
    } else {
      parent_[a] = b;
    }
    return true;
  }

  // For every element, the dense id of its set: sets are numbered 0, 1, ...
  // in the order of their smallest member.
  std::vector<Index> Labels() {
    std::vector<Index> labels(parent_.size());
    Index next = 0;
    // Roots are the smallest members and parent_[x] <= x, so a root is always
    // labelled before any other member of its set.
    for (Index x = 0; x < parent_.size(); ++x) {
      const Index root = Find(x);
      labels[x] = root == x ? next++ : labels[root];
    }
    return labels;
  }

 private:
  // Invariant: parent_[x] <= x, and parent_[x] == x exactly for roots.
  std::vector<Index> parent_;
};

using UnionFind = BasicUnionFind<uint32_t>;
using UnionFind64 = BasicUnionFind<uint64_t>;

}  // namespace neardup

#endif  // NEARDUP_UNION_FIND_H_
