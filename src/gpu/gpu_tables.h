// GpuRecipeTables: what the GPU fingerprint path needs to know about a
// recipe, derived on the host from the CPU path's own definitions so that the
// two cannot drift apart:
// - per ASCII byte, what Normalize makes of it (deleted, or one byte) and
//   whether that byte is part of a token for the recipe's tokenizer (asked of
//   ForEachToken itself);
// - the stopwords in force (TokenHasher's set, as sorted bytes and offsets);
// - xxHash's default XXH3 secret, the feature hash and the seed.
// The GPU handles pure-ASCII documents only: on ASCII, NFKC is the identity
// and case folding is per byte, so the byte tables are the whole
// normalisation. Other documents are fingerprinted on the CPU.
//
// Cost: building runs Normalize and the tokenizer on 128 one-byte strings
// (microseconds). Thread safety: a plain value.
#ifndef NEARDUP_GPU_GPU_TABLES_H_
#define NEARDUP_GPU_GPU_TABLES_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_hash.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal::gpu {

struct GpuUtf8Tables;  // gpu/gpu_utf8_tables.h

// Bits of GpuRecipeTables::byte_class.
inline constexpr uint8_t kByteKept = 1;   // Normalize keeps the byte (as mapped[c])
inline constexpr uint8_t kByteToken = 2;  // the kept byte belongs to a token

struct GpuRecipeTables {
  std::array<uint8_t, 128> byte_class{};
  std::array<uint8_t, 128> mapped{};
  std::array<uint8_t, kXxh3SecretSize> xxh3_secret{};
  FeatureHashKind hash = FeatureHashKind::kXxh3;
  uint64_t seed = 0;
  // The stopwords in force, sorted: word i is
  // stopword_bytes[stopword_offsets[i], stopword_offsets[i + 1]). Empty when
  // the recipe filters none.
  std::string stopword_bytes;
  std::vector<uint32_t> stopword_offsets{0};
  uint32_t num_stopwords() const { return static_cast<uint32_t>(stopword_offsets.size() - 1); }
  // The UTF-8 path's tables (gpu/gpu_utf8_tables.h), built only when
  // GpuUtf8PathEnabled(); null otherwise: documents with a byte >= 0x80 then
  // go to the CPU.
  std::shared_ptr<const GpuUtf8Tables> utf8;
};

// Whether the GPU path computes this recipe's fingerprints (the word and
// whitespace tokenizers under the Unicode normalizer, feature hashes xxh3,
// sdbm and FNV-1a, the paper's tie rule; the rest is left to the CPU). When not,
// *why (if not null) says what is missing.
bool GpuCoversRecipe(const Recipe& recipe, std::string* why);

// REQUIRES: GpuCoversRecipe(recipe). Fails as TokenHasher::Create does (an
// invalid stopword list).
Result<GpuRecipeTables> BuildGpuRecipeTables(const Recipe& recipe);

// The feature hash of token bytes under the tables' hash kind and seed.
NEARDUP_HD uint64_t TokenHashHd(FeatureHashKind kind, const uint8_t* token, size_t len,
                                uint64_t seed, const uint8_t* secret) {
  switch (kind) {
    case FeatureHashKind::kSdbm:
      return SdbmHd(token, len, seed);
    case FeatureHashKind::kFnv1a:
      return Fnv1aHd(token, len, seed);
    case FeatureHashKind::kXxh3:
    // Digest recipes never reach the GPU (GpuCoversRecipe).
    case FeatureHashKind::kMd5:
    case FeatureHashKind::kSha1:
    case FeatureHashKind::kSha256:
      break;
  }
  return Xxh3Hd(token, len, seed, secret);
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_TABLES_H_
