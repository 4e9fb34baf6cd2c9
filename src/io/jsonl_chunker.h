// JsonlChunker cuts a ByteStream into chunks of whole lines, read straight
// into a buffer the caller owns, so that threads can parse chunks in parallel
// (fingerprint_pipeline.cc). It never looks inside a line: it only finds the
// last "\n" of each read, so it runs at the speed of read(2) and memrchr.
//
// A chunk holds whole lines ("\n"-terminated, except a last line without one
// at the end of the stream) and is followed in memory by kLinePaddingBytes
// zero bytes (simdjson reads past a line's end). A line longer than the
// chunk grows the buffer (geometrically); one longer than max_line_bytes is
// passed over without being held and reported as the chunk's tail. Line
// numbers are not counted here (the parsers count lines of their chunk).
//
// Cost: one chunk buffer per chunk in flight, each max(chunk_bytes, longest
// kept line) plus padding; the partial line carried between chunks is copied
// once. Over a MappedInput nothing is copied: a chunk points into the mapping
// (whose zero tail is the last line's padding) and keeps it alive.
// Thread safety: one thread at a time; chunks are independent once returned.
#ifndef NEARDUP_IO_JSONL_CHUNKER_H_
#define NEARDUP_IO_JSONL_CHUNKER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "io/mapped_input.h"
#include "neardup/document_reader.h"
#include "neardup/status.h"

namespace neardup::internal {

// What follows a chunk's lines in the stream.
enum class ChunkTail {
  kNone,
  // A line of tail_length bytes (without its line ending), over
  // max_line_bytes, passed over.
  kTooLongLine,
  // A line over max_line_bytes in a stream that may never end: the reader
  // must stop (ResourceExhausted, built by the caller who knows its number).
  kUnendingTooLongLine,
  // The stream failed (tail_error) after the chunk's complete lines; a
  // partial line in front of the failure is dropped.
  kError,
};

struct JsonlChunk {
  // [lines(), lines() + size) are whole lines, then at least
  // kLinePaddingBytes readable bytes (zeros after the last line of a stream).
  const char* lines() const { return mapped != nullptr ? mapped : data.get(); }
  // The buffer read into (stream chunks).
  std::unique_ptr<char[]> data;
  size_t capacity = 0;  // bytes allocated at data, padding included
  // Chunks of a mapped file: their lines in the mapping, which they keep.
  const char* mapped = nullptr;
  std::shared_ptr<const MappedInput> mapping;
  // Chunks of a mapped file: the offset in the file where the bytes the
  // chunker read for this chunk end (its lines, or a passed-over line), for
  // MappedInput::CheckRead once the chunk has been used.
  size_t mapped_end = 0;
  size_t size = 0;
  ChunkTail tail = ChunkTail::kNone;
  uint64_t tail_length = 0;
  Status tail_error;
};

class JsonlChunker {
 public:
  // The stream must outlive the chunker. REQUIRES: chunk_bytes > 0.
  JsonlChunker(ByteStream* stream, size_t chunk_bytes, uint64_t max_line_bytes);
  // Chunks of a mapped file: the same lines and tails as the stream of its
  // bytes would give, without reading. REQUIRES: file != nullptr.
  JsonlChunker(std::shared_ptr<const MappedInput> file, size_t chunk_bytes,
               uint64_t max_line_bytes);

  // Fills *chunk (reusing its buffer) with the next lines, at least
  // chunk_bytes of them unless the stream ends first. false: the stream is
  // exhausted (or failed before, see kError) and *chunk is untouched. A
  // chunk may hold no lines and only a tail.
  Result<bool> Next(JsonlChunk* chunk);

 private:
  // Makes chunk->capacity at least `bytes` + padding, keeping its content.
  static void Reserve(JsonlChunk* chunk, size_t bytes);
  // Passes over the rest of an over-long line whose first `seen` bytes are
  // gone; fills the chunk's tail.
  Status Discard(JsonlChunk* chunk, uint64_t seen);
  bool NextMapped(JsonlChunk* chunk);
  bool CutMapped(JsonlChunk* chunk);

  ByteStream* stream_ = nullptr;
  std::shared_ptr<const MappedInput> file_;
  size_t file_pos_ = 0;  // mapped: where the next chunk starts
  size_t chunk_bytes_;
  uint64_t max_line_bytes_;
  std::string carry_;  // the partial line after the last chunk's last "\n"
  bool at_eof_ = false;
  bool failed_ = false;
};

}  // namespace neardup::internal

#endif  // NEARDUP_IO_JSONL_CHUNKER_H_
