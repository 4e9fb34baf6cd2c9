// The per-token work of the GPU token stage (TokenKernel in
// cuda_kernels.cuh), written once for both compilers like gpu/gpu_hash.h, so
// gpu_hash_test.cc runs exactly this code on the host against TokenHasher:
// - TokenEndHd: where a token ends, eight attribute bytes per load;
// - TokenHashIfShortHd: its feature hash, when the token is short enough for
//   the slim kernel (XXH3 up to 16 bytes from word loads and keys computed
//   once per batch, Xxh3ShortKeys; sdbm and FNV-1a at any length). Longer
//   XXH3 tokens go to a second kernel that runs the general Xxh3Hd: keeping
//   its code (and its 8-word accumulator) out of the per-token kernel keeps
//   that kernel's registers, and so the GPU's occupancy, where a
//   latency-bound loop needs them.
// The word loads read up to 15 bytes past the position they start at, so the
// buffers they read carry kTokenPadding bytes after their last byte (any
// value: results never depend on them).
//
// Cost: O(token bytes / 8) loads per token. Thread safety: pure functions.
#ifndef NEARDUP_GPU_GPU_TOKEN_H_
#define NEARDUP_GPU_GPU_TOKEN_H_

#include <cstdint>
#include <cstring>

#include "gpu/gpu_hash.h"
#include "gpu/gpu_tables.h"

namespace neardup::internal::gpu {

// Bytes readable (of any value) after the normalised text and its
// attribute bytes.
inline constexpr uint32_t kTokenPadding = 16;

// Bits of the attribute byte of each normalised position.
inline constexpr uint8_t kAttrToken = 1;
inline constexpr uint8_t kAttrDocStart = 2;

// The 8 bytes at `aligned` (8-byte aligned), little-endian as Read64.
NEARDUP_HD uint64_t LoadAlignedWord(const uint8_t* aligned) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const uint64_t*>(aligned);
#else
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "word loads assume little-endian");
  uint64_t v;
  std::memcpy(&v, aligned, 8);
  return v;
#endif
}

// Read64(p) from at most two aligned 8-byte loads. REQUIRES: the 16 bytes
// from p rounded down to a multiple of 8 are readable.
NEARDUP_HD uint64_t LoadLe64(const uint8_t* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const uint8_t* aligned = p - (address & 7);
  const uint32_t shift = static_cast<uint32_t>(address & 7) * 8;
  const uint64_t low = LoadAlignedWord(aligned);
  if (shift == 0) return low;
  return (low >> shift) | (LoadAlignedWord(aligned + 8) << (64 - shift));
}

NEARDUP_HD uint32_t CountTrailingZeros64(uint64_t x) {  // REQUIRES: x != 0
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__ffsll(static_cast<long long>(x)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctzll(x));
#endif
}

// The end of the token starting at `start`: the first e > start with
// e == size or attrs[e] != kAttrToken (a non-token byte, or the first byte of
// the next document). REQUIRES: start < size; kTokenPadding bytes readable
// after attrs[size - 1].
NEARDUP_HD uint32_t TokenEndHd(const uint8_t* attrs, uint32_t size, uint32_t start) {
  uint32_t e = start + 1;
  while (e < size) {
    // Zero bytes are token bytes; past `size` anything may be read, and the
    // end is clamped below.
    const uint64_t other = LoadLe64(attrs + e) ^ 0x0101010101010101ULL;
    if (other != 0) {
      e += CountTrailingZeros64(other) / 8;
      break;
    }
    e += 8;
  }
  return e < size ? e : size;
}

// XXH3's values for inputs of 0 to 16 bytes that depend only on the secret
// and the seed (Xxh3Hd computes them per call).
struct Xxh3ShortKeys {
  uint64_t seed = 0;
  uint64_t flip_9to16_low = 0;
  uint64_t flip_9to16_high = 0;
  uint64_t flip_4to8 = 0;
  uint64_t flip_1to3 = 0;
  uint64_t empty = 0;  // the hash of the empty input
};

NEARDUP_HD Xxh3ShortKeys MakeXxh3ShortKeys(const uint8_t* secret, uint64_t seed) {
  Xxh3ShortKeys k;
  k.seed = seed;
  k.flip_9to16_low = (Read64(secret + 24) ^ Read64(secret + 32)) + seed;
  k.flip_9to16_high = (Read64(secret + 40) ^ Read64(secret + 48)) - seed;
  const uint64_t s = seed ^ (static_cast<uint64_t>(Swap32(static_cast<uint32_t>(seed))) << 32);
  k.flip_4to8 = (Read64(secret + 8) ^ Read64(secret + 16)) - s;
  k.flip_1to3 = (Read32(secret) ^ Read32(secret + 4)) + seed;
  k.empty = Xxh64Avalanche(seed ^ (Read64(secret + 56) ^ Read64(secret + 64)));
  return k;
}

// Xxh3Hd(in, len, seed, secret) for len <= 16, the same arithmetic with the
// keys precomputed and the input read by LoadLe64 (padding as LoadLe64).
NEARDUP_HD uint64_t Xxh3ShortHd(const uint8_t* in, uint32_t len, const Xxh3ShortKeys& keys) {
  if (len > 8) {
    const uint64_t lo = LoadLe64(in) ^ keys.flip_9to16_low;
    const uint64_t hi = LoadLe64(in + len - 8) ^ keys.flip_9to16_high;
    const uint64_t acc = len + Swap64(lo) + hi + MulFold64(lo, hi);
    return Xxh3Avalanche(acc);
  }
  if (len >= 4) {
    const auto in1 = static_cast<uint32_t>(LoadLe64(in));
    const auto in2 = static_cast<uint32_t>(LoadLe64(in + len - 4));
    const uint64_t input64 = in2 + (static_cast<uint64_t>(in1) << 32);
    return Xxh3Rrmxmx(input64 ^ keys.flip_4to8, len);
  }
  if (len > 0) {
    const uint32_t c1 = in[0];
    const uint32_t c2 = in[len >> 1];
    const uint32_t c3 = in[len - 1];
    const uint32_t combined = (c1 << 16) | (c2 << 24) | c3 | (len << 8);
    return Xxh64Avalanche(static_cast<uint64_t>(combined) ^ keys.flip_1to3);
  }
  return keys.empty;
}

// Whether this token's hash belongs to the slim kernel (XXH3 up to 16
// bytes; sdbm and FNV-1a, byte loops, at any length).
NEARDUP_HD bool IsShortTokenHd(FeatureHashKind kind, uint32_t len) {
  return kind == FeatureHashKind::kSdbm || kind == FeatureHashKind::kFnv1a || len <= 16;
}

// TokenHashHd for a token IsShortTokenHd accepts.
NEARDUP_HD uint64_t ShortTokenHashHd(FeatureHashKind kind, const uint8_t* token, uint32_t len,
                                     const Xxh3ShortKeys& keys) {
  switch (kind) {
    case FeatureHashKind::kSdbm:
      return SdbmHd(token, len, keys.seed);
    case FeatureHashKind::kFnv1a:
      return Fnv1aHd(token, len, keys.seed);
    default:
      return Xxh3ShortHd(token, len, keys);
  }
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_TOKEN_H_
