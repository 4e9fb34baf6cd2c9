// Digester: cryptographic digests (MD5, SHA-1, SHA-256) of byte strings, the
// feature hashes of the digest route (recipes with FeatureHashKind kMd5,
// kSha1, kSha256), through OpenSSL's libcrypto one-shot calls (MD5(),
// SHA1(), SHA256()). No digest code of our own: the values are the standard
// ones (RFC 1321, FIPS 180-4), checked against published test vectors in
// digest_test.cc.
//
// Cost: one libcrypto call per digest, no allocation; MD5 of a short shingle
// (one 64-byte block) is about 140 ns. OpenSSL 3.0 has no multi-buffer
// digest API to batch with.
// Thread safety: const and stateless; share one freely.
#ifndef NEARDUP_HASH_DIGEST_H_
#define NEARDUP_HASH_DIGEST_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal {

// The largest digest, in bytes (SHA-256).
inline constexpr size_t kMaxDigestBytes = 32;

class Digester {
 public:
  // Fails for a kind that is not a digest.
  static Result<Digester> Create(FeatureHashKind kind);

  // Digest length in bytes: 16, 20 or 32. Invariant: <= kMaxDigestBytes.
  size_t size() const { return size_; }

  // Writes the digest of `bytes` to out[0, size()).
  void Digest(std::string_view bytes, uint8_t* out) const;

 private:
  using Function = unsigned char* (*)(const unsigned char*, size_t, unsigned char*);
  Digester(Function function, size_t size) : function_(function), size_(size) {}

  Function function_;
  size_t size_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_DIGEST_H_
