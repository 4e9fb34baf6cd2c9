#include "neardup/simhash.h"

#include <algorithm>

#include "neardup/check.h"
#include "sketch/simhash_kernels.h"
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

SimHashAccumulator::SimHashAccumulator(int bits)
    : bits_(bits), count_bits_(internal::BestSimHashKernel().count_bits) {
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
  const int64_t n = num_pending_;
  // A pending feature adds +1 where its bit is 1 and -1 where it is 0:
  // sum += ones - (n - ones) = 2 * ones - n.
  auto fold = [&](int word, int offset) {
    for (int b = 0; b < 8; ++b) {
      const uint64_t lanes = ones_[word][b];
      for (int j = 0; j < 8; ++j) {
        const int64_t ones = static_cast<int64_t>((lanes >> (8 * j)) & 0xff);
        sums_[offset + 8 * b + j] += 2 * ones - n;
      }
    }
    ones_[word].fill(0);
  };
  if (bits_ == 64) {
    fold(0, 0);
  } else {
    fold(0, 64);
    fold(1, 0);
  }
  num_pending_ = 0;
}

std::span<const int64_t> SimHashAccumulator::sums() const {
  Flush();
  return std::span<const int64_t>(sums_.data(), static_cast<size_t>(bits_));
}

uint64_t SimHashAccumulator::Finish64() const {
  const std::span<const int64_t> s = sums();
  const int offset = bits_ == 128 ? 64 : 0;
  uint64_t fingerprint = 0;
  for (int i = 0; i < 64; ++i) {
    fingerprint |= static_cast<uint64_t>(s[offset + i] >= 0) << i;
  }
  return fingerprint;
}

SimHash128 SimHashAccumulator::Finish128() const {
  NEARDUP_CHECK(bits_ == 128) << "Finish128 on a " << bits_ << "-bit SimHashAccumulator";
  const std::span<const int64_t> s = sums();
  SimHash128 fingerprint;
  for (int i = 0; i < 64; ++i) {
    fingerprint.low |= static_cast<uint64_t>(s[i] >= 0) << i;
    fingerprint.high |= static_cast<uint64_t>(s[64 + i] >= 0) << i;
  }
  return fingerprint;
}

void SimHashAccumulator::Reset() {
  for (auto& word : ones_) word.fill(0);
  num_pending_ = 0;
  sums_.fill(0);
}

}  // namespace neardup
