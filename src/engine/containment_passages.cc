// MatchingPassages: where two texts (or a query and a stored document)
// share counted chunks, as runs of byte ranges in both texts.
#include "engine/containment_passages.h"

#include <algorithm>
#include <utility>

#include "neardup/near_duplicates.h"

namespace neardup {
namespace internal {
namespace {

struct Run {
  uint32_t query_last_token;
  uint32_t match_last_token;
  Passage passage;
};

bool Extends(const Run& run, const ChunkSpan& q, const ChunkSpan& m, uint32_t max_gap_tokens) {
  const uint64_t q_reach = uint64_t{run.query_last_token} + 1 + max_gap_tokens;
  const uint64_t m_reach = uint64_t{run.match_last_token} + 1 + max_gap_tokens;
  return q.first_token <= q_reach && q.last_token > run.query_last_token &&
         m.first_token <= m_reach && m.last_token > run.match_last_token;
}

}  // namespace

std::vector<Passage> ChainPassages(std::span<const ChunkSpan> query,
                                   std::span<const ChunkSpan> match,
                                   const std::function<bool(uint32_t)>& counted,
                                   uint32_t max_gap_tokens) {
  // The match's occurrences by (id, position): equal_range gives an id's
  // occurrences in text order.
  std::vector<std::pair<uint32_t, uint32_t>> by_id;  // (id, index into match)
  by_id.reserve(match.size());
  for (uint32_t i = 0; i < match.size(); ++i) by_id.emplace_back(match[i].id, i);
  std::sort(by_id.begin(), by_id.end());

  std::vector<Passage> done;
  std::vector<Run> active;  // runs the next query occurrences may still extend
  for (const ChunkSpan& q : query) {
    // Runs that end too far before q can never be extended again: query
    // occurrences come in order of their first token.
    auto stale = [&](const Run& run) {
      return uint64_t{run.query_last_token} + 1 + max_gap_tokens < q.first_token;
    };
    for (const Run& run : active) {
      if (stale(run)) done.push_back(run.passage);
    }
    std::erase_if(active, stale);

    auto [first, last] =
        std::equal_range(by_id.begin(), by_id.end(), std::make_pair(q.id, 0u),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    if (first == last || !counted(q.id)) continue;
    if (last - first > static_cast<std::ptrdiff_t>(kMaxOccurrencesPerChunk)) {
      last = first + kMaxOccurrencesPerChunk;
    }
    bool extended = false;
    for (Run& run : active) {
      for (auto it = first; it != last; ++it) {
        const ChunkSpan& m = match[it->second];
        if (!Extends(run, q, m, max_gap_tokens)) continue;
        run.query_last_token = q.last_token;
        run.match_last_token = m.last_token;
        run.passage.query_begin = std::min(run.passage.query_begin, q.begin);
        run.passage.query_end = std::max(run.passage.query_end, q.end);
        run.passage.match_begin = std::min(run.passage.match_begin, m.begin);
        run.passage.match_end = std::max(run.passage.match_end, m.end);
        ++run.passage.chunks;
        extended = true;
        break;
      }
      if (extended) break;
    }
    if (extended) continue;
    const ChunkSpan& m = match[first->second];
    active.push_back({q.last_token, m.last_token, Passage{q.begin, q.end, m.begin, m.end, 1}});
  }
  for (const Run& run : active) done.push_back(run.passage);
  std::sort(done.begin(), done.end(), [](const Passage& a, const Passage& b) {
    return std::tie(a.query_begin, a.match_begin, a.query_end, a.match_end) <
           std::tie(b.query_begin, b.match_begin, b.query_end, b.match_end);
  });
  return done;
}

Result<PassageMatcher> PassageMatcher::Create(const Recipe& recipe) {
  NEARDUP_ASSIGN_OR_RETURN(ChunkSpanExtractor extractor, ChunkSpanExtractor::Create(recipe));
  // Sampled recipes keep one window in sample_modulus: a run may skip the
  // windows sampling dropped and still be one passage.
  const uint32_t max_gap_tokens =
      static_cast<uint32_t>(recipe.chunks.shingle_width) * (recipe.chunks.sample_modulus - 1);
  return PassageMatcher(std::move(extractor), max_gap_tokens);
}

Result<std::vector<Passage>> PassageMatcher::Match(
    std::span<const ChunkSpan> query, std::string_view match_text,
    const std::function<bool(uint32_t)>& counted) const {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<ChunkSpan> match, extractor_.Extract(match_text));
  static const std::function<bool(uint32_t)> kAll = [](uint32_t) { return true; };
  return ChainPassages(query, match, counted ? counted : kAll, max_gap_tokens_);
}

Result<std::vector<Passage>> PassageMatcher::Match(
    std::string_view query_text, std::string_view match_text,
    const std::function<bool(uint32_t)>& counted) const {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<ChunkSpan> query, extractor_.Extract(query_text));
  return Match(query, match_text, counted);
}

}  // namespace internal

namespace {

Result<std::vector<Passage>> PassagesWith(const Collection& collection,
                                          const internal::PassageMatcher& matcher,
                                          std::span<const internal::ChunkSpan> query,
                                          uint32_t match_doc) {
  if (!collection.stores_texts()) {
    return FailedPreconditionError("collection " + collection.dir() +
                                   " does not store texts (created with --no-texts): matching "
                                   "passages are unavailable");
  }
  NEARDUP_ASSIGN_OR_RETURN(std::string text, collection.Text(match_doc));
  const uint32_t cap = collection.max_document_frequency();
  const TieredChunkIndex index = collection.index();
  return matcher.Match(query, text,
                       [&](uint32_t id) { return cap == 0 || index.DocumentFrequency(id) <= cap; });
}

}  // namespace

Recipe NearDuplicatePassageRecipe(Recipe recipe) {
  NearDuplicateOptions exact;
  exact.method = NearDuplicateMethod::kMinHash;
  exact.verify_exact = true;
  return RecipeForNearDuplicates(std::move(recipe), exact);
}

Result<std::vector<Passage>> MatchingPassages(const Recipe& recipe, std::string_view query_text,
                                              std::string_view match_text) {
  NEARDUP_ASSIGN_OR_RETURN(internal::PassageMatcher matcher,
                           internal::PassageMatcher::Create(recipe));
  return matcher.Match(query_text, match_text);
}

Result<std::vector<Passage>> MatchingPassages(const Collection& collection,
                                              std::string_view query_text, uint32_t match_doc) {
  NEARDUP_ASSIGN_OR_RETURN(internal::PassageMatcher matcher,
                           internal::PassageMatcher::Create(collection.recipe()));
  NEARDUP_ASSIGN_OR_RETURN(std::vector<internal::ChunkSpan> query, matcher.Spans(query_text));
  return PassagesWith(collection, matcher, query, match_doc);
}

namespace internal {

Status AddPassages(const Collection& collection, std::string_view query_text, size_t passages_top,
                   std::vector<QueryMatch>* matches) {
  if (passages_top == 0 || matches->empty()) return Status::Ok();
  NEARDUP_ASSIGN_OR_RETURN(PassageMatcher matcher, PassageMatcher::Create(collection.recipe()));
  NEARDUP_ASSIGN_OR_RETURN(std::vector<ChunkSpan> query, matcher.Spans(query_text));
  for (size_t i = 0; i < matches->size() && i < passages_top; ++i) {
    NEARDUP_ASSIGN_OR_RETURN((*matches)[i].passages,
                             PassagesWith(collection, matcher, query, (*matches)[i].doc));
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace neardup
