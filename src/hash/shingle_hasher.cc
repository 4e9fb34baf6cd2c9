#include "hash/shingle_hasher.h"

namespace neardup::internal {

ShingleHasher::ShingleHasher(int shingle_width, uint64_t seed)
    : shingle_width_(shingle_width), seed_(seed) {
  NEARDUP_CHECK(shingle_width >= 1 && shingle_width <= kMaxShingleWidth)
      << "shingle_width (" << shingle_width << ") must be in [1, " << kMaxShingleWidth << "]";
  uint64_t power = 1;  // P^(shingle_width - 1)
  for (int i = 1; i < shingle_width; ++i) power *= kShingleMultiplier;
  oldest_weight_ = power;
  full_window_offset_ = LeadingCoefficient(seed) * power * kShingleMultiplier;
  ring_.fill(0);
  Reset();
}

void ShingleHasher::Reset() {
  partial_offset_ = LeadingCoefficient(seed_);
  sum_ = 0;
  count_ = 0;
  next_slot_ = 0;
  first_token_ = 0;
}

uint64_t ShingleHasher::Combine(std::span<const uint64_t> token_hashes, uint64_t seed) {
  NEARDUP_CHECK(!token_hashes.empty()) << "Combine of an empty window";
  if (token_hashes.size() == 1) return token_hashes[0];
  uint64_t h = LeadingCoefficient(seed);
  for (uint64_t t : token_hashes) h = h * kShingleMultiplier + Mix64(t);
  return Mix64(h);
}

}  // namespace neardup::internal
