#include "store/segment_file.h"

#include <zstd.h>

#include <bit>
#include <cstring>

namespace neardup::internal {
namespace {

constexpr char kMagic[8] = {'N', 'D', 'S', 'E', 'G', 'M', 'N', 'T'};
constexpr size_t kAlign = 64;
constexpr int kZstdLevel = 3;

struct SegmentHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t num_docs;
  uint64_t num_chunks;
  uint64_t text_bytes;
  uint64_t file_bytes;
  uint64_t data_checksum;  // of bytes [header_bytes, file_bytes)
  // Version 2: of bytes [header_bytes, start of texts): every array, so a
  // reader checks what it indexes with without reading the texts (each text
  // frame carries its own zstd content checksum). 0 in version 1.
  uint64_t arrays_checksum;
  uint64_t reserved[7];
  uint64_t header_checksum;  // of the bytes before this field
};
static_assert(sizeof(SegmentHeader) == 128);
static_assert(std::endian::native == std::endian::little, "the file format is little-endian");

uint64_t AlignUp(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  uint64_t docs, chunk_offsets, chunks, simhash, text_offsets, texts, end;
};

Layout ComputeLayout(uint64_t n, uint64_t chunks, uint64_t text_bytes) {
  Layout l;
  l.docs = sizeof(SegmentHeader);
  l.chunk_offsets = AlignUp(l.docs + 4 * n);
  l.chunks = AlignUp(l.chunk_offsets + 8 * (n + 1));
  l.simhash = AlignUp(l.chunks + 4 * chunks);
  l.text_offsets = AlignUp(l.simhash + 8 * n);
  l.texts = AlignUp(l.text_offsets + 8 * (n + 1));
  l.end = l.texts + text_bytes;
  return l;
}

uint64_t HeaderChecksum(const SegmentHeader& h) {
  return StoredChecksum(
      {reinterpret_cast<const uint8_t*>(&h), offsetof(SegmentHeader, header_checksum)});
}

template <class T>
std::span<const uint8_t> Bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T)};
}

}  // namespace

Result<uint64_t> WriteSegmentFile(const std::string& path, std::span<const SegmentRow> rows,
                                  bool store_texts, Env* env) {
  const uint64_t n = rows.size();
  std::vector<uint32_t> docs;
  std::vector<uint64_t> chunk_offsets{0};
  std::vector<uint64_t> simhash;
  std::vector<uint64_t> text_offsets{0};
  std::string texts;
  docs.reserve(n);
  simhash.reserve(n);
  std::string frame;
  for (const SegmentRow& row : rows) {
    docs.push_back(row.doc);
    chunk_offsets.push_back(chunk_offsets.back() + row.chunks.size());
    simhash.push_back(row.simhash);
    if (!row.compressed_text.empty()) {
      texts.append(row.compressed_text);
    } else if (store_texts) {
      NEARDUP_ASSIGN_OR_RETURN(frame, CompressText(row.text));
      texts.append(frame);
    }
    text_offsets.push_back(texts.size());
  }
  SegmentHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.version = kSegmentFormatVersion;
  header.header_bytes = sizeof(SegmentHeader);
  header.num_docs = n;
  header.num_chunks = chunk_offsets.back();
  header.text_bytes = texts.size();
  const Layout layout = ComputeLayout(n, header.num_chunks, header.text_bytes);
  header.file_bytes = layout.end;

  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> out,
                           AtomicFileWriter::Create(path, env));
  NEARDUP_RETURN_IF_ERROR(out->Append({reinterpret_cast<const uint8_t*>(&header), sizeof(header)}));
  StreamingChecksum checksum;
  auto section = [&](std::span<const uint8_t> bytes, bool pad) -> Status {
    uint64_t before = out->size();
    NEARDUP_RETURN_IF_ERROR(out->Append(bytes));
    if (pad) NEARDUP_RETURN_IF_ERROR(out->PadTo(kAlign));
    checksum.Update(bytes);
    checksum.UpdateZeros(out->size() - before - bytes.size());
    return Status::Ok();
  };
  NEARDUP_RETURN_IF_ERROR(section(Bytes(docs), true));
  NEARDUP_RETURN_IF_ERROR(section(Bytes(chunk_offsets), true));
  for (const SegmentRow& row : rows) {
    std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(row.chunks.data()),
                                   row.chunks.size_bytes());
    NEARDUP_RETURN_IF_ERROR(section(bytes, false));
  }
  NEARDUP_RETURN_IF_ERROR(section({}, true));
  NEARDUP_RETURN_IF_ERROR(section(Bytes(simhash), true));
  NEARDUP_RETURN_IF_ERROR(section(Bytes(text_offsets), true));
  header.arrays_checksum = checksum.Digest();
  NEARDUP_RETURN_IF_ERROR(
      section({reinterpret_cast<const uint8_t*>(texts.data()), texts.size()}, false));
  NEARDUP_CHECK(out->size() == layout.end) << out->size() << " != " << layout.end;
  header.data_checksum = checksum.Digest();
  header.header_checksum = HeaderChecksum(header);
  NEARDUP_RETURN_IF_ERROR(
      out->WriteAt(0, {reinterpret_cast<const uint8_t*>(&header), sizeof(header)}));
  NEARDUP_RETURN_IF_ERROR(out->Commit());
  return layout.end;
}

Result<std::string> CompressText(std::string_view text) {
  std::string frame(ZSTD_compressBound(text.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (cctx == nullptr) return ResourceExhaustedError("zstd: out of memory");
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t size = ZSTD_compress2(cctx, frame.data(), frame.size(), text.data(), text.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(size)) {
    return InternalError(std::string("zstd compression failed: ") + ZSTD_getErrorName(size));
  }
  frame.resize(size);
  return frame;
}

bool FrameHasChecksum(std::string_view frame) {
  // The zstd frame format (RFC 8878): a 4-byte magic number, then the
  // Frame_Header_Descriptor, whose bit 2 is the Content_Checksum_flag.
  constexpr uint32_t kZstdMagic = 0xFD2FB528;
  uint32_t magic = 0;
  if (frame.size() < 5) return false;
  std::memcpy(&magic, frame.data(), 4);
  return magic == kZstdMagic && (static_cast<uint8_t>(frame[4]) & 0x04) != 0;
}

Result<std::unique_ptr<SegmentReader>> SegmentReader::Open(const std::string& path) {
  std::unique_ptr<SegmentReader> reader(new SegmentReader());
  NEARDUP_ASSIGN_OR_RETURN(reader->file_, MappedFile::Open(path));
  std::span<const uint8_t> bytes = reader->file_->bytes();
  SegmentHeader header;
  NEARDUP_RETURN_IF_ERROR(ReadFlatFileHeader("segment", path, bytes, kMagic, kSegmentFormatVersion,
                                             HeaderChecksum, &header));
  constexpr uint64_t kLimit = uint64_t{1} << 40;
  if (header.num_docs > kLimit || header.num_chunks > kLimit || header.text_bytes > kLimit) {
    return DataLossError("segment " + path + " has impossible counts in its header");
  }
  const Layout l = ComputeLayout(header.num_docs, header.num_chunks, header.text_bytes);
  if (l.end != bytes.size() || header.file_bytes != bytes.size()) {
    return DataLossError("segment " + path +
                         " is truncated or extended: " + std::to_string(bytes.size()) +
                         " bytes, expected " + std::to_string(l.end));
  }
  const uint8_t* base = bytes.data();
  const uint64_t n = header.num_docs;
  reader->docs_ = {reinterpret_cast<const uint32_t*>(base + l.docs), n};
  reader->chunk_offsets_ = {reinterpret_cast<const uint64_t*>(base + l.chunk_offsets), n + 1};
  reader->chunks_ = {reinterpret_cast<const uint32_t*>(base + l.chunks), header.num_chunks};
  reader->simhash_ = {reinterpret_cast<const uint64_t*>(base + l.simhash), n};
  reader->text_offsets_ = {reinterpret_cast<const uint64_t*>(base + l.text_offsets), n + 1};
  reader->texts_ = {base + l.texts, header.text_bytes};
  reader->data_checksum_ = header.data_checksum;
  reader->arrays_checksum_ = header.arrays_checksum;
  reader->version_ = header.version;
  reader->arrays_bytes_ = l.texts - sizeof(SegmentHeader);
  // Offsets must be monotone and in range, so row accessors never leave the file.
  auto monotone = [](std::span<const uint64_t> offsets, uint64_t end) {
    if (offsets[0] != 0 || offsets.back() != end) return false;
    for (size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i] < offsets[i - 1]) return false;
    }
    return true;
  };
  if (!monotone(reader->chunk_offsets_, header.num_chunks) ||
      !monotone(reader->text_offsets_, header.text_bytes)) {
    return DataLossError("segment " + path + " is corrupt (offsets)");
  }
  return reader;
}

std::string_view SegmentReader::compressed_text(size_t row) const {
  return {reinterpret_cast<const char*>(texts_.data()) + text_offsets_[row],
          text_offsets_[row + 1] - text_offsets_[row]};
}

Result<std::string> SegmentReader::Text(size_t row) const {
  std::string_view frame = compressed_text(row);
  if (frame.empty()) return NotFoundError("segment " + path() + " holds no text for this document");
  if (version_ >= 2 && !FrameHasChecksum(frame)) {
    // Version 2 writes every frame with its checksum: a frame without one is
    // damaged (a flipped descriptor bit would otherwise skip the check).
    return DataLossError("segment " + path() + " holds a text frame without its checksum");
  }
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  // No zstd frame expands by more than about 2^15 (an RLE block: 4 bytes for
  // 128 KiB), so a larger declared size is damage, refused before it is
  // allocated (found by store_file_fuzz).
  const unsigned long long max_size = (frame.size() << 15) + (1u << 17);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > max_size ||
      size > (1ull << 40)) {
    return DataLossError("segment " + path() + " holds a corrupt text frame");
  }
  std::string text(size, '\0');
  size_t got = ZSTD_decompress(text.data(), text.size(), frame.data(), frame.size());
  if (ZSTD_isError(got) || got != size) {
    return DataLossError("segment " + path() + " holds a corrupt text frame");
  }
  return text;
}

Status SegmentReader::VerifyArrays() const {
  std::call_once(arrays_checked_, [this] {
    if (version_ < 2) {
      // Version 1 has one checksum for the whole body.
      arrays_status_ = VerifyChecksum();
    } else if (StoredChecksum(file_->bytes().subspan(sizeof(SegmentHeader), arrays_bytes_)) !=
               arrays_checksum_) {
      arrays_status_ =
          DataLossError("segment " + path() + " is corrupt (arrays checksum mismatch)");
    }
  });
  return arrays_status_;
}

Status SegmentReader::VerifyChecksum() const {
  if (StoredChecksum(file_->bytes().subspan(sizeof(SegmentHeader))) != data_checksum_) {
    return DataLossError("segment " + path() + " is corrupt (data checksum mismatch)");
  }
  return Status::Ok();
}

}  // namespace neardup::internal
