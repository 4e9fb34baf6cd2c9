// Helpers for the io tests (TempDir: support/temp_dir.h): gzip and zstd
// compression through the libraries' own APIs, and streams that misbehave.
#ifndef NEARDUP_IO_IO_TEST_UTIL_H_
#define NEARDUP_IO_IO_TEST_UTIL_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "neardup/document_reader.h"
#include "support/temp_dir.h"

namespace neardup::internal::testing {

// Writes `bytes` over `path` at `offset` in place (same file, no
// truncation) and moves its modification time `seconds` on from what the
// write left (0: as the write left it), so that a test sees the change
// whatever the file system's timestamp granularity.
inline void RewriteInPlace(const std::string& path, size_t offset, const std::string& bytes,
                           int seconds = 1) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(bytes.size()));
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  const struct timespec times[2] = {st.st_atim, {st.st_mtim.tv_sec + seconds, st.st_mtim.tv_nsec}};
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);
}

// One gzip member holding `data`; `header`, if given, sets the optional
// header fields (extra field, name, comment, header CRC).
inline std::string Gzip(const std::string& data, int level = 6, gz_header* header = nullptr) {
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  if (header != nullptr) {
    EXPECT_EQ(deflateSetHeader(&z, header), Z_OK);
  }
  std::string out(deflateBound(&z, data.size()) + 256, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// One zstd frame holding `data`.
inline std::string Zstd(const std::string& data, int level = 3) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(n);
  return out;
}

// Deterministic bytes that compress poorly, so compressed streams are long.
inline std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

// Serves `data` in pieces of at most `piece` bytes, then fails with `error`
// (or ends cleanly when `error` is OK).
class ScriptedStream : public ByteStream {
 public:
  ScriptedStream(std::string data, size_t piece, Status error = Status::Ok())
      : data_(std::move(data)), piece_(piece), error_(std::move(error)) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    if (pos_ == data_.size()) {
      if (!error_.ok()) return error_;
      return size_t{0};
    }
    size_t n = std::min({size, piece_, data_.size() - pos_});
    std::memcpy(buffer, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string data_;
  size_t piece_;
  size_t pos_ = 0;
  Status error_;
};

struct Drained {
  std::string bytes;
  Status status;
};

// Reads `stream` to its end or first error with requests of `request` bytes.
inline Drained Drain(ByteStream* stream, size_t request = 4096) {
  Drained out;
  std::string buffer(request, '\0');
  while (true) {
    Result<size_t> n = stream->Read(buffer.data(), buffer.size());
    if (!n.ok()) {
      out.status = n.status();
      return out;
    }
    if (*n == 0) return out;
    out.bytes.append(buffer.data(), *n);
  }
}

// Everything a reader yields: documents up to the end or the first error.
struct ReadOutcome {
  std::vector<Document> documents;
  std::vector<SkippedRecord> skipped;
  Status status;  // OK when the reader reached the end
};

// Reads all of `inputs` with `options` (its on_skip is replaced).
inline ReadOutcome ReadAll(std::vector<std::string> inputs, InputOptions options = {}) {
  ReadOutcome outcome;
  options.on_skip = [&](const SkippedRecord& r) { outcome.skipped.push_back(r); };
  Result<std::unique_ptr<DocumentReader>> reader =
      DocumentReader::Open(std::move(inputs), std::move(options));
  if (!reader.ok()) {
    outcome.status = reader.status();
    return outcome;
  }
  Document doc;
  while (true) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok()) {
      outcome.status = next.status();
      break;
    }
    if (!*next) break;
    outcome.documents.push_back(doc);
  }
  EXPECT_EQ((*reader)->documents_read(), outcome.documents.size());
  EXPECT_EQ((*reader)->records_skipped(), outcome.skipped.size());
  return outcome;
}

// Reads a stream through FromStream.
inline ReadOutcome ReadStream(std::unique_ptr<ByteStream> stream, std::string name,
                              InputFormat format, InputOptions options = {}) {
  ReadOutcome outcome;
  options.on_skip = [&](const SkippedRecord& r) { outcome.skipped.push_back(r); };
  std::unique_ptr<DocumentReader> reader =
      DocumentReader::FromStream(std::move(stream), std::move(name), format, std::move(options));
  Document doc;
  while (true) {
    Result<bool> next = reader->Next(&doc);
    if (!next.ok()) {
      outcome.status = next.status();
      break;
    }
    if (!*next) break;
    outcome.documents.push_back(doc);
  }
  return outcome;
}

inline std::vector<std::string> Ids(const ReadOutcome& outcome) {
  std::vector<std::string> ids;
  for (const Document& d : outcome.documents) ids.push_back(d.id);
  return ids;
}
inline std::vector<std::string> Texts(const ReadOutcome& outcome) {
  std::vector<std::string> texts;
  for (const Document& d : outcome.documents) texts.push_back(d.text);
  return texts;
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_IO_IO_TEST_UTIL_H_
