#include "neardup/union_find.h"

#include <limits>

namespace neardup {

UnionFind::UnionFind(size_t size) : parent_(size) {
  NEARDUP_CHECK(size <= std::numeric_limits<uint32_t>::max()) << "UnionFind size " << size;
  for (size_t i = 0; i < size; ++i) parent_[i] = static_cast<uint32_t>(i);
}

std::vector<uint32_t> UnionFind::Labels() {
  std::vector<uint32_t> labels(parent_.size());
  uint32_t next = 0;
  // Roots are the smallest members and parent_[x] <= x, so a root is always
  // labelled before any other member of its set.
  for (uint32_t x = 0; x < parent_.size(); ++x) {
    uint32_t root = Find(x);
    labels[x] = root == x ? next++ : labels[root];
  }
  return labels;
}

}  // namespace neardup
