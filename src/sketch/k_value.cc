#include <algorithm>

#include "neardup/check.h"
#include "neardup/minhash.h"
#include "util/mix.h"

namespace neardup {

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

  const uint64_t max_attempts = 16 * num_bins_;
  for (uint64_t i = 0; i < num_bins_; ++i) {
    if (filled_[i]) {
      values[i] = mins_[i];
      continue;
    }
    // Optimal densification (Shrivastava 2017): probe bins by a sequence
    // that depends on (seed, i) only. Frozen; see the header.
    const uint64_t base = internal::Mix64(seed_ + internal::kGoldenGamma * (i + 1));
    uint64_t source = num_bins_;
    for (uint64_t attempt = 1; attempt <= max_attempts; ++attempt) {
      const uint64_t j = internal::Mix64(base ^ attempt) % num_bins_;
      if (filled_[j]) {
        source = j;
        break;
      }
    }
    if (source == num_bins_) {
      // Deterministic fallback; reached with probability below e^-16.
      source = (i + 1) % num_bins_;
      while (!filled_[source]) source = (source + 1) % num_bins_;
    }
    values[i] = mins_[source];
  }
  return false;
}

void KValueBuilder::Reset() {
  std::fill(mins_.begin(), mins_.end(), UINT64_MAX);
  std::fill(filled_.begin(), filled_.end(), uint8_t{0});
}

}  // namespace neardup
