// How zstd and gzip files split into frames that decode on their own
// (FrameFormat, parallel_frame_stream.h), without decoding anything:
//
// - zstd: a frame's compressed size comes from its header and block headers
//   (ZSTD_findFrameCompressedSize), its decoded size from the frame header;
//   frames that do not record it, or record more than 64 MiB, are left to
//   the serial decoder. Skippable frames (pzstd's size hints) decode to
//   nothing. Decoded by ZSTD_decompress.
// - gzip (RFC 1952): a member's end is not recorded anywhere before it, so
//   the next member's start is guessed: the next "1f 8b 08" (magic and
//   deflate) whose flag byte has its reserved bits clear, at least 20 bytes
//   (the smallest member) on; else the end of the file. The 4 bytes before
//   that point are the member's ISIZE trailer: its decoded size (mod 2^32),
//   so members over 64 MiB go to the serial decoder. A guess inside a
//   member's deflate data (about one 3-byte match in 16 MiB of compressed
//   bytes) only costs speed: the member then fails to decode to exactly
//   those bytes, with exactly its ISIZE and CRC-32, and is decoded serially.
//   A member that decodes so is the member zlib would decode there, so the
//   next one starts where the guess said. Members with a header CRC (FHCRC,
//   which libdeflate does not check) are left to zlib. Decoded by libdeflate
//   (libdeflate_gzip_decompress_ex; about twice zlib's inflate speed).
// Both: thread-safe, no state (libdeflate's decompressor is one per thread).
#ifndef NEARDUP_IO_COMPRESSED_FRAMES_H_
#define NEARDUP_IO_COMPRESSED_FRAMES_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "io/parallel_frame_stream.h"

namespace neardup::internal {

// Frames (members) that decode to more than this are left to the serial
// decoder: the parallel path holds each frame whole.
inline constexpr uint64_t kMaxWholeFrameBytes = uint64_t{64} << 20;

// Whether `data[0, size)` starts with a zstd skippable frame's magic
// number (RFC 8878 3.1.2: 0x184D2A50 to 0x184D2A5F, little endian), as
// pzstd writes before each frame to record its size. libzstd skips such
// frames; a file may begin with one.
bool IsZstdSkippableFrame(const char* data, size_t size);

std::unique_ptr<const FrameFormat> MakeZstdFrameFormat();
std::unique_ptr<const FrameFormat> MakeGzipMemberFormat();

}  // namespace neardup::internal

#endif  // NEARDUP_IO_COMPRESSED_FRAMES_H_
