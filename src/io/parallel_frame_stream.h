// ParallelFrameStream decodes a compressed file made of independent frames
// (zstd frames: pzstd's output, or files concatenated; gzip members: files
// concatenated, bgzip, `split --filter=gzip`) on several threads: it reads
// the compressed bytes ahead, asks the FrameFormat where each frame ends and
// how many bytes it decodes to (nothing is decoded to find out), groups
// frames into jobs of about `job_bytes` compressed bytes, decodes up to
// `jobs_in_flight` jobs at once as oneTBB tasks, and serves their bytes in
// order.
//
// Anything it cannot split, it hands to `serial`, the one-thread streaming
// decoder, from that frame on: a frame whose end is not found within
// `max_frame_bytes` of read-ahead (one big frame), a frame the format will
// not hold whole (size unknown or too large), a truncated or corrupt frame,
// or a failed parallel decode (whose job is then decoded again serially from
// its first frame). So errors and the bytes served before them are exactly
// the serial decoder's; so are gzip's offsets (zlib consumes input up to the
// damage), while libzstd's name the start of the read buffer it failed in,
// which differs with how the bytes came (jsonl_reader_fuzz checks both).
// Cost: up to `max_frame_bytes` of compressed read-ahead, plus per job in
// flight its compressed bytes and decoded bytes; no new job is started while
// `max_decoded_in_flight` decoded bytes are queued (one job always may be:
// a job is at most one frame past `job_bytes`, and a frame at most what the
// format holds whole).
// Thread safety: one reader at a time; its tasks run in the caller's arena.
#ifndef NEARDUP_IO_PARALLEL_FRAME_STREAM_H_
#define NEARDUP_IO_PARALLEL_FRAME_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "neardup/document_reader.h"

namespace neardup::internal {

// Where the frame at the start of some compressed bytes ends.
struct FrameSplit {
  enum class Kind {
    kFrame,     // compressed_bytes of the frame decode to decoded_bytes
    kNeedMore,  // its end is not within the bytes given
    kSerial,    // leave it (and the rest) to the serial decoder
  };
  Kind kind = Kind::kSerial;
  size_t compressed_bytes = 0;
  size_t decoded_bytes = 0;
};

// A compressed format whose frames decode independently.
class FrameFormat {
 public:
  virtual ~FrameFormat() = default;
  // `data[0, available)` starts at a frame's first byte; `at_end`: nothing
  // follows. `*scanned` is 0 on the first call for a frame and carries, from
  // one kNeedMore to the next call, how far the format has already searched
  // (so a long frame is not searched again from its start).
  virtual FrameSplit Split(const char* data, size_t available, bool at_end,
                           size_t* scanned) const = 0;
  // Decodes one frame into exactly `decoded_bytes` at `out`; false when the
  // frame is damaged or decodes to another size. Called on any thread.
  virtual bool Decode(std::string_view frame, char* out, size_t decoded_bytes) const = 0;
};

// Makes the serial decoder of `raw` (whose first byte is at compressed
// offset `offset`, for error messages).
using SerialDecoderFactory =
    std::function<std::unique_ptr<ByteStream>(std::unique_ptr<ByteStream> raw, uint64_t offset)>;

struct ParallelFrameOptions {
  // Jobs decoding or decoded, not yet served (at least 1).
  size_t jobs_in_flight = 4;
  // Compressed bytes read ahead to find one frame's end before handing over.
  size_t max_frame_bytes = size_t{64} << 20;
  // A job takes frames until it holds this many compressed bytes (or 4x as
  // many decoded bytes): small frames (bgzip's 64 KiB) share one task.
  size_t job_bytes = size_t{1} << 20;
  // Decoded bytes queued before another job may start.
  size_t max_decoded_in_flight = size_t{128} << 20;
};

std::unique_ptr<ByteStream> MakeParallelFrameStream(std::unique_ptr<ByteStream> raw,
                                                    std::unique_ptr<const FrameFormat> format,
                                                    SerialDecoderFactory serial,
                                                    const ParallelFrameOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_PARALLEL_FRAME_STREAM_H_
