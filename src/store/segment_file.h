// Segment files: the immutable per-commit store of a collection's documents.
// A segment holds, for each document it was written with, the document
// number, its chunk set, its SimHash and (optionally) its text compressed
// with zstd (kept so that matching passages can be shown without the
// original files, which in an archive move or disappear).
//
// Layout (little-endian; sections start on 64-byte boundaries):
//   header         128 bytes (magic "NDSEGMNT", version, counts, checksums)
//   docs           num_docs x u32        document numbers
//   chunk_offsets  (num_docs + 1) x u64  chunks of row r: [off[r], off[r+1])
//   chunks         num_chunks x u32
//   simhash        num_docs x u64
//   text_offsets   (num_docs + 1) x u64  zstd frame of row r (empty: no text)
//   texts          text_bytes bytes
// Open checks the header checksum, the size and the offsets (O(num_docs));
// VerifyArrays checks every array against its checksum (O(rows + chunks),
// once); each text frame carries a zstd content checksum checked by Text;
// VerifyChecksum reads the whole body. Format: docs/formats/SEGMENT.md.
// Cost: memory-mapped, used in place. Thread safety: a reader is immutable.
#ifndef NEARDUP_STORE_SEGMENT_FILE_H_
#define NEARDUP_STORE_SEGMENT_FILE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "index/chunk_index_io.h"
#include "neardup/status.h"

namespace neardup::internal {

// Version 2 added the arrays checksum and zstd content checksums in every
// text frame; version 1 files are still read (their arrays are checked
// against the whole-body checksum).
inline constexpr uint32_t kSegmentFormatVersion = 2;

struct SegmentRow {
  uint32_t doc = 0;
  std::span<const uint32_t> chunks;
  uint64_t simhash = 0;
  // The text to compress (when `compressed_text` is empty and store_texts),
  // or an already compressed frame copied from another segment (compaction).
  std::string_view text;
  std::string_view compressed_text;
};

// Writes rows to `path` atomically; returns the file's size.
Result<uint64_t> WriteSegmentFile(const std::string& path, std::span<const SegmentRow> rows,
                                  bool store_texts, Env* env = nullptr);

// One zstd frame of `text` with its content checksum (XXH64), so a damaged
// frame is an error when it is read, never a silently different text.
Result<std::string> CompressText(std::string_view text);

// true when `frame` is a zstd frame that carries a content checksum (every
// frame written by format version 2; compaction recompresses older ones).
bool FrameHasChecksum(std::string_view frame);

class SegmentReader {
 public:
  static Result<std::unique_ptr<SegmentReader>> Open(const std::string& path);

  size_t num_docs() const { return docs_.size(); }
  uint64_t num_chunks() const { return chunks_.size(); }
  uint64_t file_bytes() const { return file_->bytes().size(); }
  const std::string& path() const { return file_->path(); }

  // REQUIRES: row < num_docs().
  uint32_t doc(size_t row) const { return docs_[row]; }
  std::span<const uint32_t> chunks(size_t row) const {
    return chunks_.subspan(chunk_offsets_[row], chunk_offsets_[row + 1] - chunk_offsets_[row]);
  }
  uint64_t simhash(size_t row) const { return simhash_[row]; }
  bool has_text(size_t row) const { return text_offsets_[row + 1] > text_offsets_[row]; }
  std::string_view compressed_text(size_t row) const;
  // NotFound when the segment holds no text for the row; DataLoss for a
  // corrupt frame.
  Result<std::string> Text(size_t row) const;

  // DataLoss unless the body's checksum matches. O(file).
  Status VerifyChecksum() const;
  // DataLoss unless the arrays (numbers, chunks, SimHashes, offsets) match
  // their checksum: O(rows + chunks), computed once and remembered, so a
  // reader checks a segment the first time it uses it. Thread-safe.
  Status VerifyArrays() const;
  uint32_t version() const { return version_; }

 private:
  SegmentReader() = default;
  std::unique_ptr<MappedFile> file_;
  std::span<const uint32_t> docs_;
  std::span<const uint64_t> chunk_offsets_;
  std::span<const uint32_t> chunks_;
  std::span<const uint64_t> simhash_;
  std::span<const uint64_t> text_offsets_;
  std::span<const uint8_t> texts_;
  uint64_t data_checksum_ = 0;
  uint64_t arrays_checksum_ = 0;
  uint64_t arrays_bytes_ = 0;
  uint32_t version_ = 0;
  mutable std::once_flag arrays_checked_;
  mutable Status arrays_status_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_STORE_SEGMENT_FILE_H_
