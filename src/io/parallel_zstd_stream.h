// ParallelZstdStream decodes a zstd file of many frames (pzstd's output, or
// files concatenated) on several threads: it reads the compressed bytes
// ahead, finds each frame's end from its header (ZSTD_findFrameCompressedSize,
// so nothing is decoded to find it), decodes up to `frames_in_flight` frames
// at once as oneTBB tasks, and serves their bytes in order.
//
// Anything it cannot split, it hands to `serial`, the one-thread streaming
// decoder, from that frame on: a frame whose compressed size is not found
// within `max_frame_bytes` of read-ahead (one big frame, as `zstd -T0`
// writes), a truncated or corrupt frame, or a failed parallel decode (whose
// bytes are then decoded again serially). So errors, their offsets and the
// bytes served before them are exactly the serial decoder's.
// Cost: frames_in_flight x (compressed + decompressed frame) in memory.
// Thread safety: one reader at a time; its tasks run in the caller's arena.
#ifndef NEARDUP_IO_PARALLEL_ZSTD_STREAM_H_
#define NEARDUP_IO_PARALLEL_ZSTD_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "neardup/document_reader.h"

namespace neardup::internal {

// Makes the serial decoder of `raw` (whose first byte is at compressed
// offset `offset`, for error messages).
using SerialZstdFactory =
    std::function<std::unique_ptr<ByteStream>(std::unique_ptr<ByteStream> raw, uint64_t offset)>;

std::unique_ptr<ByteStream> MakeParallelZstdStream(std::unique_ptr<ByteStream> raw,
                                                   SerialZstdFactory serial,
                                                   size_t frames_in_flight, size_t max_frame_bytes);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_PARALLEL_ZSTD_STREAM_H_
