// CopyKeptRecordsByLocation: the second pass of `dedup` when the first one
// saw every record in a mapped file. Ranges of documents are copied from the
// files' mappings on every core and written in input order, without
// reading, splitting or parsing a single line again.
// CopyKeptRecordsByLocationAt (neardup/positioned_output.h): the same
// ranges, each written at its offset of the output by the thread that
// copied it.
#include <sys/mman.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/batches_in_flight.h"
#include "engine/located_records.h"
#include "io/mapped_input.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/positioned_output.h"

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
  // Positioned writes only: where the range's bytes go in the output, and
  // whether it holds the output's last byte (written last).
  uint64_t out_begin = 0;
  uint64_t out_end = 0;
  bool last = false;
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

Status RecordFileChanged(const std::string& where) {
  return DataLossError("the inputs changed between passes over them (" + where + ")");
}

Result<std::vector<std::shared_ptr<const MappedInput>>> MapRecordFiles(
    const FingerprintedCorpus& corpus) {
  std::vector<std::shared_ptr<const MappedInput>> files;
  files.reserve(corpus.record_files.size());
  for (const RecordFile& file : corpus.record_files) {
    std::shared_ptr<const MappedInput> mapped = MappedInput::Map(file.path);
    if (mapped == nullptr || mapped->size() != file.size ||
        mapped->modified_ns() != file.modified_ns || mapped->changed_ns() != file.changed_ns ||
        mapped->device() != file.device || mapped->inode() != file.inode) {
      return RecordFileChanged(file.path);
    }
    files.push_back(std::move(mapped));
  }
  return files;
}

Status CheckRecordFilesUnchanged(const std::vector<std::shared_ptr<const MappedInput>>& files) {
  for (const std::shared_ptr<const MappedInput>& file : files) {
    NEARDUP_RETURN_IF_ERROR(file->CheckUnchanged());
  }
  return Status::Ok();
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

namespace {

// The bytes of record i in the output: the record and its "\n", or nothing.
uint64_t OutputBytes(const FingerprintedCorpus& corpus, const std::vector<bool>& keep, size_t i) {
  return keep[i] ? corpus.record_locations[i].size + 1 : 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels refuse it (EINVAL): a hint
#endif

// Maps the pages of each file's span of the records of `range` at once
// (MADV_POPULATE_READ), on the worker. Otherwise they fault in a few at a
// time inside the line checks and, worse, inside the write: a buffered
// write holds the output file's lock while it copies, so faults there
// serialise the threads (pwrite of 257 MB from a mapping: 0.09 s of system
// CPU, 0.06-0.07 s with the pages mapped first).
void MapRecordPages(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                    const std::vector<std::shared_ptr<const internal::MappedInput>>& files,
                    const Range& range) {
  const uintptr_t page = internal::MappedInput::PageSize();
  (void)internal::ForEachFileRun(
      corpus.record_locations, range.begin, range.end, internal::SameRecord,
      [&](size_t i) { return keep[i]; },
      [&](const RecordLocation& first, const RecordLocation& last) {
        // One byte either side: the line checks read them.
        const internal::MappedInput& file = *files[first.file];
        const uintptr_t begin =
            reinterpret_cast<uintptr_t>(file.data() + (first.offset > 0 ? first.offset - 1 : 0)) /
            page * page;
        const uintptr_t end = reinterpret_cast<uintptr_t>(
            file.data() + std::min<uint64_t>(last.offset + last.size + 1, file.size()));
        if (end > begin) {
          (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
        }
        return Status::Ok();
      });
}

// The parallel stage of both copies: the kept records of `range` as pieces
// (runs of the mappings, or copies of short runs in range->text), or
// range->status when a record is no longer a whole line.
void CopyRange(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
               const std::vector<std::shared_ptr<const internal::MappedInput>>& files,
               Range* range) {
  MapRecordPages(corpus, keep, files, *range);
  // Kept records that follow each other in a file, each ending in "\n", are
  // one run of the file's bytes.
  const char* run = nullptr;
  size_t run_size = 0;
  for (size_t i = range->begin; i < range->end; ++i) {
    if (!keep[i]) continue;
    const RecordLocation& at = corpus.record_locations[i];
    const internal::MappedInput& file = *files[at.file];
    if (!internal::IsWholeLine(file, at.offset, at.size)) {
      range->status = internal::RecordFileChanged(corpus.record_files[at.file].path);
      return;
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
}

// Hands `write(bytes, offset in the range's output)` the range's pieces in
// order; the first error.
template <typename Write>
Status WritePieces(const Range& range, Write write) {
  uint64_t offset = 0;
  for (const Piece& piece : range.pieces) {
    NEARDUP_RETURN_IF_ERROR(write(
        piece.direct != nullptr ? std::string_view(piece.direct, piece.size)
                                : std::string_view(range.text).substr(piece.offset, piece.size),
        offset));
    offset += piece.size;
  }
  return Status::Ok();
}

// Writes `range` (write_range()) when what CopyRange read from the mappings
// was the files' bytes, then checks what the write read from them itself
// (the long runs): a file that shrank meanwhile is the error, over the ones
// its zeros cause (a record that looks changed, a write that fails with
// EFAULT on a vanished page).
template <typename WriteRange>
Status WriteChecked(const FingerprintedCorpus& corpus,
                    const std::vector<std::shared_ptr<const internal::MappedInput>>& files,
                    const Range& range, WriteRange write_range) {
  auto check = [&] {
    return internal::CheckRecordsRead(corpus, files, range.begin, range.end,
                                      [](size_t i) { return i; });
  };
  Status status = range.status;
  Status read = check();
  if (status.ok() && read.ok()) {
    status = write_range();
    read = check();
  }
  return read.ok() ? status : read;
}

// Gives back the pages of the records of [begin, end), file by file. Ranges
// are written out of order, so a page shared with a neighbour range still
// being written may be dropped under it: it faults back in, same bytes.
void ReleaseRecords(const FingerprintedCorpus& corpus,
                    const std::vector<std::shared_ptr<const internal::MappedInput>>& files,
                    size_t begin, size_t end) {
  (void)internal::ForEachFileRun(
      corpus.record_locations, begin, end, internal::SameRecord, internal::EveryRecord,
      [&](const RecordLocation& first, const RecordLocation& last) {
        const internal::MappedInput& file = *files[first.file];
        file.Release(file.data() + first.offset, last.offset + last.size - first.offset);
        return Status::Ok();
      });
}

// Both copies' start: FailedPrecondition without locations, else the files
// mapped again (DataLoss when one changed).
Result<std::vector<std::shared_ptr<const internal::MappedInput>>> MapKeptRecordFiles(
    const FingerprintedCorpus& corpus, const std::vector<bool>& keep) {
  const size_t n = corpus.ids.size();
  if (corpus.record_locations.size() != n || keep.size() != n) {
    return FailedPreconditionError(
        "record locations are missing (an input was not a mapped JSONL file)");
  }
  return internal::MapRecordFiles(corpus);
}

}  // namespace

Status CopyKeptRecordsByLocation(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                                 const FingerprintPipelineOptions& options,
                                 const std::function<Status(std::string_view)>& write) {
  const size_t n = corpus.ids.size();
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<const internal::MappedInput>> files,
                           MapKeptRecordFiles(corpus, keep));

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
        SerialCpuTime::Scope timed(options.serial_time);
        // A dropped record adds no bytes.
        return internal::NextRange<Range>(control, &next, n, !error.ok(), range_bytes,
                                          kMaxRangeDocuments,
                                          [&](size_t i) { return OutputBytes(corpus, keep, i); });
      }) & tbb::make_filter<Range*, Range*>(tbb::filter_mode::parallel, [&](Range* range) {
        CopyRange(corpus, keep, files, range);
        return range;
      }) & tbb::make_filter<Range*, void>(tbb::filter_mode::serial_in_order, [&](Range* raw) {
        SerialCpuTime::Scope timed(options.serial_time);
        std::unique_ptr<Range> range(raw);
        if (!error.ok()) return;
        Status status = WriteChecked(corpus, files, *range, [&] {
          return WritePieces(*range,
                             [&](std::string_view bytes, uint64_t) { return write(bytes); });
        });
        if (!status.ok()) {
          error = status;
          return;
        }
        // The pages read so far go back to the page cache.
        internal::ReleaseThrough(files, corpus.record_locations[range->end - 1], &released);
      }));
  if (error.ok()) error = internal::CheckRecordFilesUnchanged(files);
  return error;
}

Status CopyKeptRecordsByLocationAt(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                                   const FingerprintPipelineOptions& options, PositionedOutput& out,
                                   uint64_t* written) {
  *written = 0;
  const size_t n = corpus.ids.size();
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<const internal::MappedInput>> files,
                           MapKeptRecordFiles(corpus, keep));
  // The prefix sum of the kept records' sizes: where the output ends, so
  // that the range holding its last byte is known when it is cut.
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += OutputBytes(corpus, keep, i);
  out.Reserve(total);

  const size_t range_bytes = std::max<size_t>(1, options.batch_bytes);
  const size_t in_flight = internal::BatchesInFlight(options);

  Status error;
  // Set by the in-order stage only, with `error`: every range before the
  // failed one is then written, whatever the other threads do.
  std::atomic<bool> failed{false};
  size_t next = 0;
  uint64_t out_next = 0;
  auto write_range = [&](const Range& range) {
    return WritePieces(range, [&](std::string_view bytes, uint64_t offset) {
      return out.WriteAt(range.out_begin + offset, bytes);
    });
  };
  tbb::parallel_pipeline(
      in_flight,
      tbb::make_filter<void, Range*>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control&
                                                                                control) {
        SerialCpuTime::Scope timed(options.serial_time);
        // RangeEnd asks for each record's size once: their sum is the
        // range's output size.
        uint64_t range_output = 0;
        auto bytes = [&](size_t i) {
          const uint64_t size = OutputBytes(corpus, keep, i);
          range_output += size;
          return size;
        };
        Range* range = internal::NextRange<Range>(control, &next, n, failed.load(), range_bytes,
                                                  kMaxRangeDocuments, bytes);
        if (range == nullptr) return range;
        range->out_begin = out_next;
        out_next += range_output;
        range->out_end = out_next;
        range->last = range->out_end == total && range->out_end > range->out_begin;
        return range;
      }) & tbb::make_filter<Range*, Range*>(tbb::filter_mode::parallel, [&](Range* range) {
        if (failed.load()) return range;  // never written: ignored below
        CopyRange(corpus, keep, files, range);
        if (!range->last) {
          range->status = WriteChecked(corpus, files, *range, [&] { return write_range(*range); });
          ReleaseRecords(corpus, files, range->begin, range->end);
        }
        return range;
      }) & tbb::make_filter<Range*, void>(tbb::filter_mode::serial_in_order, [&](Range* raw) {
        SerialCpuTime::Scope timed(options.serial_time);
        std::unique_ptr<Range> range(raw);
        if (!error.ok()) return;
        if (range->last) {
          // Every earlier range has been written (they passed this
          // stage first): the output reaches its size complete.
          range->status = WriteChecked(corpus, files, *range, [&] { return write_range(*range); });
          ReleaseRecords(corpus, files, range->begin, range->end);
        }
        if (!range->status.ok()) {
          error = range->status;
          failed.store(true);
          return;
        }
        *written = range->out_end;
      }));
  if (error.ok()) error = internal::CheckRecordFilesUnchanged(files);
  return error;
}

}  // namespace neardup
