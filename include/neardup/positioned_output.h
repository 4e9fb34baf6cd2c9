// dedup's kept records written at their final offsets from every core
// (issue 13, session 10).
//
// The ordered write of CopyKeptRecordsByLocation hands every byte to one
// writer in input order, so the kernel's copy into the output file ran on
// one thread at any thread count (0.09-0.15 s per 257 MB of few-dups
// `dedup`, the largest serial stage after fingerprinting). Once the keep
// decisions are known, each kept record's place in the output is a prefix
// sum of the kept records' sizes, so each range of records can be written
// where it belongs by the thread that copied it, in any order.
//
// Cost: what CopyKeptRecordsByLocation costs, one prefix pass over the
// documents (a few ms per million) and one positioned write per ~1 MiB
// range; memory: the ranges in flight.
//
// Thread safety: CopyKeptRecordsByLocationAt calls `out.WriteAt` from
// several threads at once, on disjoint byte ranges.
#ifndef NEARDUP_POSITIONED_OUTPUT_H_
#define NEARDUP_POSITIONED_OUTPUT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "neardup/fingerprint_pipeline.h"
#include "neardup/status.h"

namespace neardup {

// An output that bytes can be written to at an offset (a regular file:
// pwrite), by several threads at once.
class PositionedOutput {
 public:
  virtual ~PositionedOutput() = default;
  // Writes all of `bytes` at `offset`, or fails (a partial write is a
  // failure). REQUIRES: concurrent calls write disjoint ranges.
  virtual Status WriteAt(uint64_t offset, std::string_view bytes) = 0;
  // A hint before the writes: they will cover [0, bytes). An output may
  // allocate its storage ahead (a file's blocks; its size too where nobody
  // reads the file before it is complete), so that the writes, which a file
  // system runs one at a time, do less. Errors are the writes' to report.
  // Default: nothing.
  virtual void Reserve(uint64_t bytes) { (void)bytes; }
};

// The bytes CopyKeptRecordsByLocation hands its `write`, written at their
// offsets [0, total) of `out`: ranges of about options.batch_bytes of kept
// records are copied and written on every core, out of order. The range
// that holds the last byte is written last, after every other range has
// been written, so the output reaches its full size only once it is
// complete (a run killed midway leaves a shorter output), unless the
// output's `Reserve` sized it first.
//
// *written: on success the total; on an error the length of the prefix that
// is known to be written (every range before the first, in input order, that
// failed or was not written). Bytes after it may have been written too: a
// caller that keeps the output truncates it to *written. Errors: as
// CopyKeptRecordsByLocation's (FailedPrecondition before anything is
// written, DataLoss for a changed input), and the first failed WriteAt in
// input order; no range is written after an error is seen.
Status CopyKeptRecordsByLocationAt(const FingerprintedCorpus& corpus, const std::vector<bool>& keep,
                                   const FingerprintPipelineOptions& options, PositionedOutput& out,
                                   uint64_t* written);

}  // namespace neardup

#endif  // NEARDUP_POSITIONED_OUTPUT_H_
