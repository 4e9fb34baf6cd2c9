// TieredChunkIndex: one logical chunk index made of several immutable
// ChunkIndex tiers (oldest first) and a set of dead documents (tombstones),
// searched together with exactly the answers of the one merged index: the
// postings of a chunk are the live documents of every tier's postings, its
// document frequency counts live documents only, and a dead document has
// size 0.
//
// This is what lets a collection commit cost in proportion to its change
// (an LSM-style layout, as in LevelDB's levels or Lucene's segments): a
// commit writes a tier holding only its new documents, a removal only marks
// documents dead, and tiers are merged (dropping dead postings) when their
// sizes call for it (TierMergeStart) or on compaction.
//
// Invariant: tier i's document numbers all lie below tier i + 1's
// (num_doc_slots() of one <= first_doc() of the next; a collection issues
// ascending numbers, so each commit's tier lies above the older ones), so
// the postings of a chunk, tier after tier, are ascending, and no document
// is in two tiers.
//
// Cost: a lookup per tier (a search batches them: ChunkIndex::PostingsOfEach);
// a posting of a tier holding dead documents costs one extra bit test.
// Create is O(document slots) (it builds the dead-document bitmap from the
// live list). Memory: the tiers (usually memory-mapped) plus one bit per
// document slot when some document is dead.
// Thread safety: immutable; copies share the tiers and the bitmap.
#ifndef NEARDUP_TIERED_CHUNK_INDEX_H_
#define NEARDUP_TIERED_CHUNK_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "neardup/chunk_index.h"
#include "neardup/status.h"

namespace neardup {

class TieredChunkIndex {
 public:
  // No tier: the empty index.
  TieredChunkIndex() = default;
  // One tier, every document live. Implicit: a ChunkIndex is a one-tier
  // TieredChunkIndex with the same answers.
  TieredChunkIndex(ChunkIndex single);  // NOLINT(google-explicit-constructor)

  // `tiers` oldest first; `live_documents` ascending: every document of the
  // tiers that is not in it is dead (numbers in it that no tier holds are
  // ignored). DataLoss when the tiers break the invariant above (their
  // document ranges overlap or descend): tiers come from files.
  static Result<TieredChunkIndex> Create(std::vector<ChunkIndex> tiers,
                                         std::span<const uint32_t> live_documents);

  std::span<const ChunkIndex> tiers() const { return tiers_; }
  size_t num_tiers() const { return tiers_.size(); }
  // Dead documents of tier `tier` (whose postings are still in it).
  uint64_t dead_documents(size_t tier) const { return tier_dead_[tier].documents; }
  uint64_t dead_postings(size_t tier) const { return tier_dead_[tier].postings; }
  bool IsDead(uint32_t doc) const {
    return dead_ != nullptr && doc < dead_->size() * 64 && ((*dead_)[doc / 64] >> (doc % 64)) & 1;
  }

  // As ChunkIndex::DocumentSize of the merged index: 0 for a dead document.
  uint32_t DocumentSize(uint32_t doc) const;
  // The number of live documents containing `chunk` (df).
  uint64_t DocumentFrequency(uint32_t chunk) const;
  // The live documents containing `chunk`, ascending (allocates).
  std::vector<uint32_t> Postings(uint32_t chunk) const;

  // One slot per document number in [0, num_doc_slots()).
  size_t num_doc_slots() const { return num_doc_slots_; }
  // Live documents with at least one chunk.
  uint64_t num_documents() const { return num_documents_; }
  // Live postings (dead ones are not counted).
  uint64_t num_postings() const { return num_postings_; }
  // Postings of dead documents still stored in the tiers.
  uint64_t num_dead_postings() const { return num_dead_postings_; }
  // Distinct chunk IDs with a live posting. O(keys of all tiers).
  uint64_t CountKeys() const;
  // Keys whose live document frequency exceeds `max_document_frequency`.
  // O(keys of all tiers), plus the postings of tiers holding dead documents.
  uint64_t CountKeysAbove(uint32_t max_document_frequency) const;
  // Bytes of all tiers' arrays plus the bitmap.
  uint64_t MemoryBytes() const;

  // The one index with the same contents (dead postings dropped).
  // O(all postings); InvalidArgument when two tiers hold one document.
  Result<ChunkIndex> Merged() const;
  // The live contents of tiers [begin, end) as one index (what a merge of
  // those tiers writes). REQUIRES: begin <= end <= num_tiers().
  Result<ChunkIndex> MergeTiers(size_t begin, size_t end) const;
  // ChunkIndex::VerifyChecksum of every tier.
  Status VerifyChecksum() const;

 private:
  struct Dead {
    uint64_t documents = 0;
    uint64_t postings = 0;
  };
  std::vector<ChunkIndex> tiers_;
  std::vector<Dead> tier_dead_;
  // Bit d set: document d is dead. Null when no document is.
  std::shared_ptr<const std::vector<uint64_t>> dead_;
  size_t num_doc_slots_ = 0;
  uint64_t num_documents_ = 0;
  uint64_t num_postings_ = 0;
  uint64_t num_dead_postings_ = 0;
};

// The size of one tier, as the merge policy sees it.
struct TierSize {
  uint64_t postings = 0;       // stored, dead included
  uint64_t dead_postings = 0;  // of dead documents
};

// The merge policy of a tiered index (size-tiered, as in LSM trees): given
// the tiers' sizes, oldest first, with the tier a commit is about to add as
// the last, the first tier of the run [start, n) to merge into one (start ==
// n - 1: nothing to merge, the new tier is written alone). A tier is merged
// with the newer ones when it is less than `size_ratio` times their live
// postings together (so live sizes fall geometrically from the oldest tier:
// at most log_ratio(all / smallest) tiers, and a posting is rewritten about
// log_ratio(all / its commit) times), or when more than half of its postings
// are dead. REQUIRES: sizes not empty, size_ratio >= 2.
size_t TierMergeStart(std::span<const TierSize> sizes, uint64_t size_ratio);

}  // namespace neardup

#endif  // NEARDUP_TIERED_CHUNK_INDEX_H_
