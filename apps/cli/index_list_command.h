// `neardup index list DIR`: the catalog's documents as JSON lines, one per
// live document by ascending number: its id, original file name and format
// (the format its text was extracted from, "" for text and JSONL), chunk
// count, content hash and times.
#ifndef NEARDUP_APPS_CLI_INDEX_LIST_COMMAND_H_
#define NEARDUP_APPS_CLI_INDEX_LIST_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

// Registers `list` under the `index` subcommand.
void RegisterIndexListCommand(CLI::App* index, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_INDEX_LIST_COMMAND_H_
