#include "similar_command.h"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "neardup/format/wire_format.h"
#include "open_collection.h"
#include "output.h"
#include "sink_option.h"
#include "table_format_option.h"

namespace neardup::cli {
namespace {

struct SimilarFlags {
  std::string dir;
  size_t top = 100;
  double min = 0.1;
  TableFormatFlag format;
  std::string output = "-";
  bool full = false;
  RunFlags run;
  WaitFlags wait;
  SinkFlags sink;
};

int RunSimilar(const SimilarFlags& flags) {
  auto thread_limit = flags.run.LimitThreads();
  SimilarOptions options;
  options.top_n = flags.top;
  options.min_similarity = flags.min;
  options.force_full = flags.full;
  // A stored table that is up to date is printed from a read-only open: no
  // writer lock, no write permission needed.
  std::unique_ptr<Collection> collection;
  {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(flags.dir, {});
    if (!reader.ok()) return ReportError(reader.status());
    collection = *std::move(reader);
  }
  Result<bool> current = SimilaritiesAreCurrent(*collection, options);
  if (!current.ok()) return ReportError(current.status());
  SimilarStats stats;
  Status status;
  if (!*current) {
    // The stored table is stale: recompute it as the one writer (exit 6 when
    // another holds the collection, unless --wait).
    collection.reset();
    if (int code = OpenForWriting(flags.dir, flags.wait, &collection); code != kExitOk) return code;
    status = ComputeSimilarities(*collection, options, &stats);
    if (!status.ok()) return ReportError(status);
  }
  if (!flags.run.quiet && *current) {
    std::fprintf(stderr, "neardup: the stored similarities are up to date\n");
  } else if (!flags.run.quiet) {
    std::fprintf(stderr,
                 "neardup: %s: recomputed %llu documents, merged new scores into %llu "
                 "(%llu rows written, %llu postings, %llu boilerplate chunks skipped)\n",
                 stats.full ? "full recomputation" : "incremental update",
                 static_cast<unsigned long long>(stats.recomputed),
                 static_cast<unsigned long long>(stats.merged),
                 static_cast<unsigned long long>(stats.rows),
                 static_cast<unsigned long long>(stats.search.postings_visited),
                 static_cast<unsigned long long>(stats.search.boilerplate_chunks));
  }

  Result<std::vector<DocumentInfo>> docs = collection->ListDocuments();
  if (!docs.ok()) return ReportError(docs.status());
  std::map<uint32_t, std::string> ids;
  for (const DocumentInfo& info : *docs) ids[info.doc] = info.id;
  Result<std::vector<SimilarityRow>> rows = collection->ReadSimilarities();
  if (!rows.ok()) return ReportError(rows.status());
  if (!flags.sink.url.empty()) {
    std::vector<TopNRecord> records;
    records.reserve(rows->size());
    for (const SimilarityRow& row : *rows) {
      records.push_back({ids[row.a], ids[row.b], row.a_in_b, row.b_in_a});
    }
    int code = SendToSink(flags.sink, "similar " + flags.dir, flags.run.quiet,
                          [&](ResultSink& sink) { return sink.UpdateTopN(records); });
    if (code != kExitOk || !flags.sink.WriteLines()) return code;
  }
  Result<OutputFile> output = OutputFile::Open(flags.output);
  if (!output.ok()) return ReportError(output.status());

  const std::optional<format::TableFormat> table = flags.format.table();
  std::string line;
  if (table) {
    format::AppendSimilarityTableHeader(&line, *table);
    status = output->Write(line);
  }
  for (const SimilarityRow& row : *rows) {
    if (!status.ok()) break;
    line.clear();
    if (table) {
      format::AppendSimilarityTableRow(&line, ids[row.a], ids[row.b], row.a_in_b, row.b_in_a,
                                       *table);
    } else {
      format::AppendSimilarityLine(&line, ids[row.a], ids[row.b], row.a_in_b, row.b_in_a);
    }
    status = output->Write(line);
  }
  Status closed = output->Finish(status.ok());
  if (status.ok()) status = closed;
  if (!status.ok()) return ReportError(status);
  return kExitOk;
}

}  // namespace

void RegisterSimilarCommand(CLI::App* app, std::function<int()>* run, bool* chosen) {
  auto flags = std::make_shared<SimilarFlags>();
  CLI::App* command = app->add_subcommand(
      "similar",
      "Compute (incrementally when possible) and print every document's top-N most similar "
      "documents: {\"a\", \"b\", \"a_in_b\", \"b_in_a\"}, grouped by a, best first "
      "(score max(a_in_b, b_in_a)); a_in_b is the fraction of a's chunks found in b");
  command->add_option("dir", flags->dir, "Collection directory")->required();
  command->add_option("--top", flags->top, "Similar documents per document")
      ->capture_default_str()
      ->check(UnsignedIn(1, uint64_t{1} << 32));
  command->add_option("--min", flags->min, "Least max(a_in_b, b_in_a) reported")
      ->capture_default_str()
      ->check(RealIn(0.0, 1.0));
  flags->format.Register(command);
  command->add_option("--output,-o", flags->output, "Output file (- for stdout)")
      ->capture_default_str();
  RegisterNoFsyncFlag(command);
  command->add_flag("--full", flags->full, "Recompute everything, not only what changed");
  flags->run.Register(command);
  flags->wait.Register(command);
  flags->sink.Register(command);
  command->callback([flags, run, command, chosen] {
    if (chosen != nullptr) *chosen = true;
    flags->sink.Parsed(*command);
    *run = [flags] { return RunSimilar(*flags); };
  });
}

}  // namespace neardup::cli
