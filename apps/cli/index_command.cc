#include "index_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common_options.h"
#include "exit_codes.h"
#include "index_list_command.h"
#include "index_verify_command.h"
#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "open_collection.h"
#include "progress.h"

namespace neardup::cli {
namespace {

struct CreateFlags {
  std::string dir;
  RecipeFlags recipe;
  uint32_t max_df = CollectionOptions{}.max_document_frequency;
  bool no_texts = false;
};

struct AddFlags {
  std::string dir;
  InputFlags input;
  RunFlags run;
  WaitFlags wait;
  size_t commit_documents = AddDocumentsOptions{}.commit_documents;
  double commit_growth = AddDocumentsOptions{}.commit_growth;
};

struct RemoveFlags {
  std::string dir;
  std::vector<std::string> ids;
  bool quiet = false;
  WaitFlags wait;
};

struct DirFlags {
  std::string dir;
  bool quiet = false;
  WaitFlags wait;
};

struct MaintainFlags {
  DirFlags dir;
  bool full = false;
};

int RunCreate(const CreateFlags& flags) {
  Result<Recipe> recipe = flags.recipe.Resolve();
  if (!recipe.ok()) return ReportError(recipe.status());
  // A file there is a place that cannot hold a collection (exit 3), not a
  // usage error; a non-empty directory is refused by Create (exit 2).
  std::error_code ec;
  if (std::filesystem::exists(flags.dir, ec) && !std::filesystem::is_directory(flags.dir, ec)) {
    return ReportError(IoError("cannot create a collection at " + flags.dir +
                               ": it exists and is not a directory"));
  }
  CollectionOptions options;
  options.max_document_frequency = flags.max_df;
  options.store_texts = !flags.no_texts;
  Status status = Collection::Create(flags.dir, *recipe, options);
  if (!status.ok()) return ReportError(status);
  std::fprintf(stderr, "neardup: created collection %s with recipe %s (%s)\n", flags.dir.c_str(),
               RecipeId(*recipe).c_str(), recipe->name.c_str());
  return kExitOk;
}

int RunAdd(const AddFlags& flags) {
  auto thread_limit = flags.run.LimitThreads();
  std::unique_ptr<Collection> collection;
  if (int code = OpenForWriting(flags.dir, flags.wait, &collection); code != kExitOk) return code;
  SkipReporter skips(flags.run.quiet);
  // `index add C C` (or a corpus directory holding C) must not index the
  // collection's own files.
  Result<std::unique_ptr<DocumentReader>> reader =
      OpenInputs(flags.input, &skips, false,
                 {{flags.dir, "the collection being added to (its own files are not indexed)"}});
  if (!reader.ok()) return ReportError(reader.status());
  AddDocumentsOptions options;
  options.commit_documents = flags.commit_documents;
  options.commit_growth = flags.commit_growth;
  options.on_duplicate_id = [&skips](const Document& doc) {
    skips.Report(SkippedRecord{"", 0, doc.id,
                               "duplicate id: an earlier record of this run has it (the first "
                               "record of an id is added)"});
  };
  uint64_t acknowledged = 0;
  options.on_commit = [&](const CommitResult& result) {
    acknowledged += result.added + result.modified + result.unchanged;
  };
  AddDocumentsStats stats;
  Status status = AddDocuments(**reader, *collection, options, &stats);
  if (!flags.run.quiet) {
    std::fprintf(stderr,
                 "neardup: %llu documents read: %llu added, %llu modified, %llu unchanged, %llu "
                 "duplicate ids not added, in %llu commits; %llu other records skipped\n",
                 static_cast<unsigned long long>(stats.fingerprint.documents),
                 static_cast<unsigned long long>(stats.added),
                 static_cast<unsigned long long>(stats.modified),
                 static_cast<unsigned long long>(stats.unchanged),
                 static_cast<unsigned long long>(stats.duplicate_ids),
                 static_cast<unsigned long long>(stats.commits),
                 static_cast<unsigned long long>(skips.count() - stats.duplicate_ids));
  }
  if (!status.ok() && acknowledged > 0) {
    std::fprintf(stderr, "neardup: the %llu documents committed before the error are kept\n",
                 static_cast<unsigned long long>(acknowledged));
  }
  return ExitCodeAfterReading(status, flags.run, skips);
}

int RunRemove(const RemoveFlags& flags) {
  std::unique_ptr<Collection> collection;
  if (int code = OpenForWriting(flags.dir, flags.wait, &collection); code != kExitOk) return code;
  Result<CommitResult> result = collection->Commit({}, flags.ids);
  if (!result.ok()) return ReportError(result.status());
  if (!flags.quiet) {
    std::fprintf(stderr, "neardup: removed %llu documents\n",
                 static_cast<unsigned long long>(result->removed));
  }
  return kExitOk;
}

int RunCompact(const DirFlags& flags) {
  std::unique_ptr<Collection> collection;
  if (int code = OpenForWriting(flags.dir, flags.wait, &collection); code != kExitOk) return code;
  Status status = collection->Compact();
  if (!status.ok()) return ReportError(status);
  if (!flags.quiet) std::fprintf(stderr, "neardup: compacted %s\n", flags.dir.c_str());
  return kExitOk;
}

// The index merges of Collection::MaintainIndex: the policy's (as a commit's
// background merges leave them), or with --full all tiers into one, for a
// collection searched much more than it is committed to.
int RunMaintain(const MaintainFlags& flags) {
  std::unique_ptr<Collection> collection;
  if (int code = OpenForWriting(flags.dir.dir, flags.dir.wait, &collection); code != kExitOk) {
    return code;
  }
  const uint64_t tiers = collection->index().num_tiers();
  Status status = collection->MaintainIndex({.full = flags.full});
  if (!status.ok()) return ReportError(status);
  if (!flags.dir.quiet) {
    std::fprintf(stderr, "neardup: %s: index tiers %llu -> %llu\n", flags.dir.dir.c_str(),
                 static_cast<unsigned long long>(tiers),
                 static_cast<unsigned long long>(collection->index().num_tiers()));
  }
  return kExitOk;
}

int RunStats(const DirFlags& flags) {
  Result<std::unique_ptr<Collection>> collection = Collection::Open(flags.dir, {});
  if (!collection.ok()) return ReportError(collection.status());
  Result<CollectionStats> s = (*collection)->Stats();
  if (!s.ok()) return ReportError(s.status());
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  const double per_posting = s->index_postings == 0 ? 0.0
                                                    : static_cast<double>(s->index_bytes) /
                                                          static_cast<double>(s->index_postings);
  std::printf(
      "{\"recipe\":\"%s\",\"documents\":%llu,\"empty_documents\":%llu,\"segments\":%llu,"
      "\"segment_rows\":%llu,\"dead_rows\":%llu,\"segment_bytes\":%llu,\"index_keys\":%llu,"
      "\"index_postings\":%llu,\"index_bytes\":%llu,\"index_bytes_per_posting\":%.3f,"
      "\"max_document_frequency\":%u,\"boilerplate_keys\":%llu,\"catalog_bytes\":%llu,"
      "\"memory_bytes\":%llu,\"generation\":%llu,\"similarity_rows\":%llu,"
      "\"similarity_dirty\":%llu,\"similarity_added\":%llu,\"index_tiers\":%llu,"
      "\"index_dead_postings\":%llu}\n",
      (*collection)->recipe_id().c_str(), u(s->documents), u(s->empty_documents), u(s->segments),
      u(s->segment_rows), u(s->dead_rows), u(s->segment_bytes), u(s->index_keys),
      u(s->index_postings), u(s->index_bytes), per_posting, s->max_document_frequency,
      u(s->boilerplate_keys), u(s->catalog_bytes), u(s->memory_bytes), u(s->generation),
      u(s->similarity_rows), u(s->similarity_dirty), u(s->similarity_added), u(s->index_tiers),
      u(s->index_dead_postings));
  return kExitOk;
}

}  // namespace

void RegisterIndexCommand(CLI::App* app, std::function<int()>* run) {
  CLI::App* index = app->add_subcommand(
      "index", "Manage a persistent collection for containment search (plagiarism, reuse)");
  index->require_subcommand(1);

  auto create = std::make_shared<CreateFlags>();
  CLI::App* c = index->add_subcommand("create", "Create an empty collection in DIR");
  c->add_option("dir", create->dir, "Collection directory (must not exist or be empty)")
      ->required();
  create->recipe.Register(c);
  c->add_option("--max-df", create->max_df,
                "Chunks found in more than this many documents are ignored for scoring "
                "(boilerplate); 0: no cap")
      ->capture_default_str()
      ->check(UnsignedIn(0, UINT32_MAX));
  c->add_flag("--no-texts", create->no_texts,
              "Do not store document texts (saves space; no matching passages)");
  c->callback([create, run] { *run = [create] { return RunCreate(*create); }; });

  auto add = std::make_shared<AddFlags>();
  CLI::App* a = index->add_subcommand(
      "add", "Add documents; an existing id with changed content is a modification");
  a->add_option("dir", add->dir, "Collection directory")->required();
  add->input.Register(a);
  add->run.Register(a);
  add->wait.Register(a);
  a->add_option("--commit-every", add->commit_documents,
                "Documents per commit, at least (each commit is durable when acknowledged)")
      ->capture_default_str()
      ->check(UnsignedIn(1, uint64_t{1} << 32));
  a->add_option("--commit-growth", add->commit_growth,
                "Commits also grow to this fraction of the indexed documents (each commit "
                "rewrites the index, so a bulk load stays linear); 0: fixed-size commits")
      ->capture_default_str()
      ->check(RealIn(0.0, 100.0));
  a->callback([add, run] { *run = [add] { return RunAdd(*add); }; });

  auto remove = std::make_shared<RemoveFlags>();
  CLI::App* r = index->add_subcommand("remove", "Remove documents by id (one commit)");
  r->add_option("dir", remove->dir, "Collection directory")->required();
  r->add_option("ids", remove->ids, "Document ids")->required();
  r->add_flag("--quiet,-q", remove->quiet, "No summary on stderr");
  remove->wait.Register(r);
  r->callback([remove, run] { *run = [remove] { return RunRemove(*remove); }; });

  auto compact = std::make_shared<DirFlags>();
  CLI::App* k = index->add_subcommand("compact", "Merge segments and drop removed documents");
  k->add_option("dir", compact->dir, "Collection directory")->required();
  k->add_flag("--quiet,-q", compact->quiet, "No summary on stderr");
  compact->wait.Register(k);
  k->callback([compact, run] { *run = [compact] { return RunCompact(*compact); }; });

  auto maintain = std::make_shared<MaintainFlags>();
  CLI::App* m = index->add_subcommand(
      "maintain",
      "Run the index merges the tier policy asks for (--full: merge all tiers into one)");
  m->add_option("dir", maintain->dir.dir, "Collection directory")->required();
  m->add_flag("--full", maintain->full,
              "Merge all index tiers into one and drop removed documents' postings (a "
              "collection searched much more than it is committed to searches one index)");
  m->add_flag("--quiet,-q", maintain->dir.quiet, "No summary on stderr");
  maintain->dir.wait.Register(m);
  m->callback([maintain, run] { *run = [maintain] { return RunMaintain(*maintain); }; });

  auto stats = std::make_shared<DirFlags>();
  CLI::App* s = index->add_subcommand("stats", "Print counts, sizes and memory as one JSON line");
  s->add_option("dir", stats->dir, "Collection directory")->required();
  s->callback([stats, run] { *run = [stats] { return RunStats(*stats); }; });

  RegisterIndexVerifyCommand(index, run);
  RegisterIndexListCommand(index, run);
}

}  // namespace neardup::cli
