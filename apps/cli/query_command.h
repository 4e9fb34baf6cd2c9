// `neardup query`: check documents against a collection without adding them.
#ifndef NEARDUP_APPS_CLI_QUERY_COMMAND_H_
#define NEARDUP_APPS_CLI_QUERY_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers the subcommand; `*run` is set to its action when it is chosen.
void RegisterQueryCommand(CLI::App* app, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_QUERY_COMMAND_H_
