#include "sink_option.h"

#include <cstdio>

#include "exit_codes.h"

namespace neardup::cli {

void SinkFlags::Register(CLI::App* command) {
  command
      ->add_option("--sink", url,
                   "Also store the results in PostgreSQL: postgresql://[user[:password]@]host"
                   "[:port]/db (missing parts from PGHOST, PGUSER, PGPASSWORD, ~/.pgpass...); "
                   "without --output nothing is printed (docs/POSTGRESQL.md)")
      ->check([](const std::string& value) -> std::string {
        if (IsResultSinkUrl(value)) return "";
        return "--sink (\"" + RedactUrlPassword(value) +
               "\") must be a postgresql:// or postgres:// URL";
      });
}

void SinkFlags::Parsed(const CLI::App& command) { output_given = command.count("--output") > 0; }

int SendToSink(const SinkFlags& flags, const std::string& label, bool quiet,
               const std::function<Result<SinkStats>(ResultSink&)>& send) {
  ResultSinkOptions options;
  options.label = label;
  Result<std::unique_ptr<ResultSink>> sink = OpenResultSink(flags.url, options);
  if (!sink.ok()) return ReportError(sink.status());
  Result<SinkStats> stats = send(**sink);
  if (!stats.ok()) return ReportError(stats.status());
  if (!quiet) {
    std::fprintf(stderr,
                 "neardup: sink %s: %llu rows written, %llu deleted; lists replaced %llu, "
                 "removed %llu, unchanged %llu\n",
                 RedactUrlPassword(flags.url).c_str(),
                 static_cast<unsigned long long>(stats->rows_written),
                 static_cast<unsigned long long>(stats->rows_deleted),
                 static_cast<unsigned long long>(stats->documents_replaced),
                 static_cast<unsigned long long>(stats->documents_removed),
                 static_cast<unsigned long long>(stats->documents_unchanged));
  }
  return kExitOk;
}

}  // namespace neardup::cli
