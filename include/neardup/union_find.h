// UnionFind: disjoint sets over the integers 0..n-1 (Tarjan 1975), used to
// turn near-duplicate pairs into clusters.
//
// Union links the larger root under the smaller one, so the root of every set
// is its smallest member: the partition and the representatives are the same
// whatever the order of the Union calls (deterministic output). Find halves
// paths, which keeps trees shallow (amortised O(log n) per call without union
// by rank; near-constant in practice).
//
// Cost: 4 bytes per element.
// Thread safety: Find mutates (path halving); use one object per thread or a
// lock. Distinct objects may be used concurrently.
#ifndef NEARDUP_UNION_FIND_H_
#define NEARDUP_UNION_FIND_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "neardup/check.h"

namespace neardup {

class UnionFind {
 public:
  // REQUIRES: size < 2^32.
  explicit UnionFind(size_t size);

  size_t size() const { return parent_.size(); }

  // The smallest member of the set holding `x`. REQUIRES: x < size().
  uint32_t Find(uint32_t x) {
    NEARDUP_DCHECK(x < parent_.size());
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // Merges the sets of `a` and `b`; returns false if they were already one.
  // REQUIRES: a < size() and b < size().
  bool Union(uint32_t a, uint32_t b) {
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
  std::vector<uint32_t> Labels();

 private:
  // Invariant: parent_[x] <= x, and parent_[x] == x exactly for roots.
  std::vector<uint32_t> parent_;
};

}  // namespace neardup

#endif  // NEARDUP_UNION_FIND_H_
