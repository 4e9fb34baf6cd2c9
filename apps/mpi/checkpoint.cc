#include "checkpoint.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

#include "neardup/format/checksummed_file.h"

namespace neardup::mpi {
namespace {

constexpr std::string_view kManifestKind = "mpi-manifest";
// The manifest's first line names the format of the checkpoint's files:
// what each stage file holds and where the pairs stage placed the pairs
// (session 9 moved the leader rule's pairs from rank 0 to the owners of
// their second documents without changing it, so an older checkpoint
// failed deep in the clustering). Bump it with any such change: a
// checkpoint of another format is refused by name. 3 (session 11): the
// pairs stage's counters include the bytes of pairs placed and the
// documents fingerprinted again (--profile); the fingerprint stage of a
// MinHash job holds no verification sketches of split JSONL pieces
// (deferred) but their records. 4 (session 12): the leader rule's pairs
// stay on their verifiers (PairPlacement::kVerifiers; SimHash: on their
// first documents' owners), no longer on the owners of their second
// documents; the pairs stage's counters include the candidates handed to
// another rank. 5 (session 17): the components rule's spanning forests
// stay on the ranks that built them (PairPlacement::kForests), no longer
// all on rank 0 (an older binary would cluster rank 0's alone). Not bumped
// in session 19: SimHash clusters/dedup save the groups' pairs instead of
// every pair, with the same placements, clusters and counters. 6 (session
// 20): the leader rule's SimHash list holds the stars of the groups of
// copies without session 19's (r, m) pairs (grouped_pairs.h); the scan
// takes the groups from the stars, which a format-5 binary would scan as
// plain pairs (a later copy whose first copy follows another leader would
// lead).
constexpr int kFormatVersion = 6;
// The oldest format this binary resumes as well: 4's only difference is
// the components rule's forests all on rank 0, which the union-find over
// the ranks takes like any other placement; 4's and 5's SimHash lists
// (every pair, or session 19's with the (r, m) pairs) hold the stars too,
// and the scan clusters them alike (leader_scan_test).
constexpr int kOldestReadableFormat = 4;
constexpr std::string_view kHeaderPrefix = "neardup-mpi checkpoint ";

#ifdef NEARDUP_MPI_TEST_HOOKS
// The format this run writes: kFormatVersion, or (test build only,
// NEARDUP_MPI_TEST_CHECKPOINT_FORMAT=<n>) what an older binary wrote.
int WrittenFormatVersion() {
  const char* hook = std::getenv("NEARDUP_MPI_TEST_CHECKPOINT_FORMAT");
  return hook != nullptr ? std::atoi(hook) : kFormatVersion;
}
#else
constexpr int WrittenFormatVersion() { return kFormatVersion; }
#endif

// The format a manifest's first line names ("neardup-mpi checkpoint 5"),
// or nullopt when it names none.
std::optional<int> FormatOf(std::string_view first_line) {
  if (first_line.substr(0, kHeaderPrefix.size()) != kHeaderPrefix) return std::nullopt;
  const std::string_view digits = first_line.substr(kHeaderPrefix.size());
  int format = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), format);
  if (error != std::errc() || end != digits.data() + digits.size() ||
      digits != std::to_string(format)) {
    return std::nullopt;
  }
  return format;
}

// Flags that cannot change what is computed, so a resume may change them
// (the output's name, the checkpoint's place too: it may be copied); with
// whether each takes a value ("--threads 4" or "--threads=4").
bool IgnoredFlag(std::string_view arg, bool* takes_value) {
  static constexpr std::array<std::string_view, 6> kValued = {
      "--threads", "--memory-mb", "--max-round-bytes", "--output", "-o", "--checkpoint"};
  static constexpr std::array<std::string_view, 5> kBare = {"--resume", "--quiet", "-q",
                                                            "--profile", "--no-fsync"};
  for (std::string_view flag : kValued) {
    if (arg == flag) {
      *takes_value = true;
      return true;
    }
    if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag && arg[flag.size()] == '=') {
      *takes_value = false;
      return true;
    }
  }
  *takes_value = false;
  return std::find(kBare.begin(), kBare.end(), arg) != kBare.end();
}

// One line of the manifest: `key value`, with '\\' and '\n' escaped.
void AddLine(std::string* out, std::string_view key, std::string_view value) {
  out->append(key);
  out->push_back(' ');
  for (char c : value) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
  out->push_back('\n');
}

Status AddFile(const std::string& path, std::string* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError("--checkpoint: cannot stat input " + path + ": " + std::strerror(errno));
  }
  const long long mtime_ns =
      static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  AddLine(out, "input", path + " " + std::to_string(st.st_size) + " " + std::to_string(mtime_ns));
  return Status::Ok();
}

// The identity of the job: what a resume must match.
Result<std::string> Identity(int ranks, const std::vector<std::string>& command_line,
                             const std::vector<std::string>& inputs) {
  std::string out = std::string(kHeaderPrefix) + std::to_string(WrittenFormatVersion()) + "\n";
  AddLine(&out, "ranks", std::to_string(ranks));
  for (size_t i = 0; i < command_line.size(); ++i) {
    bool takes_value = false;
    if (IgnoredFlag(command_line[i], &takes_value)) {
      i += takes_value ? 1 : 0;
      continue;
    }
    AddLine(&out, "arg", command_line[i]);
  }
  for (const std::string& input : inputs) {
    if (input == "-") {
      return InvalidArgumentError(
          "--checkpoint needs named inputs: standard input cannot be read again on resume");
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(input, ec)) {
      NEARDUP_RETURN_IF_ERROR(AddFile(input, &out));
      continue;
    }
    std::vector<std::string> files;
    for (auto it = std::filesystem::recursive_directory_iterator(input, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path().string());
    }
    if (ec) return IoError("--checkpoint: cannot list input " + input + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) NEARDUP_RETURN_IF_ERROR(AddFile(file, &out));
  }
  return out;
}

// The first line where `a` and `b` differ, for the refusal's message.
std::string FirstDifference(std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    const std::string_view line_a = a.substr(0, a.find('\n'));
    const std::string_view line_b = b.substr(0, b.find('\n'));
    if (line_a != line_b) {
      return "'" + std::string(line_a.empty() ? "(nothing)" : line_a) + "' then, '" +
             std::string(line_b.empty() ? "(nothing)" : line_b) + "' now";
    }
    a.remove_prefix(std::min(a.size(), line_a.size() + 1));
    b.remove_prefix(std::min(b.size(), line_b.size() + 1));
  }
  return "";
}

// Reads DIR/manifest: *done gets its finished stages, one a line.
// NotFound when there is none; FailedPrecondition when it records another
// job than `identity`; DataLoss when it is damaged.
Status ReadManifest(const std::string& dir, const std::string& identity, std::string* done) {
  const std::string path = dir + "/manifest";
  NEARDUP_ASSIGN_OR_RETURN(std::string text, format::ReadChecksummedFile(path, kManifestKind));
  // Another format first: its stage files may hold or place things
  // otherwise, which no identity line would show. A format from
  // kOldestReadableFormat on counts as this one's; the rest of the
  // identity must match as always.
  const size_t first_end = std::min(text.find('\n'), text.size());
  const std::string_view first_line = std::string_view(text).substr(0, first_end);
  const size_t expected_end = std::min(identity.find('\n'), identity.size());
  // One parse decides both which formats this run reads (this version's
  // from kOldestReadableFormat on; only itself when a test build writes an
  // older one) and the refusal's words.
  const std::optional<int> saved_format = FormatOf(first_line);
  // `identity`'s first line is Identity()'s, which names this format.
  const int expected_format = WrittenFormatVersion();
  const int oldest = expected_format == kFormatVersion ? kOldestReadableFormat : expected_format;
  if (!saved_format.has_value() || *saved_format < oldest || *saved_format > expected_format) {
    const bool ours = first_line.substr(0, kHeaderPrefix.size()) == kHeaderPrefix;
    const std::string reads =
        oldest == expected_format
            ? "format " + std::to_string(expected_format)
            : "formats " + std::to_string(oldest) + " to " + std::to_string(expected_format);
    return FailedPreconditionError(
        "--resume: " + dir + " holds a checkpoint of " +
        (ours ? "format " + std::string(first_line.substr(kHeaderPrefix.size())) +
                    ", written by another version of neardup-mpi (this one reads " + reads + ")"
              : "an unknown format ('" + std::string(first_line) + "')") +
        "; run without --resume to start afresh");
  }
  const size_t stages = text.find("\nstage ");
  const std::string_view saved =
      std::string_view(text).substr(0, stages == std::string::npos ? text.size() : stages + 1);
  // The identities past their first lines (the formats were checked above).
  const std::string_view saved_rest = saved.substr(std::min(saved.size(), first_end));
  const std::string_view identity_rest = std::string_view(identity).substr(expected_end);
  if (saved_rest != identity_rest) {
    return FailedPreconditionError(
        "--resume: " + dir + " holds a checkpoint of another job (flags, inputs or rank count " +
        "differ: " + FirstDifference(saved_rest, identity_rest) +
        "); run without --resume to start afresh");
  }
  constexpr std::string_view kStage = "stage ";
  for (std::string_view rest = std::string_view(text).substr(saved.size()); !rest.empty();) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    if (end == std::string_view::npos || line.substr(0, kStage.size()) != kStage) {
      return DataLossError(path + ": malformed stage line '" + std::string(line) + "'");
    }
    done->append(line.substr(kStage.size())).push_back('\n');
    rest.remove_prefix(end + 1);
  }
  return Status::Ok();
}

#ifdef NEARDUP_MPI_TEST_HOOKS
// The test build's hook (see the header).
void MaybeExitForTest(std::string_view stage, int rank) {
  const char* hook = std::getenv("NEARDUP_MPI_TEST_EXIT_AFTER");
  if (hook == nullptr) return;
  if (std::string(stage) + ":" + std::to_string(rank) != hook) return;
  std::fprintf(stderr, "neardup-mpi: rank %d: exiting after stage %s (test hook)\n", rank,
               std::string(stage).c_str());
  std::fflush(stderr);
  std::_Exit(86);
}
#else
void MaybeExitForTest(std::string_view, int) {}
#endif

}  // namespace

Result<Checkpoint> Checkpoint::Open(Comm& comm, const std::string& dir, bool resume,
                                    const std::vector<std::string>& command_line,
                                    const std::vector<std::string>& inputs) {
  Checkpoint checkpoint;
  if (dir.empty()) {
    if (resume) {
      return comm.AgreeOnStatus(InvalidArgumentError("--resume needs --checkpoint DIR"));
    }
    return checkpoint;
  }
  checkpoint.dir_ = dir;
  checkpoint.rank_ = comm.rank();
  Status status;
  std::string done;  // the finished stages, one per line (rank 0's, then broadcast)
  if (comm.rank() == 0) {
    Result<std::string> identity = Identity(comm.size(), command_line, inputs);
    status = identity.status();
    if (status.ok()) checkpoint.identity_ = *std::move(identity);
    std::error_code ec;
    if (status.ok() && !std::filesystem::create_directories(dir, ec) && ec) {
      status = IoError("--checkpoint: cannot create " + dir + ": " + ec.message());
    }
    Status read =
        status.ok() && resume ? ReadManifest(dir, checkpoint.identity_, &done) : NotFoundError("");
    if (status.ok() && read.code() != StatusCode::kNotFound) {
      status = read;
    } else if (status.ok()) {
      if (resume) {
        std::fprintf(stderr, "neardup-mpi: --resume: no checkpoint in %s yet, starting\n",
                     dir.c_str());
      }
      status = checkpoint.WriteManifest();
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  comm.Broadcast(&done);
  for (std::string_view rest = done; !rest.empty();) {
    const size_t end = rest.find('\n');
    checkpoint.done_.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  return checkpoint;
}

bool Checkpoint::Done(std::string_view stage) const {
  return std::find(done_.begin(), done_.end(), stage) != done_.end();
}

std::string Checkpoint::RankFile(std::string_view stage) const {
  return dir_ + "/" + std::string(stage) + ".rank" + std::to_string(rank_);
}

Status Checkpoint::WriteManifest() const {
  std::string text = identity_;
  for (const std::string& stage : done_) AddLine(&text, "stage", stage);
  const std::array<std::string_view, 1> pieces = {text};
  return format::WriteChecksummedFile(dir_ + "/manifest", kManifestKind, pieces);
}

Status Checkpoint::Finish(Comm& comm, std::string_view stage, const Status& written) {
  if (!enabled()) return Status::Ok();
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(written));
  done_.emplace_back(stage);
  Status recorded;
  if (comm.rank() == 0) recorded = WriteManifest();
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(recorded));
  MaybeExitForTest(stage, comm.rank());
  return Status::Ok();
}

}  // namespace neardup::mpi
