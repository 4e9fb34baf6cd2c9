// Where a ChunkIndex's arrays live: in owned vectors (built or merged in
// memory) or in a memory-mapped file. Private to the index module.
#ifndef NEARDUP_INDEX_CHUNK_INDEX_STORAGE_H_
#define NEARDUP_INDEX_CHUNK_INDEX_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "index/chunk_index_io.h"
#include "neardup/status.h"

namespace neardup::internal {

// The directory has one bucket per value of the top `directory_bits` bits
// of a chunk ID: at most 16 (the fixed size of file versions 1 and 2), fewer
// for an index of few keys, so that a small tier's directory is small.
inline constexpr uint32_t kMaxChunkDirectoryBits = 16;
inline constexpr size_t kChunkDirectoryBuckets = size_t{1} << kMaxChunkDirectoryBits;

// The directory bits of an index of `num_keys` keys: the fewest that leave
// at most 4 keys per bucket on average (chunk IDs are hashes, spread
// evenly), so a lookup reads one directory entry and about one cache line
// of keys; at most kMaxChunkDirectoryBits (indexes of more than 196,608
// keys). The directory then costs at most 1 byte per key.
inline uint32_t ChunkDirectoryBitsFor(size_t num_keys) {
  uint32_t bits = 0;
  while (bits < kMaxChunkDirectoryBits && (size_t{4} << bits) < num_keys) ++bits;
  return bits;
}

// The directory bucket of `chunk` (a shift by 32 - bits of a 64-bit value:
// bucket 0 for every chunk when bits is 0).
inline size_t ChunkDirectoryBucket(uint32_t chunk, uint32_t directory_bits) {
  return static_cast<size_t>(uint64_t{chunk} >> (32 - directory_bits));
}

struct ChunkIndexArrays {
  // doc_sizes[i] is the size of document first_doc + i: a tier of new
  // documents (numbers near the collection's counter) needs no slots for the
  // numbers below it.
  uint32_t first_doc = 0;
  std::vector<uint32_t> doc_sizes;
  uint32_t directory_bits = kMaxChunkDirectoryBits;
  std::vector<uint32_t> directory;  // (1 << directory_bits) + 1
  std::vector<uint32_t> keys;
  std::vector<uint64_t> offsets;  // keys.size() + 1
  std::vector<uint32_t> docs;
  uint64_t num_documents = 0;

  static ChunkIndexArrays Empty() {
    ChunkIndexArrays arrays;
    arrays.directory_bits = 0;
    arrays.directory.assign(2, 0);
    arrays.offsets.assign(1, 0);
    return arrays;
  }
};

struct ChunkIndexViews {
  uint32_t first_doc = 0;
  std::span<const uint32_t> doc_sizes;
  uint32_t directory_bits = kMaxChunkDirectoryBits;
  std::span<const uint32_t> directory;
  std::span<const uint32_t> keys;
  std::span<const uint64_t> offsets;
  std::span<const uint32_t> docs;
  uint64_t num_documents = 0;
};

// Sets arrays->directory_bits (ChunkDirectoryBitsFor) and fills
// arrays->directory from arrays->keys.
void BuildChunkDirectory(ChunkIndexArrays* arrays);
// Slots with a non-zero size.
uint64_t CountDocuments(const std::vector<uint32_t>& doc_sizes);

// DataLoss (naming `what`) unless the views are structurally sound: the
// directory has (1 << directory_bits) + 1 monotone entries ending at
// keys.size(), every key lies in its directory bucket and keys strictly
// ascend, offsets has keys.size() + 1 entries starting at 0, never
// decreasing, ending at docs.size(). O(keys).
Status CheckChunkIndexStructure(const ChunkIndexViews& views, const std::string& what);

// The key filter of an index of few keys (not stored: built when an index
// is built or opened, O(keys)): bit (chunk >> shift) is set when some key
// has those top bits. About 8 bits per key, so a lookup of an absent chunk
// stops at one bit test for about 88% of the chunks it is asked for -- what
// most lookups in a small tier are (a search looks every query chunk up in
// every tier). None above kMaxFilteredKeys keys (a large tier is mostly hit,
// and the filter would no longer stay in cache).
inline constexpr size_t kMaxFilteredKeys = size_t{1} << 20;
struct ChunkKeyFilter {
  std::vector<uint64_t> bits;  // empty: no filter
  uint32_t shift = 32;
};
ChunkKeyFilter BuildChunkKeyFilter(std::span<const uint32_t> keys);

struct ChunkIndexStorage {
  ChunkIndexArrays arrays;              // when built in memory
  std::unique_ptr<MappedFile> mapping;  // when opened from a file
  size_t header_bytes = 0;              // of the mapping
  uint64_t data_checksum = 0;           // of the mapping after the header
  ChunkIndexViews views;
  ChunkKeyFilter filter;  // of views.keys
};

inline std::shared_ptr<const ChunkIndexStorage> MakeStorage(ChunkIndexArrays arrays) {
  auto storage = std::make_shared<ChunkIndexStorage>();
  storage->arrays = std::move(arrays);
  const ChunkIndexArrays& a = storage->arrays;
  storage->views = {a.first_doc, a.doc_sizes, a.directory_bits, a.directory,
                    a.keys,      a.offsets,   a.docs,           a.num_documents};
  storage->filter = BuildChunkKeyFilter(a.keys);
  return storage;
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_CHUNK_INDEX_STORAGE_H_
