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

// The directory has one bucket per value of the top 16 bits of a chunk ID.
inline constexpr size_t kChunkDirectoryBuckets = size_t{1} << 16;

struct ChunkIndexArrays {
  // doc_sizes[i] is the size of document first_doc + i: a tier of new
  // documents (numbers near the collection's counter) needs no slots for the
  // numbers below it.
  uint32_t first_doc = 0;
  std::vector<uint32_t> doc_sizes;
  std::vector<uint32_t> directory;  // kChunkDirectoryBuckets + 1
  std::vector<uint32_t> keys;
  std::vector<uint64_t> offsets;  // keys.size() + 1
  std::vector<uint32_t> docs;
  uint64_t num_documents = 0;

  static ChunkIndexArrays Empty() {
    ChunkIndexArrays arrays;
    arrays.directory.assign(kChunkDirectoryBuckets + 1, 0);
    arrays.offsets.assign(1, 0);
    return arrays;
  }
};

struct ChunkIndexViews {
  uint32_t first_doc = 0;
  std::span<const uint32_t> doc_sizes;
  std::span<const uint32_t> directory;
  std::span<const uint32_t> keys;
  std::span<const uint64_t> offsets;
  std::span<const uint32_t> docs;
  uint64_t num_documents = 0;
};

// Fills arrays->directory from arrays->keys.
void BuildChunkDirectory(ChunkIndexArrays* arrays);
// Slots with a non-zero size.
uint64_t CountDocuments(const std::vector<uint32_t>& doc_sizes);

// DataLoss (naming `what`) unless the views are structurally sound: the
// directory has kChunkDirectoryBuckets + 1 monotone entries ending at
// keys.size(), every key lies in its directory bucket and keys strictly
// ascend, offsets has keys.size() + 1 entries starting at 0, never
// decreasing, ending at docs.size(). O(keys).
Status CheckChunkIndexStructure(const ChunkIndexViews& views, const std::string& what);

struct ChunkIndexStorage {
  ChunkIndexArrays arrays;              // when built in memory
  std::unique_ptr<MappedFile> mapping;  // when opened from a file
  size_t header_bytes = 0;              // of the mapping
  uint64_t data_checksum = 0;           // of the mapping after the header
  ChunkIndexViews views;
};

inline std::shared_ptr<const ChunkIndexStorage> MakeStorage(ChunkIndexArrays arrays) {
  auto storage = std::make_shared<ChunkIndexStorage>();
  storage->arrays = std::move(arrays);
  const ChunkIndexArrays& a = storage->arrays;
  storage->views = {a.first_doc, a.doc_sizes, a.directory,    a.keys,
                    a.offsets,   a.docs,      a.num_documents};
  return storage;
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_CHUNK_INDEX_STORAGE_H_
