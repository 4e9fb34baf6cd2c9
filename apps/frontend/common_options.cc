#include "common_options.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "exit_codes.h"
#include "neardup/stopwords.h"
#include "output.h"

namespace neardup::cli {
namespace {

std::string FormatReal(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

template <typename T>
CLI::Validator WholeNumberIn(T min, T max, const char* kind) {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [min, max, range, kind](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        auto [ptr, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc::result_out_of_range) {
          return "(" + text + ") is out of range: it must be in " + range;
        }
        if (error != std::errc() || ptr != end || text.empty()) {
          return "(" + text + ") is not " + kind;
        }
        if (value < min || value > max) return "(" + text + ") must be in " + range;
        return "";
      },
      "in " + range, "");
}

}  // namespace

CLI::Validator UnsignedIn(uint64_t min, uint64_t max) {
  return WholeNumberIn<uint64_t>(min, max, "a whole number >= 0");
}

CLI::Validator IntegerIn(int64_t min, int64_t max) {
  return WholeNumberIn<int64_t>(min, max, "a whole number");
}

CLI::Validator RealIn(double min, double max, bool min_open, bool max_open) {
  const std::string range = std::string(min_open ? "(" : "[") + FormatReal(min) + ", " +
                            FormatReal(max) + (max_open ? ")" : "]");
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        // strtod, not from_chars: the latter is missing for double in older
        // libstdc++; the whole text must be consumed.
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(begin, &end);
        if (text.empty() || end != begin + text.size() || !std::isfinite(value) ||
            errno == ERANGE) {
          return "(" + text + ") is not a finite number";
        }
        const bool below = min_open ? !(value > min) : !(value >= min);
        const bool above = max_open ? !(value < max) : !(value <= max);
        if (below || above) return "(" + text + ") must be in " + range;
        return "";
      },
      "in " + range, "");
}

void RecipeFlags::Register(CLI::App* app) {
  std::string presets;
  for (const std::string& name : AllPresetNames()) presets += (presets.empty() ? "" : ", ") + name;
  auto* preset_option =
      app->add_option("--preset", preset, "Named recipe: " + presets)->capture_default_str();
  auto* recipe_option =
      app->add_option("--recipe", recipe_file, "Recipe JSON file (see `neardup recipe show`)")
          ->check(CLI::ExistingFile);
  preset_option->excludes(recipe_option);
  app->add_option("--stopwords", stopwords_file,
                  "File of stopwords, one per line, replacing the recipe's list")
      ->check(CLI::ExistingFile);
}

Result<Recipe> RecipeFlags::Resolve() const {
  Recipe recipe;
  if (!recipe_file.empty()) {
    std::ifstream in(recipe_file, std::ios::binary);
    if (!in) return NotFoundError("cannot open recipe file " + recipe_file);
    std::stringstream text;
    text << in.rdbuf();
    Result<Recipe> parsed = ParseRecipeJson(text.str());
    if (!parsed.ok()) return parsed.status().WithContext(recipe_file);
    recipe = std::move(parsed).value();
  } else {
    NEARDUP_ASSIGN_OR_RETURN(recipe, PresetRecipe(preset));
  }
  if (!stopwords_file.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(recipe.custom_stopwords,
                             ReadStopwordFile(stopwords_file, recipe.normalization));
    recipe.stopwords = StopwordsKind::kCustom;
    recipe.name = "custom";
  }
  NEARDUP_RETURN_IF_ERROR(ValidateRecipe(recipe));
  return recipe;
}

void InputFlags::Register(CLI::App* app) {
  app->add_option("inputs", inputs,
                  "Files, directories (recursive) or - for stdin; .gz and .zst are read "
                  "transparently; *.jsonl and *.ndjson are read as JSON lines; PDF, DOCX, "
                  "ODT, HTML and WARC files give their text (docs/INPUT_FORMATS.md)")
      ->required();
  app->add_option("--input-format", format,
                  "auto (by content and name), text (bytes as they are), jsonl, pdf, docx, odt, "
                  "html or warc")
      ->check(CLI::IsMember({"auto", "text", "jsonl", "pdf", "docx", "odt", "html", "warc"}))
      ->capture_default_str();
  app->add_flag("--ocr", ocr, "Read PDF pages without text (scans) with Tesseract OCR");
  app->add_option("--ocr-language", ocr_language,
                  "Tesseract language(s) for --ocr, e.g. eng or eng+deu")
      ->capture_default_str();
  app->add_option("--text-field", text_field, "JSONL field holding the text")
      ->capture_default_str();
  app->add_option("--id-field", id_field,
                  "JSONL field holding the id (absent: <file>:<line> is used)")
      ->capture_default_str();
  app->add_option("--max-document-mb", max_document_mb,
                  "Skip (and report) documents larger than this")
      ->capture_default_str()
      ->check(UnsignedIn(1, kMaxDocumentMbLimit));
}

void RunFlags::Register(CLI::App* app) {
  app->add_option("--threads", threads, "Worker threads (default: all cores)")
      ->check(IntegerIn(0, 4096));
  app->add_flag("--quiet,-q", quiet, "No progress line and no summary on stderr");
  app->add_flag("--strict", strict, "Exit with code 5 when any record was skipped");
}

void RegisterNoFsyncFlag(CLI::App* command) {
  command->add_flag_callback(
      "--no-fsync", [] { SetFileOutputsFsync(false); },
      "With --output FILE: no fsync before the rename (nor of the directory, nor writeback as "
      "it is written). Still renamed only on success, but after an OS crash or power loss FILE "
      "may miss data. Faster where the disk is the bound");
}

void DeviceFlags::Register(CLI::App* app) {
  app->add_option("--device", device,
                  "Fingerprint on: cpu, gpu (the CUDA backend; an error without one) or auto "
                  "(the GPU when present, else the CPU); fingerprints are identical")
      ->check(CLI::IsMember({"cpu", "gpu", "cuda", "auto"}))
      ->capture_default_str();
}

Result<std::unique_ptr<Fingerprinter>> DeviceFlags::Create(const Recipe& recipe,
                                                           const SketchSelection& selection) const {
  NEARDUP_ASSIGN_OR_RETURN(FingerprintBackend backend, ParseFingerprintBackend(device));
  return CreateFingerprinter(backend, recipe, selection);
}

std::unique_ptr<tbb::global_control> RunFlags::LimitThreads() const {
  if (threads <= 0) return nullptr;
  return std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                               static_cast<size_t>(threads));
}

void SkipReporter::Report(const SkippedRecord& record) {
  ++count_;
  if (quiet_ || count_ > kPrintLimit) return;
  std::string where = record.source.empty() ? "record" : record.source;
  if (record.line > 0) where += ":" + std::to_string(record.line);
  if (!record.id.empty()) where += " (id " + record.id + ")";
  std::fprintf(stderr, "neardup: skipped %s: %s\n", where.c_str(), record.reason.c_str());
  if (count_ == kPrintLimit) {
    std::fprintf(stderr, "neardup: further skipped records are counted, not printed\n");
  }
}

void SkipReporter::Notice(const std::string& source, const std::string& message) const {
  if (!quiet_) std::fprintf(stderr, "neardup: %s: %s\n", source.c_str(), message.c_str());
}

void PrintExtractionSummary(const DocumentReader& reader, bool quiet) {
  if (quiet || reader.documents_extracted() == 0) return;
  std::fprintf(stderr,
               "neardup: %llu documents extracted from PDF, DOCX, ODT, HTML and WARC files; "
               "%llu PDF pages without text, %llu pages read by OCR\n",
               static_cast<unsigned long long>(reader.documents_extracted()),
               static_cast<unsigned long long>(reader.pages_without_text()),
               static_cast<unsigned long long>(reader.pages_read_by_ocr()));
}

bool ReadingSucceeded(const Status& status, const RunFlags& run, const SkipReporter& skips) {
  return status.ok() && !(run.strict && skips.count() > 0);
}

int ExitCodeAfterReading(const Status& status, const RunFlags& run, const SkipReporter& skips) {
  if (!status.ok()) return ReportError(status);
  if (run.strict && skips.count() > 0) return kExitSkipped;
  return kExitOk;
}

Result<InputOptions> ReaderOptions(const InputFlags& flags, SkipReporter* skips,
                                   bool keep_raw_records,
                                   std::vector<InputOptions::ExcludedDirectory> excluded) {
  InputOptions options;
  options.format = flags.format == "jsonl"  ? InputFormat::kJsonl
                   : flags.format == "text" ? InputFormat::kText
                                            : InputFormat::kAuto;
  if (flags.format != "auto" && flags.format != "text" && flags.format != "jsonl") {
    NEARDUP_ASSIGN_OR_RETURN(DocumentFormat forced, ParseDocumentFormat(flags.format));
    options.format = forced == DocumentFormat::kPdf    ? InputFormat::kPdf
                     : forced == DocumentFormat::kDocx ? InputFormat::kDocx
                     : forced == DocumentFormat::kOdt  ? InputFormat::kOdt
                     : forced == DocumentFormat::kHtml ? InputFormat::kHtml
                                                       : InputFormat::kWarc;
  }
  options.extract.ocr = flags.ocr;
  options.extract.ocr_language = flags.ocr_language;
  options.on_notice = [skips](const std::string& source, const std::string& message) {
    skips->Notice(source, message);
  };
  options.text_field = flags.text_field;
  options.id_field = flags.id_field;
  options.max_document_bytes = flags.max_document_mb << 20;
  options.keep_raw_records = keep_raw_records;
  options.excluded_directories = std::move(excluded);
  options.on_skip = [skips](const SkippedRecord& record) { skips->Report(record); };
  return options;
}

Result<std::unique_ptr<DocumentReader>> OpenInputs(
    const InputFlags& flags, SkipReporter* skips, bool keep_raw_records,
    std::vector<InputOptions::ExcludedDirectory> excluded) {
  NEARDUP_ASSIGN_OR_RETURN(InputOptions options,
                           ReaderOptions(flags, skips, keep_raw_records, std::move(excluded)));
  return DocumentReader::Open(flags.inputs, std::move(options));
}

}  // namespace neardup::cli
