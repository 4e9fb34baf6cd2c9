#include <algorithm>
#include <bit>
#include <cmath>

#include "neardup/check.h"
#include "neardup/minhash.h"

namespace neardup {
namespace {

// Sorts `values`, all <= max_value, ascending: a counting sort on the top
// bits into about one bucket per value, then an insertion sort that only
// moves values within their bucket. Linear expected time for uniform values
// (the feature hashes); input crowding more than 64 values into a bucket is
// handed to std::sort instead. `out` and `starts` are scratch.
void BucketSort(std::vector<uint64_t>* values, uint64_t max_value, std::vector<uint64_t>* out,
                std::vector<uint32_t>* starts) {
  const size_t n = values->size();
  if (n <= 32) {
    std::sort(values->begin(), values->end());
    return;
  }
  const int bucket_bits = std::bit_width(n - 1);  // 2^bucket_bits >= n
  const int value_bits = std::bit_width(max_value);
  const int shift = value_bits > bucket_bits ? value_bits - bucket_bits : 0;
  const size_t num_buckets = size_t{1} << bucket_bits;
  starts->assign(num_buckets + 1, 0);
  uint32_t* count = starts->data() + 1;
  for (uint64_t v : *values) ++count[v >> shift];
  // Clustered (non-uniform) input would make the insertion sort quadratic.
  if (*std::max_element(count, count + num_buckets) > 64) {
    std::sort(values->begin(), values->end());
    return;
  }
  for (size_t b = 1; b <= num_buckets; ++b) (*starts)[b] += (*starts)[b - 1];
  out->resize(n);
  uint32_t* next = starts->data();  // next free slot of bucket b: starts[b], advanced
  for (uint64_t v : *values) (*out)[next[v >> shift]++] = v;
  // Values are grouped by bucket in order; sort within buckets.
  uint64_t* a = out->data();
  for (size_t i = 1; i < n; ++i) {
    const uint64_t v = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
  values->swap(*out);
}

}  // namespace

BottomKBuilder::BottomKBuilder(int k) : k_(static_cast<uint32_t>(k)) {
  NEARDUP_CHECK(k >= 1) << "bottom-k sketch size k (" << k << ") must be at least 1";
  held_.reserve(k_);
  scratch_.reserve(k_);
  // A buffer of 4k pending hashes: each flush is linear in its input, so
  // O(1) amortised per accepted hash, and flushes are rare.
  pending_.resize(std::max<size_t>(4 * static_cast<size_t>(k_), 64));
}

void BottomKBuilder::Flush() {
  const size_t total = held_.size() + num_pending_;
  if (num_pending_ == 0) return;
  // Every value is <= limit_; below the k-th held they are uniform hashes, so
  // about total * t / max_value of them are <= t. Aim for a margin over k.
  uint64_t max_value = limit_;
  if (max_value == UINT64_MAX) {
    max_value = held_.empty() ? 0 : held_.back();
    for (size_t i = 0; i < num_pending_; ++i) max_value = std::max(max_value, pending_[i]);
  }
  const double target = 1.25 * k_ + 4.0 * std::sqrt(static_cast<double>(k_)) + 16.0;
  uint64_t threshold = max_value;
  if (static_cast<double>(total) > 1.5 * target) {
    threshold = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(max_value) * static_cast<uint64_t>(target)) / total);
  }
  while (true) {
    // The values <= threshold, without branches on the data.
    scratch_.resize(total);
    size_t n = 0;
    for (uint64_t v : held_) {
      scratch_[n] = v;
      n += v <= threshold;
    }
    for (size_t i = 0; i < num_pending_; ++i) {
      scratch_[n] = pending_[i];
      n += pending_[i] <= threshold;
    }
    scratch_.resize(n);
    BucketSort(&scratch_, threshold, &sorted_, &bucket_starts_);
    scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    // Enough distinct values below the threshold: the k smallest overall are
    // among them. Otherwise retry with every value.
    if (scratch_.size() >= k_ || threshold == max_value) break;
    threshold = max_value;
  }
  if (scratch_.size() > k_) scratch_.resize(k_);
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
