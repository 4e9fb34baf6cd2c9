// Digester: cryptographic digests (MD5, SHA-1, SHA-256) of byte strings, the
// feature hashes of the digest route (recipes with FeatureHashKind kMd5,
// kSha1, kSha256), through OpenSSL's libcrypto EVP interface. No digest code
// of our own: the values are the standard ones (RFC 1321, FIPS 180-4),
// checked against published test vectors in digest_test.cc.
//
// Cost: one EVP init/update/final per digest on a context created once and
// reused (no allocation per digest); MD5 of a short shingle is a single
// 64-byte block, a few hundred ns. Memory: one EVP_MD_CTX.
// Thread safety: a Digester is not thread-safe (its context is reused); use
// one per thread.
#ifndef NEARDUP_HASH_DIGEST_H_
#define NEARDUP_HASH_DIGEST_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal {

// The largest digest, in bytes (SHA-256). Invariant: size() <= this.
inline constexpr size_t kMaxDigestBytes = 32;

class Digester {
 public:
  // Fails for a kind that is not a digest, or when libcrypto cannot provide
  // it (a FIPS-only configuration has no MD5).
  static Result<Digester> Create(FeatureHashKind kind);

  Digester(Digester&&) noexcept;
  Digester& operator=(Digester&&) noexcept;
  ~Digester();

  // Digest length in bytes: 16, 20 or 32.
  size_t size() const { return size_; }

  // Writes the digest of `bytes` to out[0, size()). Fails only when libcrypto
  // does (out of memory).
  Status Digest(std::string_view bytes, uint8_t* out);

  // The digest of the concatenation of `parts`, without copying them.
  Status DigestConcatenation(const std::string_view* parts, size_t num_parts, uint8_t* out);

 private:
  struct State;
  explicit Digester(std::unique_ptr<State> state, size_t size);

  std::unique_ptr<State> state_;
  size_t size_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_DIGEST_H_
