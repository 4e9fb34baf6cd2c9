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
// Cost: Add is O(1) amortised; Finish sorts the n sampled occurrences in
// O(n) expected (chunk IDs are hash values, uniform: a bucket pass on the top
// bits leaves about one ID per bucket), O(n log n) at worst. Memory: 12 bytes
// per sampled occurrence (IDs, scratch, buckets), kept for the next document.
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
    if (sample_modulus_ == 1 || id % sample_modulus_ == 0) ids_.push_back(id);
  }

  // The sorted, duplicate-free chunk IDs (id % sample_modulus == 0) of all
  // features added since construction or Reset(). The builder keeps its
  // state: more Add() calls extend the same document.
  std::vector<uint32_t> Finish();

  // Finish() without the copy: a view of the builder's own buffer, valid
  // until the next Add(), Reset() or Finish.
  std::span<const uint32_t> FinishView();

  // Starts a new document.
  void Reset() { ids_.clear(); }

 private:
  uint32_t sample_modulus_;
  std::vector<uint32_t> ids_;
  std::vector<uint32_t> scratch_;  // Finish's buffers, reused across documents
  std::vector<uint32_t> bucket_starts_;
};

}  // namespace neardup

#endif  // NEARDUP_CHUNK_SET_H_
