#include "near_duplicate_commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common_options.h"
#include "exit_codes.h"
#include "neardup/clustering.h"
#include "neardup/deferred_sketches.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/format/wire_format.h"
#include "neardup/lsh_params.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/near_duplicates.h"
#include "neardup/positioned_output.h"
#include "neardup/stage_time.h"
#include "ordered_writer.h"
#include "output.h"
#include "profile.h"
#include "progress.h"
#include "sink_option.h"

namespace neardup::cli {
namespace {

using Report = NearDuplicateOutput;

struct NearDuplicateFlags {
  RecipeFlags recipe;
  InputFlags input;
  RunFlags run;
  DeviceFlags device;
  std::string method = "minhash";
  double threshold = 0.8;
  int max_distance = 3;
  int num_blocks = 0;
  // Empty: the method's default (exact for minhash, from
  // NearDuplicateOptions; SimHash pairs are exact Hamming distances anyway).
  std::string verify;
  // Defaults from NearDuplicateOptions (chosen in docs/ACCURACY.md).
  double false_positive_weight = NearDuplicateOptions{}.false_positive_weight;
  double false_negative_weight = NearDuplicateOptions{}.false_negative_weight;
  bool explain = false;
  bool profile = false;
  std::string rule = "leader";
  std::string keep = "first";
  std::string output = "-";
  SinkFlags sink;          // pairs and clusters
  TableFormatFlag format;  // pairs and clusters
  // Options given on the command line that apply to one method only.
  std::vector<std::string> minhash_only_given;
  std::vector<std::string> simhash_only_given;
};

constexpr const char* kMinHashOnlyOptions[] = {"--threshold", "--verify", "--fp-weight",
                                               "--fn-weight"};
constexpr const char* kSimHashOnlyOptions[] = {"--max-distance", "--blocks"};

Result<NearDuplicateOptions> ResolveOptions(const NearDuplicateFlags& flags) {
  NearDuplicateOptions options;
  NEARDUP_ASSIGN_OR_RETURN(options.method, ParseNearDuplicateMethod(flags.method));
  options.threshold = flags.threshold;
  options.max_distance = flags.max_distance;
  options.num_blocks = flags.num_blocks;
  options.false_positive_weight = flags.false_positive_weight;
  options.false_negative_weight = flags.false_negative_weight;
  // An option of the other method would be ignored: say so instead.
  const bool simhash = options.method == NearDuplicateMethod::kSimHash;
  const std::vector<std::string>& other =
      simhash ? flags.minhash_only_given : flags.simhash_only_given;
  if (!other.empty()) {
    return InvalidArgumentError(other.front() + " applies to --method " +
                                (simhash ? "minhash" : "simhash") + " only");
  }
  if (simhash) {
    options.verify_exact = false;
  } else if (flags.verify == "sketch") {
    options.verify_exact = false;
  } else if (flags.verify == "exact") {
    options.verify_exact = true;
  } else if (!flags.verify.empty()) {
    return InvalidArgumentError("--verify (\"" + flags.verify + "\") must be sketch or exact");
  }
  return options;
}

}  // namespace

void ExplainNearDuplicates(const NearDuplicateOptions& options, const Recipe& recipe,
                           const NearDuplicateReport& report) {
  if (options.method == NearDuplicateMethod::kMinHash) {
    std::fprintf(
        stderr, "%s\n",
        ExplainLshParams(report.lsh, LshParamsOptionsForNearDuplicates(recipe, options)).c_str());
  } else if (IsDigestRecipe(recipe)) {
    const int bits = recipe.simhash.bits;
    std::fprintf(stderr,
                 "simhash: %d-bit SimHash, exact pigeonhole over %d blocks of bits; pairs within "
                 "%d of %d bits (similarity >= %.4f)\n",
                 bits, report.num_blocks, options.max_distance, bits,
                 1.0 - options.max_distance / static_cast<double>(bits));
  } else {
    std::fprintf(stderr,
                 "simhash: Hamming index with %d blocks, max distance %d: C(%d,%d) permuted "
                 "tables; pairs within %d of 64 bits (similarity >= %.4f)\n",
                 report.num_blocks, options.max_distance, report.num_blocks,
                 report.num_blocks - options.max_distance, options.max_distance,
                 1.0 - options.max_distance / 64.0);
  }
  std::fprintf(stderr, "candidates %llu, exact checks %llu, verified pairs %llu, index %.1f MB\n",
               static_cast<unsigned long long>(report.candidates),
               static_cast<unsigned long long>(report.exact_checks),
               static_cast<unsigned long long>(report.pairs),
               static_cast<double>(report.index_bytes) / 1e6);
}

namespace {

// Items per chunk of WriteInOrder: about 1-4 MB of text per chunk.
constexpr size_t kPairsPerChunk = size_t{1} << 15;
constexpr size_t kDocumentsPerChunk = size_t{1} << 14;
// How far ahead WritePairs fetches ids.
constexpr size_t kPrefetchPairs = 16;
// The most WritePairs reserves for a chunk's text ahead of its lines.
constexpr size_t kMaxReservedChunkBytes = size_t{8} << 20;

Status WritePairs(const FingerprintedCorpus& corpus, const std::vector<SimilarPair>& pairs,
                  std::optional<format::TableFormat> table, OutputFile* out,
                  SerialCpuTime* serial_time) {
  if (table) {
    std::string header;
    format::AppendPairTableHeader(&header, *table);
    NEARDUP_RETURN_IF_ERROR(out->Write(header));
  }
  return WriteInOrder(
      pairs.size(), kPairsPerChunk,
      [&](size_t begin, size_t end, std::string* text) {
        // The ids of a pair kPrefetchPairs ahead are fetched while these are
        // written (their strings, then a long id's bytes): pairs in order of
        // a, then b, reach a different id's string for each pair, a cache
        // miss that was ~20% of `pairs --method simhash`'s CPU on the 1M
        // corpus (9,711 copies of one text).
        for (size_t i = begin; i < end; ++i) {
          if (i + kPrefetchPairs < end) {
            __builtin_prefetch(&corpus.ids[pairs[i + kPrefetchPairs].a]);
            __builtin_prefetch(&corpus.ids[pairs[i + kPrefetchPairs].b]);
          }
          if (i + kPrefetchPairs / 2 < end) {
            __builtin_prefetch(corpus.ids[pairs[i + kPrefetchPairs / 2].b].data());
          }
          const std::string_view a = corpus.ids[pairs[i].a], b = corpus.ids[pairs[i].b];
          if (table) {
            format::AppendPairTableRow(text, a, b, pairs[i], *table);
          } else {
            format::AppendPairLine(text, a, b, pairs[i]);
          }
          // The chunk's text at once, from its first line's length (+1/4),
          // instead of ~20 doublings that copy it again; at most 8 MiB, so
          // that one long id (ids are the user's) does not ask for its
          // length times the chunk's pairs.
          if (i == begin) {
            text->reserve(std::min(text->size() * (end - begin) * 5 / 4, kMaxReservedChunkBytes));
          }
        }
      },
      out, serial_time);
}

// Clusters of two or more, numbered from 0 in order of their first member;
// members in input order.
std::vector<std::vector<uint64_t>> ClusterMembers(const std::vector<uint64_t>& cluster_of) {
  const size_t n = cluster_of.size();
  std::vector<uint64_t> size(n, 0);
  for (uint64_t c : cluster_of) ++size[c];
  std::vector<std::vector<uint64_t>> members(n);
  for (uint64_t doc = 0; doc < n; ++doc) {
    if (size[cluster_of[doc]] >= 2) members[cluster_of[doc]].push_back(doc);
  }
  std::erase_if(members, [](const std::vector<uint64_t>& m) { return m.empty(); });
  return members;
}

Status WriteClusters(const FingerprintedCorpus& corpus,
                     const std::vector<std::vector<uint64_t>>& members,
                     std::optional<format::TableFormat> table, OutputFile* out,
                     SerialCpuTime* serial_time) {
  if (table) {
    std::string header;
    format::AppendClusterTableHeader(&header, *table);
    NEARDUP_RETURN_IF_ERROR(out->Write(header));
  }
  return WriteInOrder(
      members.size(), kDocumentsPerChunk / 4,
      [&](size_t begin, size_t end, std::string* text) {
        std::vector<std::string_view> ids;
        for (size_t number = begin; number < end; ++number) {
          ids.clear();
          for (uint64_t member : members[number]) ids.push_back(corpus.ids[member]);
          if (table) {
            format::AppendClusterTableRows(text, number, ids, *table);
          } else {
            format::AppendClusterLine(text, number, ids);
          }
        }
      },
      out, serial_time);
}

// --sink: the pairs or the clusters as one transaction.
int SendPairsOrClusters(const NearDuplicateJob& flags, Report report_kind,
                        const FingerprintedCorpus& corpus, const std::vector<SimilarPair>& pairs,
                        const std::vector<std::vector<uint64_t>>& members) {
  std::string label = report_kind == Report::kPairs ? "pairs" : "clusters";
  for (const std::string& input : flags.input.inputs) label += " " + input;
  return SendToSink(flags.sink, label, flags.run.quiet, [&](ResultSink& sink) {
    if (report_kind == Report::kPairs) {
      std::vector<PairRecord> records;
      records.reserve(pairs.size());
      for (const SimilarPair& pair : pairs) {
        records.push_back({corpus.ids[pair.a], corpus.ids[pair.b], pair.similarity, pair.distance});
      }
      return sink.UpdatePairs(records);
    }
    std::vector<ClusterRecord> records;
    for (uint64_t number = 0; number < members.size(); ++number) {
      for (uint64_t member : members[number]) records.push_back({number, corpus.ids[member]});
    }
    return sink.UpdateClusters(records);
  });
}

// The kept corpus: JSONL records verbatim when every document came from
// JSONL; otherwise one line per document saying whether it was kept.
Status WriteDedup(const NearDuplicateJob& flags, const FingerprintedCorpus& corpus,
                  const std::vector<uint64_t>& cluster_of, const std::vector<bool>& keep,
                  OutputFile* out, SerialCpuTime* serial_time) {
  const size_t n = corpus.ids.size();
  FingerprintPipelineOptions copy_options;
  copy_options.serial_time = serial_time;
  bool all_jsonl = n > 0;
  for (size_t i = 0; i < n && all_jsonl; ++i) all_jsonl = corpus.is_jsonl[i];
  if (!all_jsonl) {
    // The kept document of each cluster, to name in "duplicate_of".
    std::vector<uint64_t> kept_of(n);
    for (uint64_t doc = 0; doc < n; ++doc) {
      if (keep[doc]) kept_of[cluster_of[doc]] = doc;
    }
    return WriteInOrder(
        n, kDocumentsPerChunk,
        [&](size_t begin, size_t end, std::string* text) {
          for (size_t doc = begin; doc < end; ++doc) {
            format::AppendDedupDecisionLine(
                text, corpus.ids[doc],
                keep[doc] ? std::nullopt
                          : std::optional<std::string_view>(corpus.ids[kept_of[cluster_of[doc]]]));
          }
        },
        out, serial_time);
  }
  if (!corpus.raw_records.empty()) {
    return WriteInOrder(
        n, kDocumentsPerChunk / 4,
        [&](size_t begin, size_t end, std::string* text) {
          for (size_t doc = begin; doc < end; ++doc) {
            if (!keep[doc]) continue;
            text->append(corpus.raw_records[doc]);
            text->push_back('\n');
          }
        },
        out, serial_time);
  }
  // A second pass over the inputs yields the same documents in the same
  // order (the reader is deterministic); it writes the kept lines verbatim
  // without holding the whole corpus in memory, read and parsed on every
  // core like the first.
  // Better still when the first pass saw where every record lies in its
  // (mapped) file: copy them from there, nothing to read or parse.
  // Into a regular file the ranges are written at their offsets on every
  // core (the kernel's copy into the file was the serial part); a pipe or
  // terminal gets them in order.
  auto write = [&](std::string_view records) { return out->Write(records); };
  if (corpus.record_locations.size() == n) {
    if (out->positioned()) {
      return out->WriteAtOffsets([&](PositionedOutput& at, uint64_t* written) {
        return CopyKeptRecordsByLocationAt(corpus, keep, copy_options, at, written);
      });
    }
    return CopyKeptRecordsByLocation(corpus, keep, copy_options, write);
  }
  InputFlags input = flags.input;
  SkipReporter silent(/*quiet=*/true);
  Result<std::unique_ptr<DocumentReader>> reader = OpenInputs(input, &silent);
  if (!reader.ok()) return reader.status();
  return CopyKeptRecords(**reader, corpus.ids, keep, copy_options, write);
}

Result<NearDuplicateJob> ResolveJob(const NearDuplicateFlags& flags, Report kind) {
  NearDuplicateJob job;
  job.kind = kind;
  NEARDUP_ASSIGN_OR_RETURN(job.recipe, flags.recipe.Resolve());
  NEARDUP_ASSIGN_OR_RETURN(job.options, ResolveOptions(flags));
  NEARDUP_ASSIGN_OR_RETURN(job.rule, ParseClusterRule(flags.rule));
  NEARDUP_ASSIGN_OR_RETURN(job.keep, ParseKeepRule(flags.keep));
  job.input = flags.input;
  job.run = flags.run;
  job.device = flags.device;
  job.method = flags.method;
  job.explain = flags.explain;
  job.output = flags.output;
  job.sink = flags.sink;
  job.format = flags.format;
  job.profile = flags.profile;
  return job;
}

}  // namespace

int RunNearDuplicateJob(const NearDuplicateJob& flags) {
  auto thread_limit = flags.run.LimitThreads();
  const Report report_kind = flags.kind;
  const Recipe* recipe = &flags.recipe;
  const NearDuplicateOptions* options = &flags.options;
  const ClusterRule* rule = &flags.rule;
  const KeepRule* keep_rule = &flags.keep;

  const bool dedup = report_kind == Report::kDedup;
  bool from_stdin = false;
  for (const std::string& input : flags.input.inputs) from_stdin = from_stdin || input == "-";
  SkipReporter skips(flags.run.quiet);
  Result<InputOptions> input_options = ReaderOptions(flags.input, &skips);
  if (!input_options.ok()) return ReportError(input_options.status());
  // MinHash over mapped JSONL files: the first pass computes only what the
  // candidates need, and the candidate documents are fingerprinted again
  // for verification from their records (neardup/deferred_sketches.h).
  // From stdin `dedup` keeps every record in memory: they serve as well
  // when every record is JSONL.
  const bool stdin_records = dedup && from_stdin && input_options->format == InputFormat::kJsonl &&
                             options->method == NearDuplicateMethod::kMinHash;
  const bool defer =
      stdin_records ||
      (!from_stdin && CanDeferVerificationSketches(flags.input.inputs, *input_options, *options));
  const Recipe fingerprint_recipe = RecipeForNearDuplicates(*recipe, *options);
  auto create_verifier = [&] {
    return flags.device.Create(fingerprint_recipe, SketchesForNearDuplicates(*options));
  };
  Result<std::unique_ptr<Fingerprinter>> fingerprinter =
      defer ? flags.device.Create(fingerprint_recipe, CandidateSketches(*options))
            : create_verifier();
  if (!fingerprinter.ok()) return ReportError(fingerprinter.status());
  // Records are kept in memory only from stdin (files are read again).
  Result<std::unique_ptr<DocumentReader>> reader =
      OpenInputs(flags.input, &skips, dedup && from_stdin);
  if (!reader.ok()) return ReportError(reader.status());
  // With --sink and no --output, nothing is printed.
  const bool write_lines = flags.sink.WriteLines();
  Result<OutputFile> output =
      OutputFile::Open(write_lines ? flags.output : "/dev/null", flags.input.inputs);
  if (!output.ok()) return ReportError(output.status());

  auto started = std::chrono::steady_clock::now();
  StageTimer stage_timer;
  std::vector<std::pair<const char*, StageTime>> stages;
  FingerprintedCorpus corpus;
  Progress progress(flags.run.quiet);
  FingerprintPipelineOptions pipeline;
  pipeline.record_locations = (dedup || defer) && !from_stdin;
  if (defer) {
    // The bands depend on the options alone (not on the corpus): the
    // workers hash each document's band keys, and its k-value sketch is
    // not kept (FingerprintPipelineOptions::band_keys).
    Result<NearDuplicateScheme> scheme = ChooseNearDuplicateScheme(*recipe, *options, 0);
    if (!scheme.ok()) return ReportError(scheme.status());
    pipeline.band_keys = scheme->lsh.params;
    // Recorded in the corpus: the search takes its bands from it.
    pipeline.band_key_choice =
        ChosenLshParams{LshParamsOptionsForNearDuplicates(*recipe, *options), scheme->lsh};
  }
  SerialCpuTime fingerprint_serial;
  pipeline.serial_time = &fingerprint_serial;
  Status status = CollectFingerprints(
      **reader, **fingerprinter, pipeline, dedup && from_stdin, &corpus, nullptr,
      [&](uint64_t documents, uint64_t bytes) { progress.Update(documents, bytes); });
  progress.Finish();
  if (!status.ok()) return ReportError(status);
  bool deferred = defer;
  if (defer && !stdin_records && corpus.record_locations.size() != corpus.ids.size()) {
    // The prediction failed (an input changed into one that cannot be
    // located): fingerprint everything again, with every sketch.
    deferred = false;
    fingerprinter = create_verifier();
    if (!fingerprinter.ok()) return ReportError(fingerprinter.status());
    SkipReporter silent(/*quiet=*/true);
    Result<std::unique_ptr<DocumentReader>> again = OpenInputs(flags.input, &silent);
    if (!again.ok()) return ReportError(again.status());
    corpus = FingerprintedCorpus{};
    pipeline.band_keys = LshParams{};
    pipeline.band_key_choice.reset();
    status = CollectFingerprints(**again, **fingerprinter, pipeline, false, &corpus);
    if (!status.ok()) return ReportError(status);
  }
  stages.emplace_back("fingerprint", stage_timer.Lap());
  stages.back().second.serial_cpu_seconds = fingerprint_serial.seconds();

  NearDuplicateReport report;
  Result<std::vector<SimilarPair>> pairs = InvalidArgumentError("not run");
  // Clusters without deferred sketches: per document, its group's first
  // copy (FindNearDuplicateGroups; groups of one where it finds every
  // pair); empty: the pairs are every pair.
  std::vector<uint64_t> first_copy_of;
  if (deferred) {
    Result<std::unique_ptr<Fingerprinter>> verifier =
        flags.device.Create(fingerprint_recipe, VerificationSketches(*options));
    if (!verifier.ok()) return ReportError(verifier.status());
    pairs = FindNearDuplicatePairsDeferred(&corpus, **verifier, *input_options, *recipe, *options,
                                           &report);
  } else {
    // The groups of copies and their first members' pairs (SimHash: g
    // copies of one text cost O(g) in the search, not g^2 / 2 candidates).
    Result<NearDuplicateGroups> groups =
        FindNearDuplicateGroups(corpus.fingerprints, *recipe, *options, &report);
    if (!groups.ok()) return ReportError(groups.status());
    if (report_kind == Report::kPairs) {
      // The output is every pair: written out from the groups (counted in
      // the verify stage).
      StageTimer expand_timer;
      pairs = ExpandNearDuplicateGroups(corpus.fingerprints, *std::move(groups));
      report.verify_time += expand_timer.Elapsed();
    } else {
      // Clusters need the groups only.
      first_copy_of = std::move(groups->first_copy_of);
      pairs = std::move(groups->pairs);
    }
  }
  if (!pairs.ok()) return ReportError(pairs.status());
  if (flags.explain) ExplainNearDuplicates(*options, *recipe, report);
  stages.emplace_back("candidates", report.candidates_time);
  if (deferred) stages.emplace_back("sketch", report.sketch_time);
  stages.emplace_back("verify", report.verify_time);
  stage_timer.Restart();

  SerialCpuTime output_serial;
  std::vector<uint64_t> cluster_of;
  uint64_t num_clusters = 0;
  uint64_t kept = corpus.ids.size();
  std::vector<std::vector<uint64_t>> members;
  if (report_kind == Report::kPairs) {
    if (write_lines) {
      status = WritePairs(corpus, *pairs, flags.format.table(), &*output, &output_serial);
    }
  } else {
    Result<std::vector<uint64_t>> clusters =
        first_copy_of.empty() ? ClusterDocuments(corpus.ids.size(), *pairs, *rule)
                              : ClusterDocumentGroups(first_copy_of, *pairs, *rule);
    if (!clusters.ok()) return ReportError(clusters.status());
    cluster_of = *std::move(clusters);
    stages.emplace_back("cluster", stage_timer.Lap());
    if (report_kind == Report::kClusters) {
      members = ClusterMembers(cluster_of);
      num_clusters = members.size();
      if (write_lines) {
        status = WriteClusters(corpus, members, flags.format.table(), &*output, &output_serial);
      }
    } else {
      Result<std::vector<bool>> keep = ChooseKept(cluster_of, corpus.lengths, *keep_rule);
      if (!keep.ok()) return ReportError(keep.status());
      kept = 0;
      for (bool k : *keep) kept += k;
      stages.emplace_back("keep", stage_timer.Lap());
      status = WriteDedup(flags, corpus, cluster_of, *keep, &*output, &output_serial);
    }
  }
  Status closed = output->Finish(ReadingSucceeded(status, flags.run, skips));
  if (status.ok()) status = closed;
  stages.emplace_back("output", stage_timer.Lap());
  stages.back().second.serial_cpu_seconds = output_serial.seconds();
  if (flags.profile) PrintProfile(stages, corpus.ids.size());
  if (!flags.sink.url.empty() && ReadingSucceeded(status, flags.run, skips)) {
    if (int code = SendPairsOrClusters(flags, report_kind, corpus, *pairs, members);
        code != kExitOk) {
      return code;
    }
  }

  if (!flags.run.quiet) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::string what;
    if (report_kind == Report::kPairs) {
      what = std::to_string(pairs->size()) + " pairs";
    } else if (report_kind == Report::kClusters) {
      what = std::to_string(num_clusters) + " clusters of two or more";
    } else {
      what = "kept " + std::to_string(kept) + ", removed " +
             std::to_string(corpus.ids.size() - kept) + " near-duplicates";
    }
    std::fprintf(stderr,
                 "neardup: %llu documents, %s (%s, recipe %s) in %.2f s; %llu empty, %llu "
                 "records skipped\n",
                 static_cast<unsigned long long>(corpus.ids.size()), what.c_str(),
                 flags.method.c_str(), RecipeId(*recipe).c_str(), seconds,
                 static_cast<unsigned long long>(report.empty_documents),
                 static_cast<unsigned long long>(skips.count()));
    PrintExtractionSummary(**reader, flags.run.quiet);
  }
  return ExitCodeAfterReading(status, flags.run, skips);
}

namespace {

CLI::App* AddCommand(CLI::App* app, const char* name, const char* description, Report kind,
                     std::function<int()>* run, const NearDuplicateRunner& runner, bool* chosen) {
  auto flags = std::make_shared<NearDuplicateFlags>();
  CLI::App* command = app->add_subcommand(name, description);
  flags->recipe.Register(command);
  flags->input.Register(command);
  flags->run.Register(command);
  flags->device.Register(command);
  command->add_option("--method", flags->method, "minhash (Jaccard of shingles) or simhash")
      ->check(CLI::IsMember({"minhash", "simhash"}))
      ->capture_default_str();
  command->add_option("--threshold", flags->threshold, "minhash: Jaccard threshold")
      ->check(RealIn(0.0, 1.0, /*min_open=*/true, /*max_open=*/true))
      ->capture_default_str();
  command
      ->add_option("--verify", flags->verify,
                   "minhash: exact (Jaccard of shingle sets; default) or sketch (bottom-k "
                   "estimate: less memory, lower recall near the threshold)")
      ->check(CLI::IsMember({"sketch", "exact"}));
  command
      ->add_option("--fp-weight", flags->false_positive_weight,
                   "minhash: weight of false positives when choosing LSH bands")
      ->check(RealIn(0.0, 1e6))
      ->capture_default_str();
  command
      ->add_option("--fn-weight", flags->false_negative_weight,
                   "minhash: weight of false negatives when choosing LSH bands")
      ->check(RealIn(0.0, 1e6))
      ->capture_default_str();
  command->add_option("--max-distance", flags->max_distance, "simhash: Hamming distance, bits")
      ->capture_default_str()
      ->check(IntegerIn(0, 63));
  command
      ->add_option("--blocks", flags->num_blocks,
                   "simhash: blocks of the permuted tables (0: chosen for the corpus size)")
      ->capture_default_str()
      ->check(IntegerIn(0, 64));
  command->add_flag("--explain", flags->explain,
                    "Explain the index parameters and the candidate counts on stderr");
  command->add_flag("--profile", flags->profile,
                    "Print each stage's wall and CPU seconds and the peak memory per document "
                    "on stderr");
  command->add_option("--output,-o", flags->output, "Output file (- for stdout)")
      ->capture_default_str();
  RegisterNoFsyncFlag(command);
  if (kind != Report::kDedup) flags->sink.Register(command);
  if (kind != Report::kDedup) flags->format.Register(command);
  if (kind != Report::kPairs) {
    command
        ->add_option("--rule", flags->rule,
                     "leader (each joins the first similar kept document) or components "
                     "(transitive closure)")
        ->check(CLI::IsMember({"leader", "components"}))
        ->capture_default_str();
  }
  if (kind == Report::kDedup) {
    command->add_option("--keep", flags->keep, "Which document of a cluster is kept")
        ->check(CLI::IsMember({"first", "longest", "shortest"}))
        ->capture_default_str();
  }
  command->callback([flags, run, kind, command, runner, chosen] {
    if (chosen != nullptr) *chosen = true;
    for (const char* name : kMinHashOnlyOptions) {
      if (command->count(name) > 0) flags->minhash_only_given.push_back(name);
    }
    for (const char* name : kSimHashOnlyOptions) {
      if (command->count(name) > 0) flags->simhash_only_given.push_back(name);
    }
    flags->sink.Parsed(*command);
    *run = [flags, kind, runner] {
      Result<NearDuplicateJob> job = ResolveJob(*flags, kind);
      if (!job.ok()) return ReportError(job.status());
      return runner ? runner(*job) : RunNearDuplicateJob(*job);
    };
  });
  return command;
}

}  // namespace

void RegisterNearDuplicateCommands(CLI::App* app, std::function<int()>* run,
                                   NearDuplicateRunner runner, bool* chosen) {
  AddCommand(app, "pairs",
             "Write each verified near-duplicate pair once, a before b in input order: "
             "{\"a\", \"b\", \"similarity\"} (simhash adds \"distance\")",
             Report::kPairs, run, runner, chosen);
  AddCommand(app, "clusters",
             "Group near-duplicates: {\"cluster\": n, \"ids\": [...]} per cluster of two or more",
             Report::kClusters, run, runner, chosen);
  AddCommand(app, "dedup",
             "Write the corpus without near-duplicates: JSONL records verbatim, or for file "
             "inputs one {\"id\", \"kept\", \"duplicate_of\"} line per document",
             Report::kDedup, run, runner, chosen);
}

}  // namespace neardup::cli
