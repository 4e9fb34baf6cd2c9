// `neardup report`: one self-contained HTML page of a result (docs/REPORT.md),
// from a collection's top-N lists or from `neardup pairs` / `clusters`
// output and the inputs it came from. The page is built by the library
// (neardup/report.h); this is flag parsing only.
#ifndef NEARDUP_APPS_CLI_REPORT_COMMAND_H_
#define NEARDUP_APPS_CLI_REPORT_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers the subcommand; `*run` is set to its action when it is chosen.
void RegisterReportCommand(CLI::App* app, std::function<int()>* run);

// Keeps the command line as typed, for the report's summary. Called by main.
void RememberCommandLine(int argc, char** argv);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_REPORT_COMMAND_H_
