#include "gpu/gpu_tables.h"

#include <cstring>
#include <string_view>

#include "gpu/gpu_utf8_tables.h"
#include "hash/xxh3_inline.h"
#include "text/normalizer.h"
#include "text/token_hasher.h"
#include "text/tokenizer.h"

namespace neardup::internal::gpu {

bool GpuCoversRecipe(const Recipe& recipe, std::string* why) {
  const char* missing = nullptr;
  if (IsDigestRecipe(recipe)) {
    missing = "digest recipes (MD5, SHA-1, SHA-256) are computed on the CPU";
  } else if (recipe.tokenizer != TokenizerKind::kWord &&
             recipe.tokenizer != TokenizerKind::kWhitespace) {
    missing = "only the word and whitespace tokenizers run on the GPU";
  } else if (recipe.normalization.kind != NormalizerKind::kUnicode) {
    missing = "only the Unicode normalizer runs on the GPU";
  } else if (recipe.simhash.tie != SimHashTieRule::kOne) {
    missing = "only the paper's SimHash tie rule (a sum of 0 gives 1) runs on the GPU";
  }
  if (missing == nullptr) return true;
  if (why != nullptr) *why = missing;
  return false;
}

Result<GpuRecipeTables> BuildGpuRecipeTables(const Recipe& recipe) {
  NEARDUP_CHECK(GpuCoversRecipe(recipe, nullptr)) << "recipe not covered by the GPU path";
  GpuRecipeTables tables;
  std::string normalized;
  for (int c = 0; c < 128; ++c) {
    const std::string one(1, static_cast<char>(c));
    Normalize(one, recipe.normalization, &normalized, nullptr);
    if (normalized.empty()) continue;  // deleted (punctuation removal)
    // On ASCII, normalisation maps each byte to at most one ASCII byte; a
    // different answer would make the byte tables wrong, so it is checked.
    if (normalized.size() != 1 || static_cast<unsigned char>(normalized[0]) >= 0x80) {
      return InternalError("Normalize maps ASCII byte " + std::to_string(c) +
                           " to something other than one ASCII byte");
    }
    int tokens = 0;
    ForEachToken(recipe.tokenizer, normalized, [&](std::string_view) { ++tokens; });
    tables.mapped[c] = static_cast<uint8_t>(normalized[0]);
    tables.byte_class[c] = kByteKept | (tokens > 0 ? kByteToken : 0);
  }
  std::memcpy(tables.xxh3_secret.data(), XXH3_kSecret, kXxh3SecretSize);
  tables.hash = recipe.hash;
  tables.seed = recipe.seed;
  NEARDUP_ASSIGN_OR_RETURN(TokenHasher token_hasher, TokenHasher::Create(recipe));
  if (const StopwordSet* stopwords = token_hasher.stopwords()) {
    for (const std::string& word : stopwords->words()) {
      tables.stopword_bytes += word;
      tables.stopword_offsets.push_back(static_cast<uint32_t>(tables.stopword_bytes.size()));
    }
  }
  if (GpuUtf8PathEnabled()) {
    NEARDUP_ASSIGN_OR_RETURN(GpuUtf8Tables utf8, BuildGpuUtf8Tables(recipe));
    tables.utf8 = std::make_shared<const GpuUtf8Tables>(std::move(utf8));
  }
  return tables;
}

}  // namespace neardup::internal::gpu
