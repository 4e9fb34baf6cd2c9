// The --sink URL option of `similar`, `pairs` and `clusters`: the results
// also go to a result sink (neardup/result_sink.h: PostgreSQL through COPY),
// one transaction per run. With --sink and without --output nothing is
// printed on standard output.
#ifndef NEARDUP_APPS_CLI_SINK_OPTION_H_
#define NEARDUP_APPS_CLI_SINK_OPTION_H_

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "neardup/result_sink.h"

namespace neardup::cli {

struct SinkFlags {
  std::string url;            // empty: no sink
  bool output_given = false;  // --output was on the command line

  void Register(CLI::App* command);
  // Call from the command's callback: records whether --output was given.
  void Parsed(const CLI::App& command);
  // Whether the lines go to --output (or stdout).
  bool WriteLines() const { return url.empty() || output_given; }
};

// Opens the sink named by flags.url, hands it to `send` and prints a summary
// on stderr (unless quiet). Returns an exit code; errors name the URL with
// its password redacted.
int SendToSink(const SinkFlags& flags, const std::string& label, bool quiet,
               const std::function<Result<SinkStats>(ResultSink&)>& send);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_SINK_OPTION_H_
