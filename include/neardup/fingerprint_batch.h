// FingerprintBatch: the fingerprints of a batch of documents as flat arrays
// (structure of arrays), the output of Fingerprinter::ComputeBatch that
// needs no heap allocation per document. Every array is indexed by document
// (d in [0, size())); sketches of fixed length are row-major with k values
// per document; chunk sets, whose length varies, are one array of ids with
// size() + 1 offsets. The arrays map straight onto numpy arrays, MPI buffers
// and GPU result buffers (the FAISS shape: add(n, x)), and a view per
// document (FingerprintView) reads one document without copying.
//
// An array is filled only when the layout's selection asks for it (the
// others are empty spans). Values are exactly those of the per-document
// Fingerprint (CopyTo gives an equal Fingerprint; fingerprint_batch_test.cc),
// so the frozen fingerprints of a recipe are frozen here too.
//
// Cost: Reset is O(size() * row bytes) when the batch grows and O(1)
// amortised otherwise: every array keeps its capacity across calls, so a
// batch reused for batches of similar size allocates nothing. Memory: 8 bytes
// per document per SimHash word, 8k + 4 per bottom-k sketch, 8k + 1 per
// k-value sketch, 4 per chunk id plus 8 per document, 16 for the counters.
// Thread safety: const methods may run concurrently; filling follows the
// contracts of the producer methods below.
#ifndef NEARDUP_FINGERPRINT_BATCH_H_
#define NEARDUP_FINGERPRINT_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "neardup/simhash.h"

namespace neardup {

struct Fingerprint;
struct Recipe;

// Which sketches to compute; each costs time, so ask only for what is used.
struct SketchSelection {
  bool simhash = false;         // recipe.simhash.bits: 64, 128 (or 160, 256: digest route)
  bool minhash = false;         // bottom-k, k = recipe.minhash.num_hashes
  bool kvalue_minhash = false;  // one-permutation k values, for LSH banding
  bool chunks = false;          // sorted unique 32-bit chunk ids
};

// The shape of a batch's arrays.
struct FingerprintBatchLayout {
  SketchSelection selection;
  int simhash_bits = 64;  // 64 or 128; 128, 160 or 256 with wide_simhash
  // The digest route (IsDigestRecipe): simhash_wide() holds 4 words per
  // document, of which simhash_bits are set.
  bool wide_simhash = false;
  int num_hashes = 0;  // k of both MinHash sketches (recipe.minhash.num_hashes)

  // The layout of `recipe`'s fingerprints under `selection`.
  static FingerprintBatchLayout For(const Recipe& recipe, const SketchSelection& selection);

  friend bool operator==(const FingerprintBatchLayout& a, const FingerprintBatchLayout& b) {
    return a.selection.simhash == b.selection.simhash &&
           a.selection.minhash == b.selection.minhash &&
           a.selection.kvalue_minhash == b.selection.kvalue_minhash &&
           a.selection.chunks == b.selection.chunks && a.simhash_bits == b.simhash_bits &&
           a.wide_simhash == b.wide_simhash && a.num_hashes == b.num_hashes;
  }
};

// A bottom-k row shorter than k (fewer distinct features) is padded with
// this value after its minhash_count() values.
inline constexpr uint64_t kMinHashPadding = UINT64_MAX;

class FingerprintBatch;

// One document of a batch, read in place. Valid while the batch is neither
// reset nor refilled.
class FingerprintView {
 public:
  FingerprintView(const FingerprintBatch& batch, size_t doc) : batch_(&batch), doc_(doc) {}

  uint64_t simhash() const;          // the 64-bit SimHash (high word of 128)
  SimHash128 simhash128() const;     // 128-bit recipes (and digest route: its first two words)
  WideSimHash simhash_wide() const;  // digest route; bits 0 otherwise
  uint64_t num_shingles() const;     // digest route; 0 otherwise
  std::span<const uint64_t> minhash() const;         // the bottom-k values (no padding)
  std::span<const uint64_t> kvalue_minhash() const;  // k values
  bool kvalue_empty() const;
  std::span<const uint32_t> chunks() const;
  uint64_t num_tokens() const;
  uint64_t invalid_utf8_sequences() const;

 private:
  const FingerprintBatch* batch_;
  size_t doc_;
};

class FingerprintBatch {
 public:
  FingerprintBatch() = default;
  FingerprintBatch(const FingerprintBatch&) = default;
  FingerprintBatch& operator=(const FingerprintBatch&) = default;
  FingerprintBatch(FingerprintBatch&&) = default;
  FingerprintBatch& operator=(FingerprintBatch&&) = default;

  size_t size() const { return num_docs_; }
  const FingerprintBatchLayout& layout() const { return layout_; }
  size_t num_hashes() const { return static_cast<size_t>(layout_.num_hashes); }

  // The arrays (empty when the layout does not select them).
  std::span<const uint64_t> simhash() const { return Span(simhash_, 1); }
  // The low words of a 128-bit feature-hash SimHash (its high words are
  // simhash()).
  std::span<const uint64_t> simhash_low() const;
  // Digest route: 4 words per document (WideSimHash::words).
  std::span<const uint64_t> simhash_wide() const;
  std::span<const uint64_t> num_shingles() const;
  // Bottom-k: k per document, row-major; row d holds minhash_count()[d]
  // ascending values, then kMinHashPadding.
  std::span<const uint64_t> minhash() const { return Span(minhash_, num_hashes()); }
  std::span<const uint32_t> minhash_count() const { return Span(minhash_count_, 1); }
  // k-value: k per document, row-major; a row whose kvalue_empty() is 1
  // holds k zeros that mean nothing.
  std::span<const uint64_t> kvalue_minhash() const { return Span(kvalue_, num_hashes()); }
  std::span<const uint8_t> kvalue_empty() const { return Span(kvalue_empty_, 1); }
  // Chunk set of d: chunk_ids()[chunk_offsets()[d], chunk_offsets()[d + 1]).
  // Set by FinishChunks (all zeros before).
  std::span<const uint64_t> chunk_offsets() const;
  std::span<const uint32_t> chunk_ids() const { return chunk_ids_; }
  std::span<const uint64_t> num_tokens() const { return Span(num_tokens_, 1); }
  std::span<const uint64_t> invalid_utf8_sequences() const { return Span(invalid_utf8_, 1); }

  // REQUIRES: doc < size().
  FingerprintView operator[](size_t doc) const { return FingerprintView(*this, doc); }
  // The document as a Fingerprint (allocates its vectors), equal to what
  // Fingerprinter::Compute gives.
  void CopyTo(size_t doc, Fingerprint* out) const;
  std::vector<Fingerprint> ToFingerprints() const;

  // ---- Filling (backends, bindings) ----
  // Sizes every array for `num_docs` documents of `layout`: fixed-size rows
  // are zero, bottom-k rows are all kMinHashPadding with count 0, k-value
  // rows are zeros with kvalue_empty 1, chunk sets are empty. Keeps
  // capacity.
  void Reset(size_t num_docs, const FingerprintBatchLayout& layout);
  // Reset for a producer that calls SetMinHash for every document and, with
  // k-value MinHash selected, writes every document's k-value row and its
  // empty flag: the bottom-k and k-value rows are sized but not filled
  // (their values are unspecified until written), which saves writing 8k
  // bytes per document twice (the fill would also push the input out of the
  // core's cache). A producer that selects k-value MinHash and does not
  // write every row calls Reset instead: here a reused batch's rows hold
  // the last call's values.
  void ResetForSetMinHash(size_t num_docs, const FingerprintBatchLayout& layout);

  // Writable arrays. Distinct documents may be written by distinct threads
  // at once.
  std::span<uint64_t> mutable_simhash() { return Span(simhash_, 1); }
  std::span<uint64_t> mutable_simhash_low();
  std::span<uint64_t> mutable_simhash_wide();
  std::span<uint64_t> mutable_num_shingles();
  std::span<uint64_t> mutable_minhash() { return Span(minhash_, num_hashes()); }
  std::span<uint32_t> mutable_minhash_count() { return Span(minhash_count_, 1); }
  std::span<uint64_t> mutable_kvalue_minhash() { return Span(kvalue_, num_hashes()); }
  std::span<uint8_t> mutable_kvalue_empty() { return Span(kvalue_empty_, 1); }
  std::span<uint64_t> mutable_num_tokens() { return Span(num_tokens_, 1); }
  std::span<uint64_t> mutable_invalid_utf8_sequences() { return Span(invalid_utf8_, 1); }
  // Writes document d's bottom-k values (at most k, ascending), padding the
  // rest of its row.
  void SetMinHash(size_t doc, std::span<const uint64_t> values);

  // Chunk sets arrive per document in any order, from several threads: the
  // producer splits its work into `num_parts` parts, each written by one
  // thread at a time (a block of documents, a GPU lane). SetChunks copies
  // the ids into the part's buffer (capacity kept across calls);
  // FinishChunks lays every part out into chunk_offsets()/chunk_ids() (in
  // parallel). A document with no SetChunks gets an empty set.
  // REQUIRES: Reset before StartChunks; part < num_parts; each document set
  // at most once.
  void StartChunks(size_t num_parts);
  void SetChunks(size_t part, size_t doc, std::span<const uint32_t> ids);
  void FinishChunks();

  // Copies document `from_doc` of `from` (finished chunks) into document
  // `to_doc` of this batch, its chunk set into part `part`.
  // REQUIRES: from.layout() == layout().
  void CopyDocument(const FingerprintBatch& from, size_t from_doc, size_t to_doc, size_t part);

 private:
  template <typename T>
  std::span<T> Span(std::vector<T>& v, size_t per_doc) {
    return std::span<T>(v.data(), v.empty() ? 0 : num_docs_ * per_doc);
  }
  template <typename T>
  std::span<const T> Span(const std::vector<T>& v, size_t per_doc) const {
    return std::span<const T>(v.data(), v.empty() ? 0 : num_docs_ * per_doc);
  }

  FingerprintBatchLayout layout_;
  size_t num_docs_ = 0;
  // Each vector is sized only when its sketch is selected (empty otherwise);
  // its size() may exceed num_docs_ * row: spans use num_docs_.
  std::vector<uint64_t> simhash_;
  std::vector<uint64_t> simhash_low_;
  std::vector<uint64_t> simhash_wide_;
  std::vector<uint64_t> num_shingles_;
  std::vector<uint64_t> minhash_;
  std::vector<uint32_t> minhash_count_;
  std::vector<uint64_t> kvalue_;
  std::vector<uint8_t> kvalue_empty_;
  std::vector<uint64_t> chunk_offsets_;
  std::vector<uint32_t> chunk_ids_;
  std::vector<uint64_t> num_tokens_;
  std::vector<uint64_t> invalid_utf8_;
  // Chunk parts (StartChunks..FinishChunks): the buffers, and per document
  // its part (UINT32_MAX: none) and where its ids start in it; its count is
  // chunk_offsets_[doc + 1] until FinishChunks turns counts into offsets.
  std::vector<std::vector<uint32_t>> chunk_parts_;
  size_t num_chunk_parts_ = 0;
  std::vector<uint32_t> chunk_part_of_;
  std::vector<uint64_t> chunk_start_;
};

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINT_BATCH_H_
