#include "sketch/digest_simhash.h"

#include "neardup/check.h"

namespace neardup::internal {
namespace {

// kSpread[b] has, in byte lane j (lane 0 the least significant), bit 7 - j
// of b: lane j counts the digest bit 8 * byte + j (most significant first).
constexpr std::array<uint64_t, 256> MakeSpread() {
  std::array<uint64_t, 256> table{};
  for (unsigned b = 0; b < 256; ++b) {
    for (unsigned j = 0; j < 8; ++j)
      table[b] |= static_cast<uint64_t>((b >> (7 - j)) & 1) << (8 * j);
  }
  return table;
}
constexpr std::array<uint64_t, 256> kSpread = MakeSpread();

}  // namespace

DigestSimHashAccumulator::DigestSimHashAccumulator(int bits) : bits_(bits) {
  NEARDUP_CHECK(bits >= 8 && bits <= kMaxBits && bits % 8 == 0) << "digest bits " << bits;
}

void DigestSimHashAccumulator::Add(const uint8_t* digest) {
  const int num_bytes = bits_ / 8;
  for (int byte = 0; byte < num_bytes; ++byte) lanes_[byte] += kSpread[digest[byte]];
  ++count_;
  if (++pending_ == kMaxPending) Fold();
}

void DigestSimHashAccumulator::Fold() {
  for (int i = 0; i < bits_; ++i) {
    ones_[i] += static_cast<int64_t>((lanes_[i / 8] >> (8 * (i % 8))) & 0xFF);
  }
  lanes_.fill(0);
  pending_ = 0;
}

WideSimHash DigestSimHashAccumulator::Finish(SimHashTieRule tie) const {
  WideSimHash out;
  out.bits = bits_;
  for (int i = 0; i < bits_; ++i) {
    const int64_t sum = Sum(i);
    const bool one = sum > 0 || (sum == 0 && tie == SimHashTieRule::kOne);
    if (one) out.words[static_cast<size_t>(i / 64)] |= uint64_t{1} << (63 - i % 64);
  }
  return out;
}

std::vector<uint8_t> WideSimHashBytes(const WideSimHash& simhash) {
  std::vector<uint8_t> bytes(static_cast<size_t>(simhash.bits / 8));
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(simhash.words[i / 8] >> (56 - 8 * (i % 8)));
  }
  return bytes;
}

void DigestSimHashAccumulator::Reset() {
  count_ = 0;
  pending_ = 0;
  ones_.fill(0);
  lanes_.fill(0);
}

}  // namespace neardup::internal
