// CopyKeptRecordsByLocation: the second pass of `dedup` when the first one
// saw every record in a mapped file. Ranges of documents are copied from the
// files' mappings on every core and written in input order, without
// reading, splitting or parsing a single line again.
#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/batches_in_flight.h"
#include "engine/located_records.h"
#include "io/mapped_input.h"
#include "neardup/fingerprint_pipeline.h"

namespace neardup {
namespace {

// At most this many documents per range, whatever their sizes, so that a
// run of dropped documents still advances in steps.
constexpr size_t kMaxRangeDocuments = size_t{1} << 16;

// Runs of kept records at least this long are written straight from the
// mapping (OutputFile writes blocks this large without copying them);
// shorter ones are copied into the range's text on the worker.
constexpr size_t kDirectBytes = size_t{64} << 10;

// What a range writes, in order: bytes of `text` (from `offset`) or of the
// mapping (`direct`).
struct Piece {
  const char* direct = nullptr;
  size_t offset = 0;
  size_t size = 0;
};

struct Range {
  size_t begin = 0;
  size_t end = 0;
  std::string text;
  std::vector<Piece> pieces;
  Status status;
};

// Appends to `range` the run of kept records [run, run + size) of a mapping,
// each ending in "\n" already: by reference when long, else copied.
void AddRun(const char* run, size_t size, Range* range) {
  if (size == 0) return;
  if (size >= kDirectBytes) {
    range->pieces.push_back({run, 0, size});
    return;
  }
  if (range->pieces.empty() || range->pieces.back().direct != nullptr) {
    range->pieces.push_back({nullptr, range->text.size(), 0});
  }
  range->text.append(run, size);
  range->pieces.back().size += size;
}

}  // namespace

namespace internal {

Status RecordFileChanged(const std::string& path) {
  return DataLossError("the inputs changed while dedup was reading them (" + path + ")");
}

Result<std::vector<std::shared_ptr<const MappedInput>>> MapRecordFiles(
    const FingerprintedCorpus& corpus) {
  std::vector<std::shared_ptr<const MappedInput>> files;
  files.reserve(corpus.record_files.size());
  for (const RecordFile& file : corpus.record_files) {
    std::shared_ptr<const MappedInput> mapped = MappedInput::Map(file.path);
    if (mapped == nullptr || mapped->size() != file.size ||
        mapped->modified_ns() != file.modified_ns) {
      return RecordFileChanged(file.path);
    }
    files.push_back(std::move(mapped));
  }
  return files;
}

bool IsWholeLine(const MappedInput& file, uint64_t offset, uint64_t size) {
  const char* data = file.data();
  if (offset > file.size() || size > file.size() - offset) return false;
  const bool starts = offset == 0 || data[offset - 1] == '\n' ||
                      (offset == 3 && std::string_view(data, 3) == "\xEF\xBB\xBF");
  const uint64_t end = offset + size;
  const bool ends = end == file.size() || data[end] == '\n' || data[end] == '\r';
  return starts && ends;
}

void ReleaseThrough(const std::vector<std::shared_ptr<const MappedInput>>& files,
                    const RecordLocation& at, std::vector<uint64_t>* released) {
  const uint64_t end = at.offset + at.size;
  uint64_t& from = (*released)[at.file];
  if (end > from) {
    files[at.file]->Release(files[at.file]->data() + from, end - from);
    from = end;
  }
}

}  // namespace internal

Status CopyKeptRecordsByLocation(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                                 const FingerprintPipelineOptions& options,
                                 const std::function<Status(std::string_view)>& write) {
  const size_t n = corpus.ids.size();
  if (corpus.record_locations.size() != n || keep.size() != n) {
    return FailedPreconditionError(
        "record locations are missing (an input was not a mapped JSONL file)");
  }
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<const internal::MappedInput>> files,
                           internal::MapRecordFiles(corpus));

  const size_t range_bytes = std::max<size_t>(1, options.batch_bytes);
  const size_t in_flight = internal::BatchesInFlight(options);

  Status error;
  size_t next = 0;
  // Per file, where the pages already given back end.
  std::vector<uint64_t> released(files.size(), 0);
  tbb::parallel_pipeline(
      in_flight,
      tbb::make_filter<void, Range*>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control&
                                                                                control) {
        // A dropped record adds no bytes.
        return internal::NextRange<Range>(control, &next, n, !error.ok(), range_bytes,
                                          kMaxRangeDocuments, [&](size_t i) -> uint64_t {
                                            return keep[i] ? corpus.record_locations[i].size + 1
                                                           : 0;
                                          });
      }) & tbb::make_filter<Range*, Range*>(tbb::filter_mode::parallel, [&](Range* range) {
        // Kept records that follow each other in a file, each ending
        // in "\n", are one run of the file's bytes.
        const char* run = nullptr;
        size_t run_size = 0;
        for (size_t i = range->begin; i < range->end; ++i) {
          if (!keep[i]) continue;
          const RecordLocation& at = corpus.record_locations[i];
          const internal::MappedInput& file = *files[at.file];
          if (!internal::IsWholeLine(file, at.offset, at.size)) {
            range->status = internal::RecordFileChanged(corpus.record_files[at.file].path);
            break;
          }
          const char* record = file.data() + at.offset;
          if (run != nullptr && run + run_size != record) {
            AddRun(run, run_size, range);
            run = nullptr;
          }
          if (run == nullptr) {
            run = record;
            run_size = 0;
          }
          const uint64_t end = at.offset + at.size;
          if (end < file.size() && file.data()[end] == '\n') {
            run_size += at.size + 1;
          } else {
            // "\r\n" or the file's last line: the record, then "\n".
            AddRun(run, run_size + at.size, range);
            AddRun("\n", 1, range);
            run = nullptr;
          }
        }
        if (run != nullptr) AddRun(run, run_size, range);
        return range;
      }) & tbb::make_filter<Range*, void>(tbb::filter_mode::serial_in_order, [&](Range* raw) {
        std::unique_ptr<Range> range(raw);
        if (!error.ok()) return;
        Status status = range->status;
        for (const Piece& piece : range->pieces) {
          if (!status.ok()) break;
          status = write(piece.direct != nullptr
                             ? std::string_view(piece.direct, piece.size)
                             : std::string_view(range->text).substr(piece.offset, piece.size));
        }
        if (!status.ok()) {
          error = status;
          return;
        }
        // The pages read so far go back to the page cache.
        internal::ReleaseThrough(files, corpus.record_locations[range->end - 1], &released);
      }));
  return error;
}

}  // namespace neardup
