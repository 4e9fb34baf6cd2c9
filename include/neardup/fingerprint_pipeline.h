// RunFingerprintPipeline: streams documents from a DocumentReader through a
// Fingerprinter on all cores and hands each batch, in input order, to a sink.
//
// A JSONL input is cut at line boundaries into chunks of about `batch_bytes`
// (only the cutting is serial: read(2) and memrchr); chunks are parsed,
// fingerprinted and, when a formatter is given, formatted in parallel, one
// JSON parser per thread; the sink then receives them in input order. Text
// files are read whole, up to `batch_documents` or `batch_bytes` of them per
// batch. Several inputs (files of a directory) flow through the same chunks,
// so they are parsed in parallel too. The documents, skip reports, ids and
// errors are those DocumentReader::Next would give, in the same order, so the
// output never depends on the thread count or the chunk size.
// Memory: at most `max_batches_in_flight` batches, each about batch_bytes of
// input (more when one line is longer) plus its documents, fingerprints and
// formatted output. Batches are reused (chunk buffers, output buffers,
// fingerprint vectors); a JSONL document costs no allocation on the view
// path (RunFingerprintViewPipeline, CollectFingerprints), and its id and
// text strings where a sink takes Documents.
// Thread safety: the sink is called from one thread at a time; the formatter
// from several at once (it must only write its `out`).
#ifndef NEARDUP_FINGERPRINT_PIPELINE_H_
#define NEARDUP_FINGERPRINT_PIPELINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/document.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprinter.h"
#include "neardup/lsh_params.h"
#include "neardup/stage_time.h"
#include "neardup/status.h"

namespace neardup {

struct FingerprintPipelineOptions {
  // A JSONL chunk holds about batch_bytes of input lines (however many
  // documents); a batch of text files closes at batch_documents documents or
  // batch_bytes of text, whichever comes first. Defaults 512 and 1 MiB: a
  // chunk is read, parsed and fingerprinted while it is still in the core's
  // L2 (8 MiB chunks cost ~10% more CPU time on one thread, and more fresh
  // pages), and 1 MiB of JSONL is hundreds of documents, enough to amortise
  // scheduling.
  size_t batch_documents = 512;
  size_t batch_bytes = size_t{1} << 20;
  // Default 0: the number of worker threads plus one (at least 2).
  size_t max_batches_in_flight = 0;
  // CollectFingerprints only: record where each JSONL record lies in its
  // file (FingerprintedCorpus::record_locations), for
  // CopyKeptRecordsByLocation. 24 bytes per document.
  bool record_locations = false;
  // CollectFingerprints only, with a fingerprinter that selects the k-value
  // sketch alone (CandidateSketches of MinHash): when num_bands > 0, each
  // document's k-value sketch is not kept; its keys of these LSH bands are
  // (FingerprintedCorpus::band_keys), hashed on the worker threads, so the
  // corpus holds num_bands * 8 bytes per document instead of the sketch's
  // num_hashes * 8 and allocates nothing per document. The bands must be
  // those the search will choose (ChooseNearDuplicateScheme). The other
  // pipelines (RunFingerprintPipeline, RunFlatFingerprintPipeline,
  // RunFingerprintViewPipeline) return InvalidArgument when it is set.
  LshParams band_keys;
  // With band_keys, optionally: the options that chose them and the choice
  // (its params must be band_keys, its options.num_hashes the
  // fingerprinter's; else InvalidArgument). The corpus records it
  // (FingerprintedCorpus::band_key_choice) so the search of these options
  // takes its bands from there instead of choosing again.
  std::optional<ChosenLshParams> band_key_choice;
  // Default none; when set (not owned), the CPU time of the serial filters
  // (read, number, deliver; the kept-record copies' cut and in-order write)
  // is added to it, for `--profile`, at two reads of the thread's CPU clock
  // per filter step (~1 us per MiB of input).
  SerialCpuTime* serial_time = nullptr;
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

// Appends a batch's output (e.g. JSON lines) to *out, which starts empty.
// Runs on worker threads, for several batches at once.
using FingerprintFormatter =
    std::function<void(std::span<const Document>, std::span<const Fingerprint>, std::string* out)>;
// Receives each batch in input order with what the formatter wrote for it.
using FormattedFingerprintSink = std::function<Status(
    std::span<const Document>, std::span<const Fingerprint>, std::string_view formatted)>;

// A batch's documents as views into the pipeline's own buffers (a JSONL
// chunk, the strings unescaped from it, text files read whole), valid during
// the call: the form without a copy or an allocation per document.
struct DocumentViews {
  std::span<const std::string_view> ids;
  std::span<const std::string_view> texts;
};
using FingerprintViewFormatter =
    std::function<void(const DocumentViews&, std::span<const Fingerprint>, std::string* out)>;
using FormattedFingerprintViewSink = std::function<Status(
    const DocumentViews&, std::span<const Fingerprint>, std::string_view formatted)>;

// Returns the first error of the reader or the sink (the pipeline stops
// there; batches already handed to the sink stay handed).
Status RunFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                              const FingerprintPipelineOptions& options,
                              const FingerprintSink& sink,
                              FingerprintPipelineStats* stats = nullptr);

// The same with per-batch formatting in parallel: what `formatter` writes for
// a batch reaches `sink` with it (empty when the formatter is empty).
Status RunFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                              const FingerprintPipelineOptions& options,
                              const FingerprintFormatter& formatter,
                              const FormattedFingerprintSink& sink,
                              FingerprintPipelineStats* stats = nullptr);

// The same on views: JSONL documents are never copied into Documents (their
// texts go from the chunk, or the one buffer their escapes were decoded
// into, straight to the fingerprinter).
Status RunFingerprintViewPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                                  const FingerprintPipelineOptions& options,
                                  const FingerprintViewFormatter& formatter,
                                  const FormattedFingerprintViewSink& sink,
                                  FingerprintPipelineStats* stats = nullptr);

// The same on views, with each block's fingerprints as one flat
// FingerprintBatch (fingerprint_batch.h; read document i as batch[i]) instead
// of a vector of Fingerprint structs: neither the documents nor their
// fingerprints cost a heap allocation once the pipeline's recycled batches
// have grown. `neardup fingerprint` runs this.
using FlatFingerprintFormatter = std::function<void(
    const DocumentViews&, const FingerprintBatch& fingerprints, std::string* out)>;
using FlatFingerprintSink = std::function<Status(
    const DocumentViews&, const FingerprintBatch& fingerprints, std::string_view formatted)>;
Status RunFlatFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                                  const FingerprintPipelineOptions& options,
                                  const FlatFingerprintFormatter& formatter,
                                  const FlatFingerprintSink& sink,
                                  FingerprintPipelineStats* stats = nullptr);

// A JSONL file as the first pass saw it, and a record in one: `size` bytes
// at `offset` of record_files[file], the line as Document::raw_record holds
// it (no line ending, no byte order mark).
struct RecordFile {
  std::string path;
  uint64_t size = 0;
  int64_t modified_ns = 0;  // modification time, ns since the epoch
  int64_t changed_ns = 0;   // status change time (ctime), ns since the epoch
  uint64_t device = 0;
  uint64_t inode = 0;
};
struct RecordLocation {
  uint32_t file = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Every document of a reader, fingerprinted and kept in memory in input
// order (texts are not kept). Memory: the selected sketches (about 2 KiB per
// document for both MinHash kinds at k = 128) plus ids.
struct FingerprintedCorpus {
  std::vector<std::string> ids;
  std::vector<uint64_t> lengths;  // bytes of text
  std::vector<Fingerprint> fingerprints;
  // is_jsonl[i]: document i came from a JSONL record.
  std::vector<bool> is_jsonl;
  // Filled only when `keep_raw_records` is passed to CollectFingerprints.
  std::vector<std::string> raw_records;
  // With FingerprintPipelineOptions::record_locations, when every document
  // came from a JSONL file read through a mapping (InputOptions::map_files,
  // not compressed, not stdin): per document, where its record lies. Left
  // empty as soon as one document did not (a second pass must then re-read).
  std::vector<RecordFile> record_files;
  std::vector<RecordLocation> record_locations;
  // With FingerprintPipelineOptions::band_keys: its bands and rows, and
  // band_key_params.num_bands keys per document (row-major; those of a
  // document with no features or an empty sketch are 0 and mean nothing).
  // The fingerprints then hold num_tokens, invalid_utf8_sequences and
  // kvalue_minhash.empty, the sketch's values left empty.
  LshParams band_key_params;
  std::vector<uint64_t> band_keys;
  // With band keys: the fingerprinter's num_hashes they were cut from (the
  // search refuses a recipe of another; bands and rows alone do not tell:
  // 128 and 130 hashes both choose 16 x 8 at 0.8).
  int band_key_num_hashes = 0;
  // With band keys given with FingerprintPipelineOptions::band_key_choice:
  // the options that chose them and the choice (dropped when documents are
  // added with the same bands from other options, or without a choice).
  std::optional<ChosenLshParams> band_key_choice;
};

// Runs the pipeline and appends every document to *corpus. With
// keep_raw_records, the raw JSONL lines are kept too; a reader opened
// without InputOptions::keep_raw_records gives each document an empty
// record (neardup-mpi relies on this for inputs it never sketches again).
// `on_progress(documents, bytes)` is called after each batch when given.
// With options.band_keys, InvalidArgument (nothing read) unless the
// fingerprinter selects the k-value sketch alone and the bands fit in its
// num_hashes. A corpus holds the keys of all its documents or of none:
// InvalidArgument (nothing read) for a keyed collect into a corpus with
// documents without keys or with keys of other bands or num_hashes, and for
// a collect without keys into a corpus with them.
Status CollectFingerprints(DocumentReader& reader, const Fingerprinter& fingerprinter,
                           const FingerprintPipelineOptions& options, bool keep_raw_records,
                           FingerprintedCorpus* corpus, FingerprintPipelineStats* stats = nullptr,
                           const std::function<void(uint64_t, uint64_t)>& on_progress = {});

// The second pass of `dedup`: reads `reader` (the same inputs as the pass
// that collected `ids`, opened anew) through the same parallel read and
// parse, and hands `write`, in input order, the JSONL line of each document
// i with keep[i], each followed by "\n" (a text document gives an empty
// line: callers use it when every document is a JSONL record). Needs no
// InputOptions::keep_raw_records: lines are written from the chunk they
// were read into. DataLoss when the documents read are not those of `ids`
// (an input changed between the passes). Memory: as RunFingerprintPipeline.
// REQUIRES: keep.size() == ids.size().
Status CopyKeptRecords(DocumentReader& reader, std::span<const std::string> ids,
                       const std::vector<bool>& keep, const FingerprintPipelineOptions& options,
                       const std::function<Status(std::string_view)>& write);

// The second pass of `dedup` without reading the inputs again: copies the
// kept records (each followed by "\n") from the files the first pass
// located them in (corpus.record_locations), on all cores, and hands them to
// `write` in input order; the same bytes as CopyKeptRecords. Each file is
// mapped anew; DataLoss when one's size or modification time changed, or a
// record is no longer a whole line. FailedPrecondition (nothing written)
// when the corpus has no locations: use CopyKeptRecords then. Memory: the
// ranges in flight (about batch_bytes each); pages are given back as written.
Status CopyKeptRecordsByLocation(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                                 const FingerprintPipelineOptions& options,
                                 const std::function<Status(std::string_view)>& write);

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINT_PIPELINE_H_
