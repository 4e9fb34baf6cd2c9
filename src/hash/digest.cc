#include "hash/digest.h"

#include <openssl/evp.h>

#include <string>
#include <utility>

namespace neardup::internal {

struct Digester::State {
  EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~State() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
  }
};

Digester::Digester(std::unique_ptr<State> state, size_t size)
    : state_(std::move(state)), size_(size) {}
Digester::Digester(Digester&&) noexcept = default;
Digester& Digester::operator=(Digester&&) noexcept = default;
Digester::~Digester() = default;

Result<Digester> Digester::Create(FeatureHashKind kind) {
  // (hash/ comes before recipe/ in the module order, so the names and
  // widths are spelled here rather than taken from FeatureHashName.)
  const char* name = nullptr;
  int expected_size = 0;
  switch (kind) {
    case FeatureHashKind::kMd5:
      name = "MD5";
      expected_size = 16;
      break;
    case FeatureHashKind::kSha1:
      name = "SHA1";
      expected_size = 20;
      break;
    case FeatureHashKind::kSha256:
      name = "SHA256";
      expected_size = 32;
      break;
    case FeatureHashKind::kXxh3:
    case FeatureHashKind::kSdbm:
    case FeatureHashKind::kFnv1a:
      break;
  }
  if (name == nullptr) {
    return InvalidArgumentError("feature hash kind " + std::to_string(static_cast<int>(kind)) +
                                " is not a digest (md5, sha1, sha256)");
  }
  auto state = std::make_unique<State>();
  // Fetched once: an explicit fetch spares every init the provider lookup
  // that EVP_md5() and friends would do.
  state->md = EVP_MD_fetch(nullptr, name, nullptr);
  if (state->md == nullptr) {
    return FailedPreconditionError("libcrypto provides no " + std::string(name) +
                                   " digest (is a FIPS-only provider configured?)");
  }
  state->ctx = EVP_MD_CTX_new();
  if (state->ctx == nullptr) return ResourceExhaustedError("EVP_MD_CTX_new failed");
  const int size = EVP_MD_get_size(state->md);
  if (size != expected_size) {
    return InternalError(std::string(name) + " digest has " + std::to_string(size) + " bytes");
  }
  return Digester(std::move(state), static_cast<size_t>(size));
}

Status Digester::Digest(std::string_view bytes, uint8_t* out) {
  return DigestConcatenation(&bytes, 1, out);
}

Status Digester::DigestConcatenation(const std::string_view* parts, size_t num_parts,
                                     uint8_t* out) {
  EVP_MD_CTX* ctx = state_->ctx;
  if (EVP_DigestInit_ex2(ctx, state_->md, nullptr) != 1) {
    return InternalError("EVP_DigestInit_ex2 failed");
  }
  for (size_t i = 0; i < num_parts; ++i) {
    if (!parts[i].empty() && EVP_DigestUpdate(ctx, parts[i].data(), parts[i].size()) != 1) {
      return InternalError("EVP_DigestUpdate failed");
    }
  }
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx, out, &length) != 1 || length != size_) {
    return InternalError("EVP_DigestFinal_ex failed");
  }
  return Status::Ok();
}

}  // namespace neardup::internal
