// `neardup fingerprint`: one JSON line of sketches per input document.
#ifndef NEARDUP_APPS_CLI_FINGERPRINT_COMMAND_H_
#define NEARDUP_APPS_CLI_FINGERPRINT_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers the subcommand; `*run` is set to its action when it is chosen.
void RegisterFingerprintCommand(CLI::App* app, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_FINGERPRINT_COMMAND_H_
