// The --format option of `pairs`, `clusters`, `similar` and `query`: JSON
// lines (the default) or a table, CSV (RFC 4180) or TSV, with a header line
// (neardup/format/wire_format.h has the columns).
#ifndef NEARDUP_APPS_CLI_TABLE_FORMAT_OPTION_H_
#define NEARDUP_APPS_CLI_TABLE_FORMAT_OPTION_H_

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "neardup/format/wire_format.h"

namespace neardup::cli {

struct TableFormatFlag {
  std::string name = "jsonl";

  void Register(CLI::App* command);
  // The table format; nullopt for JSON lines.
  std::optional<format::TableFormat> table() const { return format::ParseTableFormat(name); }
};

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_TABLE_FORMAT_OPTION_H_
