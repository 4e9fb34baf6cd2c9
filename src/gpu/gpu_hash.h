// The per-element arithmetic of the GPU fingerprint path, written once for
// both compilers: every function is `__host__ __device__` under nvcc and a
// plain inline function under the host compiler, so gpu_hash_test.cc checks
// each one against the CPU definition it reproduces (xxHash's XXH3-64, the
// sdbm and FNV-1a loops of hash/feature_hash.h, ShingleHasher::Combine,
// KValueBuilder's bins and densification probes) on any machine, without a
// GPU.
//
// XXH3-64 is implemented here from its specification (xxHash 0.8,
// doc/xxhash_spec.md): the library's functions are host-only. The 192-byte
// default secret is passed in (the host copies xxHash's own XXH3_kSecret into
// the tables it uploads), so both sides use the same bytes.
//
// Frozen with kRecipeFormatVersion, as the CPU definitions are.
// Cost: O(bytes) per hash; no allocation. Thread safety: pure functions.
#ifndef NEARDUP_GPU_GPU_HASH_H_
#define NEARDUP_GPU_GPU_HASH_H_

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define NEARDUP_HD __host__ __device__ __forceinline__
#else
#define NEARDUP_HD inline
#endif

namespace neardup::internal::gpu {

inline constexpr size_t kXxh3SecretSize = 192;

// The same constants as util/mix.h and hash/shingle_hasher.h (checked equal
// in gpu_hash_test.cc); repeated because those headers are host-only.
inline constexpr uint64_t kGoldenGammaHd = 0x9e3779b97f4a7c15ULL;
inline constexpr uint64_t kShingleMultiplierHd = 0xc4ceb9fe1a85ec53ULL;
inline constexpr uint64_t kSimHash128LowSaltHd = 0x6a09e667f3bcc908ULL;

NEARDUP_HD uint64_t Mix64Hd(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// The high 64 bits of a * b.
NEARDUP_HD uint64_t MulHi64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

NEARDUP_HD uint64_t Read64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

NEARDUP_HD uint32_t Read32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

NEARDUP_HD uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

NEARDUP_HD uint32_t Swap32(uint32_t x) {
  return ((x << 24) & 0xff000000u) | ((x << 8) & 0x00ff0000u) | ((x >> 8) & 0x0000ff00u) |
         ((x >> 24) & 0x000000ffu);
}

NEARDUP_HD uint64_t Swap64(uint64_t x) {
  return (static_cast<uint64_t>(Swap32(static_cast<uint32_t>(x))) << 32) |
         Swap32(static_cast<uint32_t>(x >> 32));
}

inline constexpr uint64_t kXxPrime32_1 = 0x9E3779B1U;
inline constexpr uint64_t kXxPrime32_2 = 0x85EBCA77U;
inline constexpr uint64_t kXxPrime32_3 = 0xC2B2AE3DU;
inline constexpr uint64_t kXxPrime64_1 = 0x9E3779B185EBCA87ULL;
inline constexpr uint64_t kXxPrime64_2 = 0xC2B2AE3D27D4EB4FULL;
inline constexpr uint64_t kXxPrime64_3 = 0x165667B19E3779F9ULL;
inline constexpr uint64_t kXxPrime64_4 = 0x85EBCA77C2B2AE63ULL;
inline constexpr uint64_t kXxPrime64_5 = 0x27D4EB2F165667C5ULL;
inline constexpr uint64_t kXxPrimeMx1 = 0x165667919E3779F9ULL;
inline constexpr uint64_t kXxPrimeMx2 = 0x9FB21C651E98DF25ULL;

NEARDUP_HD uint64_t Xxh64Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kXxPrime64_2;
  h ^= h >> 29;
  h *= kXxPrime64_3;
  h ^= h >> 32;
  return h;
}

NEARDUP_HD uint64_t Xxh3Avalanche(uint64_t h) {
  h ^= h >> 37;
  h *= kXxPrimeMx1;
  h ^= h >> 32;
  return h;
}

NEARDUP_HD uint64_t Xxh3Rrmxmx(uint64_t h, uint64_t len) {
  h ^= Rotl64(h, 49) ^ Rotl64(h, 24);
  h *= kXxPrimeMx2;
  h ^= (h >> 35) + len;
  h *= kXxPrimeMx2;
  h ^= h >> 28;
  return h;
}

NEARDUP_HD uint64_t MulFold64(uint64_t a, uint64_t b) { return (a * b) ^ MulHi64(a, b); }

NEARDUP_HD uint64_t Xxh3Mix16(const uint8_t* in, const uint8_t* secret, uint64_t seed) {
  return MulFold64(Read64(in) ^ (Read64(secret) + seed),
                   Read64(in + 8) ^ (Read64(secret + 8) - seed));
}

// One 64-byte stripe into the eight accumulators, with the seeded secret
// from byte `offset` (a multiple of 8): even words + seed, odd words - seed.
NEARDUP_HD void Xxh3Accumulate512(uint64_t* acc, const uint8_t* in, const uint8_t* secret,
                                  uint64_t seed, size_t offset) {
  for (size_t i = 0; i < 8; ++i) {
    const size_t word = offset / 8 + i;
    const uint64_t key = Read64(secret + 8 * word) + ((word & 1) ? (0 - seed) : seed);
    const uint64_t data = Read64(in + 8 * i);
    const uint64_t keyed = data ^ key;
    acc[i ^ 1] += data;
    acc[i] += (keyed & 0xFFFFFFFFULL) * (keyed >> 32);
  }
}

// The seeded secret's 64-bit word at byte `offset` (any offset): XXH3 with a
// seed hashes long inputs with a custom secret whose 16-byte pair i is
// (word + seed, word - seed) of the default secret's pair i. Offsets that are
// not multiples of 8 straddle two words, so the bytes are built one by one.
NEARDUP_HD uint64_t SeededSecret64(const uint8_t* secret, uint64_t seed, size_t offset) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; --b) {
    const size_t pos = offset + static_cast<size_t>(b);
    const size_t word = pos / 8;
    const uint64_t w = Read64(secret + 8 * word) + ((word & 1) ? (0 - seed) : seed);
    v = (v << 8) | ((w >> (8 * (pos % 8))) & 0xFF);
  }
  return v;
}

NEARDUP_HD uint64_t Xxh3Long(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  uint64_t acc[8] = {kXxPrime32_3, kXxPrime64_1, kXxPrime64_2, kXxPrime64_3,
                     kXxPrime64_4, kXxPrime32_2, kXxPrime64_5, kXxPrime32_1};
  constexpr size_t kStripesPerBlock = (kXxh3SecretSize - 64) / 8;
  constexpr size_t kBlockLen = 64 * kStripesPerBlock;
  const size_t num_blocks = (len - 1) / kBlockLen;
  for (size_t n = 0; n < num_blocks; ++n) {
    for (size_t s = 0; s < kStripesPerBlock; ++s) {
      Xxh3Accumulate512(acc, in + n * kBlockLen + s * 64, secret, seed, s * 8);
    }
    // Scramble with the last 64 bytes of the (seeded) secret: word offsets
    // 128..184, aligned, so the seeded word is the word +/- seed.
    for (int i = 0; i < 8; ++i) {
      const uint64_t key =
          Read64(secret + kXxh3SecretSize - 64 + 8 * i) + ((i & 1) ? (0 - seed) : seed);
      uint64_t a = acc[i];
      a ^= a >> 47;
      a ^= key;
      a *= kXxPrime32_1;
      acc[i] = a;
    }
  }
  const size_t stripes = ((len - 1) - kBlockLen * num_blocks) / 64;
  for (size_t s = 0; s < stripes; ++s) {
    Xxh3Accumulate512(acc, in + num_blocks * kBlockLen + s * 64, secret, seed, s * 8);
  }
  // The last stripe, with the secret at an unaligned offset (192 - 64 - 7).
  {
    const uint8_t* p = in + len - 64;
    const size_t offset = kXxh3SecretSize - 64 - 7;
    for (int i = 0; i < 8; ++i) {
      const uint64_t key = SeededSecret64(secret, seed, offset + 8 * i);
      const uint64_t data = Read64(p + 8 * i);
      const uint64_t keyed = data ^ key;
      acc[i ^ 1] += data;
      acc[i] += (keyed & 0xFFFFFFFFULL) * (keyed >> 32);
    }
  }
  // Merge at secret offset 11 (unaligned).
  uint64_t result = len * kXxPrime64_1;
  for (int i = 0; i < 4; ++i) {
    result += MulFold64(acc[2 * i] ^ SeededSecret64(secret, seed, 11 + 16 * i),
                        acc[2 * i + 1] ^ SeededSecret64(secret, seed, 11 + 16 * i + 8));
  }
  return Xxh3Avalanche(result);
}

// XXH3_64bits_withSeed(in, len, seed) with `secret` the default secret.
NEARDUP_HD uint64_t Xxh3Hd(const uint8_t* in, size_t len, uint64_t seed, const uint8_t* secret) {
  if (len <= 16) {
    if (len > 8) {
      const uint64_t bitflip1 = (Read64(secret + 24) ^ Read64(secret + 32)) + seed;
      const uint64_t bitflip2 = (Read64(secret + 40) ^ Read64(secret + 48)) - seed;
      const uint64_t lo = Read64(in) ^ bitflip1;
      const uint64_t hi = Read64(in + len - 8) ^ bitflip2;
      const uint64_t acc = len + Swap64(lo) + hi + MulFold64(lo, hi);
      return Xxh3Avalanche(acc);
    }
    if (len >= 4) {
      const uint64_t s = seed ^ (static_cast<uint64_t>(Swap32(static_cast<uint32_t>(seed))) << 32);
      const uint32_t in1 = Read32(in);
      const uint32_t in2 = Read32(in + len - 4);
      const uint64_t bitflip = (Read64(secret + 8) ^ Read64(secret + 16)) - s;
      const uint64_t input64 = in2 + (static_cast<uint64_t>(in1) << 32);
      return Xxh3Rrmxmx(input64 ^ bitflip, len);
    }
    if (len > 0) {
      const uint32_t c1 = in[0];
      const uint32_t c2 = in[len >> 1];
      const uint32_t c3 = in[len - 1];
      const uint32_t combined = (c1 << 16) | (c2 << 24) | c3 | (static_cast<uint32_t>(len) << 8);
      const uint64_t bitflip = (Read32(secret) ^ Read32(secret + 4)) + seed;
      return Xxh64Avalanche(static_cast<uint64_t>(combined) ^ bitflip);
    }
    return Xxh64Avalanche(seed ^ (Read64(secret + 56) ^ Read64(secret + 64)));
  }
  if (len <= 128) {
    uint64_t acc = len * kXxPrime64_1;
    if (len > 32) {
      if (len > 64) {
        if (len > 96) {
          acc += Xxh3Mix16(in + 48, secret + 96, seed);
          acc += Xxh3Mix16(in + len - 64, secret + 112, seed);
        }
        acc += Xxh3Mix16(in + 32, secret + 64, seed);
        acc += Xxh3Mix16(in + len - 48, secret + 80, seed);
      }
      acc += Xxh3Mix16(in + 16, secret + 32, seed);
      acc += Xxh3Mix16(in + len - 32, secret + 48, seed);
    }
    acc += Xxh3Mix16(in, secret, seed);
    acc += Xxh3Mix16(in + len - 16, secret + 16, seed);
    return Xxh3Avalanche(acc);
  }
  if (len <= 240) {
    uint64_t acc = len * kXxPrime64_1;
    for (size_t i = 0; i < 8; ++i) acc += Xxh3Mix16(in + 16 * i, secret + 16 * i, seed);
    acc = Xxh3Avalanche(acc);
    const size_t rounds = len / 16;
    for (size_t i = 8; i < rounds; ++i)
      acc += Xxh3Mix16(in + 16 * i, secret + 16 * (i - 8) + 3, seed);
    acc += Xxh3Mix16(in + len - 16, secret + 136 - 17, seed);
    return Xxh3Avalanche(acc);
  }
  return Xxh3Long(in, len, secret, seed);
}

NEARDUP_HD uint64_t SdbmHd(const uint8_t* in, size_t len, uint64_t seed) {
  uint64_t h = seed;
  for (size_t i = 0; i < len; ++i) h = in[i] + (h << 6) + (h << 16) - h;
  return h;
}

NEARDUP_HD uint64_t Fnv1aHd(const uint8_t* in, size_t len, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (size_t i = 0; i < len; ++i) {
    h ^= in[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// ShingleHasher::Combine of token_hashes[0, n) (n >= 1), with the leading
// coefficient LeadingCoefficient(seed) passed in.
NEARDUP_HD uint64_t CombineHd(const uint64_t* token_hashes, uint32_t n, uint64_t leading) {
  if (n == 1) return token_hashes[0];
  uint64_t h = leading;
  for (uint32_t i = 0; i < n; ++i) h = h * kShingleMultiplierHd + Mix64Hd(token_hashes[i]);
  return Mix64Hd(h);
}

NEARDUP_HD uint64_t LeadingCoefficientHd(uint64_t seed) {
  return Mix64Hd(seed + kGoldenGammaHd) | 1;
}

// KValueBuilder's bin of `hash` among `num_bins`.
NEARDUP_HD uint32_t KValueBin(uint64_t hash, uint64_t num_bins) {
  return static_cast<uint32_t>(MulHi64(hash, num_bins));
}

// KValueBuilder::Finish's source bin for an empty bin i, given which bins
// were filled (filled[j] != 0). REQUIRES: some bin is filled.
NEARDUP_HD uint32_t DensifySource(const uint8_t* filled, uint64_t num_bins, uint64_t seed,
                                  uint64_t i) {
  const uint64_t base = Mix64Hd(seed + kGoldenGammaHd * (i + 1));
  const uint64_t max_attempts = 16 * num_bins;
  for (uint64_t attempt = 1; attempt <= max_attempts; ++attempt) {
    const uint64_t j = Mix64Hd(base ^ attempt) % num_bins;
    if (filled[j]) return static_cast<uint32_t>(j);
  }
  uint64_t source = (i + 1) % num_bins;
  while (!filled[source]) source = (source + 1) % num_bins;
  return static_cast<uint32_t>(source);
}

// Whether token[0, len) is one of the `num_words` sorted words of a stopword
// list stored as concatenated bytes with offsets (offsets[num_words] is the
// end): binary search in std::string order (bytes compared as unsigned, a
// prefix before its extensions), so it finds exactly StopwordSet::Contains's
// words.
NEARDUP_HD bool StopwordContainsHd(const uint8_t* word_bytes, const uint32_t* offsets,
                                   uint32_t num_words, const uint8_t* token, uint32_t len) {
  uint32_t lo = 0;
  uint32_t hi = num_words;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const uint8_t* word = word_bytes + offsets[mid];
    const uint32_t word_len = offsets[mid + 1] - offsets[mid];
    const uint32_t common = word_len < len ? word_len : len;
    int cmp = 0;
    for (uint32_t i = 0; i < common && cmp == 0; ++i) {
      cmp = static_cast<int>(word[i]) - static_cast<int>(token[i]);
    }
    if (cmp == 0) cmp = word_len < len ? -1 : (word_len > len ? 1 : 0);
    if (cmp == 0) return true;
    if (cmp < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return false;
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_HASH_H_
