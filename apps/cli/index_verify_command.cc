#include "index_verify_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "exit_codes.h"
#include "neardup/collection.h"

namespace neardup::cli {
namespace {

struct VerifyFlags {
  std::string dir;
  bool quiet = false;
};

int RunVerify(const VerifyFlags& flags) {
  // Read-only and without the writer lock: verifying needs no write access.
  Collection::OpenOptions options;
  options.verify_index = false;  // Verify checks it, and names what it finds
  Result<std::unique_ptr<Collection>> collection = Collection::Open(flags.dir, options);
  if (!collection.ok()) return ReportError(collection.status());
  Status status = (*collection)->Verify();
  if (!status.ok()) return ReportError(status);
  if (!flags.quiet) {
    Result<CollectionStats> stats = (*collection)->Stats();
    if (!stats.ok()) return ReportError(stats.status());
    std::fprintf(stderr, "neardup: %s is sound: %llu documents, %llu segments, generation %llu\n",
                 flags.dir.c_str(), static_cast<unsigned long long>(stats->documents),
                 static_cast<unsigned long long>(stats->segments),
                 static_cast<unsigned long long>(stats->generation));
  }
  return kExitOk;
}

}  // namespace

void RegisterIndexVerifyCommand(CLI::App* index, std::function<int()>* run) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* v = index->add_subcommand(
      "verify",
      "Check every file of a collection (checksums, catalog, index rebuilt from the segments); "
      "exit 4 naming the damaged file");
  v->add_option("dir", flags->dir, "Collection directory")->required();
  v->add_flag("--quiet,-q", flags->quiet, "No summary on stderr");
  v->callback([flags, run] { *run = [flags] { return RunVerify(*flags); }; });
}

}  // namespace neardup::cli
