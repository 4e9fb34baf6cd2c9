// Chaining shared chunk occurrences of two texts into passages (the
// algorithm behind MatchingPassages, neardup/containment_engine.h), apart
// from the collection so it can be tested on hand-made spans.
//
// Cost: O(q log m + pairs * active runs) for q query and m match
// occurrences; at most kMaxOccurrencesPerChunk match occurrences per query
// occurrence. Thread safety: a pure function.
#ifndef NEARDUP_ENGINE_CONTAINMENT_PASSAGES_H_
#define NEARDUP_ENGINE_CONTAINMENT_PASSAGES_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/containment_engine.h"
#include "text/chunk_spans.h"

namespace neardup::internal {

inline constexpr size_t kMaxOccurrencesPerChunk = 64;

// `query` and `match` in text order (ChunkSpanExtractor::Extract). A pair
// (query occurrence, match occurrence of the same id) counts when
// counted(id). A pair extends a run when, in both texts, its first token is
// at most run's last token + 1 + max_gap_tokens and its last token is past
// the run's last token.
std::vector<Passage> ChainPassages(std::span<const ChunkSpan> query,
                                   std::span<const ChunkSpan> match,
                                   const std::function<bool(uint32_t)>& counted,
                                   uint32_t max_gap_tokens);

// The part every matching-passages caller shares (a collection's
// MatchingPassages and its queries, the two-text MatchingPassages of
// neardup/passages.h, the report's pairs, a stream's near-duplicates): the
// recipe's chunk spans of both texts chained by ChainPassages with the
// recipe's gap, shingle_width * (sample_modulus - 1) tokens.
// Thread safety: const after Create; may be shared.
class PassageMatcher {
 public:
  // The errors of ChunkSpanExtractor::Create.
  static Result<PassageMatcher> Create(const Recipe& recipe);

  // The chunk spans of `text` (to chain one query against many matches).
  Result<std::vector<ChunkSpan>> Spans(std::string_view text) const {
    return extractor_.Extract(text);
  }
  // The passages of the query (its Spans) found in `match_text`; a shared
  // chunk counts when counted(id) (null: every chunk).
  Result<std::vector<Passage>> Match(std::span<const ChunkSpan> query, std::string_view match_text,
                                     const std::function<bool(uint32_t)>& counted = {}) const;
  Result<std::vector<Passage>> Match(std::string_view query_text, std::string_view match_text,
                                     const std::function<bool(uint32_t)>& counted = {}) const;

 private:
  PassageMatcher(ChunkSpanExtractor extractor, uint32_t max_gap_tokens)
      : extractor_(std::move(extractor)), max_gap_tokens_(max_gap_tokens) {}
  ChunkSpanExtractor extractor_;
  uint32_t max_gap_tokens_;
};

// Sets the passages of the first `passages_top` of `matches` (the query's
// chunk spans are computed once). The errors of MatchingPassages.
Status AddPassages(const Collection& collection, std::string_view query_text, size_t passages_top,
                   std::vector<QueryMatch>* matches);

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_CONTAINMENT_PASSAGES_H_
