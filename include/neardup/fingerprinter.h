// Fingerprinter: turns document texts into sketches under one Recipe.
//
// The fingerprint stage sits behind this interface so that another backend
// (a GPU one) can replace the CPU implementation; every backend must give
// bit-identical fingerprints for the same recipe (golden vectors in
// tests/golden/).
//
// Per document the CPU backend costs O(bytes) for normalisation and
// tokenisation, O(features) for SimHash (x bits) and chunks, and
// O(features + k log k) for MinHash; memory is O(k + chunks) per document plus
// one normalised copy of the text per worker thread.
// Thread safety: ComputeBatch is const and may run concurrently.
#ifndef NEARDUP_FINGERPRINTER_H_
#define NEARDUP_FINGERPRINTER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/fingerprint_batch.h"
#include "neardup/fingerprint_input.h"
#include "neardup/minhash.h"
#include "neardup/recipe.h"
#include "neardup/simhash.h"
#include "neardup/status.h"

namespace neardup {

// All sketches of one document. A field is meaningful only when the
// selection asked for it.
struct Fingerprint {
  // The 64-bit SimHash; for a 128-bit recipe, simhash128.high; for a digest
  // recipe, the first 64 bits of simhash_wide.
  uint64_t simhash = 0;
  SimHash128 simhash128{0, 0};  // set when recipe.simhash.bits == 128
  // The digest route's SimHash (128, 160 or 256 bits); simhash holds its
  // first 64 bits and, for 128 bits, simhash128 all of it (high = first).
  // Left empty (bits 0) by the 64-bit feature-hash route.
  WideSimHash simhash_wide;
  // Digest route: the shingles digested. 0 (fewer tokens than the shingle
  // width) means the SimHash is the tie rule's constant and matches nothing.
  uint64_t num_shingles = 0;
  BottomKSketch minhash;
  KValueSketch kvalue_minhash;
  std::vector<uint32_t> chunks;
  // Tokens left after the stopword filter; 0 means the document has no
  // features, and its sketches match nothing.
  uint64_t num_tokens = 0;
  // Invalid UTF-8 sequences replaced by U+FFFD before normalisation.
  uint64_t invalid_utf8_sequences = 0;
};

// Where a backend's documents were fingerprinted, summed over every call
// since the fingerprinter was created (the CPU backend counts nothing here).
struct FingerprinterStats {
  uint64_t device_documents = 0;  // fingerprinted on the GPU
  uint64_t device_bytes = 0;
  uint64_t host_documents = 0;  // handed to the CPU by a GPU backend
  uint64_t host_bytes = 0;
};

class Fingerprinter {
 public:
  virtual ~Fingerprinter() = default;

  virtual const Recipe& recipe() const = 0;
  virtual const SketchSelection& selection() const = 0;

  // Fingerprints texts[i] into (*out)[i], using all cores the calling
  // context allows (oneTBB). Resizes *out to texts.size().
  virtual Status ComputeBatch(std::span<const std::string_view> texts,
                              std::vector<Fingerprint>* out) const = 0;

  // Fingerprints texts[i] into document i of *out, as flat arrays (no heap
  // allocation per document; *out keeps its capacity across calls): the
  // same values as the vector overload. Resets *out to texts.size()
  // documents of FingerprintBatchLayout::For(recipe(), selection()).
  virtual Status ComputeBatch(std::span<const std::string_view> texts,
                              FingerprintBatch* out) const = 0;

  // Submits a filled input (NewInput): its texts into *out.
  Status ComputeBatch(const FingerprintInput& input, FingerprintBatch* out) const {
    return ComputeBatch(input.texts(), out);
  }

  // A buffer for a reader to lay texts into (fingerprint_input.h), in the
  // memory this backend reads fastest: page-locked for CUDA, plain heap
  // memory for the CPU. `initial_bytes` is reserved up front.
  virtual Result<std::unique_ptr<FingerprintInput>> NewInput(size_t initial_bytes) const {
    return NewHostFingerprintInput(initial_bytes);
  }

  // Fingerprints one text on the calling thread.
  virtual Status Compute(std::string_view text, Fingerprint* out) const = 0;

  // "cpu" or "cuda".
  virtual std::string_view backend_name() const { return "cpu"; }
  // Thread-safe; all zeros for the CPU backend.
  virtual FingerprinterStats stats() const { return {}; }
};

// The portable CPU backend. Fails on an invalid recipe (ValidateRecipe) or an
// empty selection. A digest recipe (IsDigestRecipe) takes the digest route,
// apart from the 64-bit fast path: it computes SimHash only (asking for
// another sketch is an error).
Result<std::unique_ptr<Fingerprinter>> CreateCpuFingerprinter(const Recipe& recipe,
                                                              const SketchSelection& selection);

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINTER_H_
