#include "neardup/chunk_set.h"

#include <algorithm>

#include "neardup/check.h"

namespace neardup {

ChunkSetBuilder::ChunkSetBuilder(uint32_t sample_modulus) : sample_modulus_(sample_modulus) {
  NEARDUP_CHECK(sample_modulus >= 1)
      << "chunk sample_modulus (" << sample_modulus << ") must be at least 1";
}

std::vector<uint32_t> ChunkSetBuilder::Finish() {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
  return ids_;
}

}  // namespace neardup
