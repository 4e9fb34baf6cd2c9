#include "fingerprint_command.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/fingerprinter.h"
#include "neardup/format/wire_format.h"
#include "output.h"
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
  return job;
}

}  // namespace

int RunFingerprintJob(const FingerprintJob& flags) {
  auto thread_limit = flags.run.LimitThreads();
  const Recipe* recipe = &flags.recipe;
  const SketchSelection& selection = flags.selection;
  Result<std::unique_ptr<Fingerprinter>> fingerprinter = flags.device.Create(*recipe, selection);
  if (!fingerprinter.ok()) return ReportError(fingerprinter.status());

  SkipReporter skips(flags.run.quiet);
  Result<std::unique_ptr<DocumentReader>> reader = OpenInputs(flags.input, &skips);
  if (!reader.ok()) return ReportError(reader.status());
  Result<OutputFile> output = OutputFile::Open(flags.output, flags.input.inputs);
  if (!output.ok()) return ReportError(output.status());

  const std::string recipe_id = RecipeId(*recipe);
  const int simhash_bits = recipe->simhash.bits;
  Progress progress(flags.run.quiet);
  uint64_t documents = 0;
  uint64_t bytes = 0;
  std::string line;
  auto started = std::chrono::steady_clock::now();

  FingerprintPipelineStats stats;
  Status status = RunFingerprintPipeline(
      **reader, **fingerprinter, FingerprintPipelineOptions{},
      [&](std::span<const Document> docs, std::span<const Fingerprint> fingerprints) -> Status {
        line.clear();
        for (size_t i = 0; i < docs.size(); ++i) {
          format::AppendFingerprintLine(&line, docs[i].id, fingerprints[i], selection, simhash_bits,
                                        recipe_id);
          bytes += docs[i].text.size();
        }
        documents += docs.size();
        progress.Update(documents, bytes);
        return output->Write(line);
      },
      &stats);
  progress.Finish();
  Status closed = output->Finish(ReadingSucceeded(status, flags.run, skips));
  if (status.ok()) status = closed;

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
  command->callback([flags, run, runner] {
    *run = [flags, runner] {
      Result<FingerprintJob> job = ResolveJob(*flags);
      if (!job.ok()) return ReportError(job.status());
      return runner ? runner(*job) : RunFingerprintJob(*job);
    };
  });
}

}  // namespace neardup::cli
