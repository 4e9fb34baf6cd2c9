#include "fingerprint_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/fingerprinter.h"
#include "neardup/format/fingerprint_record.h"
#include "neardup/format/wire_format.h"
#include "neardup/stage_time.h"
#include "output.h"
#include "profile.h"
#include "progress.h"

namespace neardup::cli {
namespace {

struct FingerprintFlags {
  RecipeFlags recipe;
  InputFlags input;
  RunFlags run;
  DeviceFlags device;
  bool simhash = false;
  bool minhash = false;
  bool kminhash = false;
  bool chunks = false;
  std::string output = "-";
  std::string format = "json";
  std::string ids_output;  // binary format: ids beside the records, one JSON string a line
  bool profile = false;
};

Result<FingerprintJob> ResolveJob(const FingerprintFlags& flags) {
  FingerprintJob job;
  NEARDUP_ASSIGN_OR_RETURN(job.recipe, flags.recipe.Resolve());
  SketchSelection& selection = job.selection;
  selection.simhash = flags.simhash;
  selection.minhash = flags.minhash;
  selection.kvalue_minhash = flags.kminhash;
  selection.chunks = flags.chunks;
  if (!selection.simhash && !selection.minhash && !selection.kvalue_minhash && !selection.chunks) {
    selection.simhash = true;  // the cheapest sketch is the default
  }
  job.input = flags.input;
  job.run = flags.run;
  job.device = flags.device;
  job.output = flags.output;
  job.format = flags.format;
  job.ids_output = flags.ids_output;
  job.profile = flags.profile;
  return job;
}

}  // namespace

int RunFingerprintJob(const FingerprintJob& flags) {
  auto thread_limit = flags.run.LimitThreads();
  const Recipe* recipe = &flags.recipe;
  const SketchSelection& selection = flags.selection;
  const bool binary = flags.format == "binary";
  Result<format::FingerprintRecordLayout> layout =
      format::MakeFingerprintRecordLayout(*recipe, selection);
  if (binary && !layout.ok()) return ReportError(layout.status());
  if (!binary && !flags.ids_output.empty()) {
    return ReportError(InvalidArgumentError("--ids-output goes with --format binary"));
  }
  Result<std::unique_ptr<Fingerprinter>> fingerprinter = flags.device.Create(*recipe, selection);
  if (!fingerprinter.ok()) return ReportError(fingerprinter.status());

  SkipReporter skips(flags.run.quiet);
  Result<std::unique_ptr<DocumentReader>> reader = OpenInputs(flags.input, &skips);
  if (!reader.ok()) return ReportError(reader.status());
  Result<OutputFile> output = OutputFile::Open(flags.output, flags.input.inputs);
  if (!output.ok()) return ReportError(output.status());
  std::optional<OutputFile> ids_output;
  if (!flags.ids_output.empty()) {
    Result<OutputFile> ids = OutputFile::Open(flags.ids_output, flags.input.inputs);
    if (!ids.ok()) return ReportError(ids.status());
    ids_output.emplace(std::move(ids).value());
  }

  const std::string recipe_id = RecipeId(*recipe);
  const int simhash_bits = recipe->simhash.bits;
  Progress progress(flags.run.quiet);
  uint64_t documents = 0;
  uint64_t bytes = 0;
  std::string ids;
  auto started = std::chrono::steady_clock::now();

  FingerprintPipelineStats stats;
  SerialCpuTime serial_time;
  FingerprintPipelineOptions pipeline_options;
  if (flags.profile) pipeline_options.serial_time = &serial_time;
  StageTimer timer;
  // Formatting runs on the worker threads, per batch; only writing is serial.
  // Flat batches on views: no allocation per document (fingerprint_batch.h).
  Status status = RunFlatFingerprintPipeline(
      **reader, **fingerprinter, pipeline_options,
      [&](const DocumentViews& docs, const FingerprintBatch& fingerprints, std::string* out) {
        for (size_t i = 0; i < docs.ids.size(); ++i) {
          // The ids lie in the chunk, which fingerprinting it has pushed out
          // of this core's caches: asked for a few documents ahead, or each
          // costs a miss (1.5-1.9% of one thread, session 10).
          if (i + 4 < docs.ids.size()) __builtin_prefetch(docs.ids[i + 4].data());
          if (binary) {
            format::AppendFingerprintRecord(out, fingerprints[i], *layout);
          } else {
            format::AppendFingerprintLine(out, docs.ids[i], fingerprints[i], selection,
                                          simhash_bits, recipe_id);
          }
        }
      },
      [&](const DocumentViews& docs, const FingerprintBatch&,
          std::string_view formatted) -> Status {
        for (std::string_view text : docs.texts) bytes += text.size();
        documents += docs.ids.size();
        progress.Update(documents, bytes);
        if (ids_output.has_value()) {
          ids.clear();
          for (std::string_view id : docs.ids) {
            format::AppendJsonString(&ids, id);
            ids.push_back('\n');
          }
          NEARDUP_RETURN_IF_ERROR(ids_output->Write(ids));
        }
        return output->Write(formatted);
      },
      &stats);
  progress.Finish();
  StageTime fingerprint_time = timer.Lap();
  fingerprint_time.serial_cpu_seconds = serial_time.seconds();
  const bool succeeded = ReadingSucceeded(status, flags.run, skips);
  Status closed = output->Finish(succeeded);
  if (status.ok()) status = closed;
  if (ids_output.has_value()) {
    closed = ids_output->Finish(succeeded);
    if (status.ok()) status = closed;
  }
  // --profile: `fingerprint` (read, parse, fingerprint, format, write; its serial figure is the
  // pipeline's in-order filters: reading, numbering, and the delivery that writes each batch's
  // formatted lines, the part no thread count shortens) and `close` (flush, fsync, rename).
  if (flags.profile) {
    PrintProfile({{"fingerprint", fingerprint_time}, {"close", timer.Lap()}}, stats.documents);
  }

  if (!flags.run.quiet) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr,
                 "neardup: fingerprinted %llu documents (%.1f MB) in %.2f s with recipe %s "
                 "(%s); %llu empty, %llu with invalid UTF-8, %llu records skipped\n",
                 static_cast<unsigned long long>(stats.documents),
                 static_cast<double>(stats.bytes) / 1e6, seconds, recipe_id.c_str(),
                 recipe->name.c_str(), static_cast<unsigned long long>(stats.empty_documents),
                 static_cast<unsigned long long>(stats.documents_with_invalid_utf8 +
                                                 (*reader)->documents_with_invalid_utf8()),
                 static_cast<unsigned long long>(skips.count()));
    PrintExtractionSummary(**reader, flags.run.quiet);
    if (binary) {
      std::fprintf(stderr, "neardup: %zu-byte records; numpy: np.fromfile(path, dtype=%s)\n",
                   layout->record_bytes, format::FingerprintRecordDtype(*layout).c_str());
    }
    const FingerprinterStats backend = (*fingerprinter)->stats();
    if ((*fingerprinter)->backend_name() != "cpu") {
      std::fprintf(stderr, "neardup: backend %s: %llu documents on the GPU, %llu on the CPU\n",
                   std::string((*fingerprinter)->backend_name()).c_str(),
                   static_cast<unsigned long long>(backend.device_documents),
                   static_cast<unsigned long long>(backend.host_documents));
    }
  }
  return ExitCodeAfterReading(status, flags.run, skips);
}

void RegisterFingerprintCommand(CLI::App* app, std::function<int()>* run,
                                FingerprintRunner runner) {
  auto flags = std::make_shared<FingerprintFlags>();
  CLI::App* command = app->add_subcommand(
      "fingerprint",
      "Write one JSON line of fingerprints per document: "
      "{\"id\", \"recipe\", \"tokens\", \"simhash\", \"minhash\", \"kminhash\", \"chunks\"}. "
      "Output order is input order, whatever the thread count.");
  flags->recipe.Register(command);
  flags->input.Register(command);
  flags->run.Register(command);
  flags->device.Register(command);
  command->add_flag("--simhash", flags->simhash, "SimHash (the default when nothing is chosen)");
  command->add_flag("--minhash", flags->minhash, "Bottom-k MinHash (hex values, ascending)");
  command->add_flag("--kminhash", flags->kminhash, "k-value MinHash (one-permutation, densified)");
  command->add_flag("--chunks", flags->chunks, "Sorted unique 32-bit chunk ids");
  command->add_option("--output,-o", flags->output, "Output file (- for stdout)")
      ->capture_default_str();
  RegisterNoFsyncFlag(command);
  command->add_flag("--profile", flags->profile,
                    "Print the fingerprint and close stages' wall and CPU seconds (all threads, "
                    "main thread, serial filters) and the peak memory per document on stderr "
                    "(neardup-mpi: each rank's start, fingerprint and output stages)");
  command
      ->add_option("--format", flags->format,
                   "json (one JSON line per document) or binary (fixed-width little-endian "
                   "uint64 records for numpy, see docs/PIPELINE.md; not with --chunks)")
      ->check(CLI::IsMember({"json", "binary"}))
      ->capture_default_str();
  command->add_option("--ids-output", flags->ids_output,
                      "With --format binary: write the ids, one JSON string per line, "
                      "in record order, to this file");
  command->callback([flags, run, runner] {
    *run = [flags, runner] {
      Result<FingerprintJob> job = ResolveJob(*flags);
      if (!job.ok()) return ReportError(job.status());
      return runner ? runner(*job) : RunFingerprintJob(*job);
    };
  });
}

}  // namespace neardup::cli
