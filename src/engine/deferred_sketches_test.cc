// FindNearDuplicatePairsDeferred against the one-pass path: a corpus
// fingerprinted with only the candidates' sketch, whose candidate documents
// are fingerprinted again from their records, gives the pairs and report
// counts of FindNearDuplicatePairs over every sketch of every document, on
// planted near-duplicates in several files with every kind of line the
// reader treats specially; inputs it cannot locate are predicted; a file
// changed between the passes is DataLoss.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "io/mapped_input.h"
#include "neardup/deferred_sketches.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/recipe.h"
#include "util/mix.h"

namespace neardup {
namespace {

std::string DeferredWord(internal::SplitMix64& rng) {
  std::string word;
  const int length = 2 + static_cast<int>(rng.Next() % 7);
  for (int i = 0; i < length; ++i) word.push_back(static_cast<char>('a' + rng.Next() % 26));
  return word;
}

// Seeded JSONL: base texts of random words and copies of them with a few
// words replaced (near-duplicates at Jaccard 0.5-0.95), spread over the
// files; escapes (\n, \", \u00e9, a surrogate pair), CRLF lines, a byte
// order mark, records without an id and with a number id, invalid lines
// (skipped), invalid UTF-8 (replaced), empty and one-word texts (no
// features), blank lines, a last line without "\n".
std::vector<std::string> DeferredCorpus(int files, int records, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  std::vector<std::vector<std::string>> bases;
  std::vector<std::string> out(files);
  out[0] = "\xEF\xBB\xBF";
  for (int i = 0; i < records; ++i) {
    std::vector<std::string> words;
    if (!bases.empty() && rng.Next() % 3 == 0) {
      words = bases[rng.Next() % bases.size()];
      const int edits = static_cast<int>(rng.Next() % 8);
      for (int e = 0; e < edits; ++e) words[rng.Next() % words.size()] = DeferredWord(rng);
    } else {
      const int length = 30 + static_cast<int>(rng.Next() % 60);
      for (int w = 0; w < length; ++w) words.push_back(DeferredWord(rng));
      bases.push_back(words);
    }
    std::string text;
    for (size_t w = 0; w < words.size(); ++w) {
      if (w > 0) {
        const uint64_t sep = rng.Next() % 40;
        text += sep == 0   ? "\\n"
                : sep == 1 ? " \\\"q\\\" "
                : sep == 2 ? " \\u00e9\\ud83d\\ude00 "
                           : " ";
      }
      text += words[w];
    }
    const uint64_t kind = rng.Next() % 50;
    if (kind == 0) text = "";
    if (kind == 1) text = "one";
    if (kind == 2) text += " bad\xC3\x28utf8";
    std::string& file = out[rng.Next() % files];
    const std::string n = std::to_string(i);
    if (kind == 3) {
      file += "{\"text\": \"" + text + "\"}\n";  // no id
    } else if (kind == 4) {
      file += "{\"id\": " + n + ", \"text\": \"" + text + "\"}\n";
    } else if (kind == 5) {
      file += "{\"id\": \"x" + n + "\", \"text\": 7}\n";  // skipped
    } else if (kind == 6) {
      file += "\n  \r\n";
    } else {
      file += "{\"id\": \"d" + n + "\", \"text\": \"" + text + "\"}" + (kind < 15 ? "\r\n" : "\n");
    }
  }
  for (std::string& file : out) {
    file += "{\"id\": \"end" + std::to_string(file.size()) + "\", \"text\": \"the end\"}";
  }
  return out;
}

class DeferredSketchesTest : public ::testing::Test {
 protected:
  std::vector<std::string> WriteCorpus(int files, int records, uint64_t seed) {
    std::vector<std::string> paths;
    const std::vector<std::string> contents = DeferredCorpus(files, records, seed);
    for (size_t f = 0; f < contents.size(); ++f) {
      paths.push_back(temp_.Write("c" + std::to_string(f) + ".jsonl", contents[f]));
    }
    return paths;
  }

  static std::unique_ptr<Fingerprinter> Make(const Recipe& recipe,
                                             const SketchSelection& selection) {
    return std::move(CreateCpuFingerprinter(recipe, selection)).value();
  }

  // With keep_raw, the records are kept in memory instead of located (as
  // `dedup` from stdin).
  static FingerprintedCorpus CollectWith(const std::vector<std::string>& inputs,
                                         const Fingerprinter& fingerprinter, bool locate,
                                         size_t batch_bytes, bool keep_raw = false,
                                         LshParams band_keys = {}) {
    InputOptions options;
    options.keep_raw_records = keep_raw;
    auto reader = DocumentReader::Open(inputs, options);
    EXPECT_TRUE(reader.ok()) << reader.status();
    FingerprintPipelineOptions pipeline;
    pipeline.batch_bytes = batch_bytes;
    pipeline.record_locations = locate && !keep_raw;
    pipeline.band_keys = band_keys;
    FingerprintedCorpus corpus;
    Status status = CollectFingerprints(**reader, fingerprinter, pipeline, keep_raw, &corpus);
    EXPECT_TRUE(status.ok()) << status;
    return corpus;
  }

  test_support::TempDir temp_;
  Recipe recipe_ = *PresetRecipe("default");
};

void ExpectSamePairs(const std::vector<SimilarPair>& want, const std::vector<SimilarPair>& got,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].a, want[i].a) << what;
    EXPECT_EQ(got[i].b, want[i].b) << what;
    EXPECT_EQ(got[i].similarity, want[i].similarity) << what;  // the same bits
    EXPECT_EQ(got[i].distance, want[i].distance) << what;
  }
}

TEST_F(DeferredSketchesTest, SamePairsAsEverySketchOfEveryDocument) {
  const std::vector<std::string> inputs = WriteCorpus(3, 600, 13);
  for (bool exact : {true, false}) {
    for (double threshold : {0.5, 0.8}) {
      if (!exact && threshold == 0.5) continue;  // sketch verification: one threshold
      NearDuplicateOptions options;
      options.threshold = threshold;
      options.verify_exact = exact;
      const Recipe recipe = RecipeForNearDuplicates(recipe_, options);
      const auto full = Make(recipe, SketchesForNearDuplicates(options));
      const auto lsh = Make(recipe, CandidateSketches(options));
      const auto verifier = Make(recipe, VerificationSketches(options));
      const FingerprintedCorpus reference = CollectWith(inputs, *full, false, size_t{1} << 20);
      NearDuplicateReport want_report;
      auto want = FindNearDuplicatePairs(reference.fingerprints, recipe_, options, &want_report);
      ASSERT_TRUE(want.ok()) << want.status();
      // Planted copies: pairs, and documents in no candidate pair.
      ASSERT_GT(want->size(), 20u);
      const LshParams bands = ChooseNearDuplicateScheme(recipe_, options, 0)->lsh.params;
      for (int threads : {1, 2, 3}) {
        for (bool keyed : {false, true}) {
          tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
          // At 2 threads from the records kept in memory, else located.
          const bool raw = threads == 2;
          // Keyed: the first pass keeps band keys, not the k-value sketches.
          FingerprintedCorpus corpus = CollectWith(inputs, *lsh, true, raw ? 4096 : 1 << 20, raw,
                                                   keyed ? bands : LshParams{});
          if (keyed) {
            ASSERT_EQ(corpus.band_keys.size(), corpus.ids.size() * bands.num_bands);
            // The keys are those of the reference's sketches.
            const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe_, options, 0);
            std::vector<uint64_t> keys;
            for (size_t doc = 0; doc < corpus.ids.size(); ++doc) {
              ASSERT_TRUE(corpus.fingerprints[doc].kvalue_minhash.values.empty());
              ASSERT_EQ(corpus.fingerprints[doc].kvalue_minhash.empty,
                        reference.fingerprints[doc].kvalue_minhash.empty);
              ASSERT_EQ(corpus.fingerprints[doc].num_tokens,
                        reference.fingerprints[doc].num_tokens);
              ASSERT_TRUE(
                  ComputeBandKeys(reference.fingerprints[doc], scheme, {0, scheme.num_parts}, &keys)
                      .ok());
              if (keys.empty()) continue;
              ASSERT_TRUE(std::equal(keys.begin(), keys.end(),
                                     corpus.band_keys.begin() + doc * bands.num_bands))
                  << doc;
            }
          } else {
            ASSERT_TRUE(corpus.band_keys.empty());
          }
          ASSERT_EQ(corpus.ids, reference.ids);
          ASSERT_EQ(corpus.record_locations.size(), raw ? 0 : corpus.ids.size());
          ASSERT_EQ(corpus.raw_records.size(), raw ? corpus.ids.size() : 0);
          // The first pass computed no verification sketch.
          for (const Fingerprint& fp : corpus.fingerprints) {
            ASSERT_TRUE(fp.chunks.empty());
            ASSERT_TRUE(fp.minhash.values.empty());
          }
          NearDuplicateReport report;
          auto got = FindNearDuplicatePairsDeferred(&corpus, *verifier, InputOptions{}, recipe_,
                                                    options, &report);
          ASSERT_TRUE(got.ok()) << got.status();
          const std::string what = "exact " + std::to_string(exact) + " threshold " +
                                   std::to_string(threshold) + " threads " +
                                   std::to_string(threads) + " keyed " + std::to_string(keyed);
          ExpectSamePairs(*want, *got, what);
          EXPECT_EQ(report.candidates, want_report.candidates) << what;
          EXPECT_EQ(report.exact_checks, want_report.exact_checks) << what;
          EXPECT_EQ(report.empty_documents, want_report.empty_documents) << what;
          EXPECT_EQ(report.pairs, want_report.pairs) << what;
          EXPECT_GT(report.sketched_documents, 0u);
          EXPECT_LT(report.sketched_documents, corpus.ids.size()) << what;
          // The documents sketched again hold what one pass computes.
          for (size_t doc = 0; doc < corpus.ids.size(); ++doc) {
            if (corpus.fingerprints[doc].minhash.values.empty()) continue;
            EXPECT_EQ(corpus.fingerprints[doc].minhash.values,
                      reference.fingerprints[doc].minhash.values);
            EXPECT_EQ(corpus.fingerprints[doc].chunks, reference.fingerprints[doc].chunks);
            if (!keyed) {
              EXPECT_EQ(corpus.fingerprints[doc].kvalue_minhash.values,
                        reference.fingerprints[doc].kvalue_minhash.values);
            }
          }
        }
      }
    }
  }
}

TEST_F(DeferredSketchesTest, FingerprintsAnySubsetOfRecordsInAnyRangeSize) {
  const std::vector<std::string> inputs = WriteCorpus(2, 200, 7);
  NearDuplicateOptions options;
  const Recipe recipe = RecipeForNearDuplicates(recipe_, options);
  const auto full = Make(recipe, SketchesForNearDuplicates(options));
  const FingerprintedCorpus reference = CollectWith(inputs, *full, false, size_t{1} << 20);
  const FingerprintedCorpus located =
      CollectWith(inputs, *Make(recipe, CandidateSketches(options)), true, size_t{1} << 20);
  std::vector<uint64_t> every_third;
  for (uint64_t doc = 0; doc < located.ids.size(); doc += 3) every_third.push_back(doc);
  for (size_t batch_bytes : {size_t{1}, size_t{500}, size_t{1} << 20}) {
    std::vector<Fingerprint> fingerprints(located.ids.size());
    ASSERT_TRUE(FingerprintLocatedRecords(located, every_third, *full, InputOptions{},
                                          &fingerprints, batch_bytes)
                    .ok());
    for (uint64_t doc = 0; doc < located.ids.size(); ++doc) {
      if (doc % 3 != 0) {
        EXPECT_EQ(fingerprints[doc].num_tokens, 0u);
        continue;
      }
      EXPECT_EQ(fingerprints[doc].num_tokens, reference.fingerprints[doc].num_tokens);
      EXPECT_EQ(fingerprints[doc].minhash.values, reference.fingerprints[doc].minhash.values);
      EXPECT_EQ(fingerprints[doc].chunks, reference.fingerprints[doc].chunks) << doc;
    }
  }
  // Bad arguments are errors, not crashes.
  std::vector<Fingerprint> wrong_size(1);
  EXPECT_EQ(
      FingerprintLocatedRecords(located, every_third, *full, InputOptions{}, &wrong_size).code(),
      StatusCode::kInvalidArgument);
  std::vector<Fingerprint> fingerprints(located.ids.size());
  const std::vector<uint64_t> descending = {5, 2};
  EXPECT_EQ(
      FingerprintLocatedRecords(located, descending, *full, InputOptions{}, &fingerprints).code(),
      StatusCode::kInvalidArgument);
  const FingerprintedCorpus unlocated = CollectWith(inputs, *full, false, size_t{1} << 20);
  EXPECT_EQ(FingerprintLocatedRecords(unlocated, every_third, *full, InputOptions{}, &fingerprints)
                .code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(DeferredSketchesTest, PredictsWhichInputsAreLocated) {
  const std::string content = DeferredCorpus(1, 20, 3)[0];
  const std::string plain = temp_.Write("p.jsonl", content);
  const std::string ndjson = temp_.Write("p.ndjson", content);
  const std::string gz = temp_.Write("g.jsonl.gz", internal::testing::Gzip(content));
  // Compressed under a plain name: the reader decides by the first bytes.
  const std::string disguised = temp_.Write("z.jsonl", internal::testing::Zstd(content));
  const std::string text = temp_.Write("t.txt", "a text file");
  const std::string empty = temp_.Write("e.jsonl", "");
  const std::string directory = temp_.dir().string();  // .gz, .txt, ... inside
  const std::string jsonl_directory =
      std::filesystem::path(temp_.Write("d/one.jsonl", content)).parent_path().string();
  temp_.Write("d/sub/two.ndjson", content);
  NearDuplicateOptions minhash;
  NearDuplicateOptions simhash;
  simhash.method = NearDuplicateMethod::kSimHash;
  InputOptions unmapped;
  unmapped.map_files = false;
  InputOptions as_jsonl;
  as_jsonl.format = InputFormat::kJsonl;
  using Inputs = std::vector<std::string>;
  EXPECT_TRUE(CanDeferVerificationSketches(Inputs{plain, ndjson}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{plain}, InputOptions{}, simhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{plain}, unmapped, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{plain, gz}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{disguised}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{text}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{empty}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{directory}, InputOptions{}, minhash));
  EXPECT_TRUE(
      CanDeferVerificationSketches(Inputs{jsonl_directory, plain}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{"-"}, InputOptions{}, minhash));
  EXPECT_FALSE(CanDeferVerificationSketches(Inputs{}, InputOptions{}, minhash));
  // A text file read as JSONL by the input format is mapped too.
  const std::string named_txt = temp_.Write("records.txt", content);
  EXPECT_TRUE(CanDeferVerificationSketches(Inputs{named_txt}, as_jsonl, minhash));
  // Every prediction is what CollectFingerprints then does.
  NearDuplicateOptions options;
  const auto lsh = Make(RecipeForNearDuplicates(recipe_, options), CandidateSketches(options));
  for (const Inputs& inputs : {Inputs{plain, ndjson}, Inputs{plain, gz}, Inputs{disguised},
                               Inputs{jsonl_directory}, Inputs{directory}}) {
    const FingerprintedCorpus corpus = CollectWith(inputs, *lsh, true, 1 << 20);
    EXPECT_EQ(corpus.record_locations.size() == corpus.ids.size(),
              CanDeferVerificationSketches(inputs, InputOptions{}, options))
        << inputs.back();
  }
}

TEST_F(DeferredSketchesTest, AFileChangedBeforeTheSecondPassIsDataLoss) {
  const std::vector<std::string> inputs = WriteCorpus(1, 300, 21);
  NearDuplicateOptions options;
  options.threshold = 0.5;
  const Recipe recipe = RecipeForNearDuplicates(recipe_, options);
  const auto full = Make(recipe, SketchesForNearDuplicates(options));
  const auto lsh = Make(recipe, CandidateSketches(options));
  FingerprintedCorpus corpus = CollectWith(inputs, *lsh, true, 1 << 20);
  // The same bytes with each id's first letter changed, and a first pass
  // that saw these modification and status change times: the id check
  // notices.
  std::string content = DeferredCorpus(1, 300, 21)[0];
  for (size_t at = content.find("\"id\": \"d"); at != std::string::npos;
       at = content.find("\"id\": \"d", at + 1)) {
    content[at + 7] = 'e';
  }
  temp_.Write("c0.jsonl", content);
  struct stat st;
  ASSERT_EQ(::stat(inputs[0].c_str(), &st), 0);
  FingerprintedCorpus touched = corpus;
  touched.record_files[0].modified_ns = internal::TimeNanoseconds(st.st_mtim);
  touched.record_files[0].changed_ns = internal::TimeNanoseconds(st.st_ctim);
  // The message names the file, not a command (pairs, clusters and dedup
  // all sketch again; it said "dedup" until session 13).
  const std::string changed = "the inputs changed between passes over them (" + inputs[0] + ")";
  auto pairs = FindNearDuplicatePairsDeferred(&touched, *full, InputOptions{}, recipe_, options);
  EXPECT_EQ(pairs.status().code(), StatusCode::kDataLoss) << pairs.status();
  EXPECT_EQ(pairs.status().message(), changed);
  // Another modification time (the first pass's): refused before reading.
  pairs = FindNearDuplicatePairsDeferred(&corpus, *full, InputOptions{}, recipe_, options);
  EXPECT_EQ(pairs.status().code(), StatusCode::kDataLoss) << pairs.status();
  EXPECT_EQ(pairs.status().message(), changed);
  std::filesystem::remove(inputs[0]);
  pairs = FindNearDuplicatePairsDeferred(&touched, *full, InputOptions{}, recipe_, options);
  EXPECT_EQ(pairs.status().code(), StatusCode::kDataLoss) << pairs.status();
}

// A corpus of band keys records the choice of its bands: the search takes the
// scheme from it (the same pairs and report as choosing again) and is not
// refused; a choice that is not of the keys, or of options ChooseLshParams
// refuses, is refused; documents added with the same bands from other
// options drop it.
TEST_F(DeferredSketchesTest, TheCorpusRecordsTheChoiceOfItsBands) {
  const std::vector<std::string> inputs = WriteCorpus(2, 200, 7);
  NearDuplicateOptions options;
  const LshParamsChoice choice = ChooseNearDuplicateScheme(recipe_, options, 0)->lsh;
  const ChosenLshParams chosen{LshParamsOptionsForNearDuplicates(recipe_, options), choice};
  const auto lsh = Make(recipe_, CandidateSketches(options));
  auto collect_into = [&](std::optional<ChosenLshParams> record, LshParams bands,
                          FingerprintedCorpus* into) {
    auto reader = DocumentReader::Open(inputs, InputOptions{});
    EXPECT_TRUE(reader.ok());
    FingerprintPipelineOptions pipeline;
    pipeline.record_locations = true;
    pipeline.band_keys = bands;
    pipeline.band_key_choice = record;
    return CollectFingerprints(**reader, *lsh, pipeline, false, into);
  };
  const auto verifier = Make(recipe_, VerificationSketches(options));
  auto search = [&](FingerprintedCorpus* corpus, NearDuplicateReport* report) {
    return FindNearDuplicatePairsDeferred(corpus, *verifier, InputOptions{}, recipe_, options,
                                          report);
  };
  FingerprintedCorpus plain;
  ASSERT_TRUE(collect_into(std::nullopt, choice.params, &plain).ok());
  EXPECT_FALSE(plain.band_key_choice.has_value());
  FingerprintedCorpus recorded;
  ASSERT_TRUE(collect_into(chosen, choice.params, &recorded).ok());
  ASSERT_TRUE(recorded.band_key_choice.has_value());
  EXPECT_TRUE(SameLshParamsOptions(recorded.band_key_choice->options, chosen.options));
  NearDuplicateReport plain_report, recorded_report;
  auto want = search(&plain, &plain_report);
  auto got = search(&recorded, &recorded_report);
  ASSERT_TRUE(want.ok() && got.ok());
  ASSERT_FALSE(want->empty());
  ExpectSamePairs(*want, *got, "recorded choice");
  EXPECT_EQ(recorded_report.lsh.weighted_error, plain_report.lsh.weighted_error);
  EXPECT_EQ(recorded_report.lsh.false_positive_area, plain_report.lsh.false_positive_area);
  EXPECT_EQ(recorded_report.candidates, plain_report.candidates);

  // The search takes the recorded choice as it is (it does not choose again).
  ChosenLshParams marked = chosen;
  marked.choice.weighted_error = 42.0;
  FingerprintedCorpus marked_corpus;
  ASSERT_TRUE(collect_into(marked, choice.params, &marked_corpus).ok());
  NearDuplicateReport marked_report;
  ASSERT_TRUE(search(&marked_corpus, &marked_report).ok());
  EXPECT_EQ(marked_report.lsh.weighted_error, 42.0);
  // ... only for its own options: a search of others chooses.
  NearDuplicateOptions other = options;
  other.threshold = 0.8 + 1e-9;
  ASSERT_EQ(ChooseNearDuplicateScheme(recipe_, other, 0)->lsh.params.num_bands,
            choice.params.num_bands);
  NearDuplicateReport other_report;
  ASSERT_TRUE(FindNearDuplicatePairsDeferred(&marked_corpus, *verifier, InputOptions{}, recipe_,
                                             other, &other_report)
                  .ok());
  EXPECT_NE(other_report.lsh.weighted_error, 42.0);

  // A choice of other bands, or of another num_hashes, is refused.
  FingerprintedCorpus refused;
  ChosenLshParams wrong_bands = chosen;
  wrong_bands.choice.params.num_bands -= 1;
  EXPECT_EQ(collect_into(wrong_bands, choice.params, &refused).code(),
            StatusCode::kInvalidArgument);
  ChosenLshParams wrong_hashes = chosen;
  wrong_hashes.options.num_hashes = 130;
  EXPECT_EQ(collect_into(wrong_hashes, choice.params, &refused).code(),
            StatusCode::kInvalidArgument);
  // So is one whose options ChooseLshParams refuses (the search would take
  // it without their checks), and a choice without band keys.
  for (double threshold : {1.0, 0.0, 1.5, -0.5}) {
    ChosenLshParams bad_threshold = chosen;
    bad_threshold.options.threshold = threshold;
    EXPECT_EQ(collect_into(bad_threshold, choice.params, &refused).code(),
              StatusCode::kInvalidArgument)
        << threshold;
  }
  ChosenLshParams bad_weight = chosen;
  bad_weight.options.false_positive_weight = -1.0;
  EXPECT_EQ(collect_into(bad_weight, choice.params, &refused).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(collect_into(chosen, LshParams{}, &refused).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(refused.ids.empty());
  // A record set on the corpus by hand gets the same checks in the search.
  for (double threshold : {1.0, 0.0}) {
    FingerprintedCorpus forged;
    ASSERT_TRUE(collect_into(std::nullopt, choice.params, &forged).ok());
    forged.band_key_choice = chosen;
    forged.band_key_choice->options.threshold = threshold;
    NearDuplicateOptions forged_options = options;
    forged_options.threshold = threshold;
    auto forged_pairs = FindNearDuplicatePairsDeferred(&forged, *verifier, InputOptions{}, recipe_,
                                                       forged_options, nullptr);
    EXPECT_EQ(forged_pairs.status().code(), StatusCode::kInvalidArgument) << threshold;
  }

  // Appending with the same choice keeps it; with the same bands from other
  // options, or with none, drops it.
  ASSERT_TRUE(collect_into(chosen, choice.params, &recorded).ok());
  EXPECT_TRUE(recorded.band_key_choice.has_value());
  ChosenLshParams other_chosen{LshParamsOptionsForNearDuplicates(recipe_, other),
                               ChooseNearDuplicateScheme(recipe_, other, 0)->lsh};
  ASSERT_TRUE(collect_into(other_chosen, choice.params, &recorded).ok());
  EXPECT_FALSE(recorded.band_key_choice.has_value());
  ASSERT_TRUE(collect_into(chosen, choice.params, &marked_corpus).ok());
  ASSERT_TRUE(marked_corpus.band_key_choice.has_value());
  ASSERT_TRUE(collect_into(std::nullopt, choice.params, &marked_corpus).ok());
  EXPECT_FALSE(marked_corpus.band_key_choice.has_value());
}

// Band keys need a fingerprinter of the k-value sketch alone, and bands that
// fit in its sketch; the bands must be those the search chooses.
TEST_F(DeferredSketchesTest, BandKeysAreRefusedWhereTheyCannotServe) {
  const std::vector<std::string> inputs = WriteCorpus(1, 50, 5);
  NearDuplicateOptions options;
  const LshParams bands = ChooseNearDuplicateScheme(recipe_, options, 0)->lsh.params;
  auto collect = [&](const Fingerprinter& fingerprinter, LshParams params) {
    auto reader = DocumentReader::Open(inputs, InputOptions{});
    EXPECT_TRUE(reader.ok());
    FingerprintPipelineOptions pipeline;
    pipeline.record_locations = true;
    pipeline.band_keys = params;
    FingerprintedCorpus corpus;
    Status status = CollectFingerprints(**reader, fingerprinter, pipeline, false, &corpus);
    EXPECT_TRUE(corpus.ids.empty() || status.ok());
    return std::pair(status, std::move(corpus));
  };
  const auto full = Make(recipe_, SketchesForNearDuplicates(options));
  EXPECT_EQ(collect(*full, bands).first.code(), StatusCode::kInvalidArgument);
  const auto lsh = Make(recipe_, CandidateSketches(options));
  Status too_many = collect(*lsh, LshParams{17, 8}).first;
  EXPECT_EQ(too_many.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.message().find("do not fit in 128 hashes"), std::string::npos) << too_many;
  // Keys of other bands than the options choose: refused by the search.
  auto [status, corpus] = collect(*lsh, LshParams{bands.num_bands - 1, bands.rows_per_band});
  ASSERT_TRUE(status.ok()) << status;
  const auto verifier = Make(recipe_, VerificationSketches(options));
  auto pairs =
      FindNearDuplicatePairsDeferred(&corpus, *verifier, InputOptions{}, recipe_, options, nullptr);
  ASSERT_FALSE(pairs.ok());
  EXPECT_EQ(pairs.status().code(), StatusCode::kFailedPrecondition);

  // Keys cut from another num_hashes with the same bands (130 and 128
  // hashes choose the same bands here): refused by the search.
  Recipe recipe130 = recipe_;
  recipe130.minhash.num_hashes = 130;
  ASSERT_EQ(ChooseNearDuplicateScheme(recipe130, options, 0)->lsh.params.num_bands,
            bands.num_bands);
  ASSERT_EQ(ChooseNearDuplicateScheme(recipe130, options, 0)->lsh.params.rows_per_band,
            bands.rows_per_band);
  {
    const auto lsh130 = Make(recipe130, CandidateSketches(options));
    auto [status130, corpus130] = collect(*lsh130, bands);
    ASSERT_TRUE(status130.ok()) << status130;
    EXPECT_EQ(corpus130.band_key_num_hashes, 130);
    auto mismatched = FindNearDuplicatePairsDeferred(&corpus130, *verifier, InputOptions{}, recipe_,
                                                     options, nullptr);
    ASSERT_FALSE(mismatched.ok());
    EXPECT_EQ(mismatched.status().code(), StatusCode::kInvalidArgument) << mismatched.status();
  }
  // A corpus holds the keys of all its documents or of none, of one scheme.
  auto collect_into = [&](const Fingerprinter& fingerprinter, LshParams params,
                          FingerprintedCorpus* into) {
    auto reader = DocumentReader::Open(inputs, InputOptions{});
    EXPECT_TRUE(reader.ok());
    FingerprintPipelineOptions pipeline;
    pipeline.band_keys = params;
    return CollectFingerprints(**reader, fingerprinter, pipeline, false, into);
  };
  {
    FingerprintedCorpus unkeyed;
    ASSERT_TRUE(collect_into(*lsh, LshParams{}, &unkeyed).ok());
    const size_t held = unkeyed.ids.size();
    EXPECT_EQ(collect_into(*lsh, bands, &unkeyed).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(unkeyed.ids.size(), held);
    EXPECT_TRUE(unkeyed.band_keys.empty());
  }
  {
    FingerprintedCorpus keyed_corpus;
    ASSERT_TRUE(collect_into(*lsh, bands, &keyed_corpus).ok());
    const size_t held = keyed_corpus.ids.size();
    EXPECT_EQ(collect_into(*lsh, LshParams{}, &keyed_corpus).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(collect_into(*lsh, LshParams{bands.num_bands - 1, bands.rows_per_band}, &keyed_corpus)
                  .code(),
              StatusCode::kInvalidArgument);
    const auto lsh130 = Make(recipe130, CandidateSketches(options));
    EXPECT_EQ(collect_into(*lsh130, bands, &keyed_corpus).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(keyed_corpus.ids.size(), held);
    // The same keys append.
    ASSERT_TRUE(collect_into(*lsh, bands, &keyed_corpus).ok());
    EXPECT_EQ(keyed_corpus.ids.size(), 2 * held);
    EXPECT_EQ(keyed_corpus.band_keys.size(), 2 * held * bands.num_bands);
  }

  // The other pipelines refuse band keys (they used to hash them from a
  // fingerprinter without the k-value sketch: a crash).
  SketchSelection simhash_only;
  simhash_only.simhash = true;
  const auto simhash = Make(recipe_, simhash_only);
  FingerprintPipelineOptions keyed;
  keyed.band_keys = LshParams{16, 8};
  uint64_t seen = 0;
  auto reader = DocumentReader::Open(inputs, InputOptions{});
  ASSERT_TRUE(reader.ok());
  Status flat = RunFlatFingerprintPipeline(
      **reader, *simhash, keyed, FlatFingerprintFormatter(),
      [&](const DocumentViews&, const FingerprintBatch& batch, std::string_view) {
        seen += batch.size();
        return Status::Ok();
      });
  EXPECT_EQ(flat.code(), StatusCode::kInvalidArgument) << flat;
  EXPECT_EQ(seen, 0u);
  reader = DocumentReader::Open(inputs, InputOptions{});
  ASSERT_TRUE(reader.ok());
  Status documents = RunFingerprintPipeline(
      **reader, *lsh, keyed,
      [&](std::span<const Document>, std::span<const Fingerprint>) { return Status::Ok(); });
  EXPECT_EQ(documents.code(), StatusCode::kInvalidArgument) << documents;
  reader = DocumentReader::Open(inputs, InputOptions{});
  ASSERT_TRUE(reader.ok());
  Status views = RunFingerprintViewPipeline(**reader, *lsh, keyed, FingerprintViewFormatter(),
                                            [&](const DocumentViews&, std::span<const Fingerprint>,
                                                std::string_view) { return Status::Ok(); });
  EXPECT_EQ(views.code(), StatusCode::kInvalidArgument) << views;
}

}  // namespace
}  // namespace neardup
