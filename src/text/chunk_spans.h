// Chunk spans: a text's chunks (the chunk IDs of its chunk set, exactly as
// the Fingerprinter computes them for a recipe) with where each occurrence
// lies, in tokens and in bytes of the ORIGINAL text (text/token_offsets.h).
// The input of matching passages (neardup/containment_engine.h).
//
// A chunk of shingle_width w ending at surviving token t covers tokens
// [t - w + 1, t]; a text with 0 < n < w tokens has one chunk over all of
// them. Remixing (sdbm / FNV-1a unigrams) and sampling (id % sample_modulus)
// follow the Fingerprinter (engine/cpu_fingerprinter.cc); chunk_spans_test.cc
// checks that the set of IDs equals Fingerprint::chunks on many texts.
//
// Cost: TokenSpanner's, plus O(1) per token. Memory: 16 bytes per chunk
// occurrence. Thread safety: const after Create; Extract may run
// concurrently.
#ifndef NEARDUP_TEXT_CHUNK_SPANS_H_
#define NEARDUP_TEXT_CHUNK_SPANS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/status.h"
#include "text/token_offsets.h"

namespace neardup::internal {

struct ChunkSpan {
  uint32_t id = 0;           // chunk ID (neardup/chunk_set.h)
  uint32_t first_token = 0;  // surviving tokens [first_token, last_token]
  uint32_t last_token = 0;
  uint32_t begin = 0;  // bytes [begin, end) of the original text
  uint32_t end = 0;
};

class ChunkSpanExtractor {
 public:
  // The errors of TokenSpanner::Create (the recipe is assumed validated).
  static Result<ChunkSpanExtractor> Create(const Recipe& recipe);

  // Every sampled chunk occurrence of `text`, in text order (an ID occurs
  // once per window that produces it). Errors of TokenSpanner::Tokens.
  Result<std::vector<ChunkSpan>> Extract(std::string_view text) const;

 private:
  ChunkSpanExtractor(const Recipe& recipe, TokenSpanner spanner)
      : shingle_width_(recipe.chunks.shingle_width),
        sample_modulus_(recipe.chunks.sample_modulus),
        seed_(recipe.seed),
        remix_(recipe.hash != FeatureHashKind::kXxh3 && recipe.chunks.shingle_width == 1),
        spanner_(std::move(spanner)) {}

  int shingle_width_;
  uint32_t sample_modulus_;
  uint64_t seed_;
  bool remix_;  // as the Fingerprinter's NeedsRemix
  TokenSpanner spanner_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_CHUNK_SPANS_H_
