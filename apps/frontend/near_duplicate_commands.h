// `neardup pairs`, `neardup clusters` and `neardup dedup`: one flow (read,
// fingerprint, find verified pairs) with three ways to report it.
#ifndef NEARDUP_APPS_CLI_NEAR_DUPLICATE_COMMANDS_H_
#define NEARDUP_APPS_CLI_NEAR_DUPLICATE_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

void RegisterNearDuplicateCommands(CLI::App* app, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_NEAR_DUPLICATE_COMMANDS_H_
