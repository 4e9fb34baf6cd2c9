#include "extract/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <utility>

namespace neardup::internal {
namespace {

std::string ZipErrorText(zip_error_t* error) {
  std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

}  // namespace

Result<ZipArchive> ZipArchive::Open(std::string_view bytes, std::string_view what) {
  zip_error_t error;
  zip_error_init(&error);
  // freep = 0: the caller owns the bytes; libzip only reads them.
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    return DataLossError(std::string(what) + ": not a readable zip: " + ZipErrorText(&error));
  }
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (archive == nullptr) {
    zip_source_free(source);
    return DataLossError(std::string(what) + ": not a readable zip: " + ZipErrorText(&error));
  }
  return ZipArchive(archive, std::string(what));
}

ZipArchive::ZipArchive(zip* archive, std::string what)
    : archive_(archive), what_(std::move(what)) {}

ZipArchive::ZipArchive(ZipArchive&& other) noexcept
    : archive_(std::exchange(other.archive_, nullptr)), what_(std::move(other.what_)) {}

ZipArchive& ZipArchive::operator=(ZipArchive&& other) noexcept {
  if (this != &other) {
    if (archive_ != nullptr) zip_discard(archive_);
    archive_ = std::exchange(other.archive_, nullptr);
    what_ = std::move(other.what_);
  }
  return *this;
}

ZipArchive::~ZipArchive() {
  if (archive_ != nullptr) zip_discard(archive_);
}

bool ZipArchive::Has(const char* member) const { return zip_name_locate(archive_, member, 0) >= 0; }

Result<std::string> ZipArchive::Read(const char* member, uint64_t max_bytes) const {
  zip_int64_t index = zip_name_locate(archive_, member, 0);
  if (index < 0) return NotFoundError(what_ + ": the zip has no member " + member);
  zip_file_t* file = zip_fopen_index(archive_, static_cast<zip_uint64_t>(index), 0);
  if (file == nullptr) {
    return DataLossError(what_ + ": cannot open zip member " + member + ": " +
                         zip_strerror(archive_));
  }
  std::string out;
  char buffer[64 << 10];
  Status status;
  while (true) {
    zip_int64_t n = zip_fread(file, buffer, sizeof(buffer));
    if (n < 0) {
      status = DataLossError(what_ + ": zip member " + member +
                             " is damaged: " + zip_error_strerror(zip_file_get_error(file)));
      break;
    }
    if (n == 0) break;
    if (out.size() + static_cast<uint64_t>(n) > max_bytes) {
      status = ResourceExhaustedError(what_ + ": zip member " + member +
                                      " decompresses to more than max_uncompressed_bytes (" +
                                      std::to_string(max_bytes) + " bytes): a zip bomb?");
      break;
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  zip_fclose(file);
  if (!status.ok()) return status;
  return out;
}

}  // namespace neardup::internal
