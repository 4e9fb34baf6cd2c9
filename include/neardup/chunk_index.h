// ChunkIndex: the inverted chunk index for containment. For every chunk ID
// (neardup/chunk_set.h) it holds the sorted list of the documents that
// contain it ("postings"), stored as three flat arrays:
//   keys      the distinct chunk IDs, ascending (u32)
//   offsets   postings of keys[i] are docs[offsets[i], offsets[i+1]) (u64)
//   docs      document numbers, ascending within each key (u32)
// plus a directory over the top bits of a chunk ID (16 bits, or fewer for an
// index of at most 196,608 keys, about 4 keys per bucket: a lookup is one
// directory read and a binary search in a range of a few keys) and the chunk count of every
// document (doc_sizes, 0 for a document that is absent), which containment needs as its
// denominator.
//
// Documents are named by caller-chosen numbers (a collection uses its stable
// document keys); doc_sizes has one slot per number from the smallest to the
// largest, so numbers should be dense.
//
// Build is a bucket sort: postings are scattered by the top 16 bits of the
// chunk ID, then each bucket is ordered by a stable counting sort on the low
// 16 bits (documents are scattered in ascending order, so each key's
// postings come out sorted with no comparison sort). Merge applies an
// incremental change (documents removed, a ChunkIndex of new documents added)
// in one linear pass over both indexes, without going back to the documents.
//
// Cost: Build O(P + 2^16 * buckets) time for P postings, 8 bytes per posting
// of scratch; memory 4 bytes per posting + 12 bytes per key + 4 bytes per
// document slot (smallest to largest number) + a directory of at most 1 byte
// per key (256 KiB from 196,608 keys on). Merge
// O(P_base + P_added). A file is memory-mapped and used in place: Open costs
// O(1) plus, with verification, one checksum pass over the file.
// Thread safety: an index is immutable; all const methods may run
// concurrently. Copies share the arrays.
#ifndef NEARDUP_CHUNK_INDEX_H_
#define NEARDUP_CHUNK_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "neardup/env.h"
#include "neardup/status.h"

namespace neardup {
namespace internal {
struct ChunkIndexStorage;
}  // namespace internal

// One document handed to ChunkIndex::Build.
struct ChunkDocument {
  uint32_t doc = 0;
  // Strictly ascending chunk IDs (as ChunkSetBuilder / the Fingerprinter give).
  std::span<const uint32_t> chunks;
};

struct ChunkIndexOpenOptions {
  // Default true: Open reads the whole file once to check its checksum (a few
  // GB/s), so a corrupt file is reported instead of giving wrong answers.
  // Without it Open is O(1), and a corrupt body can only give wrong results,
  // never an out-of-bounds read (every range taken from the file is checked).
  bool verify_checksum = true;
};

class ChunkIndex {
 public:
  // The empty index.
  ChunkIndex();

  // REQUIRES nothing of the input: InvalidArgument when a document number
  // repeats, a chunk list is not strictly ascending, or the number of
  // postings does not fit (more than 2^40).
  static Result<ChunkIndex> Build(std::span<const ChunkDocument> documents);

  // The index of (base without `removed`) plus `added`. `removed` is any list
  // of document numbers (absent ones are ignored). InvalidArgument when a
  // document of `added` is still present in base after the removals.
  static Result<ChunkIndex> Merge(const ChunkIndex& base, std::span<const uint32_t> removed,
                                  const ChunkIndex& added);

  // Writes the index to `path` atomically (a temporary file, fsync, rename,
  // fsync of the directory): after a crash `path` holds either nothing or the
  // whole file. Through `env` (null: Env::Default()).
  Status WriteFile(const std::string& path, Env* env = nullptr) const;

  // Maps a file written by WriteFile. NotFound / IoError from the system;
  // DataLoss for a file that is truncated, corrupt or not a chunk index;
  // FailedPrecondition for a newer format version.
  static Result<ChunkIndex> Open(const std::string& path,
                                 const ChunkIndexOpenOptions& options = {});

  // DataLoss when an index opened from a file no longer matches the file's
  // body checksum (reads the mapping, which stays valid after the file is
  // unlinked); Ok for an index built in memory.
  Status VerifyChecksum() const;

  // The documents containing `chunk`, ascending; empty if none.
  std::span<const uint32_t> Postings(uint32_t chunk) const;
  // Postings of each of `chunks`: out[i] = Postings(chunks[i]). The same
  // answers, several times faster for many chunks: the lookups are made in
  // groups, step by step, each step prefetching the cache line the next one
  // reads (directory entry, keys, offsets, postings), so their memory
  // latencies overlap instead of adding up. Also leaves the start of every
  // posting list on its way into the cache. REQUIRES: out.size() ==
  // chunks.size().
  void PostingsOfEach(std::span<const uint32_t> chunks,
                      std::span<std::span<const uint32_t>> out) const;

  // The number of chunks of document `doc`; 0 when absent (or empty).
  uint32_t DocumentSize(uint32_t doc) const {
    const uint32_t slot = doc - first_doc_;  // wraps for doc < first_doc_
    return slot < doc_sizes_.size() ? doc_sizes_[slot] : 0;
  }
  // Every document number of the index lies in [first_doc(), num_doc_slots()).
  // first_doc() is the smallest number built or merged in (0 for the empty
  // index), so an index of new documents costs no slots for older numbers.
  uint32_t first_doc() const { return first_doc_; }
  size_t num_doc_slots() const { return doc_sizes_.empty() ? 0 : first_doc_ + doc_sizes_.size(); }
  // Sizes of documents first_doc() + i.
  std::span<const uint32_t> doc_sizes() const { return doc_sizes_; }
  // Documents with at least one chunk.
  uint64_t num_documents() const { return num_documents_; }
  size_t num_keys() const { return keys_.size(); }
  uint64_t num_postings() const { return docs_.size(); }
  std::span<const uint32_t> keys() const { return keys_; }
  std::span<const uint64_t> offsets() const { return offsets_; }
  std::span<const uint32_t> docs() const { return docs_; }

  // Bytes of the arrays (the file size when mapped, less the header).
  uint64_t MemoryBytes() const;

  // Keys whose postings are longer than `max_document_frequency`.
  uint64_t CountKeysAbove(uint32_t max_document_frequency) const;

  // true when both hold exactly the same documents and postings.
  bool SameContents(const ChunkIndex& other) const;

 private:
  friend class TieredChunkIndex;  // merges tiers into new arrays
  // Takes the arrays of `storage` (owned vectors or a mapping).
  explicit ChunkIndex(std::shared_ptr<const internal::ChunkIndexStorage> storage);

  std::shared_ptr<const internal::ChunkIndexStorage> storage_;
  uint32_t first_doc_ = 0;
  std::span<const uint32_t> doc_sizes_;
  // Bucket b of the directory holds the keys k with k >> directory_shift_
  // == b: keys[directory_[b], directory_[b + 1]). The shift is 32 minus the
  // directory's bits (16 for a large index, fewer for a small one).
  uint32_t directory_shift_ = 32;
  std::span<const uint32_t> directory_;  // (1 << (32 - directory_shift_)) + 1 entries
  // A bit per value of a chunk's top 32 - filter_shift_ bits, set when a key
  // has them (empty: no filter; only small indexes have one). Lets
  // PostingsOfEach skip most absent chunks with one bit test.
  std::span<const uint64_t> filter_;
  uint32_t filter_shift_ = 32;
  std::span<const uint32_t> keys_;
  std::span<const uint64_t> offsets_;  // num_keys + 1 entries
  std::span<const uint32_t> docs_;
  uint64_t num_documents_ = 0;
};

}  // namespace neardup

#endif  // NEARDUP_CHUNK_INDEX_H_
