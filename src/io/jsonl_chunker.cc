#include "io/jsonl_chunker.h"

#include <string.h>  // memrchr (GNU)

#include <algorithm>
#include <cstring>
#include <optional>

#include "io/line_reader.h"
#include "neardup/check.h"

namespace neardup::internal {
namespace {

// A small file (its size known) gets a buffer of its size, not a whole chunk.
constexpr size_t kMinReadBytes = 4096;

}  // namespace

JsonlChunker::JsonlChunker(ByteStream* stream, size_t chunk_bytes, uint64_t max_line_bytes)
    : stream_(stream), chunk_bytes_(chunk_bytes), max_line_bytes_(max_line_bytes) {
  NEARDUP_CHECK(chunk_bytes > 0);
}

JsonlChunker::JsonlChunker(std::shared_ptr<const MappedInput> file, size_t chunk_bytes,
                           uint64_t max_line_bytes)
    : file_(std::move(file)), chunk_bytes_(chunk_bytes), max_line_bytes_(max_line_bytes) {
  NEARDUP_CHECK(chunk_bytes > 0);
  NEARDUP_CHECK(file_ != nullptr && file_->padding_bytes() >= kLinePaddingBytes);
}

// The stream path's rules, on bytes already in memory: a chunk ends after
// the last "\n" within chunk_bytes of its start; a line longer than that is
// a chunk of its own, or, past max_line_bytes (+1 for a "\r"), a tail.
bool JsonlChunker::NextMapped(JsonlChunk* chunk) {
  if (!CutMapped(chunk)) return false;
  chunk->mapped_end = file_pos_;
  return true;
}

bool JsonlChunker::CutMapped(JsonlChunk* chunk) {
  const char* data = file_->data();
  const size_t size = file_->size();
  if (file_pos_ >= size) return false;
  chunk->mapping = file_;
  chunk->mapped = data + file_pos_;
  chunk->size = 0;
  const size_t begin = file_pos_;
  const size_t end = size - begin <= chunk_bytes_ ? size : begin + chunk_bytes_;
  if (end == size) {
    chunk->size = size - begin;  // the last line may lack its "\n"
    file_pos_ = size;
    return true;
  }
  if (const void* last = memrchr(data + begin, '\n', end - begin); last != nullptr) {
    file_pos_ = static_cast<const char*>(last) - data + 1;
    chunk->size = file_pos_ - begin;
    return true;
  }
  // One line longer than a chunk.
  const void* newline = std::memchr(data + end, '\n', size - end);
  const size_t stop = newline != nullptr ? static_cast<const char*>(newline) - data : size;
  file_pos_ = newline != nullptr ? stop + 1 : size;
  if (stop - begin > max_line_bytes_ + 1) {
    uint64_t length = stop - begin;
    // The stream path drops the "\r" of "\r\n" only when a "\n" follows.
    if (newline != nullptr && data[stop - 1] == '\r') --length;
    chunk->tail = ChunkTail::kTooLongLine;
    chunk->tail_length = length;
    return true;
  }
  chunk->size = file_pos_ - begin;
  return true;
}

void JsonlChunker::Reserve(JsonlChunk* chunk, size_t bytes) {
  if (chunk->capacity >= bytes + kLinePaddingBytes) return;
  // A quarter more: the partial line carried into each chunk varies, and a
  // reused chunk should not be reallocated for a few bytes more each time.
  const size_t capacity = bytes + bytes / 4 + kLinePaddingBytes;
  std::unique_ptr<char[]> bigger(new char[capacity]);
  if (chunk->size > 0) std::memcpy(bigger.get(), chunk->data.get(), chunk->size);
  chunk->data = std::move(bigger);
  chunk->capacity = capacity;
}

Status JsonlChunker::Discard(JsonlChunk* chunk, uint64_t seen) {
  chunk->size = 0;
  char* data = chunk->data.get();
  const size_t room = chunk->capacity - kLinePaddingBytes;
  while (true) {
    Result<size_t> read = stream_->Read(data, room);
    if (!read.ok()) {
      failed_ = true;
      chunk->tail = ChunkTail::kError;
      chunk->tail_error = read.status();
      return Status::Ok();
    }
    const size_t n = *read;
    if (n == 0) {
      at_eof_ = true;
      chunk->tail = ChunkTail::kTooLongLine;
      chunk->tail_length = seen;
      return Status::Ok();
    }
    const void* newline = std::memchr(data, '\n', n);
    if (newline == nullptr) {
      seen += n;
      continue;
    }
    const size_t stop = static_cast<const char*>(newline) - data;
    uint64_t length = seen + stop;
    // As LineReader: a "\r" at the end of the previous read still counts.
    if (stop > 0 && data[stop - 1] == '\r') --length;
    carry_.assign(data + stop + 1, n - stop - 1);
    chunk->tail = ChunkTail::kTooLongLine;
    chunk->tail_length = length;
    return Status::Ok();
  }
}

Result<bool> JsonlChunker::Next(JsonlChunk* chunk) {
  chunk->mapped = nullptr;
  chunk->mapping.reset();
  chunk->mapped_end = 0;
  if (file_ != nullptr) {
    chunk->tail = ChunkTail::kNone;
    chunk->tail_length = 0;
    chunk->tail_error = Status::Ok();
    return NextMapped(chunk);
  }
  if (failed_ || (at_eof_ && carry_.empty())) return false;
  chunk->size = 0;
  chunk->tail = ChunkTail::kNone;
  chunk->tail_length = 0;
  chunk->tail_error = Status::Ok();

  size_t fresh = chunk_bytes_;
  if (std::optional<uint64_t> left = stream_->RemainingSizeHint(); left.has_value()) {
    fresh = static_cast<size_t>(std::clamp<uint64_t>(*left + 1, kMinReadBytes, chunk_bytes_));
  }
  Reserve(chunk, carry_.size() + fresh);
  if (!carry_.empty()) std::memcpy(chunk->data.get(), carry_.data(), carry_.size());
  size_t size = carry_.size();
  carry_.clear();
  size_t target = size + fresh;

  while (true) {
    while (!at_eof_ && size < target) {
      Result<size_t> read =
          stream_->Read(chunk->data.get() + size, chunk->capacity - kLinePaddingBytes - size);
      if (!read.ok()) {
        // Complete lines first, then the failure; the partial line is lost.
        failed_ = true;
        const void* last = size > 0 ? memrchr(chunk->data.get(), '\n', size) : nullptr;
        chunk->size = last != nullptr ? static_cast<const char*>(last) - chunk->data.get() + 1 : 0;
        std::memset(chunk->data.get() + chunk->size, 0, kLinePaddingBytes);
        chunk->tail = ChunkTail::kError;
        chunk->tail_error = read.status();
        return true;
      }
      if (*read == 0) at_eof_ = true;
      size += *read;
    }
    char* data = chunk->data.get();
    if (at_eof_) {
      if (size == 0) return false;
      chunk->size = size;  // the last line may lack its "\n"
      std::memset(data + size, 0, kLinePaddingBytes);
      return true;
    }
    const void* last = memrchr(data, '\n', size);
    if (last != nullptr) {
      const size_t end = static_cast<const char*>(last) - data + 1;
      carry_.assign(data + end, size - end);
      chunk->size = end;
      std::memset(data + end, 0, kLinePaddingBytes);
      return true;
    }
    // One line fills the buffer. +1: a kept line may still be followed by
    // the "\r" of its "\r\n" (as LineReader).
    if (size > max_line_bytes_ + 1) {
      if (!stream_->HasEnd()) {
        failed_ = true;
        chunk->size = 0;
        chunk->tail = ChunkTail::kUnendingTooLongLine;
        return true;
      }
      NEARDUP_RETURN_IF_ERROR(Discard(chunk, size));
      std::memset(chunk->data.get(), 0, kLinePaddingBytes);
      return true;
    }
    chunk->size = size;  // Reserve keeps [0, size)
    Reserve(chunk, 2 * size);
    chunk->size = 0;
    target = chunk->capacity - kLinePaddingBytes;
  }
}

}  // namespace neardup::internal
