#include "neardup/format/checksummed_file.h"

#include <cstdint>
#include <cstring>
#include <memory>

#include "index/chunk_index_io.h"

namespace neardup::format {
namespace {

constexpr char kMagic[8] = {'N', 'D', 'U', 'P', 'C', 'K', 'S', 'M'};
constexpr uint32_t kVersion = 1;

void PutLe(uint8_t* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t GetLe(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

std::span<const uint8_t> AsBytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

struct ChecksummedFileWriter::Impl {
  std::unique_ptr<internal::AtomicFileWriter> file;
  internal::StreamingChecksum checksum;
  std::string kind;
  uint64_t payload_bytes = 0;
};

ChecksummedFileWriter::ChecksummedFileWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChecksummedFileWriter::~ChecksummedFileWriter() = default;

Result<std::unique_ptr<ChecksummedFileWriter>> ChecksummedFileWriter::Create(
    const std::string& path, std::string_view kind) {
  if (kind.empty() || kind.size() > kChecksummedFileKindBytes) {
    return InvalidArgumentError("checksummed file kind '" + std::string(kind) +
                                "' must have 1 to 16 bytes");
  }
  auto impl = std::make_unique<Impl>();
  NEARDUP_ASSIGN_OR_RETURN(impl->file, internal::AtomicFileWriter::Create(path));
  impl->kind = std::string(kind);
  // The header's place; written by Commit.
  const uint8_t zeros[kChecksummedFileHeaderBytes] = {};
  NEARDUP_RETURN_IF_ERROR(impl->file->Append(std::span<const uint8_t>(zeros, sizeof(zeros))));
  return std::unique_ptr<ChecksummedFileWriter>(new ChecksummedFileWriter(std::move(impl)));
}

Status ChecksummedFileWriter::Append(std::string_view bytes) {
  impl_->checksum.Update(AsBytes(bytes));
  impl_->payload_bytes += bytes.size();
  return impl_->file->Append(bytes);
}

Status ChecksummedFileWriter::Commit() {
  uint8_t header[kChecksummedFileHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof(kMagic));
  PutLe(header + 8, kVersion, 4);
  std::memcpy(header + 16, impl_->kind.data(), impl_->kind.size());
  PutLe(header + 32, impl_->payload_bytes, 8);
  PutLe(header + 40, impl_->checksum.Digest(), 8);
  PutLe(header + 48, internal::StoredChecksum({header, 48}), 8);
  NEARDUP_RETURN_IF_ERROR(
      impl_->file->WriteAt(0, std::span<const uint8_t>(header, sizeof(header))));
  return impl_->file->Commit();
}

Status WriteChecksummedFile(const std::string& path, std::string_view kind,
                            std::span<const std::string_view> pieces) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<ChecksummedFileWriter> out,
                           ChecksummedFileWriter::Create(path, kind));
  for (std::string_view piece : pieces) NEARDUP_RETURN_IF_ERROR(out->Append(piece));
  return out->Commit();
}

Status VisitChecksummedFile(const std::string& path, std::string_view kind,
                            const std::function<Status(std::string_view payload)>& use) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<internal::MappedFile> file,
                           internal::MappedFile::Open(path));
  const std::span<const uint8_t> bytes = file->bytes();
  auto damaged = [&](const std::string& why) { return DataLossError(path + ": " + why); };
  if (bytes.size() < kChecksummedFileHeaderBytes) {
    return damaged("truncated: " + std::to_string(bytes.size()) +
                   " bytes, shorter than the header");
  }
  const uint8_t* header = bytes.data();
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return damaged("not a neardup checksummed file (bad magic)");
  }
  if (GetLe(header + 48, 8) != internal::StoredChecksum({header, 48})) {
    return damaged("header checksum mismatch");
  }
  const uint64_t version = GetLe(header + 8, 4);
  if (version > kVersion) {
    return FailedPreconditionError(path + ": checksummed file version " + std::to_string(version) +
                                   " is newer than this build reads (" + std::to_string(kVersion) +
                                   ")");
  }
  const char* stored_kind = reinterpret_cast<const char*>(header + 16);
  const std::string_view found(stored_kind, strnlen(stored_kind, kChecksummedFileKindBytes));
  if (found != kind) {
    return damaged("holds '" + std::string(found) + "', expected '" + std::string(kind) + "'");
  }
  const uint64_t payload_bytes = GetLe(header + 32, 8);
  const uint64_t have = bytes.size() - kChecksummedFileHeaderBytes;
  if (have != payload_bytes) {
    return damaged((have < payload_bytes ? "truncated: " : "trailing bytes: ") +
                   std::to_string(have) + " payload bytes, the header says " +
                   std::to_string(payload_bytes));
  }
  const std::span<const uint8_t> payload = bytes.subspan(kChecksummedFileHeaderBytes);
  if (GetLe(header + 40, 8) != internal::StoredChecksum(payload)) {
    return damaged("payload checksum mismatch (the file was damaged)");
  }
  return use(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
}

Result<std::string> ReadChecksummedFile(const std::string& path, std::string_view kind) {
  std::string copy;
  NEARDUP_RETURN_IF_ERROR(VisitChecksummedFile(path, kind, [&](std::string_view payload) {
    copy.assign(payload);
    return Status::Ok();
  }));
  return copy;
}

}  // namespace neardup::format
