// AddDocuments: the fingerprint pipeline feeding batched collection commits.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
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
  // Every id of this call: one commit cannot hold an id twice, and a later
  // commit would silently turn the repeat into a modification.
  std::unordered_set<std::string> ids_seen;
  std::vector<std::string> texts;  // owned by the batch being committed
  std::vector<IncomingDocument> batch;
  size_t batch_bytes = 0;
  // The limits of the commit being filled (they grow with the collection).
  size_t limit_documents = 0;
  size_t limit_bytes = 0;
  auto set_limits = [&] {
    const double grown = options.commit_growth *
                         static_cast<double>(collection.index().num_documents()) /
                         static_cast<double>(std::max<size_t>(1, options.commit_documents));
    const double factor = std::max(1.0, grown);
    limit_documents = static_cast<size_t>(static_cast<double>(options.commit_documents) * factor);
    limit_bytes =
        std::max(options.commit_bytes,
                 std::min(options.max_commit_bytes,
                          static_cast<size_t>(static_cast<double>(options.commit_bytes) * factor)));
  };
  set_limits();

  auto commit = [&]() -> Status {
    if (batch.empty()) return Status::Ok();
    // The views into `texts` are set only now, once the vector stops
    // growing (growing moves the strings, and a moved short string lives at
    // a new address).
    for (size_t i = 0; i < batch.size(); ++i) batch[i].text = texts[i];
    NEARDUP_ASSIGN_OR_RETURN(CommitResult result, collection.Commit(batch, {}));
    local.added += result.added;
    local.modified += result.modified;
    local.unchanged += result.unchanged;
    ++local.commits;
    if (options.on_commit) options.on_commit(result);
    batch.clear();
    texts.clear();
    batch_bytes = 0;
    set_limits();
    return Status::Ok();
  };

  Status status = RunFingerprintPipeline(
      reader, *fingerprinter, FingerprintPipelineOptions{},
      [&](std::span<const Document> docs, std::span<const Fingerprint> fingerprints) -> Status {
        // Document by document, so a commit holds at most its limits even
        // when the pipeline hands over a larger batch.
        for (size_t i = 0; i < docs.size(); ++i) {
          if (!ids_seen.insert(docs[i].id).second) {
            ++local.duplicate_ids;
            if (options.on_duplicate_id) options.on_duplicate_id(docs[i]);
            continue;
          }
          texts.push_back(docs[i].text);
          batch_bytes += docs[i].text.size();
          // The catalog's name is the original file (a WARC record's file,
          // not its URI); for text and JSONL the id is all there is.
          const std::string& name = docs[i].source.empty() ? docs[i].id : docs[i].source;
          batch.push_back({docs[i].id,
                           name,
                           {},
                           fingerprints[i].chunks,
                           fingerprints[i].simhash,
                           docs[i].format});
          if (batch.size() >= limit_documents || batch_bytes >= limit_bytes) {
            NEARDUP_RETURN_IF_ERROR(commit());
          }
        }
        return Status::Ok();
      },
      &local.fingerprint);
  if (status.ok()) status = commit();
  if (stats != nullptr) *stats = local;
  return status;
}

}  // namespace neardup
