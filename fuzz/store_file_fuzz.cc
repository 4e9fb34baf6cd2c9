// Fuzz target: the readers of a collection's data files, SegmentReader
// (data/seg-N.nds) and ChunkIndex::Open (data/index-G.ndi), on arbitrary
// bytes. Both map a file, so the input is written to a per-process file
// first. Either reader must refuse with a clear error (a non-empty message)
// or give an object whose every accessor stays inside the file: all rows'
// chunks, SimHashes and texts (a corrupt zstd frame is DataLoss), every key's
// postings, and lookups of arbitrary chunk IDs. Opening the index without
// checksum verification is the path Collection::Open takes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "neardup/check.h"
#include "neardup/chunk_index.h"
#include "store/segment_file.h"

namespace {

volatile uint64_t sink = 0;  // keeps the reads

const std::string& InputPath() {
  static const std::string path =
      "/tmp/neardup_store_file_fuzz_" + std::to_string(getpid()) + ".bin";
  return path;
}

void ExerciseSegment(const std::string& path) {
  auto segment = neardup::internal::SegmentReader::Open(path);
  if (!segment.ok()) {
    NEARDUP_CHECK(!segment.status().message().empty());
    return;
  }
  uint64_t sum = 0;
  for (size_t row = 0; row < (*segment)->num_docs(); ++row) {
    sum += (*segment)->doc(row) + (*segment)->simhash(row);
    for (uint32_t chunk : (*segment)->chunks(row)) sum += chunk;
    if (!(*segment)->has_text(row)) continue;
    neardup::Result<std::string> text = (*segment)->Text(row);
    if (text.ok()) {
      sum += text->size();
    } else {
      NEARDUP_CHECK(!text.status().message().empty());
    }
  }
  neardup::Status checksum = (*segment)->VerifyChecksum();
  NEARDUP_CHECK(checksum.ok() || !checksum.message().empty());
  sink = sink + sum;
}

void ExerciseIndex(const std::string& path, bool verify) {
  neardup::Result<neardup::ChunkIndex> index =
      neardup::ChunkIndex::Open(path, {.verify_checksum = verify});
  if (!index.ok()) {
    NEARDUP_CHECK(!index.status().message().empty());
    return;
  }
  uint64_t sum = 0;
  for (uint32_t key : index->keys()) {
    for (uint32_t doc : index->Postings(key)) sum += index->DocumentSize(doc);
  }
  for (uint32_t probe : {0u, 1u, 0xFFFFu, 0x10000u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
    sum += index->Postings(probe).size();
  }
  sum += index->CountKeysAbove(1) + index->num_documents() + index->MemoryBytes();
  NEARDUP_CHECK(index->SameContents(*index));
  sink = sink + sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = InputPath();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  NEARDUP_CHECK(file != nullptr) << "cannot write " << path;
  if (size > 0) {
    NEARDUP_CHECK(std::fwrite(data, 1, size, file) == size);
  }
  NEARDUP_CHECK(std::fclose(file) == 0);
  ExerciseSegment(path);
  ExerciseIndex(path, /*verify=*/false);
  ExerciseIndex(path, /*verify=*/true);
  std::remove(path.c_str());
  return 0;
}
