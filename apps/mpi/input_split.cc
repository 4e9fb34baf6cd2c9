#include "input_split.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

namespace neardup::mpi {
namespace {

Status ErrnoError(const std::string& what, const std::string& path) {
  return IoError(what + " " + path + ": " + std::strerror(errno));
}

// An open file descriptor, closed on destruction.
class File {
 public:
  static Result<File> Open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("cannot open", path);
    return File(fd, path);
  }
  File(File&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(other.path_) {}
  File& operator=(File&&) = delete;
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Up to `size` bytes at `offset`; fewer only at the end of the file.
  Result<size_t> ReadAt(uint64_t offset, char* buffer, size_t size) const {
    size_t done = 0;
    while (done < size) {
      const ssize_t got =
          ::pread(fd_, buffer + done, size - done, static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("cannot read", path_);
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    return done;
  }

 private:
  File(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// Bytes [begin, end) of a file, for DocumentReader::FromStream; adds the
// newlines it reads to `*newlines` when that is not null.
class RangeStream : public ByteStream {
 public:
  RangeStream(File file, uint64_t begin, uint64_t end, uint64_t* newlines)
      : file_(std::move(file)), offset_(begin), end_(end), newlines_(newlines) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, end_ - offset_));
    if (want == 0) return size_t{0};
    NEARDUP_ASSIGN_OR_RETURN(size_t got, file_.ReadAt(offset_, buffer, want));
    offset_ += got;
    if (got == 0) end_ = offset_;  // the file shrank: end here
    if (newlines_ != nullptr) {
      *newlines_ += static_cast<uint64_t>(std::count(buffer, buffer + got, '\n'));
    }
    return got;
  }
  std::optional<uint64_t> RemainingSizeHint() const override { return end_ - offset_; }

 private:
  File file_;
  uint64_t offset_;
  uint64_t end_;
  uint64_t* newlines_;
};

// Where a piece that starts inside its file numbers its first line until
// the lines before it are counted. Not 1: a byte order mark is
// passed over only on line 1, which such a piece never holds.
constexpr uint64_t kStandInFirstLine = 2;

constexpr size_t kScanBytes = size_t{1} << 20;

// The start of the first line that begins at or after `position`: 0, the
// file's size, or one past the first '\n' at or after position - 1.
Result<uint64_t> LineStartAtOrAfter(const File& file, uint64_t position, uint64_t size) {
  if (position == 0 || position >= size) return std::min(position, size);
  std::string buffer(kScanBytes, '\0');
  for (uint64_t offset = position - 1; offset < size;) {
    NEARDUP_ASSIGN_OR_RETURN(size_t got, file.ReadAt(offset, buffer.data(), buffer.size()));
    if (got == 0) break;
    const void* newline = std::memchr(buffer.data(), '\n', got);
    if (newline != nullptr) {
      return offset + static_cast<uint64_t>(static_cast<const char*>(newline) - buffer.data()) + 1;
    }
    offset += got;
  }
  return size;
}

bool EndsWithNoCase(const std::string& text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    const char c = text[text.size() - suffix.size() + i];
    if (static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != suffix[i]) return false;
  }
  return true;
}

// A regular file the reader would read as uncompressed JSONL. Names with a
// compression suffix are left whole (they would be JSONL by name even
// uncompressed, a case not worth a second copy of the naming rule).
bool IsSplittable(const std::string& path, const std::string& format) {
  if (path == "-" || format == "text") return false;
  if (format != "jsonl" && !EndsWithNoCase(path, ".jsonl") && !EndsWithNoCase(path, ".ndjson")) {
    return false;
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  Result<File> file = File::Open(path);
  if (!file.ok()) return false;
  unsigned char magic[4] = {0, 0, 0, 0};
  Result<size_t> got = file->ReadAt(0, reinterpret_cast<char*>(magic), sizeof(magic));
  if (!got.ok()) return false;
  const bool gzip = *got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const bool zstd =
      *got >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd;
  return !gzip && !zstd;
}

// Bytes of a file, or of the regular files below a directory: a weight for
// balancing only, so unreadable entries count 0.
uint64_t WeightOf(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    uint64_t total = 0;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (it->is_regular_file(error)) total += it->file_size(error);
    }
    return total;
  }
  const uint64_t size = fs::file_size(path, error);
  return error ? 0 : size;
}

}  // namespace

Result<std::vector<InputUnit>> ExamineInputs(Comm& comm, const cli::InputFlags& flags) {
  std::string message;
  Status status;
  if (comm.rank() == 0) {
    // The single-process checks, with their messages: every input exists.
    cli::SkipReporter silent(/*quiet=*/true);
    Result<std::unique_ptr<DocumentReader>> reader = cli::OpenInputs(flags, &silent);
    status = reader.status();
    const bool from_stdin =
        std::find(flags.inputs.begin(), flags.inputs.end(), "-") != flags.inputs.end();
    ByteWriter writer(&message);
    writer.Put<uint64_t>(flags.inputs.size());
    for (const std::string& path : flags.inputs) {
      writer.PutBytes(path);
      // With stdin every weight is 0: rank 0 reads it all.
      writer.Put<uint64_t>(from_stdin ? 0 : WeightOf(path));
      writer.Put<uint8_t>(!from_stdin && IsSplittable(path, flags.format));
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  comm.Broadcast(&message);
  ByteReader reader(message);
  uint64_t count = 0;
  NEARDUP_RETURN_IF_ERROR(reader.Get(&count));
  std::vector<InputUnit> units(count);
  for (InputUnit& unit : units) {
    uint8_t splittable = 0;
    NEARDUP_RETURN_IF_ERROR(reader.GetBytes(&unit.path));
    NEARDUP_RETURN_IF_ERROR(reader.Get(&unit.bytes));
    NEARDUP_RETURN_IF_ERROR(reader.Get(&splittable));
    unit.splittable = splittable != 0;
  }
  return units;
}

Result<std::vector<SharePiece>> PlanShare(Comm& comm, const std::vector<InputUnit>& units) {
  const uint64_t ranks = static_cast<uint64_t>(comm.size());
  const uint64_t me = static_cast<uint64_t>(comm.rank());
  uint64_t total = 0;
  for (const InputUnit& unit : units) total += unit.bytes;
  // Rank r's interval of the byte line is [start(r), start(r + 1)).
  auto start = [&](uint64_t r) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(total) * r / ranks);
  };
  auto owner_of = [&](uint64_t offset) -> uint64_t {
    if (total == 0) return 0;
    uint64_t r = static_cast<uint64_t>(static_cast<unsigned __int128>(offset) * ranks / total);
    r = std::min(r, ranks - 1);
    while (r > 0 && start(r) > offset) --r;
    while (r + 1 < ranks && start(r + 1) <= offset) ++r;
    return r;
  };

  std::vector<SharePiece> pieces;
  Status status;
  uint64_t offset = 0;
  for (size_t u = 0; u < units.size() && status.ok(); ++u) {
    const InputUnit& unit = units[u];
    const uint64_t unit_offset = offset;
    offset += unit.bytes;
    if (!unit.splittable || total == 0) {
      if (owner_of(unit_offset) != me) continue;
      if (pieces.empty() || !pieces.back().split_path.empty()) pieces.emplace_back();
      pieces.back().whole_inputs.push_back(unit.path);
      continue;
    }
    const uint64_t lo = std::clamp(start(me), unit_offset, unit_offset + unit.bytes) - unit_offset;
    const uint64_t hi =
        std::clamp(start(me + 1), unit_offset, unit_offset + unit.bytes) - unit_offset;
    if (lo == hi) continue;
    Result<File> file = File::Open(unit.path);
    if (!file.ok()) {
      status = file.status();
      break;
    }
    Result<uint64_t> begin = LineStartAtOrAfter(*file, lo, unit.bytes);
    Result<uint64_t> end = LineStartAtOrAfter(*file, hi, unit.bytes);
    if (!begin.ok() || !end.ok()) {
      status = begin.ok() ? end.status() : begin.status();
      break;
    }
    if (*begin >= *end) continue;
    SharePiece piece;
    piece.split_path = unit.path;
    piece.begin = *begin;
    piece.end = *end;
    piece.unit = u;
    piece.count_newlines = *end < unit.bytes;
    piece.first_line_number = *begin == 0 ? 1 : 0;
    pieces.push_back(std::move(piece));
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return pieces;
}

PieceLineNumbers::PieceLineNumbers(const std::vector<SharePiece>& pieces, size_t units,
                                   cli::SkipReporter* skips)
    : skips_(skips), hold_skips_(false), newlines_(units, 0) {
  for (const SharePiece& piece : pieces) {
    hold_skips_ |= piece.StartsInsideFile();
  }
}

uint64_t* PieceLineNumbers::Prepare(const SharePiece& piece, uint64_t first_document,
                                    InputOptions* options) {
  const bool stand_in = piece.StartsInsideFile();
  const size_t unit = stand_in ? piece.unit : kNoUnit;
  if (hold_skips_) {
    // Only the records the reporter will print are kept (20 at most, none
    // when quiet); the others are counted: a file of many bad lines costs
    // no memory per line.
    options->on_skip = [this, unit](const SkippedRecord& record) {
      if (held_.size() < skips_->left_to_print()) {
        held_.push_back(Held{record, unit});
      } else {
        ++not_held_;
      }
    };
  }
  if (piece.split_path.empty()) return nullptr;
  options->first_line_number = stand_in ? kStandInFirstLine : piece.first_line_number;
  if (stand_in) {
    options->on_line_id = [this, unit, first_document](uint64_t document, uint64_t line) {
      line_ids_.push_back(LineId{first_document + document, line, unit});
    };
  }
  return piece.count_newlines ? &newlines_[piece.unit] : nullptr;
}

void PieceLineNumbers::Finish(Comm& comm, std::vector<std::string>* ids, bool read_failed) {
  Finish(
      comm,
      [ids](uint64_t document, uint64_t line) {
        if (document >= ids->size()) return;  // a failed read's
        std::string& id = (*ids)[document];
        id.resize(id.rfind(':') + 1);  // "<name>:"
        id += std::to_string(line);
      },
      read_failed);
}

void PieceLineNumbers::Finish(Comm& comm,
                              const std::function<void(uint64_t document, uint64_t line)>& rename,
                              bool read_failed) {
  // One more element, summed with the counts: how many ranks before this
  // one failed to read (no other collective).
  std::vector<uint64_t> counts = newlines_;
  counts.push_back(read_failed ? 1 : 0);
  const std::vector<uint64_t> before = comm.ExclusivePrefixSum(counts);
  const bool counts_known = before.back() == 0;
  // A stand-in line L is the file's line before + 1 + (L - kStandInFirstLine).
  auto file_line = [&](size_t unit, uint64_t line) {
    return before[unit] + 1 + (line - kStandInFirstLine);
  };
  for (const LineId& named : line_ids_) rename(named.document, file_line(named.unit, named.line));
  for (Held& held : held_) {
    if (held.unit != kNoUnit && held.record.line != 0) {
      held.record.line = counts_known ? file_line(held.unit, held.record.line) : 0;
    }
    skips_->Report(held.record);
  }
  skips_->CountUnprinted(not_held_);
  held_.clear();
  not_held_ = 0;
  line_ids_.clear();
}

Result<std::unique_ptr<DocumentReader>> OpenPiece(const SharePiece& piece,
                                                  const cli::InputFlags& flags,
                                                  cli::SkipReporter* skips, bool keep_raw_records,
                                                  PieceLineNumbers* lines,
                                                  uint64_t first_document) {
  NEARDUP_ASSIGN_OR_RETURN(InputOptions options,
                           cli::ReaderOptions(flags, skips, keep_raw_records));
  uint64_t* newlines = nullptr;
  if (lines != nullptr) newlines = lines->Prepare(piece, first_document, &options);
  if (piece.split_path.empty()) return DocumentReader::Open(piece.whole_inputs, std::move(options));
  if (lines == nullptr) {
    if (piece.first_line_number == 0) {
      return InvalidArgumentError("OpenPiece: " + piece.split_path + " from byte " +
                                  std::to_string(piece.begin) +
                                  " has no known first line: "
                                  "read it through PieceLineNumbers");
    }
    options.first_line_number = piece.first_line_number;
  }
  NEARDUP_ASSIGN_OR_RETURN(File file, File::Open(piece.split_path));
  return DocumentReader::FromStream(
      std::make_unique<RangeStream>(std::move(file), piece.begin, piece.end, newlines),
      piece.split_path, InputFormat::kJsonl, std::move(options));
}

}  // namespace neardup::mpi
