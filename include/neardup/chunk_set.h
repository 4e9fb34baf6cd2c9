// Chunk sets: the set of a document's shingle IDs, optionally sampled, for
// asymmetric containment (how much of document A is found in document B) and
// for the inverted chunk index. Unlike MinHash, a chunk set keeps every
// (sampled) shingle, so containment of a short passage in a long document is
// measured exactly, not estimated.
//
// A chunk ID is the high 32 bits of the 64-bit feature hash. Sampling keeps
// the IDs with id % sample_modulus == 0 (a content-defined sample, the same
// in every document, so shared shingles are kept or dropped together; cf.
// Broder 1997 "MOD_m" sampling); sample_modulus == 1 keeps all.
//
// Frozen: chunk IDs are stored; ChunkId and the sampling rule never change.
// Cost: Add is O(1) amortised; AddMany samples a batch without a branch per
// feature (divisibility by a multiplicative constant, Lemire et al. 2019,
// exact for every 32-bit ID). Finish sorts the n sampled occurrences with
// one counting pass on the top bits into 2^bits buckets, bits =
// min(bit_width(n), 20), then an insertion sort with a budget of 8n moves
// (on the AVX-512 path first three rounds of odd-even transposition,
// sixteen IDs per instruction, which leave the insertion sort little or
// nothing to move; sketch/chunk_set_kernels.h).
// Chunk IDs are hash values, uniform: below 2^20 occurrences a bucket holds
// 0.5-1 IDs on average, about 1 ID in 5-6 moves one place, and Finish is
// O(n) expected. The bucket count is capped at 2^20 (a 4 MiB table, kept by
// the builder and cache-sized, so one huge document does not pin or thrash
// a table as large as itself); past 2^20 occurrences a bucket holds
// n / 2^20 IDs and the insertion sort costs about n * (n / 2^20) / 4 moves,
// so from about 2^25 occurrences it spends its budget. Whatever the input,
// an exhausted budget (crafted input: many distinct IDs in one bucket, or a
// huge document) takes std::sort: O(n log n) at worst.
// Memory, kept for the next document: 12-16 bytes per sampled occurrence
// (IDs and scratch 8 B; bucket counts 2^bits + 1 entries, between n + 1 and
// 2n + 1, at most 2^20 + 1 entries, 4 MiB; 32-47 IDs more of scratch on
// the AVX-512 path), plus, during AddMany, 4 bytes per feature of the batch.
// Thread safety: a builder is not thread-safe; use one per thread.
#ifndef NEARDUP_CHUNK_SET_H_
#define NEARDUP_CHUNK_SET_H_

#include <cstdint>
#include <span>
#include <vector>

namespace neardup {

// The chunk ID of a feature hash. Frozen.
inline uint32_t ChunkId(uint64_t feature) { return static_cast<uint32_t>(feature >> 32); }

// Streams the feature hashes of one document into its sorted chunk set.
class ChunkSetBuilder {
 public:
  // REQUIRES: sample_modulus >= 1.
  explicit ChunkSetBuilder(uint32_t sample_modulus = 1);

  void Add(uint64_t feature) {
    const uint32_t id = ChunkId(feature);
    if (Sampled(id)) ids_.push_back(id);
  }

  // Add() of each feature, in order.
  void AddMany(std::span<const uint64_t> features);

  // The sorted, duplicate-free chunk IDs (id % sample_modulus == 0) of all
  // features added since construction or Reset(). The builder keeps its
  // state: more Add() / AddMany() calls extend the same document.
  std::vector<uint32_t> Finish();

  // Finish() without the copy: a view of the builder's own buffer, valid
  // until the next Add(), AddMany(), Reset(), Finish() or FinishView()
  // (each may reallocate or reorder the buffer).
  std::span<const uint32_t> FinishView();

  // Starts a new document.
  void Reset() { ids_.clear(); }

 private:
  // id % sample_modulus_ == 0 without a division: for a 32-bit d, with
  // c = floor((2^64 - 1) / d) + 1, d divides n iff n * c mod 2^64 <= c - 1
  // (Lemire, Kaser, Kurz 2019, "Faster remainder by direct computation").
  // d == 1 gives c == 0 and keeps every ID.
  bool Sampled(uint32_t id) const { return uint64_t{id} * divisibility_ <= divisibility_ - 1; }

  uint32_t sample_modulus_;
  uint64_t divisibility_;  // c above
  // Finish's sort and unique: the CPU path's kernel (sketch/chunk_set_kernels.h).
  void (*sort_unique_)(std::vector<uint32_t>* ids, std::vector<uint32_t>* scratch,
                       std::vector<uint32_t>* counts);
  std::vector<uint32_t> ids_;
  std::vector<uint32_t> scratch_;  // Finish's buffers, reused across documents
  std::vector<uint32_t> counts_;   // Finish's bucket counts on the top bits
};

}  // namespace neardup

#endif  // NEARDUP_CHUNK_SET_H_
