#include <algorithm>
#include <bit>
#include <cmath>

#include "neardup/check.h"
#include "neardup/minhash.h"
#include "sketch/bottom_k_kernels.h"

namespace neardup {
namespace {

// Drops repeats from the ascending a[0, n) and returns the new length,
// without a branch on the data.
size_t UniqueSorted(uint64_t* a, size_t n) {
  if (n == 0) return 0;
  // a[i] repeats a kept value iff it equals a[i - 1]: compare in registers,
  // not with the value just stored.
  size_t m = 1;
  uint64_t previous = a[0];
  for (size_t i = 1; i < n; ++i) {
    const uint64_t v = a[i];
    a[m] = v;
    m += v != previous;
    previous = v;
  }
  return m;
}

// Merges the ascending a[0, na) and b[0, nb) into out, returning na + nb.
// The choice of side is a conditional move, not a branch.
size_t MergeSorted(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, uint64_t* out) {
  size_t i = 0;
  size_t j = 0;
  size_t k = 0;
  while (i < na && j < nb) {
    const bool from_a = a[i] <= b[j];
    out[k++] = from_a ? a[i] : b[j];
    i += from_a;
    j += !from_a;
  }
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
  return k;
}

}  // namespace

BottomKBuilder::BottomKBuilder(int k) : k_(static_cast<uint32_t>(k)) {
  NEARDUP_CHECK(k >= 1) << "bottom-k sketch size k (" << k << ") must be at least 1";
  // A buffer of 4k pending hashes: each flush is linear in its input, so
  // O(1) amortised per accepted hash, and flushes are rare.
  capacity_ = std::max<size_t>(4 * static_cast<size_t>(k_), 64);
  held_.reserve(k_);
  pending_.resize(capacity_ + internal::kFilterSlack);
  work_.resize(k_ + capacity_ + internal::kFilterSlack);
  sort_scratch_.resize(internal::SortScratchSize(k_ + capacity_));
  const internal::BottomKKernel kernel = internal::BestBottomKKernel();
  filter_in_range_ = kernel.filter_in_range;
  sort_ascending_ = kernel.sort_ascending;
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
  const size_t total = held_.size() + num_pending_;
  // Every value is <= limit_ (UINT64_MAX before k are held); below it they
  // are uniform hashes, so about total * t / limit_ of them are <= t: aim
  // for a margin of three standard deviations over k. Below 1.25 times that,
  // take every value. (Non-uniform input only costs more rounds.)
  const double target = k_ + 3.0 * std::sqrt(static_cast<double>(k_)) + 8.0;
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
  uint64_t* work = work_.data();
  uint64_t* scratch = sort_scratch_.data();
  size_t n = 0;        // work[0, n): the distinct values below `first`
  size_t held_at = 0;  // held_[0, held_at) are in work already
  while (true) {
    // held_ is ascending: its values in the range are a slice.
    const size_t held_end = static_cast<size_t>(
        std::upper_bound(held_.begin() + static_cast<std::ptrdiff_t>(held_at), held_.end(), last) -
        held_.begin());
    uint64_t* round = work + n;
    size_t count = filter_in_range_(pending_.data(), num_pending_, first, last, round);
    sort_ascending_(round, count, first, last, scratch);
    if (held_end > held_at) {
      // The held slice is sorted already: merge rather than sort it again.
      count = MergeSorted(held_.data() + held_at, held_end - held_at, round, count, scratch);
      std::copy(scratch, scratch + count, round);
    }
    n += UniqueSorted(round, count);
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
  held_.assign(work, work + std::min<size_t>(n, k_));
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
