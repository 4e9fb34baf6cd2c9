#include "neardup/fingerprint_pipeline.h"

#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string_view>
#include <vector>

namespace neardup {
namespace {

struct Batch {
  std::vector<Document> documents;
  std::vector<Fingerprint> fingerprints;
  Status status;
};

}  // namespace

Status RunFingerprintPipeline(DocumentReader& reader, const Fingerprinter& fingerprinter,
                              const FingerprintPipelineOptions& options,
                              const FingerprintSink& sink, FingerprintPipelineStats* stats) {
  size_t in_flight = options.max_batches_in_flight;
  if (in_flight == 0) {
    in_flight = 2 * static_cast<size_t>(tbb::this_task_arena::max_concurrency());
  }
  const size_t batch_documents = std::max<size_t>(1, options.batch_documents);
  const size_t batch_bytes = std::max<size_t>(1, options.batch_bytes);

  FingerprintPipelineStats local_stats;
  // The read and deliver filters run concurrently with each other, so each
  // owns its own error; the sink's failure reaches the reader through an
  // atomic flag.
  Status read_error;
  Status sink_error;
  std::atomic<bool> sink_failed{false};
  bool reader_done = false;

  auto read = [&](tbb::flow_control& control) -> std::shared_ptr<Batch> {
    if (reader_done || sink_failed.load(std::memory_order_relaxed)) {
      control.stop();
      return nullptr;
    }
    auto batch = std::make_shared<Batch>();
    size_t bytes = 0;
    while (batch->documents.size() < batch_documents && bytes < batch_bytes) {
      Document document;
      Result<bool> next = reader.Next(&document);
      if (!next.ok()) {
        // Documents read before the error are still fingerprinted and
        // delivered; the error is reported after them.
        read_error = next.status();
        reader_done = true;
        break;
      }
      if (!*next) {
        reader_done = true;
        break;
      }
      bytes += document.text.size();
      batch->documents.push_back(std::move(document));
    }
    if (batch->documents.empty()) {
      control.stop();
      return nullptr;
    }
    return batch;
  };

  auto fingerprint = [&](std::shared_ptr<Batch> batch) -> std::shared_ptr<Batch> {
    if (batch == nullptr) return batch;
    std::vector<std::string_view> texts;
    texts.reserve(batch->documents.size());
    for (const Document& document : batch->documents) texts.push_back(document.text);
    batch->status = fingerprinter.ComputeBatch(texts, &batch->fingerprints);
    return batch;
  };

  auto deliver = [&](std::shared_ptr<Batch> batch) {
    if (batch == nullptr || !sink_error.ok()) return;
    Status status = batch->status;
    if (status.ok()) status = sink(batch->documents, batch->fingerprints);
    if (!status.ok()) {
      sink_error = status;
      sink_failed.store(true, std::memory_order_relaxed);
      return;
    }
    for (size_t i = 0; i < batch->documents.size(); ++i) {
      const Fingerprint& fp = batch->fingerprints[i];
      local_stats.documents++;
      local_stats.bytes += batch->documents[i].text.size();
      if (fp.num_tokens == 0) local_stats.empty_documents++;
      if (fp.invalid_utf8_sequences > 0) {
        local_stats.documents_with_invalid_utf8++;
        local_stats.invalid_utf8_sequences += fp.invalid_utf8_sequences;
      }
    }
  };

  tbb::parallel_pipeline(
      in_flight,
      tbb::make_filter<void, std::shared_ptr<Batch>>(tbb::filter_mode::serial_in_order, read) &
          tbb::make_filter<std::shared_ptr<Batch>, std::shared_ptr<Batch>>(
              tbb::filter_mode::parallel, fingerprint) &
          tbb::make_filter<std::shared_ptr<Batch>, void>(tbb::filter_mode::serial_in_order,
                                                         deliver));
  if (stats != nullptr) *stats = local_stats;
  return sink_error.ok() ? read_error : sink_error;
}

Status CollectFingerprints(DocumentReader& reader, const Fingerprinter& fingerprinter,
                           const FingerprintPipelineOptions& options, bool keep_raw_records,
                           FingerprintedCorpus* corpus, FingerprintPipelineStats* stats,
                           const std::function<void(uint64_t, uint64_t)>& on_progress) {
  uint64_t bytes = 0;
  return RunFingerprintPipeline(
      reader, fingerprinter, options,
      [&](std::span<const Document> documents, std::span<const Fingerprint> fingerprints) {
        for (size_t i = 0; i < documents.size(); ++i) {
          const Document& document = documents[i];
          corpus->ids.push_back(document.id);
          corpus->lengths.push_back(document.text.size());
          corpus->fingerprints.push_back(fingerprints[i]);
          corpus->is_jsonl.push_back(!document.raw_record.empty());
          if (keep_raw_records) corpus->raw_records.push_back(document.raw_record);
          bytes += document.text.size();
        }
        if (on_progress) on_progress(corpus->ids.size(), bytes);
        return Status::Ok();
      },
      stats);
}

}  // namespace neardup
