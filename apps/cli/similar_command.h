// `neardup similar`: top-N most similar documents of every document of a collection.
#ifndef NEARDUP_APPS_CLI_SIMILAR_COMMAND_H_
#define NEARDUP_APPS_CLI_SIMILAR_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers the subcommand; `*run` is set to its action, and `*chosen`
// (where not null) to true, when it is chosen.
void RegisterSimilarCommand(CLI::App* app, std::function<int()>* run, bool* chosen = nullptr);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_SIMILAR_COMMAND_H_
