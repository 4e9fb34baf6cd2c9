// `neardup index create|add|remove|compact|stats`: manage a collection (neardup/collection.h).
#ifndef NEARDUP_APPS_CLI_INDEX_COMMAND_H_
#define NEARDUP_APPS_CLI_INDEX_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers the subcommand; `*run` is set to its action when it is chosen.
void RegisterIndexCommand(CLI::App* app, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_INDEX_COMMAND_H_
