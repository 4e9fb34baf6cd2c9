// The ChunkIndex file: one flat file that is memory-mapped and used in place.
//
// Layout (little-endian; every section starts on a 64-byte boundary):
//   header      128 bytes (FileHeader below)
//   doc_sizes   num_doc_slots x u32  sizes of documents first_doc + i
//   directory   2^bits + 1 x u32  keys of top-bits bucket b: [dir[b], dir[b+1])
//               (bits = 16 in versions 1 and 2; the header's directory_bits,
//               0..16, in version 3)
//   keys        num_keys x u32  ascending
//   offsets     (num_keys + 1) x u64
//   docs        num_postings x u32
// Every size follows from the header, so a file of another length is
// rejected as truncated; the header has its own checksum, the body one that
// Open checks unless told not to. Lookups clamp every range read from the
// body, so even an unverified corrupt body cannot cause an out-of-bounds read.
#include <bit>
#include <cstring>

#include "index/chunk_index_io.h"
#include "index/chunk_index_storage.h"
#include "neardup/chunk_index.h"

namespace neardup {
namespace {

using internal::kMaxChunkDirectoryBits;

constexpr char kMagic[8] = {'N', 'D', 'C', 'H', 'U', 'N', 'K', 'X'};
// Version 2 added first_doc (a reserved, zero field of version 1); version 3
// directory_bits (the next reserved field), so that an index of few keys --
// a collection's one-document tier -- has a directory of a few entries
// instead of 65,537. A file is written in the oldest version that can hold
// it: an index with a 16-bit directory (more than 196,608 keys) as version
// 1 (first_doc 0) or 2, byte for byte what older builds wrote and read.
constexpr uint32_t kVersion = 3;
constexpr size_t kAlign = 64;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t num_doc_slots;
  uint64_t num_keys;
  uint64_t num_postings;
  uint64_t num_documents;
  uint64_t file_bytes;
  uint64_t data_checksum;   // of bytes [header_bytes, file_bytes)
  uint64_t first_doc;       // version 2; zero in version 1
  uint64_t directory_bits;  // version 3; zero in versions 1 and 2 (which use 16)
  uint64_t reserved[5];
  uint64_t header_checksum;  // of the bytes before this field
};
static_assert(sizeof(FileHeader) == 128);
static_assert(std::endian::native == std::endian::little, "the file format is little-endian");

uint64_t AlignUp(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  uint64_t doc_sizes, directory, keys, offsets, docs, end;
};

// REQUIRES: counts small enough not to overflow (checked by the caller).
Layout ComputeLayout(uint64_t slots, uint32_t directory_bits, uint64_t keys, uint64_t postings) {
  Layout l;
  l.doc_sizes = sizeof(FileHeader);
  l.directory = AlignUp(l.doc_sizes + 4 * slots);
  l.keys = AlignUp(l.directory + 4 * ((uint64_t{1} << directory_bits) + 1));
  l.offsets = AlignUp(l.keys + 4 * keys);
  l.docs = AlignUp(l.offsets + 8 * (keys + 1));
  l.end = l.docs + 4 * postings;
  return l;
}

uint64_t HeaderChecksum(const FileHeader& h) {
  return internal::StoredChecksum(
      {reinterpret_cast<const uint8_t*>(&h), offsetof(FileHeader, header_checksum)});
}

template <class T>
std::span<const uint8_t> Bytes(std::span<const T> s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size_bytes()};
}

}  // namespace

Status ChunkIndex::WriteFile(const std::string& path, Env* env) const {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<internal::AtomicFileWriter> out,
                           internal::AtomicFileWriter::Create(path, env));
  FileHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  const uint32_t directory_bits = 32 - directory_shift_;
  header.version = directory_bits != kMaxChunkDirectoryBits ? kVersion : first_doc_ == 0 ? 1 : 2;
  header.header_bytes = sizeof(FileHeader);
  header.first_doc = first_doc_;
  header.directory_bits = header.version >= 3 ? directory_bits : 0;
  header.num_doc_slots = doc_sizes_.size();
  header.num_keys = keys_.size();
  header.num_postings = docs_.size();
  header.num_documents = num_documents_;
  const Layout layout =
      ComputeLayout(header.num_doc_slots, directory_bits, header.num_keys, header.num_postings);
  header.file_bytes = layout.end;

  // The header is written twice: a placeholder now, the final one (with the
  // body checksum, computed while streaming the sections out) at the end.
  NEARDUP_RETURN_IF_ERROR(out->Append({reinterpret_cast<const uint8_t*>(&header), sizeof(header)}));
  internal::StreamingChecksum checksum;
  auto section = [&](std::span<const uint8_t> bytes) -> Status {
    uint64_t before = out->size();
    NEARDUP_RETURN_IF_ERROR(out->Append(bytes));
    NEARDUP_RETURN_IF_ERROR(out->PadTo(kAlign));
    checksum.Update(bytes);
    checksum.UpdateZeros(out->size() - before - bytes.size());
    return Status::Ok();
  };
  NEARDUP_RETURN_IF_ERROR(section(Bytes(doc_sizes_)));
  NEARDUP_RETURN_IF_ERROR(section(Bytes(directory_)));
  NEARDUP_RETURN_IF_ERROR(section(Bytes(keys_)));
  NEARDUP_RETURN_IF_ERROR(section(Bytes(offsets_)));
  // The last section is not padded (file_bytes ends at the last posting).
  NEARDUP_RETURN_IF_ERROR(out->Append(Bytes(docs_)));
  checksum.Update(Bytes(docs_));
  NEARDUP_CHECK(out->size() == layout.end) << out->size() << " != " << layout.end;
  header.data_checksum = checksum.Digest();
  header.header_checksum = HeaderChecksum(header);
  NEARDUP_RETURN_IF_ERROR(
      out->WriteAt(0, {reinterpret_cast<const uint8_t*>(&header), sizeof(header)}));
  return out->Commit();
}

Result<ChunkIndex> ChunkIndex::Open(const std::string& path, const ChunkIndexOpenOptions& options) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<internal::MappedFile> file,
                           internal::MappedFile::Open(path));
  std::span<const uint8_t> bytes = file->bytes();
  FileHeader header;
  NEARDUP_RETURN_IF_ERROR(internal::ReadFlatFileHeader("chunk index", path, bytes, kMagic, kVersion,
                                                       HeaderChecksum, &header));
  constexpr uint64_t kLimit = uint64_t{1} << 40;
  if (header.num_doc_slots > kLimit || header.num_keys > kLimit || header.num_postings > kLimit) {
    return DataLossError("chunk index " + path + " has impossible counts in its header");
  }
  if ((header.version < 2 && header.first_doc != 0) ||
      header.first_doc + header.num_doc_slots > (uint64_t{1} << 32)) {
    return DataLossError("chunk index " + path + " has an impossible first document (" +
                         std::to_string(header.first_doc) + ") in its header");
  }
  if ((header.version < 3 && header.directory_bits != 0) ||
      header.directory_bits > kMaxChunkDirectoryBits) {
    return DataLossError("chunk index " + path + " has impossible directory bits (" +
                         std::to_string(header.directory_bits) + ") in its header");
  }
  const uint32_t directory_bits =
      header.version < 3 ? kMaxChunkDirectoryBits : static_cast<uint32_t>(header.directory_bits);
  const Layout layout =
      ComputeLayout(header.num_doc_slots, directory_bits, header.num_keys, header.num_postings);
  if (layout.end != bytes.size() || header.file_bytes != bytes.size()) {
    return DataLossError("chunk index " + path +
                         " is truncated or extended: " + std::to_string(bytes.size()) +
                         " bytes, expected " + std::to_string(layout.end));
  }
  if (options.verify_checksum &&
      internal::StoredChecksum(bytes.subspan(sizeof(header))) != header.data_checksum) {
    return DataLossError("chunk index " + path + " is corrupt (data checksum mismatch)");
  }
  auto u32 = [&](uint64_t offset, uint64_t count) {
    return std::span<const uint32_t>(reinterpret_cast<const uint32_t*>(bytes.data() + offset),
                                     count);
  };
  auto storage = std::make_shared<internal::ChunkIndexStorage>();
  internal::ChunkIndexViews& v = storage->views;
  v.first_doc = static_cast<uint32_t>(header.first_doc);
  v.doc_sizes = u32(layout.doc_sizes, header.num_doc_slots);
  v.directory_bits = directory_bits;
  v.directory = u32(layout.directory, (size_t{1} << directory_bits) + 1);
  v.keys = u32(layout.keys, header.num_keys);
  v.offsets = std::span<const uint64_t>(
      reinterpret_cast<const uint64_t*>(bytes.data() + layout.offsets), header.num_keys + 1);
  v.docs = u32(layout.docs, header.num_postings);
  v.num_documents = header.num_documents;
  // Structural checks, O(keys) and always made (with or without the
  // checksum), so that nothing that uses the arrays -- lookups, Merge, the
  // cap counts -- can index past them: the directory is monotone and ends at
  // num_keys, every key lies in its bucket and keys ascend, the offsets start
  // at 0, never decrease and end at num_postings. (Posting values are checked
  // where they are used: a document number is an index only after a bounds
  // check.)
  NEARDUP_RETURN_IF_ERROR(internal::CheckChunkIndexStructure(v, "chunk index " + path));
  storage->filter = internal::BuildChunkKeyFilter(v.keys);
  storage->mapping = std::move(file);
  storage->header_bytes = sizeof(header);
  storage->data_checksum = header.data_checksum;
  return ChunkIndex(std::move(storage));
}

Status ChunkIndex::VerifyChecksum() const {
  if (storage_->mapping == nullptr) return Status::Ok();
  const std::span<const uint8_t> bytes = storage_->mapping->bytes();
  if (internal::StoredChecksum(bytes.subspan(storage_->header_bytes)) != storage_->data_checksum) {
    return DataLossError("chunk index " + storage_->mapping->path() +
                         " is corrupt (data checksum mismatch)");
  }
  return Status::Ok();
}

}  // namespace neardup
