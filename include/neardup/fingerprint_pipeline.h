// RunFingerprintPipeline: streams documents from a DocumentReader through a
// Fingerprinter on all cores and hands each batch, in input order, to a sink.
//
// Reading and the sink run serially (one batch at a time, in order); batches
// are fingerprinted in parallel, with at most `max_batches_in_flight` batches
// in memory. The output therefore never depends on the thread count.
// Memory: about max_batches_in_flight * batch_bytes of document text.
// Thread safety: the sink is called from one thread at a time.
#ifndef NEARDUP_FINGERPRINT_PIPELINE_H_
#define NEARDUP_FINGERPRINT_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "neardup/document.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprinter.h"
#include "neardup/status.h"

namespace neardup {

struct FingerprintPipelineOptions {
  // A batch closes at this many documents or bytes of text, whichever comes
  // first. Defaults 512 and 8 MiB: large enough to amortise scheduling, small
  // enough that the first output appears quickly.
  size_t batch_documents = 512;
  size_t batch_bytes = size_t{8} << 20;
  // Default 0: twice the number of worker threads.
  size_t max_batches_in_flight = 0;
};

struct FingerprintPipelineStats {
  uint64_t documents = 0;
  uint64_t bytes = 0;
  uint64_t empty_documents = 0;  // no tokens after normalisation and stopwords
  uint64_t documents_with_invalid_utf8 = 0;
  uint64_t invalid_utf8_sequences = 0;
};

using FingerprintSink =
    std::function<Status(std::span<const Document>, std::span<const Fingerprint>)>;

// Returns the first error of the reader or the sink (the pipeline stops
// there; batches already handed to the sink stay handed).
Status RunFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                              const FingerprintPipelineOptions& options,
                              const FingerprintSink& sink,
                              FingerprintPipelineStats* stats = nullptr);

// Every document of a reader, fingerprinted and kept in memory in input
// order (texts are not kept). Memory: the selected sketches (about 2 KiB per
// document for both MinHash kinds at k = 128) plus ids.
struct FingerprintedCorpus {
  std::vector<std::string> ids;
  std::vector<uint64_t> lengths;  // bytes of text
  std::vector<Fingerprint> fingerprints;
  // is_jsonl[i]: document i came from a JSONL record (raw_records needs
  // InputOptions::keep_raw_records to tell).
  std::vector<bool> is_jsonl;
  // Filled only when `keep_raw_records` is passed to CollectFingerprints.
  std::vector<std::string> raw_records;
};

// Runs the pipeline and appends every document to *corpus. With
// keep_raw_records, the reader must have been opened with
// InputOptions::keep_raw_records and the raw JSONL lines are kept too.
// `on_progress(documents, bytes)` is called after each batch when given.
Status CollectFingerprints(DocumentReader& reader, const Fingerprinter& fingerprinter,
                           const FingerprintPipelineOptions& options, bool keep_raw_records,
                           FingerprintedCorpus* corpus, FingerprintPipelineStats* stats = nullptr,
                           const std::function<void(uint64_t, uint64_t)>& on_progress = {});

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINT_PIPELINE_H_
