#include "neardup/simhash.h"

#include <algorithm>

#include "neardup/check.h"
#include "sketch/simhash_kernels.h"
#include "sketch/sketch_kernels.h"
#include "util/mix.h"

namespace neardup {
namespace {

// kByteToLanes[x] has byte lane j equal to bit j of x: adding it to a word of
// eight 8-bit counters counts the eight bits of x at once.
constexpr std::array<uint64_t, 256> MakeByteToLanes() {
  std::array<uint64_t, 256> table{};
  for (int x = 0; x < 256; ++x) {
    for (int j = 0; j < 8; ++j) table[x] |= static_cast<uint64_t>((x >> j) & 1) << (8 * j);
  }
  return table;
}
constexpr std::array<uint64_t, 256> kByteToLanes = MakeByteToLanes();

}  // namespace

SimHashAccumulator::SimHashAccumulator(int bits) : bits_(bits) {
  const internal::SimHashKernel kernel = internal::ActiveSketchKernels().simhash;
  count_bits_ = kernel.count_bits;
  fold_ = kernel.fold;
  sign_bits_ = kernel.sign_bits;
  NEARDUP_CHECK(bits == 64 || bits == 128) << "SimHash bits (" << bits << ") must be 64 or 128";
}

uint64_t SimHashAccumulator::LowWord(uint64_t feature) {
  return internal::Mix64(feature ^ kSimHash128LowSalt);
}

inline void SimHashAccumulator::AddVotes(int word, uint64_t value) {
  auto& ones = ones_[word];
  for (int b = 0; b < 8; ++b) ones[b] += kByteToLanes[(value >> (8 * b)) & 0xff];
}

void SimHashAccumulator::Add(uint64_t feature) {
  AddVotes(0, feature);
  if (bits_ == 128) AddVotes(1, LowWord(feature));
  if (++num_pending_ == kMaxPending) Flush();
}

void SimHashAccumulator::AddMany(std::span<const uint64_t> features) {
  // The same votes as Add() in a loop, counted by the kernel, at most
  // kMaxPending at a time so no 8-bit lane overflows.
  size_t pos = 0;
  while (pos < features.size()) {
    const size_t room = static_cast<size_t>(kMaxPending - num_pending_);
    const size_t n = std::min(room, features.size() - pos);
    count_bits_(features.data() + pos, n, ones_[0].data());
    if (bits_ == 128) {
      uint64_t low[kMaxPending];
      for (size_t i = 0; i < n; ++i) low[i] = LowWord(features[pos + i]);
      count_bits_(low, n, ones_[1].data());
    }
    pos += n;
    num_pending_ += static_cast<int>(n);
    if (num_pending_ == kMaxPending) Flush();
  }
}

void SimHashAccumulator::AddWeighted(uint64_t feature, int64_t weight) {
  // Votes of the word at sums_[offset, offset + 64).
  auto vote = [&](uint64_t value, int offset) {
    for (int i = 0; i < 64; ++i) {
      sums_[offset + i] += ((value >> i) & 1) ? weight : -weight;
    }
  };
  if (bits_ == 64) {
    vote(feature, 0);
  } else {
    vote(feature, 64);
    vote(LowWord(feature), 0);
  }
}

void SimHashAccumulator::Flush() const {
  if (num_pending_ == 0) return;
  // A pending feature adds +1 where its bit is 1 and -1 where it is 0:
  // sum += ones - (n - ones) = 2 * ones - n.
  if (bits_ == 64) {
    fold_(ones_[0].data(), num_pending_, sums_.data());
  } else {
    fold_(ones_[0].data(), num_pending_, sums_.data() + 64);
    fold_(ones_[1].data(), num_pending_, sums_.data());
  }
  num_pending_ = 0;
}

std::span<const int64_t> SimHashAccumulator::sums() const {
  Flush();
  return std::span<const int64_t>(sums_.data(), static_cast<size_t>(bits_));
}

uint64_t SimHashAccumulator::Finish64() const {
  Flush();
  return sign_bits_(sums_.data() + (bits_ == 128 ? 64 : 0));
}

SimHash128 SimHashAccumulator::Finish128() const {
  NEARDUP_CHECK(bits_ == 128) << "Finish128 on a " << bits_ << "-bit SimHashAccumulator";
  Flush();
  return SimHash128{sign_bits_(sums_.data() + 64), sign_bits_(sums_.data())};
}

void SimHashAccumulator::Reset() {
  // A 64-bit accumulator uses ones_[0] and sums_[0, 64) only.
  ones_[0].fill(0);
  if (bits_ == 128) ones_[1].fill(0);
  std::fill_n(sums_.begin(), bits_, 0);
  num_pending_ = 0;
}

}  // namespace neardup
