// ShingleBatch: the features of ShingleHasher (hash/shingle_hasher.h, whose
// frozen definition they follow exactly) computed a batch of tokens at a
// time, for any number of shingle widths from one token stream.
//
// Why a batch: ShingleHasher slides one window per call, through a ring
// buffer, once per sketch. Here Mix64 of each token hash is computed once and
// shared by all widths, and each window is evaluated directly in Horner form
//   Mix64(((h_0 * P + m[i-w+1]) * P + ...) * P + m[i])
// (the same value modulo 2^64 as the sliding sum) with no loop-carried
// dependency, so consecutive windows overlap in the pipeline.
// shingle_batch_test.cc checks every width against ShingleHasher.
//
// On CpuPath::kAvx512 the Mix64 and the windows run 8 lanes per instruction
// (AVX-512DQ vpmullq); every path gives the same values.
//
// Cost: per token one Mix64, per feature `width` multiply-adds and one Mix64.
// Memory: about 2.5 KB ((63 + 256) x 8 B). Thread safety: one per thread.
#ifndef NEARDUP_HASH_SHINGLE_BATCH_H_
#define NEARDUP_HASH_SHINGLE_BATCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "hash/cpu_path.h"
#include "hash/shingle_hasher.h"

namespace neardup::internal {

class ShingleBatch {
 public:
  // The most token hashes one Append may add.
  static constexpr size_t kMaxBatch = 256;

  // REQUIRES: CpuSupports(path).
  explicit ShingleBatch(uint64_t seed, CpuPath path = DetectCpuPath());

  // Adds the next token hashes of the document. REQUIRES: size <= kMaxBatch.
  // The span is not copied: Features(1) reads it (it must stay alive, and
  // unchanged, until the next Append or Reset).
  void Append(std::span<const uint64_t> token_hashes);

  // Writes to out[] the features of the windows of `width` tokens that end
  // at the tokens of the last Append, in order (those ShingleHasher::Push
  // emits), and returns their number (at most the batch size).
  // REQUIRES: 1 <= width <= kMaxShingleWidth; for width 1, the last
  // Append's span still alive (the fingerprinter uses that span itself).
  size_t Features(int width, uint64_t* out) const;

  // The feature ShingleHasher::Finish emits for a document of fewer than
  // `width` tokens (none when it has 0 tokens or at least `width`).
  std::optional<uint64_t> ShortDocumentFeature(int width) const;

  // Starts a new document.
  void Reset();

 private:
  static constexpr size_t kHistory = kMaxShingleWidth - 1;

  template <int kWidth>
  void HornerWindows(size_t first, uint64_t* out) const;
  void HornerWindows(int width, size_t first, uint64_t* out) const;

  bool avx512_;               // path is CpuPath::kAvx512
  uint64_t leading_;          // h_0 = ShingleHasher::LeadingCoefficient(seed)
  uint64_t leading_times_p_;  // h_0 * kShingleMultiplier
  uint64_t count_ = 0;        // tokens of the document so far, the batch included
  // Invariant: mixed_[0, history_ + batch_) are Mix64 of the last tokens of
  // the document, the batch at [history_, history_ + batch_);
  // history_ = min(kHistory, tokens before the batch). The raw hashes are
  // not kept (copying them was ~0.8 % of a MinHash run): batch_raw_ is the
  // last Append's span (width-1 features), first_raw_ the document's first
  // token (the one-token document's feature).
  size_t history_ = 0;
  size_t batch_ = 0;
  const uint64_t* batch_raw_ = nullptr;
  uint64_t first_raw_ = 0;
  std::array<uint64_t, kHistory + kMaxBatch> mixed_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_HASH_SHINGLE_BATCH_H_
