#include "neardup/chunk_set.h"

#include <algorithm>
#include <limits>

#include "neardup/check.h"
#include "sketch/chunk_set_kernels.h"
#include "sketch/sketch_kernels.h"

namespace neardup {
namespace {

// c of ChunkSetBuilder::Sampled: floor((2^64 - 1) / d) + 1, 0 for d == 1.
uint64_t DivisibilityConstant(uint32_t d) {
  return std::numeric_limits<uint64_t>::max() / std::max<uint32_t>(d, 1) + 1;
}

}  // namespace

ChunkSetBuilder::ChunkSetBuilder(uint32_t sample_modulus)
    : sample_modulus_(sample_modulus),
      divisibility_(DivisibilityConstant(sample_modulus)),
      sort_unique_(internal::ActiveSketchKernels().chunk_set.sort_unique) {
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
  sort_unique_(&ids_, &scratch_, &counts_);
  return ids_;
}

}  // namespace neardup
