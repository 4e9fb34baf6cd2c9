// CollectFingerprints' estimate of how many documents to reserve the
// corpus' vectors for, from the documents per byte of a mapped file's chunks
// so far. A pure function of its numbers, so that hostile ones can be tested;
// the reservation it sizes is a hint (fingerprint_pipeline.cc falls back to
// the vectors' own growth when it cannot be had).
#ifndef NEARDUP_ENGINE_CORPUS_RESERVE_H_
#define NEARDUP_ENGINE_CORPUS_RESERVE_H_

#include <algorithm>
#include <cstdint>

namespace neardup::internal {

struct CorpusReserveInputs {
  uint64_t held = 0;                 // documents in the corpus
  uint64_t capacity = 0;             // what its vectors hold without growing
  uint64_t block_documents = 0;      // documents about to be appended
  uint64_t file_first_document = 0;  // `held` when the current file began
  uint64_t mapped_end = 0;           // bytes of the file read so far
  uint64_t file_size = 0;
  uint64_t document_bytes = 0;  // the vectors' bytes per document
  uint64_t budget_bytes = 0;    // the most the vectors may be reserved for
};

// Returns 0 when no reservation is due (the block fits, nothing read yet);
// otherwise the documents to reserve for: those expected up to the file's
// end (its documents per byte so far, plus 10 %, plus 64), at most
// budget_bytes / document_bytes, and at least half again the capacity (the
// vectors' own growth step).
inline uint64_t CorpusReservation(const CorpusReserveInputs& in) {
  const uint64_t after = in.held + in.block_documents;
  if (after <= in.capacity || in.mapped_end == 0) return 0;
  const uint64_t in_file = after > in.file_first_document ? after - in.file_first_document : 0;
  const double per_byte = static_cast<double>(in_file) / static_cast<double>(in.mapped_end);
  const uint64_t remaining = in.file_size > in.mapped_end ? in.file_size - in.mapped_end : 0;
  const double expected =
      static_cast<double>(after) + 1.1 * per_byte * static_cast<double>(remaining) + 64.0;
  const uint64_t cap = in.budget_bytes / std::max<uint64_t>(in.document_bytes, 1);
  // Compared as doubles: `expected` may not fit in 64 bits.
  const uint64_t documents =
      expected >= static_cast<double>(cap) ? cap : static_cast<uint64_t>(expected);
  return std::max<uint64_t>(documents, in.capacity + in.capacity / 2);
}

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_CORPUS_RESERVE_H_
