// `neardup pairs`, `neardup clusters` and `neardup dedup`: one flow (read,
// fingerprint, find verified pairs) with three ways to report it.
//
// The flags are parsed here for every front end that runs these commands
// (`neardup`, and `neardup-mpi`, which hands the resolved job to its own
// runner), so that both accept the same flags with the same help text.
#ifndef NEARDUP_APPS_CLI_NEAR_DUPLICATE_COMMANDS_H_
#define NEARDUP_APPS_CLI_NEAR_DUPLICATE_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "common_options.h"
#include "neardup/clustering.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "sink_option.h"
#include "table_format_option.h"

namespace neardup::cli {

// Which of the three commands runs.
enum class NearDuplicateOutput { kPairs, kClusters, kDedup };

// What the flags of one command resolve to, validated.
struct NearDuplicateJob {
  NearDuplicateOutput kind = NearDuplicateOutput::kPairs;
  Recipe recipe;
  NearDuplicateOptions options;
  ClusterRule rule = ClusterRule::kLeader;
  KeepRule keep = KeepRule::kFirst;
  InputFlags input;
  RunFlags run;
  DeviceFlags device;
  std::string method;  // as given ("minhash" or "simhash"), for the summary
  bool explain = false;
  bool profile = false;  // --profile: stage times and memory on stderr
  std::string output = "-";
  SinkFlags sink;          // pairs and clusters: --sink URL
  TableFormatFlag format;  // pairs and clusters: --format jsonl|csv|tsv
};

// Runs a resolved job; returns the exit code.
using NearDuplicateRunner = std::function<int(const NearDuplicateJob&)>;

// Registers the three subcommands; `*run` is set to the chosen one's action,
// and `*chosen` (where not null) to true when one of them is chosen. An
// empty `runner` runs the job in this process (RunNearDuplicateJob).
void RegisterNearDuplicateCommands(CLI::App* app, std::function<int()>* run,
                                   NearDuplicateRunner runner = {}, bool* chosen = nullptr);

// The single-process run of a job.
int RunNearDuplicateJob(const NearDuplicateJob& job);

// --explain's report on stderr: the index parameters and candidate counts.
void ExplainNearDuplicates(const NearDuplicateOptions& options, const Recipe& recipe,
                           const NearDuplicateReport& report);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_NEAR_DUPLICATE_COMMANDS_H_
