// The HammingIndex file: one flat file that is memory-mapped on open and used
// in place (no parse step).
//
// Layout (little-endian, every section starts on a 64-byte boundary):
//   header (128 bytes, FileHeader below)
//   fps        num_fps x u64        sorted distinct fingerprints (= table 0)
//   id_begin   (num_fps + 1) x u32  ids of fps[i] are ids[id_begin[i], id_begin[i+1])
//   ids        num_ids x u64
//   tables     for t = 1..num_tables-1: num_fps x u64, permuted and sorted
//   lines      for t = 0..num_tables-1: (2^bits(t) + 1) x 64-byte HammingLine
//              (29 x u16 fragments, u16 count, u32 begin)
// Every size follows from the header, so a file whose length differs is
// rejected (truncation); the header has its own checksum (bit flips); the body
// has a checksum checked only with HammingOpenOptions::verify_data, so that
// opening stays O(1). Readers clamp every index taken from the body.
#include <bit>
#include <cstring>

#include "index/chunk_index_io.h"
#include "index/hamming_state.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

constexpr char kMagic[8] = {'N', 'D', 'H', 'A', 'M', 'I', 'D', 'X'};
// Version 2: 64-byte directory lines with fragments (version 1 had u32
// bucket offsets).
constexpr uint32_t kVersion = 2;
constexpr size_t kAlign = 64;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint32_t num_blocks;
  uint32_t max_distance;
  uint32_t num_tables;
  uint32_t run_line_bits;
  uint64_t num_fps;
  uint64_t num_ids;
  uint64_t file_bytes;
  uint64_t data_checksum;  // of bytes [header_bytes, file_bytes)
  uint64_t reserved[7];
  uint64_t header_checksum;  // of the bytes before this field
};
static_assert(sizeof(FileHeader) == kHammingHeaderBytes);
static_assert(std::endian::native == std::endian::little, "the file format is little-endian");

constexpr uint64_t kPrime1 = 0x9e3779b185ebca87ULL;
constexpr uint64_t kPrime2 = 0xc2b2ae3d27d4eb4fULL;

// A 64-bit checksum over bytes: four independent multiply-rotate lanes (fast,
// and any single flipped bit changes the result), folded with Mix64.
uint64_t Checksum(const uint8_t* data, size_t size) {
  uint64_t lane[4] = {kPrime1, kPrime2, ~kPrime1, ~kPrime2};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, data + i + 8 * l, 8);
      lane[l] = std::rotl(lane[l] + w * kPrime2, 31) * kPrime1;
    }
  }
  uint64_t h = size;
  for (int l = 0; l < 4; ++l) h = Mix64(h ^ lane[l]);
  for (; i < size; ++i) h = Mix64(h ^ (uint64_t{data[i]} + kGoldenGamma));
  return h;
}

uint64_t HeaderChecksum(const FileHeader& h) {
  return Checksum(reinterpret_cast<const uint8_t*>(&h), offsetof(FileHeader, header_checksum));
}

size_t AlignUp(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

struct Sections {
  size_t fps, id_begin, ids;
  std::vector<size_t> tables;  // [0] unused
  std::vector<size_t> lines;
  std::vector<int> line_bits;
  size_t end;
};

// REQUIRES: num_fps, num_ids <= kMaxHammingEntries (so nothing overflows).
Sections ComputeSections(const HammingLayout& layout, uint64_t num_fps, uint64_t num_ids,
                         int run_bits) {
  Sections s;
  size_t pos = sizeof(FileHeader);
  s.fps = pos;
  pos = AlignUp(pos + num_fps * 8);
  s.id_begin = pos;
  pos = AlignUp(pos + (num_fps + 1) * 4);
  s.ids = pos;
  pos = AlignUp(pos + num_ids * 8);
  s.tables.assign(layout.num_tables(), 0);
  for (int t = 1; t < layout.num_tables(); ++t) {
    s.tables[t] = pos;
    pos = AlignUp(pos + num_fps * 8);
  }
  for (int t = 0; t < layout.num_tables(); ++t) {
    s.line_bits.push_back(TableLineBits(layout, run_bits, t));
    s.lines.push_back(pos);
    pos = AlignUp(pos + NumLines(s.line_bits.back()) * sizeof(HammingLine));
  }
  s.end = pos;
  return s;
}

template <typename T>
std::span<const T> View(const uint8_t* base, size_t offset, size_t count) {
  return std::span<const T>(reinterpret_cast<const T*>(base + offset), count);
}

Status VerifyBody(const HammingLayout& layout, const RunArrays& a, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return DataLossError("HammingIndex file " + path + ": " + what);
  };
  for (size_t i = 1; i < a.fps.size(); ++i) {
    if (a.fps[i - 1] >= a.fps[i]) return bad("fingerprints not sorted at " + std::to_string(i));
  }
  if (a.id_begin[0] != 0 || a.id_begin.back() != a.ids.size()) return bad("bad id offsets");
  for (size_t i = 0; i < a.fps.size(); ++i) {
    if (a.id_begin[i] >= a.id_begin[i + 1]) return bad("bad id offsets at " + std::to_string(i));
    for (size_t p = a.id_begin[i] + 1; p < a.id_begin[i + 1]; ++p) {
      if (a.ids[p - 1] >= a.ids[p]) return bad("ids not sorted at " + std::to_string(p));
    }
  }
  std::vector<HammingLine> lines;
  for (int t = 0; t < layout.num_tables(); ++t) {
    std::span<const uint64_t> values = a.tables[t];
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i - 1] >= values[i]) return bad("table " + std::to_string(t) + " not sorted");
    }
    lines.resize(NumLines(a.line_bits[t]));
    BuildLines(values, a.line_bits[t], lines);
    if (std::memcmp(lines.data(), a.lines[t].data(), a.lines[t].size_bytes()) != 0) {
      return bad("directory of table " + std::to_string(t) + " is wrong");
    }
  }
  return Status::Ok();
}

}  // namespace

void ResealHammingFile(std::span<uint8_t> image, bool data_too) {
  if (image.size() < sizeof(FileHeader)) return;
  FileHeader h;
  std::memcpy(&h, image.data(), sizeof(h));
  if (data_too) {
    h.data_checksum = Checksum(image.data() + sizeof(h), image.size() - sizeof(h));
  }
  h.header_checksum = HeaderChecksum(h);
  std::memcpy(image.data(), &h, sizeof(h));
}

Status SaveRun(const HammingLayout& layout, const HammingRun* run, const std::string& path) {
  std::unique_ptr<HammingRun> empty;
  if (run == nullptr) {
    empty = HammingRun::FromSortedEntries(layout, {});
    run = empty.get();
  }
  const RunArrays& a = run->arrays();
  const int run_bits = RunLineBits(run->num_fps());
  Sections sections = ComputeSections(layout, run->num_fps(), run->num_ids(), run_bits);
  // Assemble the body in memory section by section, checksum it, then write.
  std::vector<uint8_t> body(sections.end - sizeof(FileHeader), 0);
  auto put = [&](size_t offset, const void* data, size_t bytes) {
    if (bytes > 0) std::memcpy(body.data() + offset - sizeof(FileHeader), data, bytes);
  };
  put(sections.fps, a.fps.data(), a.fps.size_bytes());
  put(sections.id_begin, a.id_begin.data(), a.id_begin.size_bytes());
  put(sections.ids, a.ids.data(), a.ids.size_bytes());
  for (int t = 1; t < layout.num_tables(); ++t) {
    put(sections.tables[t], a.tables[t].data(), a.tables[t].size_bytes());
  }
  for (int t = 0; t < layout.num_tables(); ++t) {
    NEARDUP_CHECK(a.line_bits[t] == sections.line_bits[t]);
    put(sections.lines[t], a.lines[t].data(), a.lines[t].size_bytes());
  }
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.header_bytes = sizeof(FileHeader);
  h.num_blocks = static_cast<uint32_t>(layout.num_blocks());
  h.max_distance = static_cast<uint32_t>(layout.max_distance());
  h.num_tables = static_cast<uint32_t>(layout.num_tables());
  h.run_line_bits = static_cast<uint32_t>(run_bits);
  h.num_fps = run->num_fps();
  h.num_ids = run->num_ids();
  h.file_bytes = sections.end;
  h.data_checksum = Checksum(body.data(), body.size());
  h.header_checksum = HeaderChecksum(h);

  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> out, AtomicFileWriter::Create(path));
  NEARDUP_RETURN_IF_ERROR(out->Append({reinterpret_cast<const uint8_t*>(&h), sizeof(h)}));
  NEARDUP_RETURN_IF_ERROR(out->Append(body));
  return out->Commit();
}

Result<std::unique_ptr<HammingIndexState>> OpenState(const std::string& path,
                                                     const HammingOpenOptions& options) {
  auto loss = [&](const std::string& what) {
    return DataLossError("HammingIndex file " + path + ": " + what);
  };
  Result<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(path);
  if (!mapped.ok()) {
    if (mapped.status().code() == StatusCode::kNotFound) {
      return NotFoundError("HammingIndex file " + path + " does not exist");
    }
    return mapped.status();
  }
  std::shared_ptr<const MappedFile> file = std::move(mapped).value();
  const size_t size = file->bytes().size();
  FileHeader h;
  NEARDUP_RETURN_IF_ERROR(ReadFlatFileHeader("HammingIndex file", path, file->bytes(), kMagic,
                                             kVersion, HeaderChecksum, &h));
  if (h.version != kVersion) {
    return loss("format version " + std::to_string(h.version) + " is no longer read (this build " +
                "reads " + std::to_string(kVersion) + "): rebuild the index");
  }
  if (h.header_bytes != sizeof(FileHeader)) return loss("bad header size");
  HammingIndexOptions index_options{.num_blocks = static_cast<int>(h.num_blocks),
                                    .max_distance = static_cast<int>(h.max_distance)};
  if (h.num_blocks > 64 || h.max_distance > 64) return loss("bad parameters");
  Status valid = ValidateHammingIndexOptions(index_options);
  if (!valid.ok()) return loss(valid.message());
  auto state = std::make_unique<HammingIndexState>(index_options);
  const HammingLayout& layout = state->layout;
  if (h.num_tables != static_cast<uint32_t>(layout.num_tables())) return loss("bad table count");
  if (h.num_fps > h.num_ids || h.num_ids > kMaxHammingEntries ||
      (h.num_fps == 0) != (h.num_ids == 0)) {
    return loss("bad entry counts");
  }
  if (h.run_line_bits != static_cast<uint32_t>(RunLineBits(h.num_fps))) {
    return loss("bad directory size");
  }
  Sections sections =
      ComputeSections(layout, h.num_fps, h.num_ids, static_cast<int>(h.run_line_bits));
  if (h.file_bytes != sections.end || size != sections.end) {
    return loss("size " + std::to_string(size) + " bytes, expected " +
                std::to_string(sections.end) + " (truncated or extended)");
  }
  const uint8_t* base = file->bytes().data();
  if (options.verify_data &&
      Checksum(base + sizeof(FileHeader), size - sizeof(FileHeader)) != h.data_checksum) {
    return loss("data checksum mismatch");
  }
  if (h.num_ids == 0) return state;
  RunArrays a;
  a.fps = View<uint64_t>(base, sections.fps, h.num_fps);
  a.id_begin = View<uint32_t>(base, sections.id_begin, h.num_fps + 1);
  a.ids = View<uint64_t>(base, sections.ids, h.num_ids);
  a.tables.resize(layout.num_tables());
  a.tables[0] = a.fps;
  for (int t = 1; t < layout.num_tables(); ++t) {
    a.tables[t] = View<uint64_t>(base, sections.tables[t], h.num_fps);
  }
  for (int t = 0; t < layout.num_tables(); ++t) {
    a.lines.push_back(View<HammingLine>(base, sections.lines[t], NumLines(sections.line_bits[t])));
  }
  a.line_bits = sections.line_bits;
  if (options.verify_data) NEARDUP_RETURN_IF_ERROR(VerifyBody(layout, a, path));
  state->num_live = h.num_ids;
  state->runs.push_back(HammingRun::FromArrays(std::move(a), std::move(file)));
  return state;
}

}  // namespace neardup::internal
