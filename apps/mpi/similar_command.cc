#include "similar_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common_options.h"
#include "distributed_similar.h"
#include "exit_codes.h"
#include "mpi_comm.h"
#include "neardup/collection.h"
#include "neardup/format/wire_format.h"
#include "output.h"
#include "parallel_output.h"
#include "table_format_option.h"

namespace neardup::mpi {
namespace {

struct SimilarFlags {
  std::string dir;
  size_t top = 100;
  double min = 0.1;
  cli::TableFormatFlag format;
  std::string output = "-";
  bool full = false;
  cli::RunFlags run;
};

// Opens `dir` read-only on every rank, at the same commit. Collective.
Result<std::unique_ptr<Collection>> OpenOnRanks(Comm& comm, const std::string& dir) {
  Result<std::unique_ptr<Collection>> collection = Collection::Open(dir, {});
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(collection.status()));
  const std::vector<uint64_t> generations = comm.AllGather((*collection)->generation());
  for (size_t r = 1; r < generations.size(); ++r) {
    if (generations[r] != generations[0]) {
      // A writer committed while the ranks opened it: their views differ.
      return FailedPreconditionError(
          "collection " + dir + " changed while the ranks opened it (generation " +
          std::to_string(generations[0]) + " on rank 0, " + std::to_string(generations[r]) +
          " on rank " + std::to_string(r) + "): run the job again");
    }
  }
  return collection;
}

// This rank's part of the output: its rows, with their external ids.
Result<std::string> FormatRows(const Collection& collection, const std::vector<SimilarityRow>& rows,
                               const std::optional<format::TableFormat>& table, bool header) {
  std::vector<uint32_t> docs;
  for (const SimilarityRow& row : rows) {
    docs.push_back(row.a);
    docs.push_back(row.b);
  }
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  NEARDUP_ASSIGN_OR_RETURN(auto ids, collection.ExternalIds(docs));
  std::string text;
  if (table && header) format::AppendSimilarityTableHeader(&text, *table);
  for (const SimilarityRow& row : rows) {
    if (table) {
      format::AppendSimilarityTableRow(&text, ids[row.a], ids[row.b], row.a_in_b, row.b_in_a,
                                       *table);
    } else {
      format::AppendSimilarityLine(&text, ids[row.a], ids[row.b], row.a_in_b, row.b_in_a);
    }
  }
  return text;
}

int RunSimilarOnRanks(const SimilarFlags& flags, const MpiFlags& mpi) {
  Comm comm(MPI_COMM_WORLD, mpi.RoundBytes());
  auto thread_limit = flags.run.LimitThreads();
  const auto started = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Collection>> collection = OpenOnRanks(comm, flags.dir);
  if (!collection.ok()) return ReportErrorOnRanks(collection.status(), comm.rank());
  SimilarOptions options;
  options.top_n = flags.top;
  options.min_similarity = flags.min;
  options.force_full = true;
  DistributedSimilarStats stats;
  // A round's partial counts: about 256 KiB of budget per query document.
  Result<std::vector<SimilarityRow>> rows =
      SimilarRowsOnRanks(comm, **collection, options, (mpi.memory_mb << 20) >> 18, &stats);
  if (!rows.ok()) return ReportErrorOnRanks(rows.status(), comm.rank());

  // The output is opened once the rows exist, as `neardup similar` does.
  std::optional<cli::OutputFile> output;
  Status status;
  if (comm.rank() == 0) {
    Result<cli::OutputFile> opened = cli::OutputFile::Open(flags.output);
    if (opened.ok()) {
      output.emplace(*std::move(opened));
    } else {
      status = opened.status();
    }
  }
  status = comm.AgreeOnStatus(status);
  if (!status.ok()) return ReportErrorOnRanks(status, comm.rank());
  Result<std::string> text =
      FormatRows(**collection, *rows, flags.format.table(), comm.rank() == 0);
  status = comm.AgreeOnStatus(text.status());
  if (status.ok()) status = WriteParts(comm, output ? &*output : nullptr, *text);
  Status closed;
  if (output) closed = output->Finish(status.ok());
  closed = comm.AgreeOnStatus(closed);
  if (status.ok()) status = closed;
  if (!status.ok()) return ReportErrorOnRanks(status, comm.rank());

  const uint64_t total_rows = comm.Sum(rows->size());
  const uint64_t postings = comm.Sum(stats.search.postings_visited);
  const uint64_t boilerplate = comm.Sum(stats.search.boilerplate_chunks);
  const uint64_t count_bytes = comm.Sum(stats.count_bytes);
  if (!flags.run.quiet && comm.rank() == 0) {
    std::fprintf(
        stderr,
        "neardup-mpi: full recomputation of %llu documents on %d ranks in %.2f s: %llu "
        "rows, %llu postings, %llu boilerplate chunk lookups skipped; %llu bytes of "
        "partial counts in %llu rounds\n",
        static_cast<unsigned long long>(stats.documents), comm.size(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
        static_cast<unsigned long long>(total_rows), static_cast<unsigned long long>(postings),
        static_cast<unsigned long long>(boilerplate), static_cast<unsigned long long>(count_bytes),
        static_cast<unsigned long long>(stats.rounds));
  }
  return cli::kExitOk;
}

}  // namespace

void RegisterSimilarCommand(CLI::App* app, std::function<int()>* run, const MpiFlags* mpi) {
  auto flags = std::make_shared<SimilarFlags>();
  CLI::App* command = app->add_subcommand(
      "similar",
      "Every document's top-N most similar documents of a collection, as `neardup similar` "
      "prints them, computed by all ranks (chunk-ID ranges); read-only: the table is not stored");
  command->add_option("dir", flags->dir, "Collection directory")->required();
  command->add_option("--top", flags->top, "Similar documents per document")
      ->capture_default_str()
      ->check(cli::UnsignedIn(1, uint64_t{1} << 32));
  command->add_option("--min", flags->min, "Least max(a_in_b, b_in_a) reported")
      ->capture_default_str()
      ->check(cli::RealIn(0.0, 1.0));
  flags->format.Register(command);
  command->add_option("--output,-o", flags->output, "Output file (- for stdout)")
      ->capture_default_str();
  cli::RegisterNoFsyncFlag(command);
  command->add_flag("--full", flags->full,
                    "Accepted for `neardup similar`'s command lines: neardup-mpi always computes "
                    "the full table");
  flags->run.Register(command);
  command->callback(
      [flags, run, mpi] { *run = [flags, mpi] { return RunSimilarOnRanks(*flags, *mpi); }; });
}

}  // namespace neardup::mpi
