// Flags shared by the commands that read documents: how to build the recipe,
// how to read the inputs, and how to run (threads, progress, strictness).
#ifndef NEARDUP_APPS_CLI_COMMON_OPTIONS_H_
#define NEARDUP_APPS_CLI_COMMON_OPTIONS_H_

#include <tbb/global_control.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "neardup/document_reader.h"
#include "neardup/fingerprint_backend.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::cli {

// The one check every numeric option goes through, so that the help text
// (the validator's description), the parser and the message agree. The text
// must be a number of the option's kind and nothing else: an integer (no sign
// for an unsigned option, no fraction, no overflow) or a finite decimal (no
// nan or inf), within the range. A bound is included unless marked open.
CLI::Validator UnsignedIn(uint64_t min, uint64_t max);
CLI::Validator IntegerIn(int64_t min, int64_t max);
CLI::Validator RealIn(double min, double max, bool min_open = false, bool max_open = false);

// --max-document-mb's bound: 16 TiB, far above any memory, and small enough
// that the size in bytes (MB << 20) cannot overflow.
inline constexpr uint64_t kMaxDocumentMbLimit = uint64_t{1} << 24;

struct RecipeFlags {
  std::string preset = "default";
  std::string recipe_file;
  std::string stopwords_file;

  void Register(CLI::App* app);
  // The recipe the flags describe, validated.
  Result<Recipe> Resolve() const;
};

struct InputFlags {
  std::vector<std::string> inputs;
  std::string format = "auto";
  std::string text_field = "text";
  std::string id_field = "id";
  uint64_t max_document_mb = 2048;
  // PDF pages without text go through Tesseract (docs/INPUT_FORMATS.md).
  bool ocr = false;
  std::string ocr_language = "eng";

  void Register(CLI::App* app);
};

struct RunFlags {
  int threads = 0;
  bool quiet = false;
  bool strict = false;

  void Register(CLI::App* app);
  // Limits oneTBB to `threads` workers for the lifetime of the returned
  // object (no limit when threads == 0).
  std::unique_ptr<tbb::global_control> LimitThreads() const;
};

// --no-fsync, on every command that writes --output FILE: the file is still
// written to a temporary and renamed only on success, without the fsyncs
// (SetFileOutputsFsync in output.h; docs/CLI.md, "Outputs").
void RegisterNoFsyncFlag(CLI::App* command);

// --device: which fingerprint backend computes the sketches.
struct DeviceFlags {
  std::string device = "cpu";

  void Register(CLI::App* app);
  // The fingerprinter of the chosen backend (neardup/fingerprint_backend.h):
  // `gpu` fails clearly where no GPU or no CUDA build is available; `auto`
  // falls back to the CPU.
  Result<std::unique_ptr<Fingerprinter>> Create(const Recipe& recipe,
                                                const SketchSelection& selection) const;
};

// Counts skipped records and prints the first few to stderr.
class SkipReporter {
 public:
  explicit SkipReporter(bool quiet) : quiet_(quiet) {}
  void Report(const SkippedRecord& record);
  // What extraction reports without skipping (pages without text, pages
  // read by OCR): printed unless quiet, not counted.
  void Notice(const std::string& source, const std::string& message) const;
  uint64_t count() const { return count_; }
  // How many of the next records Report would print: 0 when quiet or past
  // the limit. A caller that holds records back to report them later
  // (neardup-mpi's PieceLineNumbers) needs to keep only these.
  uint64_t left_to_print() const {
    return quiet_ || count_ >= kPrintLimit ? 0 : kPrintLimit - count_;
  }
  // Counts `n` skipped records without printing them: records past
  // left_to_print() that a caller did not keep.
  void CountUnprinted(uint64_t n) { count_ += n; }

 private:
  static constexpr uint64_t kPrintLimit = 20;
  bool quiet_;
  uint64_t count_ = 0;
};

// The exit code of a command that read inputs: the error's (reported on
// stderr), else kExitSkipped when --strict was given and records were
// skipped, else kExitOk.
// Whether a command that read inputs succeeded: no error, and no skipped
// record under --strict. A file output is kept only then.
bool ReadingSucceeded(const Status& status, const RunFlags& run, const SkipReporter& skips);

int ExitCodeAfterReading(const Status& status, const RunFlags& run, const SkipReporter& skips);

// The reader options the flags describe; skipped records go to `skips`. An
// error for an --input-format that names no format.
Result<InputOptions> ReaderOptions(const InputFlags& flags, SkipReporter* skips,
                                   bool keep_raw_records = false,
                                   std::vector<InputOptions::ExcludedDirectory> excluded = {});

// Opens the inputs; skipped records go to `skips`. With keep_raw_records,
// documents carry their JSONL line verbatim. `excluded` directories are not
// read (InputOptions::excluded_directories).
Result<std::unique_ptr<DocumentReader>> OpenInputs(
    const InputFlags& flags, SkipReporter* skips, bool keep_raw_records = false,
    std::vector<InputOptions::ExcludedDirectory> excluded = {});

// One line on stderr (unless quiet) when documents were extracted from PDF,
// DOCX, ODT, HTML or WARC files: how many, PDF pages without text, pages
// read by OCR.
void PrintExtractionSummary(const DocumentReader& reader, bool quiet);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_COMMON_OPTIONS_H_
