// ContainmentSearcher: the postings walk with a dense counter array.
#include <algorithm>
#include <limits>

#include "neardup/containment.h"

namespace neardup {

bool RanksBefore(const ContainmentMatch& a, const ContainmentMatch& b) {
  const double sa = a.score();
  const double sb = b.score();
  if (sa != sb) return sa > sb;
  return a.doc < b.doc;
}

namespace {

// Search's arithmetic, shared with RankSharedChunks so that a score
// summed from pieces is the same double as one computed whole.
void AddMatch(uint32_t doc, uint32_t shared, double query_size, const TieredChunkIndex& index,
              const ContainmentOptions& options, std::vector<ContainmentMatch>* matches) {
  const uint32_t size = index.DocumentSize(doc);
  if (size == 0 || shared == 0) return;
  ContainmentMatch m{doc, shared, shared / query_size, shared / static_cast<double>(size)};
  if (m.score() >= options.min_similarity) matches->push_back(m);
}

// The live document frequency of a chunk whose postings in tier t are
// postings[t * stride + j].
uint64_t LiveFrequency(const TieredChunkIndex& index,
                       std::span<const std::span<const uint32_t>> postings, size_t j,
                       size_t stride) {
  uint64_t df = 0;
  for (size_t t = 0; t < index.num_tiers(); ++t) {
    const std::span<const uint32_t> list = postings[t * stride + j];
    if (index.dead_documents(t) == 0) {
      df += list.size();
      continue;
    }
    for (uint32_t doc : list) df += index.IsDead(doc) ? 0 : 1;
  }
  return df;
}

void KeepTop(size_t top_n, std::vector<ContainmentMatch>* matches) {
  if (matches->size() > top_n) {
    std::nth_element(matches->begin(), matches->begin() + static_cast<ptrdiff_t>(top_n),
                     matches->end(), RanksBefore);
    matches->resize(top_n);
  }
  std::sort(matches->begin(), matches->end(), RanksBefore);
}

}  // namespace

ContainmentSearcher::ContainmentSearcher(const TieredChunkIndex& index) : index_(index) {}

void ContainmentSearcher::Count(std::span<const uint32_t> query, uint32_t max_document_frequency,
                                ContainmentSearchStats* stats) {
  if (counts_.size() < index_.num_doc_slots()) counts_.resize(index_.num_doc_slots(), 0);
  const uint64_t cap =
      max_document_frequency == 0 ? std::numeric_limits<uint64_t>::max() : max_document_frequency;
  const std::span<const ChunkIndex> tiers = index_.tiers();
  const size_t num_tiers = tiers.size();
  uint64_t visited = 0;
  uint64_t boilerplate = 0;
  uint32_t* counts = counts_.data();
  // The query's chunks are looked up a group at a time in every tier, with
  // the lookups' memory accesses overlapped (ChunkIndex::PostingsOfEach);
  // one lookup at a time, a search over 6 tiers cost 2.5 times the merged
  // index's (docs/CONTAINMENT.md, "Search over tiers").
  constexpr size_t kGroup = 64;
  postings_.resize(num_tiers * kGroup);
  for (size_t g = 0; g < query.size(); g += kGroup) {
    const std::span<const uint32_t> group = query.subspan(g, std::min(kGroup, query.size() - g));
    for (size_t t = 0; t < num_tiers; ++t) {
      tiers[t].PostingsOfEach(group, std::span(postings_).subspan(t * kGroup, group.size()));
    }
    for (size_t j = 0; j < group.size(); ++j) {
      // df counts live documents only; dead ones are subtracted only when
      // the stored count alone cannot decide (each dead document of a tier
      // holds a chunk at most once).
      uint64_t stored = 0;
      uint64_t dead_bound = 0;
      for (size_t t = 0; t < num_tiers; ++t) {
        const size_t size = postings_[t * kGroup + j].size();
        stored += size;
        dead_bound += std::min<uint64_t>(index_.dead_documents(t), size);
      }
      if (stored > cap &&
          (stored - dead_bound > cap || LiveFrequency(index_, postings_, j, kGroup) > cap)) {
        ++boilerplate;
        continue;
      }
      for (size_t t = 0; t < num_tiers; ++t) {
        const bool has_dead = index_.dead_documents(t) != 0;
        for (uint32_t doc : postings_[t * kGroup + j]) {
          // A corrupt unverified file may name a document past the slots.
          if (doc >= counts_.size() || (has_dead && index_.IsDead(doc))) continue;
          ++visited;
          if (counts[doc]++ == 0) touched_.push_back(doc);
        }
      }
    }
  }
  if (stats != nullptr) {
    stats->postings_visited += visited;
    stats->boilerplate_chunks += boilerplate;
    stats->candidates += touched_.size();
  }
}

std::vector<ContainmentMatch> ContainmentSearcher::Search(std::span<const uint32_t> query,
                                                          const ContainmentOptions& options,
                                                          uint32_t exclude_doc,
                                                          ContainmentSearchStats* stats) {
  std::vector<ContainmentMatch> matches;
  if (query.empty() || options.top_n == 0) return matches;
  Count(query, options.max_document_frequency, stats);
  const double query_size = static_cast<double>(query.size());
  for (uint32_t doc : touched_) {
    const uint32_t shared = counts_[doc];
    counts_[doc] = 0;
    if (doc != exclude_doc) AddMatch(doc, shared, query_size, index_, options, &matches);
  }
  touched_.clear();
  KeepTop(options.top_n, &matches);
  return matches;
}

std::vector<SharedChunks> ContainmentSearcher::CountShared(std::span<const uint32_t> query_piece,
                                                           uint32_t max_document_frequency,
                                                           uint32_t exclude_doc,
                                                           ContainmentSearchStats* stats) {
  std::vector<SharedChunks> shared;
  if (query_piece.empty()) return shared;
  Count(query_piece, max_document_frequency, stats);
  shared.reserve(touched_.size());
  for (uint32_t doc : touched_) {
    const uint32_t count = counts_[doc];
    counts_[doc] = 0;
    if (doc != exclude_doc) shared.push_back({doc, count});
  }
  touched_.clear();
  return shared;
}

std::vector<ContainmentMatch> RankSharedChunks(std::span<const SharedChunks> counts,
                                               size_t query_size, const TieredChunkIndex& index,
                                               const ContainmentOptions& options) {
  std::vector<ContainmentMatch> matches;
  if (query_size == 0 || options.top_n == 0) return matches;
  const double size = static_cast<double>(query_size);
  for (const SharedChunks& c : counts) AddMatch(c.doc, c.shared, size, index, options, &matches);
  KeepTop(options.top_n, &matches);
  return matches;
}

std::span<const uint32_t> QueryChunksInRange(std::span<const uint32_t> chunks, uint64_t begin,
                                             uint64_t end) {
  const auto first = std::lower_bound(chunks.begin(), chunks.end(), begin,
                                      [](uint32_t c, uint64_t v) { return c < v; });
  const auto last =
      std::lower_bound(first, chunks.end(), end, [](uint32_t c, uint64_t v) { return c < v; });
  return {first, last};
}

std::vector<uint32_t> CapCrossingDocuments(const TieredChunkIndex& before,
                                           const TieredChunkIndex& after,
                                           std::span<const std::span<const uint32_t>> changed,
                                           uint32_t max_document_frequency) {
  std::vector<uint32_t> crossing;
  if (max_document_frequency == 0) return crossing;  // no cap: nothing crosses
  const uint64_t cap = max_document_frequency;
  std::vector<bool> seen(after.num_doc_slots(), false);
  for (std::span<const uint32_t> chunks : changed) {
    for (uint32_t chunk : chunks) {
      if ((after.DocumentFrequency(chunk) <= cap) == (before.DocumentFrequency(chunk) <= cap)) {
        continue;
      }
      for (uint32_t doc : after.Postings(chunk)) {
        if (doc < seen.size() && !seen[doc]) {
          seen[doc] = true;
          crossing.push_back(doc);
        }
      }
    }
  }
  std::sort(crossing.begin(), crossing.end());
  return crossing;
}

}  // namespace neardup
