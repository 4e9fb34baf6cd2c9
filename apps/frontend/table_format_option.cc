#include "table_format_option.h"

namespace neardup::cli {

void TableFormatFlag::Register(CLI::App* command) {
  command
      ->add_option(
          "--format", name,
          "jsonl (one JSON object per line), csv (RFC 4180) or tsv (tabs; \\t \\n \\r \\\\ "
          "escaped), the tables with a header line")
      ->check(CLI::IsMember({"jsonl", "csv", "tsv"}))
      ->capture_default_str();
}

}  // namespace neardup::cli
