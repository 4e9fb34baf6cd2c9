#include "neardup/chunk_set.h"

#include <algorithm>
#include <bit>

#include "neardup/check.h"
#include "util/insertion_sort.h"

namespace neardup {
namespace {

// Sorts `ids` ascending and removes duplicates. IDs are hash values, so one
// counting pass on their top bits into about n buckets leaves each bucket
// with an expected one or two IDs; an insertion sort then finishes in O(n).
// A skewed input (some bucket over kMaxBucket, e.g. crafted IDs) takes
// std::sort instead, so the worst case stays O(n log n).
void SortUnique(std::vector<uint32_t>* ids, std::vector<uint32_t>* scratch,
                std::vector<uint32_t>* starts) {
  constexpr size_t kSmall = 64;
  constexpr uint32_t kMaxBucket = 32;
  const size_t n = ids->size();
  if (n < kSmall) {
    std::sort(ids->begin(), ids->end());
    ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    return;
  }
  const int bits = std::bit_width(n) - 1;  // 2^bits <= n < 2^(bits+1)
  const int shift = 32 - bits;
  const size_t buckets = size_t{1} << bits;
  starts->assign(buckets + 1, 0);
  uint32_t* count = starts->data() + 1;
  for (uint32_t id : *ids) ++count[id >> shift];
  uint32_t largest = 0;
  uint32_t sum = 0;
  for (size_t b = 0; b <= buckets; ++b) {
    const uint32_t c = (*starts)[b];
    largest = std::max(largest, c);
    (*starts)[b] = sum;
    sum += c;
  }
  if (largest > kMaxBucket) {
    std::sort(ids->begin(), ids->end());
    ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    return;
  }
  // starts[b + 1] is now the first slot of bucket b: the scatter's cursor.
  scratch->resize(n);
  uint32_t* out = scratch->data();
  uint32_t* cursor = starts->data() + 1;
  for (uint32_t id : *ids) out[cursor[id >> shift]++] = id;
  // Sorted by bucket: only IDs of one bucket (at most kMaxBucket) are out of
  // order, so each insertion moves a few places at most.
  internal::InsertionSort(out, n);
  size_t kept = 0;
  uint32_t* dst = ids->data();
  for (size_t i = 0; i < n; ++i) {
    if (kept == 0 || dst[kept - 1] != out[i]) dst[kept++] = out[i];
  }
  ids->resize(kept);
}

}  // namespace

ChunkSetBuilder::ChunkSetBuilder(uint32_t sample_modulus) : sample_modulus_(sample_modulus) {
  NEARDUP_CHECK(sample_modulus >= 1)
      << "chunk sample_modulus (" << sample_modulus << ") must be at least 1";
}

std::vector<uint32_t> ChunkSetBuilder::Finish() {
  const std::span<const uint32_t> ids = FinishView();
  return std::vector<uint32_t>(ids.begin(), ids.end());
}

std::span<const uint32_t> ChunkSetBuilder::FinishView() {
  SortUnique(&ids_, &scratch_, &bucket_starts_);
  return ids_;
}

}  // namespace neardup
