#include "io/parallel_frame_stream.h"

#include <tbb/task_group.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "io/byte_stream.h"
#include "neardup/check.h"

namespace neardup::internal {
namespace {

// Compressed bytes are read ahead in blocks of this size.
constexpr size_t kReadBytes = size_t{1} << 20;

// A run of whole frames: their compressed bytes, and once its task has run,
// their decoded bytes. Jobs are reused, keeping their buffers: fresh pages
// for every job cost more (page faults, zeroing) than the copies.
struct FrameJob {
  std::string compressed;
  std::vector<FrameSplit> frames;
  uint64_t offset = 0;  // of compressed[0] in the file
  size_t decoded_bytes = 0;
  std::unique_ptr<char[]> decoded;  // decoded_bytes of it filled, once ok
  size_t decoded_capacity = 0;
  bool ok = false;
  tbb::task_group task;
};

class ParallelFrameStream final : public ByteStream {
 public:
  ParallelFrameStream(std::unique_ptr<ByteStream> raw, std::unique_ptr<const FrameFormat> format,
                      SerialDecoderFactory serial, const ParallelFrameOptions& options)
      : raw_(std::move(raw)),
        format_(std::move(format)),
        serial_factory_(std::move(serial)),
        options_(options) {
    options_.jobs_in_flight = std::max<size_t>(1, options_.jobs_in_flight);
  }

  ~ParallelFrameStream() override {
    for (std::unique_ptr<FrameJob>& job : jobs_) job->task.wait();
  }

  Result<size_t> Read(char* buffer, size_t size) override {
    NEARDUP_DCHECK(size > 0);
    while (true) {
      if (serial_ != nullptr) return serial_->Read(buffer, size);
      NEARDUP_RETURN_IF_ERROR(Schedule());
      if (jobs_.empty()) {
        if (tail_ == nullptr) return size_t{0};
        serial_ = serial_factory_(std::move(tail_), tail_offset_);
        continue;
      }
      FrameJob& front = *jobs_.front();
      front.task.wait();
      if (!front.ok) {
        // Decode this job and everything after it serially, which finds
        // the same error at the same offset as a serial read would.
        HandOver(0);
        continue;
      }
      if (served_ < front.decoded_bytes) {
        const size_t n = std::min(size, front.decoded_bytes - served_);
        std::memcpy(buffer, front.decoded.get() + served_, n);
        served_ += n;
        return n;
      }
      decoded_in_flight_ -= front.decoded_bytes;
      Recycle(std::move(jobs_.front()));
      jobs_.pop_front();
      served_ = 0;
    }
  }

 private:
  // Starts jobs until jobs_in_flight are queued (or the decoded-bytes
  // budget is reached); or hands over to the serial decoder where a frame
  // cannot be split off.
  Status Schedule() {
    while (tail_ == nullptr && jobs_.size() < options_.jobs_in_flight &&
           (jobs_.empty() || decoded_in_flight_ < options_.max_decoded_in_flight)) {
      std::unique_ptr<FrameJob> job = NewJob();
      job->offset = pending_offset_ + pending_begin_;
      bool hand_over = false;
      bool end = false;
      while (job->compressed.size() < options_.job_bytes &&
             job->decoded_bytes < 4 * options_.job_bytes) {
        FrameSplit split;
        NEARDUP_RETURN_IF_ERROR(NextFrame(&split, &end));
        if (end) break;
        if (split.kind != FrameSplit::Kind::kFrame) {
          hand_over = true;
          break;
        }
        job->compressed.append(pending_, pending_begin_, split.compressed_bytes);
        job->decoded_bytes += split.decoded_bytes;
        job->frames.push_back(split);
        pending_begin_ += split.compressed_bytes;
      }
      if (!job->frames.empty()) Start(std::move(job));
      if (hand_over) HandOver(jobs_.size());
      if (hand_over || end) break;
    }
    return Status::Ok();
  }

  // Finds the next frame in the pending bytes, reading more as needed;
  // *end when there are no more bytes at all.
  Status NextFrame(FrameSplit* split, bool* end) {
    size_t scanned = 0;
    while (true) {
      const size_t available = pending_.size() - pending_begin_;
      if (available == 0 && at_end_) {
        *end = true;
        return Status::Ok();
      }
      if (available > 0) {
        *split = format_->Split(pending_.data() + pending_begin_, available, at_end_, &scanned);
        if (split->kind != FrameSplit::Kind::kNeedMore) return Status::Ok();
        if (at_end_ || available >= options_.max_frame_bytes) {
          split->kind = FrameSplit::Kind::kSerial;  // truncated, or too big to split off
          return Status::Ok();
        }
      }
      NEARDUP_RETURN_IF_ERROR(ReadMore());
    }
  }

  std::unique_ptr<FrameJob> NewJob() {
    if (spare_jobs_.empty()) return std::make_unique<FrameJob>();
    std::unique_ptr<FrameJob> job = std::move(spare_jobs_.back());
    spare_jobs_.pop_back();
    job->compressed.clear();
    job->frames.clear();
    job->decoded_bytes = 0;
    job->ok = false;
    return job;
  }

  void Recycle(std::unique_ptr<FrameJob> job) {
    if (spare_jobs_.empty()) spare_jobs_.push_back(std::move(job));
  }

  void Start(std::unique_ptr<FrameJob> job) {
    decoded_in_flight_ += job->decoded_bytes;
    FrameJob* raw_job = job.get();
    const FrameFormat* format = format_.get();
    raw_job->task.run([raw_job, format] {
      if (raw_job->decoded_capacity < raw_job->decoded_bytes) {
        raw_job->decoded.reset();  // not zeroed: every byte is decoded into
        raw_job->decoded.reset(new char[raw_job->decoded_bytes]);
        raw_job->decoded_capacity = raw_job->decoded_bytes;
      }
      size_t in = 0, out = 0;
      for (const FrameSplit& frame : raw_job->frames) {
        if (!format->Decode(
                std::string_view(raw_job->compressed).substr(in, frame.compressed_bytes),
                raw_job->decoded.get() + out, frame.decoded_bytes)) {
          return;
        }
        in += frame.compressed_bytes;
        out += frame.decoded_bytes;
      }
      raw_job->ok = true;
    });
    jobs_.push_back(std::move(job));
  }

  Status ReadMore() {
    // Grown 4x at a time (up to the longest search): fewer copies and fresh
    // pages than doubling, while a small file still takes one block.
    const size_t needed = pending_.size() - pending_begin_ + kReadBytes;
    if (pending_.capacity() < needed) {
      pending_.reserve(std::min(std::max(needed, 4 * pending_.capacity()),
                                std::max(needed, options_.max_frame_bytes + kReadBytes)));
    }
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

  // Drops jobs [first, end): their compressed bytes, and everything after
  // them, go to the serial decoder once the jobs before `first` are served.
  // Called again when an earlier job fails after a hand-over, it puts that
  // job's bytes in front of what was handed over.
  void HandOver(size_t first) {
    std::string replay;
    uint64_t offset = tail_ != nullptr ? tail_offset_ : pending_offset_ + pending_begin_;
    for (size_t i = first; i < jobs_.size(); ++i) {
      jobs_[i]->task.wait();
      if (i == first) offset = jobs_[i]->offset;
      replay += jobs_[i]->compressed;
      decoded_in_flight_ -= jobs_[i]->decoded_bytes;
    }
    while (jobs_.size() > first) jobs_.pop_back();
    if (first == 0) served_ = 0;
    std::unique_ptr<ByteStream> rest;
    if (tail_ != nullptr) {
      rest = std::move(tail_);  // the read-ahead and the file are in it already
    } else {
      if (replay.empty()) {
        // Only read-ahead to replay (one big frame): handed over, not copied.
        pending_.erase(0, pending_begin_);
        replay = std::move(pending_);
      } else {
        replay.append(pending_, pending_begin_, std::string::npos);
      }
      pending_ = std::string();
      pending_begin_ = 0;
      rest = std::move(raw_);
      if (!failed_read_.ok()) rest = MakeFailingStream(failed_read_);
    }
    tail_ = MakePrefixedStream(std::move(replay), std::move(rest));
    tail_offset_ = offset;
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
  std::unique_ptr<const FrameFormat> format_;
  SerialDecoderFactory serial_factory_;
  ParallelFrameOptions options_;
  std::string pending_;  // compressed bytes read, not yet in a job
  size_t pending_begin_ = 0;
  uint64_t pending_offset_ = 0;  // of pending_[0] in the file
  bool at_end_ = false;
  Status failed_read_;
  std::deque<std::unique_ptr<FrameJob>> jobs_;
  std::vector<std::unique_ptr<FrameJob>> spare_jobs_;  // one served, for reuse
  size_t decoded_in_flight_ = 0;                       // decoded bytes of jobs_
  size_t served_ = 0;                                  // bytes of jobs_.front() already returned
  // Once handed over: the compressed bytes that follow jobs_, from file
  // offset tail_offset_; decoded by serial_ once jobs_ are served.
  std::unique_ptr<ByteStream> tail_;
  uint64_t tail_offset_ = 0;
  std::unique_ptr<ByteStream> serial_;
};

}  // namespace

std::unique_ptr<ByteStream> MakeParallelFrameStream(std::unique_ptr<ByteStream> raw,
                                                    std::unique_ptr<const FrameFormat> format,
                                                    SerialDecoderFactory serial,
                                                    const ParallelFrameOptions& options) {
  return std::make_unique<ParallelFrameStream>(std::move(raw), std::move(format), std::move(serial),
                                               options);
}

}  // namespace neardup::internal
