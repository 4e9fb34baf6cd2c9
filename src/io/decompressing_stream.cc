#include "io/decompressing_stream.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "io/byte_stream.h"
#include "io/compressed_frames.h"
#include "io/effective_threads.h"
#include "io/parallel_frame_stream.h"
#include "neardup/check.h"

namespace neardup::internal {
namespace {

constexpr size_t kInputBufferBytes = 64 * 1024;

// Shared input side of both decoders: a buffer refilled from the compressed
// stream, counting the bytes read so errors can give an offset.
class CompressedInput {
 public:
  // `offset`: where the first byte of `raw` is in the file (error messages).
  explicit CompressedInput(std::unique_ptr<ByteStream> raw, uint64_t offset = 0)
      : raw_(std::move(raw)), buffer_(new char[kInputBufferBytes]), bytes_read_(offset) {}

  // Refills the buffer. Returns false at the end of the compressed stream.
  Result<bool> Refill() {
    NEARDUP_ASSIGN_OR_RETURN(size_t n, raw_->Read(buffer_.get(), kInputBufferBytes));
    if (n == 0) {
      at_end_ = true;
      return false;
    }
    bytes_read_ += n;
    filled_ = n;
    return true;
  }

  bool HasEnd() const { return raw_->HasEnd(); }
  const char* data() const { return buffer_.get(); }
  size_t filled() const { return filled_; }
  bool at_end() const { return at_end_; }
  // Offset just past the last byte handed to the decoder when `unconsumed`
  // bytes of the buffer are still pending.
  uint64_t Offset(size_t unconsumed) const { return bytes_read_ - unconsumed; }

 private:
  std::unique_ptr<ByteStream> raw_;
  std::unique_ptr<char[]> buffer_;
  size_t filled_ = 0;
  uint64_t bytes_read_;
  bool at_end_ = false;
};

// Holds a failure until the bytes decoded before it have been returned.
class DeferredError {
 public:
  // Returns what Read should return: the bytes produced, or the error when
  // there are none.
  Result<size_t> Finish(size_t produced) {
    if (status_.ok() || produced > 0) return produced;
    return status_;
  }
  void Set(Status status) { status_ = std::move(status); }
  bool failed() const { return !status_.ok(); }
  const Status& status() const { return status_; }

 private:
  Status status_;
};

class GzipStream final : public ByteStream {
 public:
  GzipStream(std::unique_ptr<ByteStream> raw, std::string source, uint64_t offset = 0)
      : input_(std::move(raw), offset), source_(std::move(source)) {
    std::memset(&z_, 0, sizeof(z_));
    // 16 + MAX_WBITS: gzip wrapper only, largest window.
    int rc = inflateInit2(&z_, 16 + MAX_WBITS);
    if (rc != Z_OK) error_.Set(ResourceExhaustedError(source_ + ": cannot start gzip decoder"));
    initialized_ = rc == Z_OK;
  }
  ~GzipStream() override {
    if (initialized_) inflateEnd(&z_);
  }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  bool HasEnd() const override { return input_.HasEnd(); }

  Result<size_t> Read(char* buffer, size_t size) override {
    NEARDUP_DCHECK(size > 0);
    if (error_.failed()) return error_.status();
    if (done_) return 0;
    // zlib counts in uInt; larger requests are served in part.
    size = std::min<size_t>(size, 1u << 30);
    z_.next_out = reinterpret_cast<Bytef*>(buffer);
    z_.avail_out = static_cast<uInt>(size);
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0 && !input_.at_end()) {
        Result<bool> more = input_.Refill();
        if (!more.ok()) {
          error_.Set(std::move(more).status());
          break;
        }
        if (*more) {
          z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data()));
          z_.avail_in = static_cast<uInt>(input_.filled());
        }
        continue;
      }
      if (z_.avail_in == 0 && !in_member_) {
        done_ = true;  // the last member ended exactly at the end of the input
        break;
      }
      if (!in_member_) {
        // Another member follows (RFC 1952 2.2: a gzip file is a series of
        // members); each gets a fresh decoder state.
        inflateReset(&z_);
        in_member_ = true;
      }
      uInt out_before = z_.avail_out;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        continue;
      }
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && z_.avail_in == 0 && z_.avail_out == out_before) {
        // No progress possible without more input.
        if (input_.at_end()) {
          error_.Set(DataLossError(source_ + ": truncated gzip stream at compressed byte " +
                                   std::to_string(input_.Offset(0))));
          break;
        }
        continue;
      }
      error_.Set(DataLossError(source_ + ": corrupt gzip stream at compressed byte " +
                               std::to_string(input_.Offset(z_.avail_in)) + ": " +
                               (z_.msg != nullptr ? z_.msg : zError(rc))));
      break;
    }
    return error_.Finish(size - z_.avail_out);
  }

 private:
  CompressedInput input_;
  std::string source_;
  z_stream z_;
  bool initialized_ = false;
  bool in_member_ = false;
  bool done_ = false;
  DeferredError error_;
};

class ZstdStream final : public ByteStream {
 public:
  ZstdStream(std::unique_ptr<ByteStream> raw, std::string source, uint64_t offset = 0)
      : input_(std::move(raw), offset), source_(std::move(source)), dctx_(ZSTD_createDCtx()) {
    if (dctx_ == nullptr) {
      error_.Set(ResourceExhaustedError(source_ + ": cannot start zstd decoder"));
    }
  }
  ~ZstdStream() override { ZSTD_freeDCtx(dctx_); }
  ZstdStream(const ZstdStream&) = delete;
  ZstdStream& operator=(const ZstdStream&) = delete;

  bool HasEnd() const override { return input_.HasEnd(); }

  Result<size_t> Read(char* buffer, size_t size) override {
    NEARDUP_DCHECK(size > 0);
    if (error_.failed()) return error_.status();
    if (done_) return 0;
    ZSTD_outBuffer out = {buffer, size, 0};
    while (out.pos < out.size) {
      if (in_.pos == in_.size && !input_.at_end()) {
        Result<bool> more = input_.Refill();
        if (!more.ok()) {
          error_.Set(std::move(more).status());
          break;
        }
        if (*more) in_ = {input_.data(), input_.filled(), 0};
        continue;
      }
      if (in_.pos == in_.size && !in_frame_) {
        done_ = true;  // every frame is complete and flushed
        break;
      }
      size_t out_before = out.pos;
      size_t in_before = in_.pos;
      size_t rc = ZSTD_decompressStream(dctx_, &out, &in_);
      if (ZSTD_isError(rc)) {
        error_.Set(DataLossError(source_ + ": corrupt zstd stream at compressed byte " +
                                 std::to_string(input_.Offset(in_.size - in_.pos)) + ": " +
                                 ZSTD_getErrorName(rc)));
        break;
      }
      // rc == 0: a frame is fully decoded and flushed (ZSTD_decompressStream's
      // contract); anything else means the frame goes on.
      in_frame_ = rc != 0;
      if (in_.pos == in_.size && input_.at_end() && in_frame_ && out.pos == out_before &&
          in_.pos == in_before) {
        error_.Set(DataLossError(source_ + ": truncated zstd stream at compressed byte " +
                                 std::to_string(input_.Offset(0))));
        break;
      }
    }
    return error_.Finish(out.pos);
  }

 private:
  CompressedInput input_;
  std::string source_;
  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer in_ = {nullptr, 0, 0};
  bool in_frame_ = false;
  bool done_ = false;
  DeferredError error_;
};

}  // namespace

Result<std::unique_ptr<ByteStream>> OpenDecompressed(std::unique_ptr<ByteStream> raw,
                                                     const std::string& source,
                                                     Compression* compression) {
  static constexpr unsigned char kGzipMagic[] = {0x1f, 0x8b};
  static constexpr unsigned char kZstdMagic[] = {0x28, 0xb5, 0x2f, 0xfd};
  std::string prefix(4, '\0');
  NEARDUP_ASSIGN_OR_RETURN(size_t n, ReadFully(raw.get(), prefix.data(), prefix.size()));
  prefix.resize(n);
  Compression detected = Compression::kNone;
  if (n >= sizeof(kGzipMagic) && std::memcmp(prefix.data(), kGzipMagic, sizeof(kGzipMagic)) == 0) {
    detected = Compression::kGzip;
  } else if (n >= sizeof(kZstdMagic) &&
             (std::memcmp(prefix.data(), kZstdMagic, sizeof(kZstdMagic)) == 0 ||
              IsZstdSkippableFrame(prefix.data(), prefix.size()))) {
    detected = Compression::kZstd;
  }
  if (compression != nullptr) *compression = detected;
  std::unique_ptr<ByteStream> stream = MakePrefixedStream(std::move(prefix), std::move(raw));
  // Files (not pipes: their first bytes are not held back to read ahead)
  // are split into frames or members decoded as oneTBB tasks; gzip even on
  // one thread, for libdeflate's speed.
  const size_t threads = EffectiveThreads();
  ParallelFrameOptions options;
  options.jobs_in_flight = 2 * threads;
  // Enough to keep every thread decoding members of up to 16 MiB.
  options.max_decoded_in_flight = (threads + 1) * (size_t{16} << 20);
  // The streaming decoder `Decoder` of `source`, from a compressed offset on.
  const auto streaming = [&source](auto* decoder_type) -> SerialDecoderFactory {
    using Decoder = std::remove_pointer_t<decltype(decoder_type)>;
    return [source](std::unique_ptr<ByteStream> raw, uint64_t offset) {
      return std::unique_ptr<ByteStream>(std::make_unique<Decoder>(std::move(raw), source, offset));
    };
  };
  switch (detected) {
    case Compression::kGzip:
      if (stream->HasEnd()) {
        // A member's end is found only by searching for the next one: 16 MiB
        // of compressed text is already ~48-64 MiB decoded (the most held
        // whole), and one big member (gzip's, pigz's) then wastes little.
        ParallelFrameOptions gzip_options = options;
        gzip_options.max_frame_bytes = size_t{16} << 20;
        return MakeParallelFrameStream(std::move(stream), MakeGzipMemberFormat(),
                                       streaming(static_cast<GzipStream*>(nullptr)), gzip_options);
      }
      return std::unique_ptr<ByteStream>(std::make_unique<GzipStream>(std::move(stream), source));
    case Compression::kZstd:
      if (stream->HasEnd() && threads > 1) {
        // A file may hold many frames (pzstd's), decoded in parallel.
        return MakeParallelFrameStream(std::move(stream), MakeZstdFrameFormat(),
                                       streaming(static_cast<ZstdStream*>(nullptr)), options);
      }
      return std::unique_ptr<ByteStream>(std::make_unique<ZstdStream>(std::move(stream), source));
    case Compression::kNone:
      break;
  }
  return stream;
}

}  // namespace neardup::internal
