#include "hash/shingle_batch.h"

#include <algorithm>
#include <cstring>

#include "neardup/check.h"
#include "util/mix.h"

namespace neardup::internal {

ShingleBatch::ShingleBatch(uint64_t seed)
    : leading_(ShingleHasher::LeadingCoefficient(seed)),
      leading_times_p_(leading_ * kShingleMultiplier) {
  raw_.fill(0);
  mixed_.fill(0);
}

void ShingleBatch::Reset() {
  count_ = 0;
  history_ = 0;
  batch_ = 0;
}

void ShingleBatch::Append(std::span<const uint64_t> token_hashes) {
  NEARDUP_CHECK(token_hashes.size() <= kMaxBatch)
      << "ShingleBatch::Append of " << token_hashes.size() << " hashes (at most " << kMaxBatch
      << ")";
  // Keep the last kHistory tokens as the history of the new batch.
  const size_t held = history_ + batch_;
  const size_t keep = std::min(held, kHistory);
  if (keep > 0 && held > keep) {
    std::memmove(raw_.data(), raw_.data() + held - keep, keep * sizeof(uint64_t));
    std::memmove(mixed_.data(), mixed_.data() + held - keep, keep * sizeof(uint64_t));
  }
  history_ = keep;
  batch_ = token_hashes.size();
  uint64_t* raw = raw_.data() + history_;
  uint64_t* mixed = mixed_.data() + history_;
  for (size_t i = 0; i < batch_; ++i) {
    raw[i] = token_hashes[i];
    mixed[i] = Mix64(token_hashes[i]);
  }
  count_ += batch_;
}

template <int kWidth>
void ShingleBatch::HornerWindows(size_t first, uint64_t* out) const {
  // The window ending at batch token k is mixed_[history_ + k + 1 - kWidth,
  // history_ + k]; for k >= first the start is >= 0.
  const uint64_t* m = mixed_.data() + (history_ + first + 1 - kWidth);
  for (size_t k = 0; k < batch_ - first; ++k) {
    // h_0 * P is a constant: one multiply fewer per window.
    uint64_t acc = leading_times_p_ + m[k];
    for (int j = 1; j < kWidth; ++j) acc = acc * kShingleMultiplier + m[k + j];
    out[k] = Mix64(acc);
  }
}

void ShingleBatch::HornerWindows(int width, size_t first, uint64_t* out) const {
  const uint64_t* m = mixed_.data() + (history_ + first + 1 - static_cast<size_t>(width));
  for (size_t k = 0; k < batch_ - first; ++k) {
    uint64_t acc = leading_;
    for (int j = 0; j < width; ++j) acc = acc * kShingleMultiplier + m[k + j];
    out[k] = Mix64(acc);
  }
}

size_t ShingleBatch::Features(int width, uint64_t* out) const {
  NEARDUP_DCHECK(width >= 1 && width <= kMaxShingleWidth);
  if (width == 1) {
    std::memcpy(out, raw_.data() + history_, batch_ * sizeof(uint64_t));
    return batch_;
  }
  // The first batch token whose window is complete: global index >= width - 1.
  const uint64_t before = count_ - batch_;
  const auto needed = static_cast<uint64_t>(width - 1);
  const size_t first = before >= needed ? 0 : static_cast<size_t>(needed - before);
  if (first >= batch_) return 0;
  switch (width) {
    case 2:
      HornerWindows<2>(first, out);
      break;
    case 3:
      HornerWindows<3>(first, out);
      break;
    case 4:
      HornerWindows<4>(first, out);
      break;
    case 5:
      HornerWindows<5>(first, out);
      break;
    default:
      HornerWindows(width, first, out);
      break;
  }
  return batch_ - first;
}

std::optional<uint64_t> ShingleBatch::ShortDocumentFeature(int width) const {
  if (count_ == 0 || count_ >= static_cast<uint64_t>(width)) return std::nullopt;
  // Fewer than kMaxShingleWidth tokens: all are in raw_[0, count_).
  if (count_ == 1) return raw_[0];
  uint64_t acc = leading_;
  for (size_t i = 0; i < count_; ++i) acc = acc * kShingleMultiplier + mixed_[i];
  return Mix64(acc);
}

}  // namespace neardup::internal
