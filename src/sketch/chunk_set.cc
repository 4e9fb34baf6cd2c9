#include "neardup/chunk_set.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "neardup/check.h"
#include "util/insertion_sort.h"

namespace neardup {
namespace {

// Sorts `ids` ascending and removes duplicates. Chunk IDs are hash values:
// one counting pass on their top bits into 1-2 buckets per ID (while n <
// 2^kMaxBits) leaves 0.5-1 IDs per bucket on average, so the insertion sort
// that finishes moves about 1 ID in 5-6, by one place. Equal IDs (a repeated
// shingle) never move past each other. Past 2^kMaxBits IDs the buckets hold
// n / 2^kMaxBits IDs each and the insertion sort's cost grows as n^2 / 2^22.
// A crafted input (many distinct IDs in one bucket) or a huge document stops
// the insertion sort after 8n moves and takes std::sort: O(n log n) at worst.
void SortUnique(std::vector<uint32_t>* ids, std::vector<uint32_t>* scratch,
                std::vector<uint32_t>* counts) {
  constexpr size_t kSmall = 64;
  // At most 2^20 + 1 counts (4 MiB), kept by the builder: a cache-sized
  // table whatever the document's size.
  constexpr int kMaxBits = 20;
  const size_t n = ids->size();
  if (n < kSmall) {
    std::sort(ids->begin(), ids->end());
    ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    return;
  }
  // n < 2^bits unless capped (n >= 2^kMaxBits).
  const int bits = std::min<int>(std::bit_width(n), kMaxBits);
  const int shift = 32 - bits;
  const size_t buckets = size_t{1} << bits;
  counts->assign(buckets + 1, 0);
  uint32_t* count = counts->data() + 1;
  for (uint32_t id : *ids) ++count[id >> shift];
  uint32_t sum = 0;
  for (size_t b = 0; b <= buckets; ++b) {
    const uint32_t c = (*counts)[b];
    (*counts)[b] = sum;
    sum += c;
  }
  // counts[b + 1] is now the first slot of bucket b: the scatter's cursor.
  scratch->resize(n);
  uint32_t* out = scratch->data();
  uint32_t* cursor = counts->data() + 1;
  for (uint32_t id : *ids) out[cursor[id >> shift]++] = id;
  // Sorted by bucket: only distinct IDs of one bucket are out of order.
  if (!internal::InsertionSortWithBudget(out, n)) std::sort(out, out + n);
  // Unique without a branch per ID: write each, advance past it when it
  // differs from the one before.
  uint32_t* dst = ids->data();
  uint32_t previous = out[0];
  dst[0] = previous;
  size_t kept = 1;
  for (size_t i = 1; i < n; ++i) {
    const uint32_t id = out[i];
    dst[kept] = id;
    kept += id != previous ? 1 : 0;
    previous = id;
  }
  ids->resize(kept);
}

// c of ChunkSetBuilder::Sampled: floor((2^64 - 1) / d) + 1, 0 for d == 1.
uint64_t DivisibilityConstant(uint32_t d) {
  return std::numeric_limits<uint64_t>::max() / std::max<uint32_t>(d, 1) + 1;
}

}  // namespace

ChunkSetBuilder::ChunkSetBuilder(uint32_t sample_modulus)
    : sample_modulus_(sample_modulus), divisibility_(DivisibilityConstant(sample_modulus)) {
  NEARDUP_CHECK(sample_modulus >= 1)
      << "chunk sample_modulus (" << sample_modulus << ") must be at least 1";
}

void ChunkSetBuilder::AddMany(std::span<const uint64_t> features) {
  const size_t start = ids_.size();
  ids_.resize(start + features.size());
  uint32_t* out = ids_.data() + start;
  if (sample_modulus_ == 1) {
    for (size_t i = 0; i < features.size(); ++i) out[i] = ChunkId(features[i]);
    return;
  }
  // Every ID is written; the cursor moves past the sampled ones only.
  size_t kept = 0;
  for (const uint64_t feature : features) {
    const uint32_t id = ChunkId(feature);
    out[kept] = id;
    kept += Sampled(id) ? 1 : 0;
  }
  ids_.resize(start + kept);
}

std::vector<uint32_t> ChunkSetBuilder::Finish() {
  const std::span<const uint32_t> ids = FinishView();
  return std::vector<uint32_t>(ids.begin(), ids.end());
}

std::span<const uint32_t> ChunkSetBuilder::FinishView() {
  SortUnique(&ids_, &scratch_, &counts_);
  return ids_;
}

}  // namespace neardup
