#include "report_command.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/clustering.h"
#include "neardup/collection.h"
#include "neardup/report.h"
#include "output.h"

namespace neardup::cli {
namespace {

std::string& CommandLine() {
  static std::string command_line;
  return command_line;
}

struct ReportFlags {
  std::string collection;
  std::string pairs;
  std::string clusters;
  size_t top = 10;
  double min = 0.1;
  std::string rule = "leader";
  std::string keep = "first";
  uint64_t max_text_kb = 64;
  size_t page_size = 100;
  std::string output = "-";
  RecipeFlags recipe;
  InputFlags input;
  RunFlags run;
};

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot be opened");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return content.str();
}

Result<ReportData> CollectionData(const ReportFlags& flags) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Collection> collection,
                           Collection::Open(flags.collection, {}));
  CollectionReportOptions options;
  options.top_n = flags.top;
  options.min_similarity = flags.min;
  return BuildCollectionReport(*collection, options);
}

Result<ReportData> NearDuplicateData(const ReportFlags& flags, SkipReporter* skips) {
  NearDuplicateReportOptions options;
  NEARDUP_ASSIGN_OR_RETURN(options.recipe, flags.recipe.Resolve());
  NEARDUP_ASSIGN_OR_RETURN(options.cluster_rule, ParseClusterRule(flags.rule));
  NEARDUP_ASSIGN_OR_RETURN(options.keep_rule, ParseKeepRule(flags.keep));
  NEARDUP_ASSIGN_OR_RETURN(std::string pair_lines, ReadWholeFile(flags.pairs));
  Result<std::vector<PairLine>> pairs = ParsePairLines(pair_lines);
  if (!pairs.ok()) return InvalidArgumentError(flags.pairs + ": " + pairs.status().message());
  std::vector<std::vector<std::string>> clusters;
  if (!flags.clusters.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(std::string cluster_lines, ReadWholeFile(flags.clusters));
    Result<std::vector<std::vector<std::string>>> parsed = ParseClusterLines(cluster_lines);
    if (!parsed.ok()) {
      return InvalidArgumentError(flags.clusters + ": " + parsed.status().message());
    }
    clusters = *std::move(parsed);
  }
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<DocumentReader> reader, OpenInputs(flags.input, skips));
  return BuildNearDuplicateReport(*reader, *pairs, clusters, options);
}

int RunReport(const ReportFlags& flags) {
  auto thread_limit = flags.run.LimitThreads();
  SkipReporter skips(flags.run.quiet);
  Result<ReportData> data =
      flags.collection.empty() ? NearDuplicateData(flags, &skips) : CollectionData(flags);
  if (!data.ok()) return ReportError(data.status());
  data->summary.command_line = CommandLine();
  if (data->summary.method.empty())
    data->summary.method = "near-duplicates (pairs read from " + flags.pairs + ")";

  ReportOptions options;
  options.max_text_bytes = static_cast<size_t>(flags.max_text_kb) << 10;
  options.page_size = flags.page_size;
  Result<std::string> html = RenderReport(*data, options);
  if (!html.ok()) return ReportError(html.status());

  Result<OutputFile> output = OutputFile::Open(flags.output, flags.input.inputs);
  if (!output.ok()) return ReportError(output.status());
  Status status = output->Write(*html);
  Status closed = output->Finish(ReadingSucceeded(status, flags.run, skips));
  if (status.ok()) status = closed;
  if (status.ok() && !flags.run.quiet) {
    std::fprintf(stderr, "neardup: report of %zu pairs, %zu clusters, %llu documents: %zu bytes\n",
                 data->pairs.size(), data->clusters.size(),
                 static_cast<unsigned long long>(data->summary.documents), html->size());
  }
  return ExitCodeAfterReading(status, flags.run, skips);
}

}  // namespace

void RememberCommandLine(int argc, char** argv) {
  std::string& line = CommandLine();
  line.clear();
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i > 0) line += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789-_./=:,+@%") == std::string_view::npos;
    if (plain) {
      line += arg;
      continue;
    }
    // Shell quoting, so the line can be pasted back.
    line += '\'';
    for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
}

void RegisterReportCommand(CLI::App* app, std::function<int()>* run) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* command = app->add_subcommand(
      "report",
      "Write one self-contained HTML page of a result: a collection's top-N lists "
      "(--collection DIR) or `neardup pairs` output and its inputs (--pairs FILE INPUT...)");
  command->add_option("--collection", flags->collection,
                      "Collection directory: report its top-N similar documents");
  command->add_option("--top", flags->top, "--collection: similar documents per document")
      ->capture_default_str()
      ->check(UnsignedIn(1, uint64_t{1} << 32));
  command->add_option("--min", flags->min, "--collection: least max(a_in_b, b_in_a)")
      ->capture_default_str()
      ->check(RealIn(0.0, 1.0));
  command->add_option("--pairs", flags->pairs,
                      "`neardup pairs` output (JSON lines) over the INPUTs given");
  command->add_option("--clusters", flags->clusters,
                      "`neardup clusters` output (default: formed from the pairs with --rule)");
  command
      ->add_option("--rule", flags->rule,
                   "--pairs without --clusters: leader or components, as `neardup clusters`")
      ->check(CLI::IsMember({"leader", "components"}))
      ->capture_default_str();
  command
      ->add_option("--keep", flags->keep, "Which member of a cluster is kept, as `neardup dedup`")
      ->check(CLI::IsMember({"first", "longest", "shortest"}))
      ->capture_default_str();
  command->add_option("--max-text-kb", flags->max_text_kb, "Texts longer than this are cut")
      ->capture_default_str()
      ->check(UnsignedIn(1, uint64_t{1} << 22));
  command->add_option("--page-size", flags->page_size, "Table rows per page")
      ->capture_default_str()
      ->check(UnsignedIn(1, 100000));
  command->add_option("--output,-o", flags->output, "The HTML file (- for stdout)")
      ->capture_default_str();
  RegisterNoFsyncFlag(command);
  flags->recipe.Register(command);
  flags->input.Register(command);
  command->get_option("inputs")->required(false);
  flags->run.Register(command);
  command->callback([flags, run, command] {
    const bool collection = !flags->collection.empty();
    if (collection == !flags->pairs.empty()) {
      throw CLI::ValidationError("report", "give either --collection DIR or --pairs FILE");
    }
    if (collection && !flags->input.inputs.empty()) {
      throw CLI::ValidationError("report", "--collection takes no INPUT");
    }
    if (!collection && flags->input.inputs.empty()) {
      throw CLI::ValidationError("report", "--pairs needs the INPUTs the pairs were found in");
    }
    for (const char* name : {"--top", "--min"}) {
      if (!collection && command->count(name) > 0) {
        throw CLI::ValidationError(name, "applies to --collection only");
      }
    }
    for (const char* name : {"--clusters", "--rule", "--keep"}) {
      if (collection && command->count(name) > 0) {
        throw CLI::ValidationError(name, "applies to --pairs only");
      }
    }
    *run = [flags] { return RunReport(*flags); };
  });
}

}  // namespace neardup::cli
