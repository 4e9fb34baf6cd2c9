#include <algorithm>
#include <bit>
#include <cmath>

#include "neardup/check.h"
#include "neardup/minhash.h"
#include "sketch/bottom_k_kernels.h"
#include "sketch/sketch_kernels.h"

namespace neardup {

BottomKBuilder::BottomKBuilder(int k) : k_(static_cast<uint32_t>(k)) {
  NEARDUP_CHECK(k >= 1) << "bottom-k sketch size k (" << k << ") must be at least 1";
  // A buffer of 4k pending hashes: each flush is linear in its input, so
  // O(1) amortised per accepted hash, and flushes are rare.
  capacity_ = std::max<size_t>(4 * static_cast<size_t>(k_), 64);
  held_.resize(k_ + internal::kUniqueSlack);
  next_held_.resize(k_ + internal::kUniqueSlack);
  pending_.resize(capacity_ + internal::kFilterSlack);
  work_.resize(capacity_ + internal::kFilterSlack);
  sorted_.resize(capacity_);
  sort_scratch_.resize(internal::SortScratchSize(capacity_));
  const internal::BottomKKernel kernel = internal::ActiveSketchKernels().bottom_k;
  filter_in_range_ = kernel.filter_in_range;
  sort_ascending_ = kernel.sort_ascending;
  unique_ = kernel.unique;
  merge_unique_ = kernel.merge_unique;
}

void BottomKBuilder::AddMany(std::span<const uint64_t> hashes) {
  const uint64_t* next = hashes.data();
  size_t left = hashes.size();
  while (left > 0) {
    // Filter at least a quarter of the buffer per call (or all that is
    // left), flushing first when that much room is not free.
    if (capacity_ - num_pending_ < std::min(left, capacity_ / 4)) Flush();
    const size_t take = std::min(left, capacity_ - num_pending_);
    num_pending_ += filter_in_range_(next, take, 0, limit_, pending_.data() + num_pending_);
    next += take;
    left -= take;
  }
  if (num_pending_ == capacity_) Flush();
}

void BottomKBuilder::Flush() {
  if (num_pending_ == 0) return;
  const size_t total = num_held_ + num_pending_;
  // Every value is <= limit_ (UINT64_MAX before k are held); below it they
  // are uniform hashes, so about total * t / limit_ of them are <= t: aim
  // for a margin of two standard deviations over k, plus 4. Below 1.25
  // times that, take every value. (Non-uniform input only costs more
  // rounds.) Each value below the threshold beyond the k kept is sorted
  // (or, if held, merged) for nothing; a shortfall costs a second round, a
  // filter pass and a merge, in ~0.5-0.7 % of flushes for k = 128 with
  // this margin (exact binomial).
  const double target = k_ + 2.0 * std::sqrt(static_cast<double>(k_)) + 4.0;
  uint64_t threshold = UINT64_MAX;
  if (static_cast<double>(total) > 1.25 * target) {
    threshold = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(limit_) * static_cast<uint64_t>(target)) / total);
  }
  // Rounds over the value ranges [first, last], ascending: each round's
  // values are all above the previous rounds' (so duplicates stay within a
  // round), until k distinct are found or the range reaches UINT64_MAX.
  uint64_t first = 0;
  uint64_t last = threshold;
  const uint64_t* held = held_.data();
  uint64_t* next_held = next_held_.data();
  uint64_t* sorted = sorted_.data();
  size_t n = 0;        // next_held[0, n): the k or fewer smallest distinct values below `first`
  size_t held_at = 0;  // held[0, held_at) have been merged already
  while (true) {
    // held is ascending: its values in the range are a slice.
    const size_t held_end =
        static_cast<size_t>(std::upper_bound(held + held_at, held + num_held_, last) - held);
    // A range that covers every value needs no filter pass.
    const uint64_t* round = pending_.data();
    size_t count = num_pending_;
    if (first != 0 || last != UINT64_MAX) {
      count = filter_in_range_(pending_.data(), num_pending_, first, last, work_.data());
      round = work_.data();
    }
    sort_ascending_(round, count, first, last, sorted, sort_scratch_.data());
    // The held slice is sorted already: merge rather than sort it again,
    // stopping at k values.
    if (held_end > held_at) {
      n += merge_unique_(held + held_at, held_end - held_at, sorted, count, next_held + n, k_ - n);
    } else {
      n += unique_(sorted, count, next_held + n, k_ - n);
    }
    held_at = held_end;
    if (n >= k_ || last == UINT64_MAX) break;
    // Too few (duplicates, or bad luck): extend the range by the density
    // seen so far, with the same margin.
    first = last + 1;
    const unsigned __int128 next =
        n == 0 ? ~static_cast<unsigned __int128>(0)
               : static_cast<unsigned __int128>(last) * static_cast<uint64_t>(1.25 * target) / n;
    last = next > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(next);
    if (last < first) last = UINT64_MAX;
  }
  held_.swap(next_held_);
  num_held_ = n;
  num_pending_ = 0;
  if (num_held_ == k_) limit_ = held_[k_ - 1];
}

BottomKSketch BottomKBuilder::Finish() {
  BottomKSketch sketch;
  Finish(&sketch);
  return sketch;
}

void BottomKBuilder::Finish(BottomKSketch* out) {
  const std::span<const uint64_t> held = FinishView();
  out->k = k_;
  out->values.assign(held.begin(), held.end());
}

std::span<const uint64_t> BottomKBuilder::FinishView() {
  Flush();
  return std::span<const uint64_t>(held_.data(), num_held_);
}

void BottomKBuilder::Reset() {
  num_held_ = 0;
  num_pending_ = 0;
  limit_ = UINT64_MAX;
}

}  // namespace neardup
