#include "text/chunk_spans.h"

#include <utility>

#include "hash/shingle_hasher.h"
#include "neardup/chunk_set.h"
#include "util/mix.h"

namespace neardup::internal {

Result<ChunkSpanExtractor> ChunkSpanExtractor::Create(const Recipe& recipe) {
  if (recipe.chunks.shingle_width < 1 || recipe.chunks.shingle_width > kMaxShingleWidth) {
    return InvalidArgumentError("chunks.shingle_width (" +
                                std::to_string(recipe.chunks.shingle_width) + ") must be in [1, " +
                                std::to_string(kMaxShingleWidth) + "]");
  }
  if (recipe.chunks.sample_modulus < 1) {
    return InvalidArgumentError("chunks.sample_modulus (0) must be at least 1");
  }
  NEARDUP_ASSIGN_OR_RETURN(TokenSpanner spanner, TokenSpanner::Create(recipe));
  return ChunkSpanExtractor(recipe, std::move(spanner));
}

Result<std::vector<ChunkSpan>> ChunkSpanExtractor::Extract(std::string_view text) const {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<SourceTokenSpan> tokens, spanner_.Tokens(text));
  std::vector<ChunkSpan> chunks;
  ShingleHasher shingles(shingle_width_, seed_);
  auto add = [&](uint64_t feature, uint32_t first, uint32_t last) {
    if (remix_) feature = Mix64(feature);
    const uint32_t id = ChunkId(feature);
    if (sample_modulus_ != 1 && id % sample_modulus_ != 0) return;
    chunks.push_back({id, first, last, tokens[first].begin, tokens[last].end});
  };
  const auto width = static_cast<uint32_t>(shingle_width_);
  for (uint32_t t = 0; t < tokens.size(); ++t) {
    shingles.Push(tokens[t].hash, [&](uint64_t feature) { add(feature, t + 1 - width, t); });
  }
  if (!tokens.empty()) {
    shingles.Finish(
        [&](uint64_t feature) { add(feature, 0, static_cast<uint32_t>(tokens.size() - 1)); });
  }
  return chunks;
}

}  // namespace neardup::internal
