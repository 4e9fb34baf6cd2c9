#include "gpu/gpu_tables.h"

#include <cstring>
#include <string_view>

#include "hash/xxh3_inline.h"
#include "text/normalizer.h"
#include "text/token_hasher.h"
#include "text/tokenizer.h"

namespace neardup::internal::gpu {

bool GpuCoversRecipe(const Recipe& recipe, std::string* why) {
  if (recipe.tokenizer == TokenizerKind::kChar) {
    if (why != nullptr) *why = "the char tokenizer is computed on the CPU";
    return false;
  }
  return true;
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
  return tables;
}

}  // namespace neardup::internal::gpu
