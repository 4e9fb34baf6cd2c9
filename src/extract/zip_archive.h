// ZipArchive: read-only access to the members of a zip file held in memory,
// through libzip, with the decompressed size of each member read capped (the
// zip-bomb defence of DOCX and ODT extraction).
// Thread safety: one archive per thread; distinct archives are independent.
#ifndef NEARDUP_EXTRACT_ZIP_ARCHIVE_H_
#define NEARDUP_EXTRACT_ZIP_ARCHIVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "neardup/status.h"

struct zip;

namespace neardup::internal {

class ZipArchive {
 public:
  // `bytes` must outlive the archive (libzip reads it in place). DataLoss
  // naming `what` when the bytes are not a readable zip.
  static Result<ZipArchive> Open(std::string_view bytes, std::string_view what);

  ZipArchive(ZipArchive&&) noexcept;
  ZipArchive& operator=(ZipArchive&&) noexcept;
  ~ZipArchive();

  bool Has(const char* member) const;

  // The member's bytes, decompressed and CRC-checked. NotFound when absent;
  // ResourceExhausted when it decompresses past `max_bytes` (counted as read,
  // the size in the header is not trusted); DataLoss when it is damaged.
  Result<std::string> Read(const char* member, uint64_t max_bytes) const;

 private:
  ZipArchive(zip* archive, std::string what);
  zip* archive_ = nullptr;
  std::string what_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_EXTRACT_ZIP_ARCHIVE_H_
