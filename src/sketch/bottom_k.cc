#include <algorithm>

#include "neardup/check.h"
#include "neardup/minhash.h"

namespace neardup {

BottomKBuilder::BottomKBuilder(int k) : k_(static_cast<uint32_t>(k)) {
  NEARDUP_CHECK(k >= 1) << "bottom-k sketch size k (" << k << ") must be at least 1";
  held_.reserve(k_);
  scratch_.reserve(k_);
  // A buffer of k pending hashes makes each flush O(k log k) for k accepted
  // hashes: O(log k) amortised, as a heap, but with sequential memory access.
  pending_.resize(std::max<size_t>(k_, 16));
}

void BottomKBuilder::Flush() {
  std::sort(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(num_pending_));
  // Merge held_ and the sorted pending hashes, dropping duplicates, keeping
  // the k_ smallest.
  scratch_.clear();
  size_t i = 0;
  size_t j = 0;
  const size_t num_held = held_.size();
  while (scratch_.size() < k_ && (i < num_held || j < num_pending_)) {
    uint64_t next;
    if (j == num_pending_ || (i < num_held && held_[i] <= pending_[j])) {
      next = held_[i++];
    } else {
      next = pending_[j++];
    }
    if (scratch_.empty() || scratch_.back() != next) scratch_.push_back(next);
  }
  held_.swap(scratch_);
  num_pending_ = 0;
  if (held_.size() == k_) limit_ = held_.back();
}

BottomKSketch BottomKBuilder::Finish() {
  Flush();
  return BottomKSketch{k_, held_};
}

void BottomKBuilder::Reset() {
  held_.clear();
  num_pending_ = 0;
  limit_ = UINT64_MAX;
}

}  // namespace neardup
