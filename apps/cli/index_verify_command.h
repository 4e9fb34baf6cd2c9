// `neardup index verify DIR`: the full check of a collection (every file's
// checksum, catalog against segments, the index against one rebuilt from
// the segments). Exit 0 when sound, 4 (data loss) naming the damaged file
// and what is wrong.
#ifndef NEARDUP_APPS_CLI_INDEX_VERIFY_COMMAND_H_
#define NEARDUP_APPS_CLI_INDEX_VERIFY_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers `verify` under the `index` subcommand.
void RegisterIndexVerifyCommand(CLI::App* index, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_INDEX_VERIFY_COMMAND_H_
