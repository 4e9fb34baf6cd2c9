#include <algorithm>
#include <cstring>

#include "neardup/check.h"
#include "neardup/minhash.h"
#include "util/mix.h"

namespace neardup {
namespace {

// The bin whose minimum the empty bin i takes: optimal densification
// (Shrivastava 2017), probing bins by a sequence that depends on (seed, i)
// only. Frozen; see the header. REQUIRES: some bin is filled.
uint64_t DensifiedSource(const uint8_t* filled, uint64_t num_bins, uint64_t seed, uint64_t i) {
  const uint64_t max_attempts = 16 * num_bins;
  const uint64_t base = internal::Mix64(seed + internal::kGoldenGamma * (i + 1));
  // x % num_bins, a mask for a power of two (128, the default): no division.
  const bool power_of_two = (num_bins & (num_bins - 1)) == 0;
  for (uint64_t attempt = 1; attempt <= max_attempts; ++attempt) {
    const uint64_t mixed = internal::Mix64(base ^ attempt);
    const uint64_t j = power_of_two ? mixed & (num_bins - 1) : mixed % num_bins;
    if (filled[j]) return j;
  }
  // Deterministic fallback; reached with probability below e^-16.
  uint64_t source = (i + 1) % num_bins;
  while (!filled[source]) source = (source + 1) % num_bins;
  return source;
}

}  // namespace

KValueBuilder::KValueBuilder(int k, uint64_t seed)
    : num_bins_(static_cast<uint64_t>(k)), seed_(seed) {
  NEARDUP_CHECK(k >= 1) << "k-value sketch size k (" << k << ") must be at least 1";
  mins_.assign(num_bins_, UINT64_MAX);
  filled_.assign(num_bins_, 0);
}

KValueSketch KValueBuilder::Finish() const {
  KValueSketch sketch;
  sketch.values.assign(num_bins_, 0);
  sketch.empty = FinishInto(sketch.values);
  return sketch;
}

bool KValueBuilder::FinishInto(std::span<uint64_t> values) const {
  NEARDUP_CHECK(values.size() == num_bins_);
  const bool empty = std::find(filled_.begin(), filled_.end(), uint8_t{1}) == filled_.end();
  if (empty) {
    std::fill(values.begin(), values.end(), uint64_t{0});
    return true;
  }

  // Every bin's minimum, copied whole; then the empty bins (about e^(-m/k)
  // of them for m hashes: a few per document) take their source's, found
  // eight flags (each 0 or 1) per load, so a filled bin costs no branch.
  std::copy(mins_.begin(), mins_.end(), values.begin());
  constexpr uint64_t kEightFilled = 0x0101010101010101ULL;
  for (uint64_t first = 0; first < num_bins_; first += 8) {
    if (first + 8 <= num_bins_) {
      uint64_t flags;
      std::memcpy(&flags, filled_.data() + first, sizeof flags);
      if (flags == kEightFilled) continue;
    }
    const uint64_t end = std::min<uint64_t>(first + 8, num_bins_);
    for (uint64_t i = first; i < end; ++i) {
      if (!filled_[i]) values[i] = mins_[DensifiedSource(filled_.data(), num_bins_, seed_, i)];
    }
  }
  return false;
}

void KValueBuilder::Reset() {
  std::fill(mins_.begin(), mins_.end(), UINT64_MAX);
  std::fill(filled_.begin(), filled_.end(), uint8_t{0});
}

}  // namespace neardup
