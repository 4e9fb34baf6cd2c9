#include "mpi_jobs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checkpoint.h"
#include "checkpoint_stages.h"
#include "distributed_clusters.h"
#include "distributed_pairs.h"
#include "exit_codes.h"
#include "input_split.h"
#include "left_to_exit.h"
#include "line_id_patch.h"
#include "mpi_comm.h"
#include "neardup/deferred_sketches.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/format/wire_format.h"
#include "neardup/stage_time.h"
#include "output.h"
#include "parallel_output.h"
#include "rank_profile.h"

namespace neardup::mpi {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Rank 0's output file (none elsewhere), opened as the single-process
// command opens it. Collective.
Result<std::optional<cli::OutputFile>> OpenOutputOnRoot(Comm& comm, const std::string& path,
                                                        const std::vector<std::string>& inputs) {
  std::optional<cli::OutputFile> output;
  Status status;
  if (comm.rank() == 0) {
    Result<cli::OutputFile> opened = cli::OutputFile::Open(path, inputs);
    if (opened.ok()) {
      output.emplace(*std::move(opened));
    } else {
      status = opened.status();
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return output;
}

// The ids of `docs` (sorted, unique; each rank its own list, empty where
// it needs none) from their owners, in the same order. Collective.
Result<std::vector<std::string>> FetchIds(Comm& comm, const DocumentLayout& layout,
                                          const std::vector<std::string>& local_ids,
                                          const std::vector<uint64_t>& docs) {
  std::vector<std::string> requests(static_cast<size_t>(comm.size()));
  for (uint64_t doc : docs) ByteWriter(&requests[layout.OwnerOf(doc)]).Put(doc);
  std::vector<Message> asked;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(requests), &asked));
  const uint64_t first = layout.first[static_cast<size_t>(comm.rank())];
  std::vector<std::string> replies(static_cast<size_t>(comm.size()));
  Status status;
  for (size_t r = 0; r < asked.size() && status.ok(); ++r) {
    ByteReader reader(asked[r]);
    ByteWriter writer(&replies[r]);
    while (!reader.done() && status.ok()) {
      uint64_t doc = 0;
      status = reader.Get(&doc);
      if (status.ok() && (doc < first || doc - first >= local_ids.size())) {
        status = InternalError("asked for the id of document " + std::to_string(doc) +
                               ", which is not on this rank");
      }
      if (status.ok()) writer.PutBytes(local_ids[doc - first]);
    }
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  std::vector<Message> answers;
  NEARDUP_RETURN_IF_ERROR(comm.Exchange(std::move(replies), &answers));
  std::vector<std::string> ids;
  for (const Message& answer : answers) {
    ByteReader reader(answer);
    while (!reader.done() && status.ok()) {
      ids.emplace_back();
      status = reader.GetBytes(&ids.back());
    }
  }
  if (status.ok() && ids.size() != docs.size()) {
    status = InternalError("fetched " + std::to_string(ids.size()) + " ids of " +
                           std::to_string(docs.size()));
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  return ids;
}

// Looks up the id of a document among fetched ones.
class IdTable {
 public:
  IdTable(std::vector<uint64_t> docs, std::vector<std::string> ids)
      : docs_(std::move(docs)), ids_(std::move(ids)) {}
  std::string_view operator[](uint64_t doc) const {
    return ids_[static_cast<size_t>(std::lower_bound(docs_.begin(), docs_.end(), doc) -
                                    docs_.begin())];
  }

 private:
  std::vector<uint64_t> docs_;
  std::vector<std::string> ids_;
};

Result<IdTable> FetchIdTable(Comm& comm, const DocumentLayout& layout,
                             const std::vector<std::string>& local_ids,
                             std::vector<uint64_t> docs) {
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::string> ids, FetchIds(comm, layout, local_ids, docs));
  return IdTable(std::move(docs), std::move(ids));
}

// This rank's lines of `clusters`' output: the clusters whose first member
// it holds (GroupClustersOnRanks), with their members' ids fetched from
// their owners. The lines of the ranks, in rank order, are the output in
// order. *clusters: their number on all ranks. Collective.
Result<std::string> ClusterLines(Comm& comm, const DocumentLayout& layout,
                                 const std::vector<std::string>& local_ids,
                                 const std::vector<uint64_t>& cluster_of, uint64_t* clusters) {
  NEARDUP_ASSIGN_OR_RETURN(LocalClusters mine, GroupClustersOnRanks(comm, layout, cluster_of));
  *clusters = mine.total;
  std::vector<uint64_t> docs;
  for (const std::vector<uint64_t>& members : mine.members) {
    docs.insert(docs.end(), members.begin(), members.end());
  }
  NEARDUP_ASSIGN_OR_RETURN(IdTable ids, FetchIdTable(comm, layout, local_ids, std::move(docs)));
  std::string text;
  std::vector<std::string_view> member_ids;
  for (size_t i = 0; i < mine.members.size(); ++i) {
    member_ids.clear();
    for (uint64_t member : mine.members[i]) member_ids.push_back(ids[member]);
    format::AppendClusterLine(&text, mine.first_number + i, member_ids);
  }
  return text;
}

// Everything the near-duplicate commands do after the pairs are known; each
// rank writes its part. Collective.
Status WriteNearDuplicateOutput(Comm& comm, const cli::NearDuplicateJob& job,
                                const DocumentLayout& layout, const FingerprintedCorpus& corpus,
                                std::vector<SimilarPair> pairs, cli::OutputFile* output,
                                std::string* summary, RankProfile* profile) {
  const bool root = comm.rank() == 0;
  if (job.kind == cli::NearDuplicateOutput::kPairs) {
    // The pairs are on the owners of their first documents
    // (PairPlacement::kOwners): each rank writes its lines, its part of the
    // output, in rank order, which is the sorted order.
    std::vector<uint64_t> docs;
    for (const SimilarPair& pair : pairs) {
      docs.push_back(pair.a);
      docs.push_back(pair.b);
    }
    NEARDUP_ASSIGN_OR_RETURN(IdTable ids, FetchIdTable(comm, layout, corpus.ids, docs));
    std::string text;
    for (const SimilarPair& pair : pairs) {
      format::AppendPairLine(&text, ids[pair.a], ids[pair.b], pair);
    }
    *summary = std::to_string(comm.Sum(pairs.size())) + " pairs";
    return WriteParts(comm, output, text);
  }

  // Each rank learns the clusters of its documents (leader: the ranks scan
  // in turn; components: a union-find over the ranks).
  NEARDUP_ASSIGN_OR_RETURN(std::vector<uint64_t> cluster_of,
                           ClusterOnRanks(comm, layout, std::move(pairs), job.rule));
  profile->Lap("cluster");
  const uint64_t n = layout.total;

  if (job.kind == cli::NearDuplicateOutput::kClusters) {
    uint64_t clusters = 0;
    NEARDUP_ASSIGN_OR_RETURN(std::string text,
                             ClusterLines(comm, layout, corpus.ids, cluster_of, &clusters));
    *summary = std::to_string(clusters) + " clusters of two or more";
    return WriteParts(comm, output, text);
  }

  // dedup: each cluster's kept document is chosen by the owner of its
  // first member.
  NEARDUP_ASSIGN_OR_RETURN(std::vector<bool> keep,
                           KeepOnRanks(comm, layout, cluster_of, corpus.lengths, job.keep));
  profile->Lap("keep");
  uint64_t kept_here = 0;
  for (bool k : keep) kept_here += k;
  const uint64_t kept = comm.Sum(kept_here);
  *summary =
      "kept " + std::to_string(kept) + ", removed " + std::to_string(n - kept) + " near-duplicates";

  uint64_t not_jsonl = 0;
  for (bool jsonl : corpus.is_jsonl) not_jsonl += !jsonl;
  const bool all_jsonl = n > 0 && comm.Sum(not_jsonl) == 0;
  Status status;
  if (all_jsonl) {
    // Each rank writes its kept records verbatim, its part of the output
    // in rank order, which is input order (WriteParts).
    if (keep.size() != corpus.raw_records.size()) {
      status = InternalError("keep flags for " + std::to_string(keep.size()) + " documents, " +
                             std::to_string(corpus.raw_records.size()) + " records");
    }
    NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
    // Sized first, then written through a buffer a few MB long (one string
    // of the whole part was ~265 MB of fresh pages a rank on the 1M corpus).
    uint64_t bytes = 0;
    for (size_t i = 0; i < keep.size(); ++i) {
      if (keep[i]) bytes += corpus.raw_records[i].size() + 1;
    }
    return WriteParts(comm, output, bytes,
                      [&](const std::function<Status(std::string_view)>& write) {
                        for (size_t i = 0; i < keep.size(); ++i) {
                          if (!keep[i]) continue;
                          NEARDUP_RETURN_IF_ERROR(write(corpus.raw_records[i]));
                          NEARDUP_RETURN_IF_ERROR(write("\n"));
                        }
                        return Status::Ok();
                      });
  }
  // One decision line per document (inputs that are not all JSONL: files,
  // so few enough for rank 0 to hold every id, cluster and keep flag).
  std::string mine;
  ByteWriter writer(&mine);
  writer.PutVector(cluster_of);
  writer.PutVector(std::vector<uint8_t>(keep.begin(), keep.end()));
  std::string pending;
  NEARDUP_RETURN_IF_ERROR(comm.GatherToRoot(mine, [&](std::string_view piece) {
    pending.append(piece);
    return Status::Ok();
  }));
  std::vector<uint64_t> all_clusters;
  std::vector<uint8_t> all_keep;
  ByteReader reader(pending);
  while (comm.rank() == 0 && !reader.done() && status.ok()) {
    std::vector<uint64_t> clusters_part;
    std::vector<uint8_t> keep_part;
    status = reader.GetVector(&clusters_part);
    if (status.ok()) status = reader.GetVector(&keep_part);
    all_clusters.insert(all_clusters.end(), clusters_part.begin(), clusters_part.end());
    all_keep.insert(all_keep.end(), keep_part.begin(), keep_part.end());
  }
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(status));
  std::vector<uint64_t> all;
  for (uint64_t doc = 0; root && doc < n; ++doc) all.push_back(doc);
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::string> ids, FetchIds(comm, layout, corpus.ids, all));
  if (!root) return comm.AgreeOnStatus(Status::Ok());
  std::vector<uint64_t> kept_of(n);
  for (uint64_t doc = 0; doc < n; ++doc) {
    if (all_keep[doc]) kept_of[all_clusters[doc]] = doc;
  }
  std::string line;
  for (uint64_t doc = 0; doc < n && status.ok(); ++doc) {
    line.clear();
    format::AppendDedupDecisionLine(
        &line, ids[doc],
        all_keep[doc] ? std::nullopt
                      : std::optional<std::string_view>(ids[kept_of[all_clusters[doc]]]));
    status = output->Write(line);
  }
  return comm.AgreeOnStatus(status);
}

// What every command does before it reads, in `neardup`'s order (so the
// same error wins): the fingerprinter exists, the inputs exist, the output
// opens (rank 0); then this rank's share is planned. Collective.
struct Prepared {
  std::optional<cli::OutputFile> output;  // rank 0's
  std::vector<SharePiece> pieces;
  Checkpoint checkpoint;
  size_t units = 0;  // inputs examined
};

Result<Prepared> Prepare(Comm& comm, const Status& fingerprinter, const cli::InputFlags& input,
                         const std::string& output_path, const MpiFlags& flags) {
  NEARDUP_RETURN_IF_ERROR(comm.AgreeOnStatus(fingerprinter));
  NEARDUP_ASSIGN_OR_RETURN(std::vector<InputUnit> units, ExamineInputs(comm, input));
  Result<std::optional<cli::OutputFile>> output = OpenOutputOnRoot(comm, output_path, input.inputs);
  if (!output.ok()) return output.status();
  Result<std::vector<SharePiece>> pieces = PlanShare(comm, units);
  if (!pieces.ok()) return pieces.status();
  Result<Checkpoint> checkpoint =
      Checkpoint::Open(comm, flags.checkpoint_dir, flags.resume, flags.command_line, input.inputs);
  if (!checkpoint.ok()) return checkpoint.status();
  if (!checkpoint->LastDone().empty() && comm.rank() == 0) {
    std::fprintf(stderr, "neardup-mpi: resuming after stage %s saved in %s\n",
                 checkpoint->LastDone().c_str(), flags.checkpoint_dir.c_str());
  }
  return Prepared{*std::move(output), *std::move(pieces), *std::move(checkpoint), units.size()};
}

// Where the verified pairs go: `pairs` writes them where they are (each on
// the owner of its first document); the leader rule needs each on the
// owner of one of its documents, which scans or reduces them
// (distributed_clusters.h): MinHash leaves them on their verifiers (the
// owner of the first or the second document), SimHash sends them to their
// first documents' owners (PairPlacement::kVerifiers); components needs
// only a spanning forest of each rank's pairs (the same connected
// components), left where it is for the distributed union-find.
PairPlacement Placement(const cli::NearDuplicateJob& job) {
  if (job.kind == cli::NearDuplicateOutput::kPairs) return PairPlacement::kOwners;
  return job.rule == ClusterRule::kComponents ? PairPlacement::kForests : PairPlacement::kVerifiers;
}

// The exit code after a run that read inputs, as ExitCodeAfterReading.
int ExitCode(Comm& comm, const Status& status, const cli::RunFlags& run, uint64_t skipped) {
  if (!status.ok()) return ReportErrorOnRanks(status, comm.rank());
  return run.strict && skipped > 0 ? cli::kExitSkipped : cli::kExitOk;
}

}  // namespace

void MpiFlags::Register(CLI::App* command) {
  command
      ->add_option("--memory-mb", memory_mb,
                   "neardup-mpi: memory per rank for one round of the band key shuffle (MiB)")
      ->check(cli::UnsignedIn(1, uint64_t{1} << 30))
      ->capture_default_str();
  command
      ->add_option("--max-round-bytes", max_round_bytes,
                   "neardup-mpi: most bytes a rank sends in one exchange round (0: a quarter of "
                   "--memory-mb, at most 2 GiB - 1; tiny values test the rounds)")
      ->check(cli::UnsignedIn(0, uint64_t{1} << 40))
      ->capture_default_str();
}

void MpiFlags::RegisterCheckpoint(CLI::App* command) {
  command->add_option("--checkpoint", checkpoint_dir,
                      "neardup-mpi: save each finished stage per rank in this directory (seen by "
                      "every rank), for --resume");
  command->add_flag("--resume", resume,
                    "neardup-mpi: continue the job saved in --checkpoint DIR after its last "
                    "finished stage (refused when flags, inputs or rank count differ)");
}

uint64_t MpiFlags::RoundBytes() const {
  if (max_round_bytes != 0) return max_round_bytes;
  return (memory_mb << 20) / 4;
}

int ReportErrorOnRanks(const Status& status, int rank) {
  if (rank == 0) std::fprintf(stderr, "neardup-mpi: %s\n", status.ToString().c_str());
  return cli::ExitCodeFor(status);
}

int RunFingerprintOnRanks(const cli::FingerprintJob& job, const MpiFlags& flags) {
  Comm comm(MPI_COMM_WORLD, flags.RoundBytes());
  if (job.format != "json") {
    return ReportErrorOnRanks(
        UnimplementedError("--format binary is not supported by neardup-mpi yet: run `neardup "
                           "fingerprint --format binary` on each part, or use JSON lines"),
        comm.rank());
  }
  auto thread_limit = job.run.LimitThreads();
  const auto started = Clock::now();
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      job.device.Create(job.recipe, job.selection);
  // Every rank reads at once; the ids of id-less records in a piece that
  // starts inside its file are formatted with a stand-in line and
  // renumbered in the text after the read (RenumberLineIds).
  Result<Prepared> prepared = Prepare(comm, fingerprinter.status(), job.input, job.output, flags);
  if (!prepared.ok()) return ReportErrorOnRanks(prepared.status(), comm.rank());
  std::optional<cli::OutputFile>* output = &prepared->output;
  cli::SkipReporter skips(job.run.quiet);
  Status status;
  // --profile: start, fingerprint (or loading it from the checkpoint), output (gather, write,
  // close).
  RankProfile profile(comm);

  const std::string recipe_id = RecipeId(job.recipe);
  const Checkpoint& checkpoint = prepared->checkpoint;
  LinesStage lines;
  if (checkpoint.Done(kLinesStage)) {
    status = comm.AgreeOnStatus(LoadLinesStage(checkpoint, &lines));
  } else {
    FingerprintPipelineStats stats;
    uint64_t invalid_utf8_records = 0;
    PieceLineNumbers line_numbers(prepared->pieces, prepared->units, &skips);
    // Where each line of the rank's first piece starts in the text, when
    // that piece starts inside its file (8 bytes a document; the lines
    // themselves are ~0.1-3 KB): only such a piece is numbered from a
    // stand-in line (a rank's later pieces start at their files'
    // beginnings), so only its documents can be renamed.
    std::vector<uint64_t> line_starts;
    // OpenPiece's `first_document`: bookkeeping for its contract only (just
    // the first piece can be a stand-in, and its first document is 0).
    uint64_t documents_read = 0;
    for (const SharePiece& piece : prepared->pieces) {
      const bool stand_in = piece.StartsInsideFile();
      if (stand_in && &piece != &prepared->pieces.front()) {
        status = InternalError("a rank's later piece starts inside its file");
        break;
      }
      Result<std::unique_ptr<DocumentReader>> reader =
          OpenPiece(piece, job.input, &skips, false, &line_numbers, documents_read);
      status = reader.status();
      if (!status.ok()) break;
      status = RunFingerprintPipeline(
          **reader, **fingerprinter, FingerprintPipelineOptions{},
          [&](std::span<const Document> docs, std::span<const Fingerprint> fingerprints) -> Status {
            documents_read += docs.size();
            for (size_t i = 0; i < docs.size(); ++i) {
              if (stand_in) line_starts.push_back(lines.text.size());
              format::AppendFingerprintLine(&lines.text, docs[i].id, fingerprints[i], job.selection,
                                            job.recipe.simhash.bits, recipe_id);
            }
            return Status::Ok();
          },
          &stats);
      invalid_utf8_records += (*reader)->documents_with_invalid_utf8();
      if (!status.ok()) break;
    }
    // Every rank, also after a failed read (the sum of the newline counts
    // is collective).
    std::vector<LineIdRename> renames;
    line_numbers.Finish(
        comm,
        [&](uint64_t document, uint64_t line) {
          if (document < line_starts.size()) renames.push_back({line_starts[document], line});
        },
        /*read_failed=*/!status.ok());
    line_starts = {};
    if (status.ok()) status = RenumberLineIds(&lines.text, renames);
    status = comm.AgreeOnStatus(status);
    lines.skipped = skips.count();
    lines.documents = stats.documents;
    lines.bytes = stats.bytes;
    lines.empty = stats.empty_documents;
    lines.invalid_utf8 = stats.documents_with_invalid_utf8 + invalid_utf8_records;
    if (status.ok() && checkpoint.enabled()) {
      status = prepared->checkpoint.Finish(comm, kLinesStage, SaveLinesStage(checkpoint, lines));
    }
  }
  profile.Lap("fingerprint");
  if (status.ok()) {
    status = WriteParts(comm, comm.rank() == 0 ? &**output : nullptr, lines.text);
  }
  lines.text = {};
  const uint64_t skipped = comm.Sum(lines.skipped);
  const uint64_t documents = comm.Sum(lines.documents);
  const uint64_t bytes = comm.Sum(lines.bytes);
  const uint64_t empty = comm.Sum(lines.empty);
  const uint64_t invalid = comm.Sum(lines.invalid_utf8);
  Status closed;
  if (comm.rank() == 0) {
    closed = (*output)->Finish(status.ok() && !(job.run.strict && skipped > 0));
  }
  closed = comm.AgreeOnStatus(closed);
  if (status.ok()) status = closed;
  profile.Lap("output");
  profile.Print(comm, job.profile);
  if (!job.run.quiet && comm.rank() == 0) {
    std::fprintf(stderr,
                 "neardup-mpi: fingerprinted %llu documents (%.1f MB) on %d ranks in %.2f s with "
                 "recipe %s (%s); %llu empty, %llu with invalid UTF-8, %llu records skipped\n",
                 static_cast<unsigned long long>(documents), static_cast<double>(bytes) / 1e6,
                 comm.size(), SecondsSince(started), recipe_id.c_str(), job.recipe.name.c_str(),
                 static_cast<unsigned long long>(empty), static_cast<unsigned long long>(invalid),
                 static_cast<unsigned long long>(skipped));
  }
  return ExitCode(comm, status, job.run, skipped);
}

int RunNearDuplicatesOnRanks(const cli::NearDuplicateJob& job, const MpiFlags& flags) {
  Comm comm(MPI_COMM_WORLD, flags.RoundBytes());
  auto thread_limit = job.run.LimitThreads();
  const auto started = Clock::now();
  const bool dedup = job.kind == cli::NearDuplicateOutput::kDedup;
  if (job.options.method == NearDuplicateMethod::kSimHash && IsDigestRecipe(job.recipe)) {
    return ReportErrorOnRanks(
        UnimplementedError("recipe " + RecipeId(job.recipe) +
                           " has a digest SimHash, which neardup-mpi does not split yet: run "
                           "`neardup` on one machine"),
        comm.rank());
  }
  if (!job.sink.url.empty()) {
    return ReportErrorOnRanks(
        UnimplementedError("--sink is not supported by neardup-mpi yet: write the lines with "
                           "--output and load them, or run `neardup` with --sink"),
        comm.rank());
  }
  if (job.format.table()) {
    return ReportErrorOnRanks(
        UnimplementedError("--format " + job.format.name +
                           " is not supported by neardup-mpi yet: it writes JSON lines"),
        comm.rank());
  }
  // MinHash: the pieces split by byte range (JSONL, their records kept)
  // are fingerprinted with the candidate sketches only; the documents of
  // candidate pairs get their verification sketches from their records
  // later (FindPairsDistributed's DeferredSketches), as `neardup` defers them
  // for mapped JSONL files (neardup/deferred_sketches.h): on the benchmark
  // corpus those sketches for every document were half the fingerprint
  // stage and most of its fresh memory. Other pieces (whole inputs: text
  // files, compressed files) get every sketch at once.
  const Recipe recipe = RecipeForNearDuplicates(job.recipe, job.options);
  const bool defer = job.options.method == NearDuplicateMethod::kMinHash;
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      job.device.Create(recipe, SketchesForNearDuplicates(job.options));
  std::unique_ptr<Fingerprinter> candidate_fingerprinter;
  std::unique_ptr<Fingerprinter> verifier;
  Status created = fingerprinter.status();
  for (auto [selection, made] :
       {std::pair{CandidateSketches(job.options), &candidate_fingerprinter},
        std::pair{VerificationSketches(job.options), &verifier}}) {
    if (!defer || !created.ok()) break;
    Result<std::unique_ptr<Fingerprinter>> one = job.device.Create(recipe, selection);
    created = one.status();
    if (one.ok()) *made = *std::move(one);
  }
  // Every rank reads at once; the ids that are lines are named again after
  // (input_split.h).
  Result<Prepared> prepared = Prepare(comm, created, job.input, job.output, flags);
  if (!prepared.ok()) return ReportErrorOnRanks(prepared.status(), comm.rank());
  std::optional<cli::OutputFile>* output = &prepared->output;
  cli::SkipReporter skips(job.run.quiet);
  Status status;

  FingerprintedCorpus corpus;
  RankProfile profile(comm);
  Checkpoint& checkpoint = prepared->checkpoint;
  uint64_t resumed_skipped = 0;  // skipped by the run that saved the checkpoint
  if (checkpoint.Done(kFingerprintStage)) {
    status = LoadFingerprintStage(checkpoint, &corpus, &resumed_skipped);
  } else {
    FingerprintPipelineStats stats;
    bool any_deferred = false;
    for (const SharePiece& piece : prepared->pieces) any_deferred |= !piece.split_path.empty();
    any_deferred = any_deferred && defer;
    PieceLineNumbers line_numbers(prepared->pieces, prepared->units, &skips);
    for (const SharePiece& piece : prepared->pieces) {
      const bool deferred = defer && !piece.split_path.empty();
      Result<std::unique_ptr<DocumentReader>> reader =
          OpenPiece(piece, job.input, &skips, dedup || deferred, &line_numbers, corpus.ids.size());
      status = reader.status();
      if (!status.ok()) break;
      // raw_records holds one record per document (empty where a reader
      // kept none) whenever some piece keeps them.
      status =
          CollectFingerprints(**reader, deferred ? *candidate_fingerprinter : **fingerprinter,
                              FingerprintPipelineOptions{}, dedup || any_deferred, &corpus, &stats);
      if (!status.ok()) break;
    }
    line_numbers.Finish(comm, &corpus.ids, /*read_failed=*/!status.ok());
  }
  status = comm.AgreeOnStatus(status);
  if (status.ok() && checkpoint.enabled() && !checkpoint.Done(kFingerprintStage)) {
    status = checkpoint.Finish(comm, kFingerprintStage,
                               SaveFingerprintStage(checkpoint, corpus, skips.count()));
  }
  if (!status.ok()) return ReportErrorOnRanks(status, comm.rank());
  profile.Lap("fingerprint");

  const DocumentLayout layout = DocumentLayout::FromCounts(comm.AllGather(corpus.ids.size()));
  uint64_t empty = 0;
  for (const Fingerprint& fingerprint : corpus.fingerprints) empty += fingerprint.num_tokens == 0;
  NearDuplicateReport report;
  report.empty_documents = comm.Sum(empty);
  Result<NearDuplicateScheme> scheme =
      ChooseNearDuplicateScheme(job.recipe, job.options, layout.total);
  if (!scheme.ok()) return ReportErrorOnRanks(scheme.status(), comm.rank());
  DistributedPairsStats shuffle;
  Result<std::vector<SimilarPair>> pairs = std::vector<SimilarPair>();
  if (checkpoint.Done(kPairsStage)) {
    status = comm.AgreeOnStatus(LoadPairsStage(checkpoint, &*pairs, &report, &shuffle));
    if (!status.ok()) return ReportErrorOnRanks(status, comm.rank());
  } else {
    // The records are parsed again as the first pass parsed them.
    Result<InputOptions> input_options = cli::ReaderOptions(job.input, &skips, false);
    if (!input_options.ok()) return ReportErrorOnRanks(input_options.status(), comm.rank());
    DeferredSketches deferred;
    if (defer) {
      deferred.again = [&](std::span<const uint64_t> docs, std::vector<Fingerprint>* local) {
        Status sketched = FingerprintLocatedRecords(corpus, docs, *verifier, *input_options, local);
        // Called once, after any record was handed to another rank: pairs
        // and clusters need the records no longer (the fingerprint
        // checkpoint holds its own copy).
        if (!dedup) std::vector<std::string>().swap(corpus.raw_records);
        return sketched;
      };
      deferred.record = [&](uint64_t doc) -> std::string_view {
        return doc < corpus.raw_records.size() ? std::string_view(corpus.raw_records[doc])
                                               : std::string_view();
      };
      deferred.id = [&](uint64_t doc) -> std::string_view { return corpus.ids[doc]; };
      // Records of another rank's documents, parsed and fingerprinted as
      // `again` does on their owner (the same function of the record).
      deferred.of_records = [&](std::vector<std::string> ids, std::vector<std::string> records,
                                std::vector<Fingerprint>* out) {
        FingerprintedCorpus others;
        const size_t n = records.size();
        others.ids = std::move(ids);
        others.raw_records = std::move(records);
        others.is_jsonl.assign(n, true);
        std::vector<uint64_t> all(n);
        for (size_t i = 0; i < n; ++i) all[i] = i;
        out->assign(n, Fingerprint{});
        return FingerprintLocatedRecords(others, all, *verifier, *input_options, out);
      };
    }
    std::vector<Fingerprint> verification_set;
    pairs = FindPairsDistributed(comm, layout, std::move(corpus.fingerprints), *scheme, job.options,
                                 flags.memory_mb << 20, Placement(job), deferred, &report, &shuffle,
                                 &verification_set);
    if (!pairs.ok()) return ReportErrorOnRanks(pairs.status(), comm.rank());
    // Freed here, before any later stage's peak, as before session 15: left
    // to the exit (left_to_exit.h) it would count in the peak of a later
    // stage that allocates more than the verify stage held beside it, and
    // every command has one: dedup's output copies the kept records, pairs'
    // output formats every pair (on the 1M corpus at 2 ranks the set kept
    // raised pairs' peak RSS 7,255 -> 7,455 MB on rank 0), and clusters'
    // cluster stage with components builds rank 0's union-find of every
    // document.
    verification_set = {};
    if (checkpoint.enabled()) {
      status =
          checkpoint.Finish(comm, kPairsStage, SavePairsStage(checkpoint, *pairs, report, shuffle));
      if (!status.ok()) return ReportErrorOnRanks(status, comm.rank());
    }
  }
  corpus.fingerprints = {};
  // Only dedup writes the records (pairs and clusters kept them for the
  // deferred sketches).
  if (!dedup) corpus.raw_records = {};
  if (shuffle.stages.empty()) {
    profile.Lap("pairs");
  } else {
    profile.Add(shuffle);
  }
  profile.SetWork(shuffle, report);
  report.candidates = comm.Sum(report.candidates);
  report.exact_checks = comm.Sum(report.exact_checks);
  report.pairs = comm.Sum(shuffle.verified_pairs);
  report.lsh = scheme->lsh;
  report.num_blocks =
      scheme->method == NearDuplicateMethod::kSimHash ? scheme->hamming.num_blocks : 0;
  if (job.explain && comm.rank() == 0) {
    cli::ExplainNearDuplicates(job.options, job.recipe, report);
  }

  std::string summary;
  cli::OutputFile* out = comm.rank() == 0 ? &**output : nullptr;
  status = WriteNearDuplicateOutput(comm, job, layout, corpus, *std::move(pairs), out, &summary,
                                    &profile);
  const uint64_t skipped = comm.Sum(skips.count() + resumed_skipped);
  Status closed;
  if (comm.rank() == 0) closed = out->Finish(status.ok() && !(job.run.strict && skipped > 0));
  closed = comm.AgreeOnStatus(closed);
  if (status.ok()) status = closed;
  profile.Lap("output");
  profile.Print(comm, job.profile);
  const uint64_t key_bytes = comm.Sum(shuffle.key_bytes);
  const uint64_t sketch_bytes = comm.Sum(shuffle.sketch_bytes);
  const uint64_t candidate_bytes = comm.Sum(shuffle.candidate_bytes);
  std::string per_rank;
  for (uint64_t count : layout.count) {
    per_rank += (per_rank.empty() ? "" : "/") + std::to_string(count);
  }
  if (!job.run.quiet && comm.rank() == 0) {
    std::fprintf(stderr,
                 "neardup-mpi: %llu documents, %s (%s, recipe %s) on %d ranks (documents per "
                 "rank: %s) in %.2f s; %llu "
                 "empty, %llu records skipped; shuffled %llu bytes of band keys in %llu "
                 "rounds, %llu of candidates, %llu of sketches\n",
                 static_cast<unsigned long long>(layout.total), summary.c_str(), job.method.c_str(),
                 RecipeId(job.recipe).c_str(), comm.size(), per_rank.c_str(), SecondsSince(started),
                 static_cast<unsigned long long>(report.empty_documents),
                 static_cast<unsigned long long>(skipped),
                 static_cast<unsigned long long>(key_bytes),
                 static_cast<unsigned long long>(shuffle.band_rounds),
                 static_cast<unsigned long long>(candidate_bytes),
                 static_cast<unsigned long long>(sketch_bytes));
  }
  // The corpus' ids, records and sketches go with the process.
  LeaveToExit(std::move(corpus));
  return ExitCode(comm, status, job.run, skipped);
}

}  // namespace neardup::mpi
