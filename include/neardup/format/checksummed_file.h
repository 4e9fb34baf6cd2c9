// A file of one opaque payload with a header that names its kind, a
// version, the payload's size and its XXH3-64 checksum: for state a
// process writes and a later run reads back (neardup-mpi's checkpoints),
// where a torn or damaged file must be detected, never used.
// Layout (docs/formats/fingerprint_set.md; all integers little-endian):
//   0  8  magic "NDUPCKSM"
//   8  4  version (1)
//  12  4  reserved, 0
//  16 16  kind: ASCII, NUL-padded (e.g. "fingerprint-set")
//  32  8  payload_bytes
//  40  8  payload_checksum: XXH3-64 (seed 0) of the payload
//  48  8  header_checksum: XXH3-64 (seed 0) of bytes [0, 48)
//  56     the payload; the file ends exactly after it
// Writes are atomic: "<path>.tmp", fsync, rename over `path`, fsync of the
// directory; after a crash `path` holds the old file, the new one, or
// nothing, never a part.
// Thread safety: free functions; concurrent writers of one path race.
#ifndef NEARDUP_FORMAT_CHECKSUMMED_FILE_H_
#define NEARDUP_FORMAT_CHECKSUMMED_FILE_H_

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::format {

inline constexpr size_t kChecksummedFileHeaderBytes = 56;
inline constexpr size_t kChecksummedFileKindBytes = 16;

// Writes a checksummed file in pieces, without holding the payload: the
// header is written last (its size and checksum known then). Destroying a
// writer that was not committed removes its temporary file.
class ChecksummedFileWriter {
 public:
  // `kind`: 1 to 16 ASCII bytes, else InvalidArgument. IoError when the
  // temporary file cannot be created.
  static Result<std::unique_ptr<ChecksummedFileWriter>> Create(const std::string& path,
                                                               std::string_view kind);
  ~ChecksummedFileWriter();
  ChecksummedFileWriter(const ChecksummedFileWriter&) = delete;
  ChecksummedFileWriter& operator=(const ChecksummedFileWriter&) = delete;

  // Appends payload bytes.
  Status Append(std::string_view bytes);
  // Writes the header, fsyncs, renames over the path, fsyncs the directory.
  Status Commit();

 private:
  struct Impl;
  explicit ChecksummedFileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes the concatenation of `pieces` as the payload of a file of `kind`
// (at most 16 ASCII bytes; else InvalidArgument). IoError or
// ResourceExhausted (full disk) naming the file on failure, leaving no
// temporary behind.
Status WriteChecksummedFile(const std::string& path, std::string_view kind,
                            std::span<const std::string_view> pieces);

// The payload of a file written by WriteChecksummedFile with the same
// `kind`. NotFound when the file does not exist; DataLoss naming the file
// when it is not such a file, is of another kind, is truncated or has
// trailing bytes, or a checksum does not match; FailedPrecondition for a newer
// version.
Result<std::string> ReadChecksummedFile(const std::string& path, std::string_view kind);

// The same checks, then `use` gets the payload in place (a read-only
// mapping of the file, valid during the call): no copy of it is made.
// Returns `use`'s status.
Status VisitChecksummedFile(const std::string& path, std::string_view kind,
                            const std::function<Status(std::string_view payload)>& use);

}  // namespace neardup::format

#endif  // NEARDUP_FORMAT_CHECKSUMMED_FILE_H_
