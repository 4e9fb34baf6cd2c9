// The files that a located corpus (FingerprintedCorpus::record_locations)
// came from, mapped again for a later pass over its records: dedup's copy of
// the kept records (kept_records.cc) and the verification sketches of the
// candidate documents (deferred_sketches.cc). Both refuse, with the same
// DataLoss, inputs that changed since the first pass.
#ifndef NEARDUP_ENGINE_LOCATED_RECORDS_H_
#define NEARDUP_ENGINE_LOCATED_RECORDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tbb/parallel_pipeline.h>

#include "io/mapped_input.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/status.h"

namespace neardup::internal {

// DataLoss "the inputs changed between passes over them (where)": a later
// pass (dedup's kept records, pairs' or clusters' verification sketches)
// found its input other than the first pass did. `where`: the file's path,
// or "document N" for records not read from a file that was mapped.
Status RecordFileChanged(const std::string& where);

// Maps each of corpus.record_files again; RecordFileChanged when one is gone
// or is another file (device, inode) or its size, modification or status
// change time differs from the first pass's.
Result<std::vector<std::shared_ptr<const MappedInput>>> MapRecordFiles(
    const FingerprintedCorpus& corpus);

// OK when every file is still unchanged since MapRecordFiles mapped it
// (MappedInput::CheckUnchanged): call it after the pass over their records,
// which may otherwise have read bytes of two versions of a file.
Status CheckRecordFilesUnchanged(const std::vector<std::shared_ptr<const MappedInput>>& files);

// True when [offset, offset + size) of `file` is a whole line as the reader
// cut it: a line ending (or the file's start, or a byte order mark at it)
// before, a line ending (or the end) after.
bool IsWholeLine(const MappedInput& file, uint64_t offset, uint64_t size);

// Gives back to the page cache the pages of `at`'s file up to the end of the
// record `at`, from where (*released)[at.file] says the last release ended
// (records of a file are passed in ascending order), so that resident
// memory stays that of the records in flight.
void ReleaseThrough(const std::vector<std::shared_ptr<const MappedInput>>& files,
                    const RecordLocation& at, std::vector<uint64_t>* released);

// Every pass over the records of a range treats them file by file (checks
// what was read, maps pages in, gives them back): for i in [begin, end),
// the records at locations[document_at(i)] are cut into runs of
// consecutive i in one file, and visit(first, last) is called for each run
// with its first and last record i for which keep(i) holds (a run with
// none is skipped). Returns visit's first error, where it stops.
// Cost: one pass over [begin, end); no allocation.
template <typename DocumentAt, typename Keep, typename Visit>
Status ForEachFileRun(const std::vector<RecordLocation>& locations, size_t begin, size_t end,
                      DocumentAt document_at, Keep keep, Visit visit) {
  size_t i = begin;
  while (i < end) {
    const uint32_t file = locations[document_at(i)].file;
    const RecordLocation* first = nullptr;
    const RecordLocation* last = nullptr;
    for (; i < end && locations[document_at(i)].file == file; ++i) {
      if (!keep(i)) continue;
      last = &locations[document_at(i)];
      if (first == nullptr) first = last;
    }
    if (first != nullptr) NEARDUP_RETURN_IF_ERROR(visit(*first, *last));
  }
  return Status::Ok();
}

// The arguments of ForEachFileRun for a range of records in corpus order,
// all of them.
inline size_t SameRecord(size_t i) { return i; }
inline bool EveryRecord(size_t) { return true; }

// OK when the records at corpus.record_locations[document_at(i)], i in
// [begin, end) (ascending within each file), were read from their files'
// mappings intact (MappedInput::CheckRead through the byte after each
// file's last record, which IsWholeLine reads); else the DataLoss of the
// first file that shrank under them. Call it after the reads: a file that
// shrank while its records were read gives zeros for the lost bytes, which
// look like a changed record, or a write from the mapping that fails.
template <typename DocumentAt>
Status CheckRecordsRead(const FingerprintedCorpus& corpus,
                        const std::vector<std::shared_ptr<const MappedInput>>& files, size_t begin,
                        size_t end, DocumentAt document_at) {
  return ForEachFileRun(corpus.record_locations, begin, end, document_at, EveryRecord,
                        [&](const RecordLocation&, const RecordLocation& last) {
                          const MappedInput& file = *files[last.file];
                          return file.CheckRead(std::max<uint64_t>(
                              1, std::min<uint64_t>(last.offset + last.size + 1, file.size())));
                        });
}

// The end of the next range of a pass over records [next, n) in a
// pipeline's serial first stage: records are taken while their bytes
// (`record_bytes(i)`) stay below `range_bytes` and there are fewer than
// `max_records`; at least one when next < n.
template <typename RecordBytes>
size_t RangeEnd(size_t next, size_t n, size_t range_bytes, size_t max_records,
                RecordBytes record_bytes) {
  size_t end = next;
  size_t bytes = 0;
  while (end < n && bytes < range_bytes && end - next < max_records) {
    bytes += record_bytes(end);
    ++end;
  }
  return end;
}

// The serial first stage of such a pass: a new RangeT (owned by the
// pipeline from here) over the next range [begin, end) of records [*next, n),
// *next moved to its end; or, when every record is taken or `stop` is set
// (an earlier range failed), nullptr after control.stop().
template <typename RangeT, typename RecordBytes>
RangeT* NextRange(tbb::flow_control& control, size_t* next, size_t n, bool stop, size_t range_bytes,
                  size_t max_records, RecordBytes record_bytes) {
  if (*next >= n || stop) {
    control.stop();
    return nullptr;
  }
  auto range = std::make_unique<RangeT>();
  range->begin = *next;
  *next = RangeEnd(*next, n, range_bytes, max_records, record_bytes);
  range->end = *next;
  return range.release();
}

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_LOCATED_RECORDS_H_
