// SipHash (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
// INDOCRYPT 2012): a keyed 64-bit hash of a byte string. Used where the
// bytes come from a client and a hash table must not be floodable: without
// the key, no one can choose inputs that collide (the stream's id index,
// src/stream/stream_id_index.h). SipHash-c-d runs c rounds per 8-byte word
// of the message and d at the end; the paper's SipHash-2-4 is the
// conservative PRF, SipHash-1-3 (Rust's HashMap, the Linux kernel's
// hsiphash on 64-bit) the faster one for hash tables.
//
// Written from the paper's specification (section 2); golden tests in
// siphash_test.cc: the paper's Appendix A vector and the reference
// implementation's 64 vectors for SipHash-2-4, Rust's 64 for SipHash-1-3.
// Never stored: a key is per process (RandomSipKey), so a value means
// nothing to another process.
// Cost: (c * (words) + d) rounds of 14 simple 64-bit operations, words =
// bytes / 8 + 1; no allocation. Thread safety: pure functions.
#ifndef NEARDUP_HASH_SIPHASH_H_
#define NEARDUP_HASH_SIPHASH_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace neardup::internal {

// The 128-bit key as the paper's two little-endian words: k0 from key
// bytes 0..7, k1 from 8..15.
struct SipKey {
  uint64_t k0 = 0;
  uint64_t k1 = 0;
};

// A key from the system's random source: getrandom(2) (which blocks until
// the kernel's pool is first initialised, only ever early at boot), else
// std::random_device, else (where that throws too) the clock, the process id
// and addresses mixed by SipHash: weaker, but never a fixed key. Never fails
// and throws nothing; never the same twice but by chance.
SipKey RandomSipKey();

// One key for the whole process, drawn at its first call (thread-safe).
const SipKey& ProcessSipKey();

namespace siphash_detail {

inline uint64_t LoadLittleEndian64(const char* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, 8);
  if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
  return word;
}

struct State {
  uint64_t v0, v1, v2, v3;

  void Round() {
    v0 += v1;
    v2 += v3;
    v1 = std::rotl(v1, 13);
    v3 = std::rotl(v3, 16);
    v1 ^= v0;
    v3 ^= v2;
    v0 = std::rotl(v0, 32);
    v2 += v1;
    v0 += v3;
    v1 = std::rotl(v1, 17);
    v3 = std::rotl(v3, 21);
    v1 ^= v2;
    v3 ^= v0;
    v2 = std::rotl(v2, 32);
  }

  template <int kRounds>
  void Compress(uint64_t word) {
    v3 ^= word;
    for (int i = 0; i < kRounds; ++i) Round();
    v0 ^= word;
  }
};

}  // namespace siphash_detail

// SipHash-c-d of `bytes` under `key`: the message is cut into 8-byte
// little-endian words, the last one holding the remaining 0-7 bytes and the
// length mod 256 in its top byte.
template <int kCompressionRounds, int kFinalizationRounds>
uint64_t SipHash(const SipKey& key, std::string_view bytes) {
  siphash_detail::State s{key.k0 ^ 0x736f6d6570736575ULL, key.k1 ^ 0x646f72616e646f6dULL,
                          key.k0 ^ 0x6c7967656e657261ULL, key.k1 ^ 0x7465646279746573ULL};
  const char* at = bytes.data();
  const size_t full_words = bytes.size() / 8;
  for (size_t i = 0; i < full_words; ++i, at += 8) {
    s.Compress<kCompressionRounds>(siphash_detail::LoadLittleEndian64(at));
  }
  uint64_t last = static_cast<uint64_t>(bytes.size()) << 56;
  for (size_t i = 0; i < bytes.size() % 8; ++i) {
    last |= static_cast<uint64_t>(static_cast<unsigned char>(at[i])) << (8 * i);
  }
  s.Compress<kCompressionRounds>(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < kFinalizationRounds; ++i) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

inline uint64_t SipHash24(const SipKey& key, std::string_view bytes) {
  return SipHash<2, 4>(key, bytes);
}
inline uint64_t SipHash13(const SipKey& key, std::string_view bytes) {
  return SipHash<1, 3>(key, bytes);
}

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_SIPHASH_H_
