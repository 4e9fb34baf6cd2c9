#include "checkpoint_stages.h"

#include <array>
#include <string_view>

#include "mpi_comm.h"
#include "neardup/format/checksummed_file.h"
#include "neardup/format/fingerprint_set.h"

namespace neardup::mpi {
namespace {

constexpr std::string_view kPairsKind = "mpi-pairs";
constexpr std::string_view kLinesKind = "mpi-lines";

// A pair as stored: the fields one by one (SimilarPair has padding).
struct StoredPair {
  uint64_t a;
  uint64_t b;
  double similarity;
  int64_t distance;
};

Status Write(const std::string& path, std::string_view kind, std::string_view head,
             std::string_view body) {
  const std::array<std::string_view, 2> pieces = {head, body};
  return format::WriteChecksummedFile(path, kind, pieces);
}

// A file's payload was checksummed, so a malformed one is a bug or a file
// of another version: still reported, with the file's name.
Status Malformed(const std::string& path, const Status& status) {
  return DataLossError(path + ": " + status.message());
}

}  // namespace

Status SaveFingerprintStage(const Checkpoint& checkpoint, const FingerprintedCorpus& corpus,
                            uint64_t skipped) {
  std::string metadata;
  ByteWriter(&metadata).Put(skipped);
  return format::WriteFingerprintSetFile(checkpoint.RankFile(kFingerprintStage), corpus, metadata);
}

Status LoadFingerprintStage(const Checkpoint& checkpoint, FingerprintedCorpus* corpus,
                            uint64_t* skipped) {
  const std::string path = checkpoint.RankFile(kFingerprintStage);
  std::string metadata;
  NEARDUP_RETURN_IF_ERROR(format::ReadFingerprintSetFile(path, corpus, &metadata));
  ByteReader reader(metadata);
  Status status = reader.Get(skipped);
  if (!status.ok()) return Malformed(path, status);
  return Status::Ok();
}

Status SavePairsStage(const Checkpoint& checkpoint, const std::vector<SimilarPair>& pairs,
                      const NearDuplicateReport& report, const DistributedPairsStats& shuffle) {
  std::string head;
  ByteWriter writer(&head);
  for (uint64_t value :
       {report.candidates, report.exact_checks, shuffle.band_rounds, shuffle.key_bytes,
        shuffle.sketch_bytes, shuffle.candidate_bytes, shuffle.verified_pairs, shuffle.pair_bytes,
        shuffle.sketched_documents, shuffle.moved_candidates}) {
    writer.Put(value);
  }
  std::vector<StoredPair> stored;
  stored.reserve(pairs.size());
  for (const SimilarPair& pair : pairs) {
    stored.push_back({pair.a, pair.b, pair.similarity, pair.distance});
  }
  std::string body;
  ByteWriter(&body).PutVector(stored);
  return Write(checkpoint.RankFile(kPairsStage), kPairsKind, head, body);
}

Status LoadPairsStage(const Checkpoint& checkpoint, std::vector<SimilarPair>* pairs,
                      NearDuplicateReport* report, DistributedPairsStats* shuffle) {
  const std::string path = checkpoint.RankFile(kPairsStage);
  // Decoded from the file's mapping (no copy of the payload).
  return format::VisitChecksummedFile(path, kPairsKind, [&](std::string_view payload) -> Status {
    ByteReader reader(payload);
    Status status;
    for (uint64_t* value :
         {&report->candidates, &report->exact_checks, &shuffle->band_rounds, &shuffle->key_bytes,
          &shuffle->sketch_bytes, &shuffle->candidate_bytes, &shuffle->verified_pairs,
          &shuffle->pair_bytes, &shuffle->sketched_documents, &shuffle->moved_candidates}) {
      if (status.ok()) status = reader.Get(value);
    }
    std::vector<StoredPair> stored;
    if (status.ok()) status = reader.GetVector(&stored);
    if (status.ok() && !reader.done()) status = DataLossError("bytes after the pairs");
    if (!status.ok()) return Malformed(path, status);
    pairs->clear();
    pairs->reserve(stored.size());
    for (const StoredPair& s : stored) {
      pairs->push_back({s.a, s.b, s.similarity, static_cast<int>(s.distance)});
    }
    return Status::Ok();
  });
}

Status SaveLinesStage(const Checkpoint& checkpoint, const LinesStage& stage) {
  std::string head;
  ByteWriter writer(&head);
  for (uint64_t value :
       {stage.skipped, stage.documents, stage.bytes, stage.empty, stage.invalid_utf8}) {
    writer.Put(value);
  }
  return Write(checkpoint.RankFile(kLinesStage), kLinesKind, head, stage.text);
}

Status LoadLinesStage(const Checkpoint& checkpoint, LinesStage* stage) {
  const std::string path = checkpoint.RankFile(kLinesStage);
  NEARDUP_ASSIGN_OR_RETURN(std::string payload, format::ReadChecksummedFile(path, kLinesKind));
  ByteReader reader(payload);
  Status status;
  for (uint64_t* value :
       {&stage->skipped, &stage->documents, &stage->bytes, &stage->empty, &stage->invalid_utf8}) {
    if (status.ok()) status = reader.Get(value);
  }
  if (!status.ok()) return Malformed(path, status);
  stage->text = payload.substr(5 * sizeof(uint64_t));
  return Status::Ok();
}

}  // namespace neardup::mpi
