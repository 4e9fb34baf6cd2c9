#include "io/compressed_frames.h"

#include <libdeflate.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace neardup::internal {
namespace {

// The largest zstd frame header (RFC 8878 3.1.1.1): enough to read a
// content size.
constexpr size_t kZstdFrameHeaderMaxBytes = 18;

uint32_t LoadLittleEndian32(const char* data) {
  const auto byte = [&](int i) { return static_cast<uint32_t>(static_cast<uint8_t>(data[i])); };
  return byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
}

FrameSplit Serial() { return FrameSplit{FrameSplit::Kind::kSerial, 0, 0}; }
FrameSplit NeedMore() { return FrameSplit{FrameSplit::Kind::kNeedMore, 0, 0}; }

class ZstdFrameFormat final : public FrameFormat {
 public:
  FrameSplit Split(const char* data, size_t available, bool /*at_end*/,
                   size_t* /*scanned*/) const override {
    if (available >= kZstdFrameHeaderMaxBytes && !IsZstdSkippableFrame(data, available)) {
      // A frame too big to hold, or of unknown size (one frame of a whole
      // file, a stream compressed from a pipe) is left to the serial
      // decoder before reading it ahead.
      const unsigned long long content = ZSTD_getFrameContentSize(data, available);
      if (content == ZSTD_CONTENTSIZE_UNKNOWN || content > kMaxWholeFrameBytes) return Serial();
    }
    const size_t frame_size = ZSTD_findFrameCompressedSize(data, available);
    if (ZSTD_isError(frame_size)) {
      // Damage: the serial decoder reports it.
      return ZSTD_getErrorCode(frame_size) == ZSTD_error_srcSize_wrong ? NeedMore() : Serial();
    }
    if (IsZstdSkippableFrame(data, frame_size)) {
      return FrameSplit{FrameSplit::Kind::kFrame, frame_size, 0};  // pzstd's size hints
    }
    const unsigned long long content = ZSTD_getFrameContentSize(data, frame_size);
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR ||
        content > kMaxWholeFrameBytes) {
      return Serial();  // not sized in advance: streamed serially
    }
    return FrameSplit{FrameSplit::Kind::kFrame, frame_size, static_cast<size_t>(content)};
  }

  bool Decode(std::string_view frame, char* out, size_t decoded_bytes) const override {
    if (IsZstdSkippableFrame(frame.data(), frame.size())) return true;
    const size_t n = ZSTD_decompress(out, decoded_bytes, frame.data(), frame.size());
    return !ZSTD_isError(n) && n == decoded_bytes;
  }
};

// RFC 1952 2.3: ID1 ID2 CM(8 = deflate) FLG MTIME(4) XFL OS, then the
// deflate data, CRC32 and ISIZE. The smallest member: 10 header bytes, an empty final block (2
// bytes), the 8-byte trailer.
constexpr size_t kSmallestMemberBytes = 20;

// Whether a member may start at data[0]: magic, deflate, reserved flag bits
// clear. REQUIRES: 4 bytes.
bool LooksLikeMemberStart(const char* data) {
  return static_cast<uint8_t>(data[0]) == 0x1f && static_cast<uint8_t>(data[1]) == 0x8b &&
         data[2] == 8 && (static_cast<uint8_t>(data[3]) & 0xe0) == 0;
}

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

class GzipMemberFormat final : public FrameFormat {
 public:
  FrameSplit Split(const char* data, size_t available, bool at_end,
                   size_t* scanned) const override {
    if (available < 4) return at_end ? Serial() : NeedMore();
    if (!LooksLikeMemberStart(data)) return Serial();  // garbage: zlib says what it is
    // A header CRC (FHCRC, which gzip never writes) is checked by zlib, not
    // by libdeflate: such a member is zlib's, so a bad one fails as before.
    if ((static_cast<uint8_t>(data[3]) & 0x02) != 0) return Serial();
    size_t from = std::max(*scanned, kSmallestMemberBytes);
    size_t end = available;
    bool found = false;
    while (from + 4 <= available) {
      // memchr (a byte in 256 of compressed data) runs at several times
      // glibc's memmem speed for a 3-byte needle.
      const void* hit = std::memchr(data + from, 0x1f, available - from);
      if (hit == nullptr) {
        from = available - 3;  // searched up to the last 3 bytes
        break;
      }
      const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - data);
      if (at + 4 > available) {
        from = at;  // the flag byte is not read yet
        break;
      }
      if (LooksLikeMemberStart(data + at)) {
        end = at;
        found = true;
        break;
      }
      from = at + 1;
    }
    if (!found) {
      if (!at_end) {
        // A magic may start in the last 3 bytes, completed by the next read.
        *scanned = std::max(*scanned, std::min(from, available - 3));
        return NeedMore();
      }
      if (available < kSmallestMemberBytes) return Serial();  // truncated: zlib reports it
    }
    const uint32_t isize = LoadLittleEndian32(data + end - 4);
    if (isize > kMaxWholeFrameBytes) return Serial();
    return FrameSplit{FrameSplit::Kind::kFrame, end, isize};
  }

  bool Decode(std::string_view member, char* out, size_t decoded_bytes) const override {
    thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> decompressor(
        libdeflate_alloc_decompressor());
    if (decompressor == nullptr) return false;  // the serial decoder then runs out of memory too
    size_t in_bytes = 0, out_bytes = 0;
    // libdeflate checks the trailer's CRC-32 and ISIZE against the output.
    const libdeflate_result result =
        libdeflate_gzip_decompress_ex(decompressor.get(), member.data(), member.size(), out,
                                      decoded_bytes, &in_bytes, &out_bytes);
    return result == LIBDEFLATE_SUCCESS && in_bytes == member.size() && out_bytes == decoded_bytes;
  }
};

}  // namespace

bool IsZstdSkippableFrame(const char* data, size_t size) {
  return size >= 4 && (LoadLittleEndian32(data) & 0xFFFFFFF0u) == 0x184D2A50u;
}

std::unique_ptr<const FrameFormat> MakeZstdFrameFormat() {
  return std::make_unique<ZstdFrameFormat>();
}

std::unique_ptr<const FrameFormat> MakeGzipMemberFormat() {
  return std::make_unique<GzipMemberFormat>();
}

}  // namespace neardup::internal
