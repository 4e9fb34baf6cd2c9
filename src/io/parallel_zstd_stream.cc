#include "io/parallel_zstd_stream.h"

#include <tbb/task_group.h>

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <utility>

#include "io/byte_stream.h"
#include "neardup/check.h"

namespace neardup::internal {
namespace {

// Compressed bytes are read ahead in blocks of this size.
constexpr size_t kReadBytes = size_t{1} << 20;
// A frame that says it decodes to more than this is left to the serial
// decoder (its output would be held whole).
constexpr uint64_t kMaxFrameContentBytes = uint64_t{64} << 20;

// The largest frame header (RFC 8878 3.1.1.1): enough to read a content size.
constexpr size_t kFrameHeaderMaxBytes = 18;

// RFC 8878 3.1.2: magic numbers 0x184D2A50 to 0x184D2A5F.
bool IsSkippableFrame(const char* data, size_t size) {
  if (size < 4) return false;
  const auto byte = [&](int i) { return static_cast<uint32_t>(static_cast<uint8_t>(data[i])); };
  const uint32_t magic = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
  return (magic & 0xFFFFFFF0u) == 0x184D2A50u;
}

// One frame (or a run of skippable frames): its compressed bytes, and once
// its task has run, its decoded bytes.
struct FrameJob {
  std::string compressed;
  uint64_t offset = 0;  // of compressed[0] in the file
  std::string decoded;
  bool ok = false;
  tbb::task_group task;
};

class ParallelZstdStream final : public ByteStream {
 public:
  ParallelZstdStream(std::unique_ptr<ByteStream> raw, SerialZstdFactory serial,
                     size_t frames_in_flight, size_t max_frame_bytes)
      : raw_(std::move(raw)),
        serial_factory_(std::move(serial)),
        frames_in_flight_(std::max<size_t>(1, frames_in_flight)),
        max_frame_bytes_(max_frame_bytes) {}

  ~ParallelZstdStream() override {
    for (std::unique_ptr<FrameJob>& job : jobs_) job->task.wait();
  }

  Result<size_t> Read(char* buffer, size_t size) override {
    NEARDUP_DCHECK(size > 0);
    while (true) {
      if (serial_ != nullptr) return serial_->Read(buffer, size);
      NEARDUP_RETURN_IF_ERROR(Schedule());
      if (jobs_.empty()) {
        if (tail_ == nullptr) return size_t{0};
        serial_ = std::move(tail_);
        continue;
      }
      FrameJob& front = *jobs_.front();
      front.task.wait();
      if (!front.ok) {
        // Decode this frame and everything after it serially, which finds
        // the same error at the same offset as a serial read would.
        HandOver(0);
        continue;
      }
      if (served_ < front.decoded.size()) {
        const size_t n = std::min(size, front.decoded.size() - served_);
        std::memcpy(buffer, front.decoded.data() + served_, n);
        served_ += n;
        return n;
      }
      jobs_.pop_front();
      served_ = 0;
    }
  }

 private:
  // Starts decoding frames until frames_in_flight are queued; or hands over
  // to the serial decoder where a frame cannot be split off.
  Status Schedule() {
    while (jobs_.size() < frames_in_flight_ && tail_ == nullptr) {
      size_t frame_size = 0;
      while (true) {
        const size_t available = pending_.size() - pending_begin_;
        const char* header = pending_.data() + pending_begin_;
        if (available >= kFrameHeaderMaxBytes && !IsSkippableFrame(header, available)) {
          // A frame too big to hold, or of unknown size (one frame of a whole
          // file, a stream compressed from a pipe) is left to the serial
          // decoder before reading it ahead.
          const unsigned long long content = ZSTD_getFrameContentSize(header, available);
          if (content == ZSTD_CONTENTSIZE_UNKNOWN || content > kMaxFrameContentBytes) {
            HandOver(jobs_.size());
            return Status::Ok();
          }
        }
        if (available > 0) {
          frame_size = ZSTD_findFrameCompressedSize(pending_.data() + pending_begin_, available);
          if (!ZSTD_isError(frame_size)) break;
          if (ZSTD_getErrorCode(frame_size) != ZSTD_error_srcSize_wrong) {
            HandOver(jobs_.size());  // damage: the serial decoder reports it
            return Status::Ok();
          }
        }
        if (at_end_) {
          if (available > 0) HandOver(jobs_.size());  // a truncated frame
          return Status::Ok();
        }
        if (available >= max_frame_bytes_) {
          HandOver(jobs_.size());  // too big to split off
          return Status::Ok();
        }
        NEARDUP_RETURN_IF_ERROR(ReadMore());
      }
      const char* frame = pending_.data() + pending_begin_;
      const unsigned long long content = ZSTD_getFrameContentSize(frame, frame_size);
      const bool skippable = IsSkippableFrame(frame, frame_size);
      if (!skippable && (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR ||
                         content > kMaxFrameContentBytes)) {
        HandOver(jobs_.size());  // not sized in advance: streamed serially
        return Status::Ok();
      }
      auto job = std::make_unique<FrameJob>();
      job->compressed.assign(frame, frame_size);
      job->offset = pending_offset_ + pending_begin_;
      pending_begin_ += frame_size;
      if (skippable) {
        job->ok = true;  // nothing to decode (pzstd's size hints)
      } else {
        FrameJob* raw_job = job.get();
        raw_job->task.run([raw_job, content] {
          raw_job->decoded.resize(static_cast<size_t>(content));
          const size_t n = ZSTD_decompress(raw_job->decoded.data(), raw_job->decoded.size(),
                                           raw_job->compressed.data(), raw_job->compressed.size());
          raw_job->ok = !ZSTD_isError(n) && n == content;
        });
      }
      jobs_.push_back(std::move(job));
    }
    return Status::Ok();
  }

  Status ReadMore() {
    if (pending_begin_ > 0) {
      pending_offset_ += pending_begin_;
      pending_.erase(0, pending_begin_);
      pending_begin_ = 0;
    }
    const size_t old_size = pending_.size();
    pending_.resize(old_size + kReadBytes);
    size_t filled = 0;
    while (filled < kReadBytes) {
      Result<size_t> n = raw_->Read(pending_.data() + old_size + filled, kReadBytes - filled);
      if (!n.ok()) {
        // The serial decoder gets the bytes read so far, then this error.
        failed_read_ = n.status();
        at_end_ = true;
        break;
      }
      if (*n == 0) {
        at_end_ = true;
        break;
      }
      filled += *n;
    }
    pending_.resize(old_size + filled);
    return Status::Ok();
  }

  // Drops jobs [first, end) and decodes from job `first` (or, when there
  // is none, from the pending bytes) on with the serial decoder.
  void HandOver(size_t first) {
    std::string replay;
    uint64_t offset = pending_offset_ + pending_begin_;
    for (size_t i = first; i < jobs_.size(); ++i) {
      jobs_[i]->task.wait();
      if (i == first) offset = jobs_[i]->offset;
      replay += jobs_[i]->compressed;
    }
    replay.append(pending_, pending_begin_, std::string::npos);
    while (jobs_.size() > first) jobs_.pop_back();
    if (first == 0) served_ = 0;
    pending_.clear();
    pending_begin_ = 0;
    std::unique_ptr<ByteStream> rest = std::move(raw_);
    if (!failed_read_.ok()) rest = MakeFailingStream(failed_read_);
    // The jobs before `first` are served first; then this decoder.
    tail_ = serial_factory_(MakePrefixedStream(std::move(replay), std::move(rest)), offset);
  }

  static std::unique_ptr<ByteStream> MakeFailingStream(Status status) {
    class Failing final : public ByteStream {
     public:
      explicit Failing(Status status) : status_(std::move(status)) {}
      Result<size_t> Read(char*, size_t) override { return status_; }

     private:
      Status status_;
    };
    return std::make_unique<Failing>(std::move(status));
  }

  std::unique_ptr<ByteStream> raw_;
  SerialZstdFactory serial_factory_;
  size_t frames_in_flight_;
  size_t max_frame_bytes_;
  std::string pending_;  // compressed bytes read, not yet in a job
  size_t pending_begin_ = 0;
  uint64_t pending_offset_ = 0;  // of pending_[0] in the file
  bool at_end_ = false;
  Status failed_read_;
  std::deque<std::unique_ptr<FrameJob>> jobs_;
  size_t served_ = 0;                   // bytes of jobs_.front() already returned
  std::unique_ptr<ByteStream> tail_;    // decodes what follows jobs_, once set
  std::unique_ptr<ByteStream> serial_;  // tail_, once jobs_ are served
};

}  // namespace

std::unique_ptr<ByteStream> MakeParallelZstdStream(std::unique_ptr<ByteStream> raw,
                                                   SerialZstdFactory serial,
                                                   size_t frames_in_flight,
                                                   size_t max_frame_bytes) {
  return std::make_unique<ParallelZstdStream>(std::move(raw), std::move(serial), frames_in_flight,
                                              max_frame_bytes);
}

}  // namespace neardup::internal
