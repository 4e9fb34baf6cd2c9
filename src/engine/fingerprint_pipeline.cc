#include "neardup/fingerprint_pipeline.h"

#include <sys/resource.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "engine/batches_in_flight.h"
#include "engine/corpus_reserve.h"
#include "engine/located_records.h"
#include "index/lsh_band_key.h"
#include "index/lsh_params_validate.h"
#include "io/document_block.h"
#include "io/jsonl_record_parser.h"
#include "io/mapped_input.h"

namespace neardup {
namespace {

using internal::DocumentBlock;
using internal::DocumentBlockReader;

// One token of the pipeline. Batches are recycled, so their chunk buffer,
// arena, views, fingerprints and output keep their capacity.
struct Batch {
  DocumentBlock block;
  std::vector<Fingerprint> fingerprints;
  FingerprintBatch flat;  // the flat pipeline's output (RunFlatFingerprintPipeline)
  // FingerprintPipelineOptions::band_keys: num_bands per document of `flat`.
  std::vector<uint64_t> band_keys;
  std::string formatted;
  Status status;
  uint64_t first_document = 0;  // the ordinal of block.documents[0]
};

// Batches not in flight. At most max_batches_in_flight exist, which bounds
// memory.
class BatchPool {
 public:
  std::unique_ptr<Batch> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::make_unique<Batch>();
    std::unique_ptr<Batch> batch = std::move(free_.back());
    free_.pop_back();
    return batch;
  }
  void Give(std::unique_ptr<Batch> batch) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(batch));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Batch>> free_;
};

// The five filters of the pipeline (docs/PIPELINE.md) with the block-level
// work left to the caller: `work` runs in parallel on numbered blocks (line
// numbers known, ids assigned; `first_document` is the ordinal of the
// block's first document), `deliver` serially in input order and returns the
// first error, which stops the pipeline. Reader failures come after the
// block's documents were delivered.
using BlockWork = std::function<void(Batch*)>;
using BlockDelivery = std::function<Status(Batch&)>;

Status RunBlockPipeline(DocumentReader& reader, const FingerprintPipelineOptions& options,
                        const BlockWork& work, const BlockDelivery& deliver) {
  const size_t in_flight = internal::BatchesInFlight(options);
  const size_t batch_documents = std::max<size_t>(1, options.batch_documents);
  const size_t batch_bytes = std::max<size_t>(1, options.batch_bytes);
  const InputOptions& input_options = DocumentBlockReader::options(reader);

  // The first and last filters run concurrently with each other, so each
  // owns its own state; a failure reaches the reader through an atomic flag.
  Status error;
  std::atomic<bool> stopped{false};
  bool reader_done = false;
  uint64_t documents_numbered = 0;
  BatchPool pool;
  tbb::enumerable_thread_specific<std::unique_ptr<internal::JsonlRecordParser>> parsers;

  // Serial: cut the input into blocks (no parsing).
  auto read = [&](tbb::flow_control& control) -> Batch* {
    SerialCpuTime::Scope timed(options.serial_time);
    if (reader_done || stopped.load(std::memory_order_relaxed)) {
      control.stop();
      return nullptr;
    }
    std::unique_ptr<Batch> batch = pool.Take();
    if (!DocumentBlockReader::Next(reader, batch_bytes, batch_documents, batch_bytes,
                                   &batch->block)) {
      pool.Give(std::move(batch));
      control.stop();
      return nullptr;
    }
    if (!batch->block.error.ok()) reader_done = true;
    return batch.release();
  };

  // Pages of delivered chunks, given back by the parallel parse filter.
  internal::PageReleaseQueue releases;

  // Parallel: parse a chunk's lines.
  auto parse = [&](Batch* batch) -> Batch* {
    releases.ReleaseAll();
    if (batch->block.jsonl) {
      std::unique_ptr<internal::JsonlRecordParser>& parser = parsers.local();
      if (parser == nullptr) {
        parser = std::make_unique<internal::JsonlRecordParser>(input_options.text_field,
                                                               input_options.id_field);
      }
      internal::ParseJsonlBlock(input_options, parser.get(), &batch->block);
    }
    return batch;
  };

  // Serial: line numbers need every earlier chunk's line count.
  auto number = [&](Batch* batch) -> Batch* {
    SerialCpuTime::Scope timed(options.serial_time);
    DocumentBlockReader::Number(reader, &batch->block);
    batch->first_document = documents_numbered;
    documents_numbered += batch->block.num_documents;
    return batch;
  };

  // Parallel: ids, then the caller's work.
  auto compute = [&](Batch* batch) -> Batch* {
    internal::AssignLineIds(&batch->block);
    batch->status = Status::Ok();
    batch->formatted.clear();
    work(batch);
    return batch;
  };

  // Serial, in input order: skip reports, the caller's delivery.
  auto finish = [&](Batch* raw) {
    SerialCpuTime::Scope timed(options.serial_time);
    std::unique_ptr<Batch> batch(raw);
    if (stopped.load(std::memory_order_relaxed)) {
      pool.Give(std::move(batch));
      return;
    }
    // A chunk of a file that shrank under its mapping read zeros for the
    // lost bytes (mapping_fault_guard.h): its documents, skips and output
    // never reach the sink. Checked again after the sink, which may read
    // the ids through views into the mapping.
    Status status = internal::CheckMappedChunk(batch->block);
    if (!status.ok()) {
      error = status;
      stopped.store(true, std::memory_order_relaxed);
      pool.Give(std::move(batch));
      return;
    }
    Status read_status = DocumentBlockReader::Finish(reader, batch->block);
    status = batch->status;
    if (status.ok()) status = deliver(*batch);
    if (status.ok()) status = internal::CheckMappedChunk(batch->block);
    // Blocks finish in order: the mapped pages before this one's end are
    // done with, now that the sink has seen the views into them (giving
    // them back before would fault them in again for the ids it copies).
    // They are given back by a later parse, off this serial filter.
    const DocumentBlock& block = batch->block;
    if (block.jsonl && block.chunk.mapping != nullptr) {
      releases.Add(block.chunk.mapping, block.chunk.mapped, block.chunk.size);
    }
    // Documents read before a failure are delivered; the failure after them.
    if (status.ok()) status = read_status;
    if (!status.ok()) {
      error = status;
      stopped.store(true, std::memory_order_relaxed);
    }
    pool.Give(std::move(batch));
  };

  tbb::parallel_pipeline(
      in_flight, tbb::make_filter<void, Batch*>(tbb::filter_mode::serial_in_order, read) &
                     tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::parallel, parse) &
                     tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::serial_in_order, number) &
                     tbb::make_filter<Batch*, Batch*>(tbb::filter_mode::parallel, compute) &
                     tbb::make_filter<Batch*, void>(tbb::filter_mode::serial_in_order, finish));
  // The last chunks' pages: no parse came after them to give them back.
  releases.ReleaseAll();
  return error;
}

// Appends where the block's records lie in their file; false (and no
// locations at all) when they do not lie in a mapped file.
bool AddRecordLocations(const DocumentBlock& block, FingerprintedCorpus* corpus) {
  const internal::MappedInput* file = block.chunk.mapping.get();
  if (!block.jsonl || file == nullptr) {
    corpus->record_files.clear();
    corpus->record_locations.clear();
    return false;
  }
  // Chunks of one file come one after another.
  if (corpus->record_files.empty() || corpus->record_files.back().path != block.source_path) {
    corpus->record_files.push_back({block.source_path, file->size(), file->modified_ns(),
                                    file->changed_ns(), file->device(), file->inode()});
  }
  const uint32_t index = static_cast<uint32_t>(corpus->record_files.size() - 1);
  for (size_t i = 0; i < block.num_documents; ++i) {
    corpus->record_locations.push_back(
        {index, static_cast<uint64_t>(block.records[i].data() - file->data()),
         block.records[i].size()});
  }
  return true;
}

DocumentViews ViewsOf(const DocumentBlock& block) { return {block.ids, block.texts}; }

// The band keys of each document of `flat` (k-value sketches), num_bands a
// document; zeros for a document that is never a candidate.
void ComputeBatchBandKeys(const FingerprintBatch& flat, const LshParams& params,
                          std::vector<uint64_t>* keys) {
  const size_t n = flat.size();
  const size_t num_bands = static_cast<size_t>(params.num_bands);
  const size_t k = flat.num_hashes();
  keys->resize(n * num_bands);
  const std::span<const uint64_t> values = flat.kvalue_minhash();
  const std::span<const uint8_t> empty = flat.kvalue_empty();
  const std::span<const uint64_t> tokens = flat.num_tokens();
  for (size_t i = 0; i < n; ++i) {
    uint64_t* const row = keys->data() + i * num_bands;
    if (tokens[i] == 0 || empty[i] != 0) {
      std::fill(row, row + num_bands, uint64_t{0});
      continue;
    }
    internal::ComputeBandKeys(params, values.data() + i * k, row);
  }
}

// Fingerprints (and formats) each block; `deliver` receives it in order.
// What the blocks are fingerprinted into, and which formatter sees them:
// kDocuments: JSONL blocks also get Documents (copies of their ids and texts)
// for `document_formatter` and the delivery; kViews: `view_formatter` sees
// the views and nothing is copied; kFlat: the views and one flat
// FingerprintBatch per block (batch->flat: no allocation per document) for
// `flat_formatter`. A formatter may be empty. With band_keys.num_bands > 0
// (kFlat only; CollectFingerprints passes it once it checked the fingerprinter
// and the bands), each flat batch's band keys are hashed into batch->band_keys.
enum class BlockOutput { kDocuments, kViews, kFlat };

Status RunFingerprintBlocks(DocumentReader& reader, const Fingerprinter& fingerprinter,
                            const FingerprintPipelineOptions& options, BlockOutput output,
                            const LshParams& band_keys,
                            const FingerprintFormatter& document_formatter,
                            const FingerprintViewFormatter& view_formatter,
                            const FlatFingerprintFormatter& flat_formatter,
                            const BlockDelivery& deliver, FingerprintPipelineStats* stats) {
  FingerprintPipelineStats local_stats;
  const bool keep_raw_records = DocumentBlockReader::options(reader).keep_raw_records;
  Status status = RunBlockPipeline(
      reader, options,
      [&](Batch* batch) {
        DocumentBlock& block = batch->block;
        if (output == BlockOutput::kFlat) {
          batch->status = fingerprinter.ComputeBatch(block.texts, &batch->flat);
          if (batch->status.ok() && band_keys.num_bands > 0) {
            ComputeBatchBandKeys(batch->flat, band_keys, &batch->band_keys);
          }
          if (batch->status.ok() && flat_formatter && block.num_documents > 0) {
            flat_formatter(ViewsOf(block), batch->flat, &batch->formatted);
          }
          return;
        }
        batch->fingerprints.resize(block.num_documents);
        if (block.num_documents == 0) return;
        if (output == BlockOutput::kDocuments) internal::MakeDocuments(keep_raw_records, &block);
        batch->status = fingerprinter.ComputeBatch(block.texts, &batch->fingerprints);
        if (!batch->status.ok()) return;
        if (output == BlockOutput::kDocuments && document_formatter) {
          document_formatter(block.document_span(), batch->fingerprints, &batch->formatted);
        } else if (output == BlockOutput::kViews && view_formatter) {
          view_formatter(ViewsOf(block), batch->fingerprints, &batch->formatted);
        }
      },
      [&](Batch& batch) -> Status {
        const DocumentBlock& block = batch.block;
        // Counted before the delivery, which may move the fingerprints
        // out; added once it succeeded.
        FingerprintPipelineStats counted;
        const bool flat = output == BlockOutput::kFlat;
        for (size_t i = 0; i < block.num_documents; ++i) {
          const uint64_t tokens =
              flat ? batch.flat.num_tokens()[i] : batch.fingerprints[i].num_tokens;
          const uint64_t invalid = flat ? batch.flat.invalid_utf8_sequences()[i]
                                        : batch.fingerprints[i].invalid_utf8_sequences;
          counted.documents++;
          counted.bytes += block.texts[i].size();
          if (tokens == 0) counted.empty_documents++;
          if (invalid > 0) {
            counted.documents_with_invalid_utf8++;
            counted.invalid_utf8_sequences += invalid;
          }
        }
        if (block.num_documents > 0) NEARDUP_RETURN_IF_ERROR(deliver(batch));
        local_stats.documents += counted.documents;
        local_stats.bytes += counted.bytes;
        local_stats.empty_documents += counted.empty_documents;
        local_stats.documents_with_invalid_utf8 += counted.documents_with_invalid_utf8;
        local_stats.invalid_utf8_sequences += counted.invalid_utf8_sequences;
        return Status::Ok();
      });
  if (stats != nullptr) *stats = local_stats;
  return status;
}

// Gives back what a failed reservation got (vector::reserve has the strong
// guarantee: the vector that threw is unchanged; those before it are not).
// shrink_to_fit is non-binding and, in libstdc++, swallows its own
// allocation failure; the vectors then grow as usual.
void ReleaseReservation(FingerprintedCorpus* corpus) {
  corpus->ids.shrink_to_fit();
  corpus->lengths.shrink_to_fit();
  corpus->fingerprints.shrink_to_fit();
  corpus->is_jsonl.shrink_to_fit();
  corpus->raw_records.shrink_to_fit();
  corpus->record_locations.shrink_to_fit();
  corpus->band_keys.shrink_to_fit();
}

// CollectFingerprints' estimate of how many documents its current mapped
// file holds, from the documents per byte of its chunks so far.
struct FileEstimate {
  const internal::MappedInput* file = nullptr;
  uint64_t first_document = 0;  // the corpus' document count when it began
};

// The bytes the corpus' vectors may be reserved for: a quarter of the
// machine's memory or, under an address-space limit (RLIMIT_AS, `ulimit -v`),
// of what the limit leaves beside what is mapped now.
uint64_t ReserveBudget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  uint64_t memory = pages > 0 && page_size > 0
                        ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                        : uint64_t{1} << 32;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    uint64_t mapped = 0;
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
      unsigned long long size_pages = 0;
      if (std::fscanf(statm, "%llu", &size_pages) == 1 && page_size > 0) {
        mapped = size_pages * static_cast<uint64_t>(page_size);
      }
      std::fclose(statm);
    }
    const uint64_t limit_bytes = static_cast<uint64_t>(limit.rlim_cur);
    memory = std::min<uint64_t>(memory, limit_bytes > mapped ? limit_bytes - mapped : 0);
  }
  return memory / 4;
}

// Before appending a block's documents: when they would not fit in the
// corpus' vectors and the block is a chunk of a mapped file, reserves them for
// the documents expected up to the file's end (internal::CorpusReservation:
// its documents per byte so far, plus 10 %; at least half again the
// capacity), so that they grow in one or two steps instead of doubling from
// empty: each doubling in this serial filter copied the corpus so far into
// fresh pages (for 64K documents ~14K page faults at a few per document).
// Other inputs grow as vectors do. An estimate from unrepresentative chunks
// (small records first) is capped at ReserveBudget(). The reservation is a
// hint: when it cannot be had (an address-space limit, strict overcommit),
// what it got is given back and the vectors grow as they would without it.
void ReserveForEstimate(const DocumentBlock& block, bool keep_raw_records, bool locating,
                        size_t num_bands, FileEstimate* estimate, FingerprintedCorpus* corpus) {
  const internal::MappedInput* file = block.chunk.mapping.get();
  if (!block.jsonl || file == nullptr) return;
  const uint64_t held = corpus->ids.size();
  if (estimate->file != file) {
    estimate->file = file;
    estimate->first_document = held;
  }
  if (held + block.num_documents <= corpus->ids.capacity() || block.chunk.mapped_end == 0) return;
  internal::CorpusReserveInputs inputs;
  inputs.held = held;
  inputs.capacity = corpus->ids.capacity();
  inputs.block_documents = block.num_documents;
  inputs.file_first_document = estimate->first_document;
  inputs.mapped_end = block.chunk.mapped_end;
  inputs.file_size = file->size();
  inputs.document_bytes = sizeof(std::string) + sizeof(uint64_t) + sizeof(Fingerprint) +
                          sizeof(RecordLocation) + sizeof(std::string) +
                          num_bands * sizeof(uint64_t);
  inputs.budget_bytes = ReserveBudget();
  const uint64_t documents = internal::CorpusReservation(inputs);
  if (documents == 0) return;
  try {
    corpus->ids.reserve(documents);
    corpus->lengths.reserve(documents);
    corpus->fingerprints.reserve(documents);
    corpus->is_jsonl.reserve(documents);
    if (keep_raw_records) corpus->raw_records.reserve(documents);
    if (locating) corpus->record_locations.reserve(documents);
    if (num_bands > 0) corpus->band_keys.reserve(documents * num_bands);
  } catch (const std::bad_alloc&) {
    ReleaseReservation(corpus);
  } catch (const std::length_error&) {
    ReleaseReservation(corpus);
  }
}

// FingerprintPipelineOptions::band_keys (and band_key_choice) serve
// CollectFingerprints only, which checks the fingerprinter against them; the
// other pipelines refuse them.
Status RefuseBandKeys(const FingerprintPipelineOptions& options) {
  if (options.band_keys.num_bands == 0 && !options.band_key_choice) return Status::Ok();
  return InvalidArgumentError(
      "FingerprintPipelineOptions::band_keys and band_key_choice are for CollectFingerprints "
      "only");
}

}  // namespace

Status RunFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                              const FingerprintPipelineOptions& options,
                              const FingerprintFormatter& formatter,
                              const FormattedFingerprintSink& sink,
                              FingerprintPipelineStats* stats) {
  NEARDUP_RETURN_IF_ERROR(RefuseBandKeys(options));
  return RunFingerprintBlocks(
      reader, fingerprinter, options, BlockOutput::kDocuments, LshParams{}, formatter,
      FingerprintViewFormatter(), FlatFingerprintFormatter(),
      [&](Batch& batch) {
        return sink(batch.block.document_span(), batch.fingerprints, batch.formatted);
      },
      stats);
}

Status RunFlatFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                                  const FingerprintPipelineOptions& options,
                                  const FlatFingerprintFormatter& formatter,
                                  const FlatFingerprintSink& sink,
                                  FingerprintPipelineStats* stats) {
  NEARDUP_RETURN_IF_ERROR(RefuseBandKeys(options));
  return RunFingerprintBlocks(
      reader, fingerprinter, options, BlockOutput::kFlat, LshParams{}, FingerprintFormatter(),
      FingerprintViewFormatter(), formatter,
      [&](Batch& batch) { return sink(ViewsOf(batch.block), batch.flat, batch.formatted); }, stats);
}

Status RunFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                              const FingerprintPipelineOptions& options,
                              const FingerprintSink& sink, FingerprintPipelineStats* stats) {
  return RunFingerprintPipeline(
      reader, fingerprinter, options, FingerprintFormatter(),
      [&](std::span<const Document> documents, std::span<const Fingerprint> fingerprints,
          std::string_view) { return sink(documents, fingerprints); },
      stats);
}

Status RunFingerprintViewPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                                  const FingerprintPipelineOptions& options,
                                  const FingerprintViewFormatter& formatter,
                                  const FormattedFingerprintViewSink& sink,
                                  FingerprintPipelineStats* stats) {
  NEARDUP_RETURN_IF_ERROR(RefuseBandKeys(options));
  return RunFingerprintBlocks(
      reader, fingerprinter, options, BlockOutput::kViews, LshParams{}, FingerprintFormatter(),
      formatter, FlatFingerprintFormatter(),
      [&](Batch& batch) { return sink(ViewsOf(batch.block), batch.fingerprints, batch.formatted); },
      stats);
}

Status CollectFingerprints(DocumentReader& reader, const Fingerprinter& fingerprinter,
                           const FingerprintPipelineOptions& options, bool keep_raw_records,
                           FingerprintedCorpus* corpus, FingerprintPipelineStats* stats,
                           const std::function<void(uint64_t, uint64_t)>& on_progress) {
  uint64_t bytes = 0;
  const bool reader_keeps_records = DocumentBlockReader::options(reader).keep_raw_records;
  bool locating = options.record_locations;
  const LshParams& band_params = options.band_keys;
  const bool keyed = band_params.num_bands > 0;
  if (options.band_key_choice && !keyed) {
    return InvalidArgumentError("band_key_choice is set without band_keys");
  }
  if (keyed) {
    const SketchSelection& selection = fingerprinter.selection();
    const int num_hashes = fingerprinter.recipe().minhash.num_hashes;
    if (!selection.kvalue_minhash || selection.minhash || selection.simhash || selection.chunks) {
      return InvalidArgumentError(
          "band keys need a fingerprinter that selects the k-value sketch alone");
    }
    if (band_params.rows_per_band < 1 ||
        int64_t{band_params.num_bands} * band_params.rows_per_band > num_hashes) {
      return InvalidArgumentError("band keys of " + std::to_string(band_params.num_bands) +
                                  " bands x " + std::to_string(band_params.rows_per_band) +
                                  " rows do not fit in " + std::to_string(num_hashes) + " hashes");
    }
    if (options.band_key_choice &&
        (options.band_key_choice->choice.params.num_bands != band_params.num_bands ||
         options.band_key_choice->choice.params.rows_per_band != band_params.rows_per_band ||
         options.band_key_choice->options.num_hashes != num_hashes)) {
      return InvalidArgumentError(
          "band_key_choice is not the choice of the band keys' bands and rows for the "
          "fingerprinter's " +
          std::to_string(num_hashes) + " hashes");
    }
    // A search that takes the recorded choice skips ChooseLshParams, and so
    // its checks of the options: they are made here.
    if (options.band_key_choice) {
      NEARDUP_RETURN_IF_ERROR(internal::ValidateLshParamsOptions(options.band_key_choice->options));
    }
  }
  const bool corpus_keyed = corpus->band_key_params.num_bands > 0;
  if (!corpus->ids.empty() || corpus_keyed) {
    const bool same_keys =
        keyed && corpus_keyed && corpus->band_key_params.num_bands == band_params.num_bands &&
        corpus->band_key_params.rows_per_band == band_params.rows_per_band &&
        corpus->band_key_num_hashes == fingerprinter.recipe().minhash.num_hashes &&
        corpus->band_keys.size() == corpus->ids.size() * static_cast<size_t>(band_params.num_bands);
    if (keyed != corpus_keyed || (keyed && !same_keys)) {
      return InvalidArgumentError(
          "a corpus holds the band keys of all its documents or of none, all of one scheme; "
          "these documents' keys would not match the corpus'");
    }
  }
  if (keyed) {
    // The recorded choice stays only while every document's keys came with
    // it (the same bands can come from other options).
    const bool same_choice =
        options.band_key_choice &&
        (corpus->ids.empty() ||
         (corpus->band_key_choice && SameLshParamsOptions(corpus->band_key_choice->options,
                                                          options.band_key_choice->options)));
    corpus->band_key_choice = same_choice ? options.band_key_choice : std::nullopt;
    corpus->band_key_params = band_params;
    corpus->band_key_num_hashes = fingerprinter.recipe().minhash.num_hashes;
  }
  const size_t num_bands = keyed ? static_cast<size_t>(band_params.num_bands) : 0;
  FileEstimate file_estimate;
  return RunFingerprintBlocks(
      reader, fingerprinter, options, keyed ? BlockOutput::kFlat : BlockOutput::kViews, band_params,
      FingerprintFormatter(), FingerprintViewFormatter(), FlatFingerprintFormatter(),
      [&](Batch& batch) {
        const DocumentBlock& block = batch.block;
        ReserveForEstimate(block, keep_raw_records, locating, num_bands, &file_estimate, corpus);
        if (keyed) {
          corpus->band_keys.insert(corpus->band_keys.end(), batch.band_keys.begin(),
                                   batch.band_keys.begin() + block.num_documents * num_bands);
        }
        for (size_t i = 0; i < block.num_documents; ++i) {
          corpus->ids.emplace_back(block.ids[i]);
          corpus->lengths.push_back(block.texts[i].size());
          if (keyed) {
            // The sketch's values stay in the batch (its keys are kept).
            Fingerprint& fingerprint = corpus->fingerprints.emplace_back();
            fingerprint.num_tokens = batch.flat.num_tokens()[i];
            fingerprint.invalid_utf8_sequences = batch.flat.invalid_utf8_sequences()[i];
            fingerprint.kvalue_minhash.empty = batch.flat.kvalue_empty()[i] != 0;
          } else {
            // Moved, not copied: this filter is serial, and a copy cost a
            // heap allocation and a page fault per few documents here (the
            // sketches' 1 KB at k = 128). The batch's next ComputeBatch, on
            // a worker, allocates them anew.
            corpus->fingerprints.push_back(std::move(batch.fingerprints[i]));
          }
          corpus->is_jsonl.push_back(block.jsonl);
          if (keep_raw_records) {
            // As Document::raw_record: the line, for JSONL read with
            // keep_raw_records; empty otherwise.
            corpus->raw_records.emplace_back(
                block.jsonl && reader_keeps_records ? block.records[i] : std::string_view());
          }
          bytes += block.texts[i].size();
        }
        if (locating) locating = AddRecordLocations(block, corpus);
        if (on_progress) on_progress(corpus->ids.size(), bytes);
        return Status::Ok();
      },
      stats);
}

Status CopyKeptRecords(DocumentReader& reader, std::span<const std::string> ids,
                       const std::vector<bool>& keep, const FingerprintPipelineOptions& options,
                       const std::function<Status(std::string_view)>& write) {
  const uint64_t n = ids.size();
  auto changed = [](uint64_t ordinal) {
    return internal::RecordFileChanged("document " + std::to_string(ordinal));
  };
  uint64_t documents = 0;
  Status status = RunBlockPipeline(
      reader, options,
      [&](Batch* batch) {
        const DocumentBlock& block = batch->block;
        for (size_t i = 0; i < block.num_documents; ++i) {
          const uint64_t ordinal = batch->first_document + i;
          if (ordinal >= n || block.ids[i] != ids[ordinal]) {
            batch->status = changed(ordinal);
            return;
          }
          if (!keep[ordinal]) continue;
          // A text document has no record: the caller writes only JSONL.
          if (block.jsonl) batch->formatted.append(block.records[i]);
          batch->formatted.push_back('\n');
        }
      },
      [&](Batch& batch) -> Status {
        documents += batch.block.num_documents;
        if (batch.formatted.empty()) return Status::Ok();
        return write(batch.formatted);
      });
  NEARDUP_RETURN_IF_ERROR(status);
  if (documents != n) return changed(documents);
  return Status::Ok();
}

}  // namespace neardup
