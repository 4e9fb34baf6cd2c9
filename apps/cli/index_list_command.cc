#include "index_list_command.h"

#include <memory>
#include <string>
#include <vector>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/collection.h"
#include "neardup/json_writer.h"
#include "output.h"

namespace neardup::cli {
namespace {

struct ListFlags {
  std::string dir;
  std::string output = "-";
};

void AppendDocumentLine(std::string* out, const DocumentInfo& info) {
  out->append("{\"id\":");
  AppendJsonString(out, info.id);
  out->append(",\"name\":");
  AppendJsonString(out, info.name);
  out->append(",\"format\":");
  AppendJsonString(out, info.format);
  out->append(",\"chunks\":" + std::to_string(info.num_chunks) + ",\"content_hash\":");
  AppendJsonString(out, info.content_hash);
  out->append(",\"added_at\":" + std::to_string(info.added_at) +
              ",\"modified_at\":" + std::to_string(info.modified_at) + "}\n");
}

int RunList(const ListFlags& flags) {
  // Read-only, without the writer lock; the index's checksum is not needed
  // to list the catalog.
  Collection::OpenOptions options;
  options.verify_index = false;
  Result<std::unique_ptr<Collection>> collection = Collection::Open(flags.dir, options);
  if (!collection.ok()) return ReportError(collection.status());
  Result<std::vector<DocumentInfo>> docs = (*collection)->ListDocuments();
  if (!docs.ok()) return ReportError(docs.status());
  Result<OutputFile> output = OutputFile::Open(flags.output);
  if (!output.ok()) return ReportError(output.status());
  Status status;
  std::string line;
  for (const DocumentInfo& info : *docs) {
    line.clear();
    AppendDocumentLine(&line, info);
    status = output->Write(line);
    if (!status.ok()) break;
  }
  Status closed = output->Finish(status.ok());
  if (status.ok()) status = closed;
  return status.ok() ? kExitOk : ReportError(status);
}

}  // namespace

void RegisterIndexListCommand(CLI::App* index, std::function<int()>* run) {
  auto flags = std::make_shared<ListFlags>();
  CLI::App* l = index->add_subcommand(
      "list",
      "Print the collection's documents as JSON lines: id, original file name and format, "
      "chunks, content hash, added and modified times");
  l->add_option("dir", flags->dir, "Collection directory")->required();
  l->add_option("--output,-o", flags->output, "Output file ('-': stdout)")->capture_default_str();
  RegisterNoFsyncFlag(l);
  l->callback([flags, run] { *run = [flags] { return RunList(*flags); }; });
}

}  // namespace neardup::cli
