// AddDocuments: the fingerprint pipeline feeding batched collection commits.
#include <memory>
#include <string>
#include <vector>

#include "neardup/containment_engine.h"

namespace neardup {

Result<std::unique_ptr<Fingerprinter>> CreateCollectionFingerprinter(const Collection& collection) {
  SketchSelection selection;
  selection.simhash = true;
  selection.chunks = true;
  return CreateCpuFingerprinter(collection.recipe(), selection);
}

Status AddDocuments(DocumentReader& reader, Collection& collection,
                    const AddDocumentsOptions& options, AddDocumentsStats* stats) {
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<Fingerprinter> fingerprinter,
                           CreateCollectionFingerprinter(collection));
  AddDocumentsStats local;
  std::vector<std::string> texts;  // owned by the batch being committed
  std::vector<IncomingDocument> batch;
  size_t batch_bytes = 0;

  auto commit = [&]() -> Status {
    if (batch.empty()) return Status::Ok();
    NEARDUP_ASSIGN_OR_RETURN(CommitResult result, collection.Commit(batch, {}));
    local.added += result.added;
    local.modified += result.modified;
    local.unchanged += result.unchanged;
    ++local.commits;
    if (options.on_commit) options.on_commit(result);
    batch.clear();
    texts.clear();
    batch_bytes = 0;
    return Status::Ok();
  };

  Status status = RunFingerprintPipeline(
      reader, *fingerprinter, FingerprintPipelineOptions{},
      [&](std::span<const Document> docs, std::span<const Fingerprint> fingerprints) -> Status {
        for (size_t i = 0; i < docs.size(); ++i) {
          texts.push_back(docs[i].text);
          batch_bytes += docs[i].text.size();
        }
        // The views into `texts` are set just before the commit, once the
        // vector stops growing (growing moves the strings, and a moved short
        // string lives at a new address).
        for (size_t i = 0; i < docs.size(); ++i) {
          batch.push_back(
              {docs[i].id, docs[i].id, {}, fingerprints[i].chunks, fingerprints[i].simhash});
        }
        if (batch.size() >= options.commit_documents || batch_bytes >= options.commit_bytes) {
          for (size_t i = 0; i < batch.size(); ++i) batch[i].text = texts[i];
          return commit();
        }
        return Status::Ok();
      },
      &local.fingerprint);
  if (status.ok()) {
    for (size_t i = 0; i < batch.size(); ++i) batch[i].text = texts[i];
    status = commit();
  }
  if (stats != nullptr) *stats = local;
  return status;
}

}  // namespace neardup
