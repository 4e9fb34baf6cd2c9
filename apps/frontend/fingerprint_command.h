// `neardup fingerprint`: one JSON line of sketches per input document.
#ifndef NEARDUP_APPS_CLI_FINGERPRINT_COMMAND_H_
#define NEARDUP_APPS_CLI_FINGERPRINT_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "common_options.h"
#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"

namespace neardup::cli {

// What the command's flags resolve to, validated.
struct FingerprintJob {
  Recipe recipe;
  SketchSelection selection;  // --simhash when nothing was chosen
  InputFlags input;
  RunFlags run;
  DeviceFlags device;
  std::string output = "-";
  std::string format = "json";  // or "binary": fixed-width records (docs/PIPELINE.md)
  std::string ids_output;       // binary: the ids, one JSON string a line
  // --profile: the stages' times on stderr (neardup: fingerprint and close;
  // neardup-mpi: each rank's line, as its other commands').
  bool profile = false;
};

// Runs a resolved job; returns the exit code.
using FingerprintRunner = std::function<int(const FingerprintJob&)>;

// Registers the subcommand; `*run` is set to its action when it is chosen.
// An empty `runner` runs the job in this process (RunFingerprintJob);
// `neardup-mpi` passes its own.
void RegisterFingerprintCommand(CLI::App* app, std::function<int()>* run,
                                FingerprintRunner runner = {});

// The single-process run of a job.
int RunFingerprintJob(const FingerprintJob& job);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_FINGERPRINT_COMMAND_H_
