// Decompression by magic bytes: gzip (RFC 1952, multi-member), zstd (RFC
// 8878, multi-frame, skippable frames).
//
// Files (streams with an end) are read through ParallelFrameStream
// (parallel_frame_stream.h): gzip members of up to 64 MiB decoded whole by
// libdeflate, zstd frames of up to 64 MiB by libzstd (when there is more
// than one thread), several at once; whatever cannot be split off so (a
// bigger member or frame, damage, a pipe) is streamed by zlib's inflate or
// libzstd's streaming decoder, from that member or frame on.
//
// Damage is reported as DataLoss naming the source and the offset in the
// compressed stream where it was found, after every byte decoded before it
// has been returned (ByteStream's contract), as the streaming decoders find
// it. Trailing bytes after the last gzip member that are not another member
// are damage too.
// Cost: streaming, a 64 KiB input buffer plus the decoder's window (32 KiB
// for gzip, up to the frame's window size for zstd, 8 MiB for common
// levels); split into frames, up to 64 MiB of compressed read-ahead and
// 2 x threads jobs of ~1 MiB compressed (each a member or frame of up to
// 64 MiB decoded, or several smaller ones), no more started while 128 MiB
// of decoded bytes wait.
#ifndef NEARDUP_IO_DECOMPRESSING_STREAM_H_
#define NEARDUP_IO_DECOMPRESSING_STREAM_H_

#include <memory>
#include <string>

#include "neardup/document_reader.h"
#include "neardup/status.h"

namespace neardup::internal {

enum class Compression { kNone, kGzip, kZstd };

// Peeks at the first bytes of `raw` and returns a stream of the decompressed
// bytes (or of `raw`'s bytes unchanged when they start with no known magic).
// `source` names the input in error messages. *compression, if non-null,
// receives what was detected.
Result<std::unique_ptr<ByteStream>> OpenDecompressed(std::unique_ptr<ByteStream> raw,
                                                     const std::string& source,
                                                     Compression* compression = nullptr);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_DECOMPRESSING_STREAM_H_
