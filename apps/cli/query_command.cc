#include "query_command.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "neardup/format/wire_format.h"
#include "output.h"
#include "table_format_option.h"

namespace neardup::cli {
namespace {

struct QueryFlags {
  std::string dir;
  RecipeFlags recipe;
  bool recipe_given = false;
  InputFlags input;
  RunFlags run;
  size_t top = 10;
  double min = 0.1;
  size_t passages = 3;
  bool passages_given = false;
  std::string output = "-";
  TableFormatFlag format;
};

int RunQuery(const QueryFlags& flags) {
  auto thread_limit = flags.run.LimitThreads();
  Result<std::unique_ptr<Collection>> collection = Collection::Open(flags.dir, {});
  if (!collection.ok()) return ReportError(collection.status());
  if (flags.recipe_given) {
    Result<Recipe> recipe = flags.recipe.Resolve();
    if (!recipe.ok()) return ReportError(recipe.status());
    Status same = (*collection)->CheckRecipe(*recipe);
    if (!same.ok()) return ReportError(same);
  }
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      CreateCollectionFingerprinter(**collection);
  if (!fingerprinter.ok()) return ReportError(fingerprinter.status());
  SkipReporter skips(flags.run.quiet);
  Result<std::unique_ptr<DocumentReader>> reader = OpenInputs(flags.input, &skips);
  if (!reader.ok()) return ReportError(reader.status());
  Result<OutputFile> output = OutputFile::Open(flags.output, flags.input.inputs);
  if (!output.ok()) return ReportError(output.status());

  QueryOptions options;
  options.top_n = flags.top;
  options.min_similarity = flags.min;
  // Passages by default where the texts are stored; asked for explicitly
  // on a --no-texts collection they are an error (QueryDocument's).
  options.passages_top =
      (flags.passages_given || (*collection)->stores_texts()) ? flags.passages : 0;
  Status status;
  Document doc;
  std::string line;
  const std::optional<format::TableFormat> table = flags.format.table();
  if (table) {
    format::AppendQueryTableHeader(&line, *table);
    status = output->Write(line);
  }
  while (status.ok()) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok()) {
      status = next.status();
      break;
    }
    if (!*next) break;
    Result<QueryResult> result = QueryDocument(**collection, **fingerprinter, doc.text, options);
    if (!result.ok()) {
      status = result.status();
      break;
    }
    line.clear();
    if (table) {
      format::AppendQueryTableRows(&line, doc.id, *result, options.passages_top, *table);
    } else {
      format::AppendQueryResultLine(&line, doc.id, *result, options.passages_top);
    }
    status = output->Write(line);
  }
  Status closed = output->Finish(ReadingSucceeded(status, flags.run, skips));
  if (status.ok()) status = closed;
  return ExitCodeAfterReading(status, flags.run, skips);
}

}  // namespace

void RegisterQueryCommand(CLI::App* app, std::function<int()>* run) {
  auto flags = std::make_shared<QueryFlags>();
  CLI::App* command = app->add_subcommand(
      "query",
      "Check documents against a collection without adding them: one JSON line per input "
      "document, {\"query\", \"chunks\", \"matches\": [{\"b\", \"a_in_b\", \"b_in_a\"}]}, best "
      "first; a_in_b is the fraction of the query found in b. The best --passages matches also get "
      "\"passages\": [{\"query\": [begin, end], \"match\": [begin, end]}], BYTE offsets "
      "(half-open) into the original UTF-8 of the query and of the stored match");
  command->add_option("dir", flags->dir, "Collection directory")->required();
  flags->recipe.Register(command);
  flags->input.Register(command);
  flags->run.Register(command);
  command->add_option("--top", flags->top, "Matches per query document")
      ->capture_default_str()
      ->check(UnsignedIn(1, uint64_t{1} << 32));
  command->add_option("--min", flags->min, "Least max(a_in_b, b_in_a) reported")
      ->capture_default_str()
      ->check(RealIn(0.0, 1.0));
  command
      ->add_option("--passages", flags->passages,
                   "Matches (best first) that get their matching passages; 0: none. Needs "
                   "stored texts (default 3, or 0 on a --no-texts collection)")
      ->capture_default_str()
      ->check(UnsignedIn(0, uint64_t{1} << 32));
  command->add_option("--output,-o", flags->output, "Output file (- for stdout)")
      ->capture_default_str();
  RegisterNoFsyncFlag(command);
  flags->format.Register(command);
  command->callback([flags, run, command] {
    // --preset/--recipe only check that the collection was built with them.
    flags->recipe_given = command->count("--preset") + command->count("--recipe") > 0;
    flags->passages_given = command->count("--passages") > 0;
    *run = [flags] { return RunQuery(*flags); };
  });
}

}  // namespace neardup::cli
