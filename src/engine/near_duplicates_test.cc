#include "neardup/near_duplicates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/near_duplicates_test_util.h"
#include "neardup/lsh_params.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/similarity.h"
#include "support/planted_corpus.h"

namespace neardup {
namespace {

using test_support::FingerprintTexts;
using test_support::PlantedTexts;
using ::testing::HasSubstr;

bool SharesABand(const KValueSketch& x, const KValueSketch& y, const LshParams& params) {
  for (int band = 0; band < params.num_bands; ++band) {
    bool equal = true;
    for (int row = 0; row < params.rows_per_band; ++row) {
      int i = band * params.rows_per_band + row;
      equal = equal && x.values[i] == y.values[i];
    }
    if (equal) return true;
  }
  return false;
}

// The digest route's wide SimHash: pairs over all the bits, equal to a
// linear scan; documents without a shingle are never paired.
TEST(NearDuplicatesTest, WideSimHashPairsEqualALinearScanOverAllBits) {
  std::vector<std::string> texts = PlantedTexts(400, 18);
  texts.push_back("two words");  // no 3-shingle: the all-zero SimHash
  texts.push_back("other pair");
  for (const std::string preset : {"exlsh", "exlsh-chars"}) {
    for (const FeatureHashKind hash : {FeatureHashKind::kMd5, FeatureHashKind::kSha256}) {
      Recipe recipe = *PresetRecipe(preset);
      recipe.hash = hash;
      recipe.simhash.bits = DigestBits(hash);
      for (const int max_distance : {4, 12}) {
        NearDuplicateOptions options;
        options.method = NearDuplicateMethod::kSimHash;
        options.max_distance = max_distance;
        const std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
        NearDuplicateReport report;
        Result<std::vector<SimilarPair>> pairs =
            FindNearDuplicatePairs(fps, recipe, options, &report);
        ASSERT_TRUE(pairs.ok()) << pairs.status();
        std::vector<SimilarPair> expected;
        for (uint32_t a = 0; a < fps.size(); ++a) {
          for (uint32_t b = a + 1; b < fps.size(); ++b) {
            if (fps[a].num_shingles == 0 || fps[b].num_shingles == 0) continue;
            const int distance = HammingDistance(fps[a].simhash_wide, fps[b].simhash_wide);
            if (distance > max_distance) continue;
            expected.push_back(SimilarPair{
                a, b, 1.0 - distance / static_cast<double>(recipe.simhash.bits), distance});
          }
        }
        EXPECT_EQ(*pairs, expected)
            << preset << " " << recipe.simhash.bits << " bits, k " << max_distance;
        EXPECT_EQ(report.num_blocks, max_distance + 1);
        if (max_distance == 12) {
          EXPECT_FALSE(expected.empty());
        }
      }
    }
  }
}

TEST(NearDuplicatesTest, WideSimHashRejectsADistanceAsWideAsTheHash) {
  Recipe recipe = *PresetRecipe("exlsh");
  NearDuplicateOptions options;
  options.method = NearDuplicateMethod::kSimHash;
  options.max_distance = 128;
  std::vector<Fingerprint> fps = FingerprintTexts({"a b c d", "a b c e"}, recipe, options);
  Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options);
  ASSERT_FALSE(pairs.ok());
  EXPECT_THAT(pairs.status().message(), HasSubstr("at most the 128 bits"));
}

TEST(NearDuplicatesTest, SimHashPairsEqualALinearScan) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedTexts(600, 1);
  for (int max_distance : {2, 3, 5}) {
    NearDuplicateOptions options;
    options.method = NearDuplicateMethod::kSimHash;
    options.max_distance = max_distance;
    // Explicit blocks, and 0 (chosen for the corpus size).
    options.num_blocks = max_distance == 3 ? 0 : max_distance + 3;
    std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
    NearDuplicateReport report;
    Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, &report);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    std::vector<SimilarPair> expected;
    for (uint32_t a = 0; a < fps.size(); ++a) {
      for (uint32_t b = a + 1; b < fps.size(); ++b) {
        if (fps[a].num_tokens == 0 || fps[b].num_tokens == 0) continue;
        int d = HammingDistance(fps[a].simhash, fps[b].simhash);
        if (d <= max_distance) expected.push_back(SimilarPair{a, b, 1.0 - d / 64.0, d});
      }
    }
    EXPECT_EQ(*pairs, expected) << "max_distance " << max_distance;
    EXPECT_GT(expected.size(), 15u);  // the planted copies with few edits (18 at distance 2)
    EXPECT_EQ(report.pairs, expected.size());
    size_t empty = 0;
    for (const Fingerprint& fp : fps) empty += fp.num_tokens == 0;
    EXPECT_EQ(report.empty_documents, empty);
    EXPECT_GT(empty, 10u);
  }
}

TEST(NearDuplicatesTest, MinHashPairsEqualBandingPlusVerificationByBruteForce) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedTexts(600, 2);
  for (double threshold : {0.5, 0.8}) {
    NearDuplicateOptions options;
    options.threshold = threshold;
    options.verify_exact = false;
    std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
    NearDuplicateReport report;
    Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, &report);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    std::vector<SimilarPair> expected;
    for (uint32_t a = 0; a < fps.size(); ++a) {
      for (uint32_t b = a + 1; b < fps.size(); ++b) {
        if (fps[a].num_tokens == 0 || fps[b].num_tokens == 0) continue;
        if (!SharesABand(fps[a].kvalue_minhash, fps[b].kvalue_minhash, report.lsh.params)) continue;
        double estimate = *EstimateJaccard(fps[a].minhash, fps[b].minhash);
        if (estimate >= threshold) expected.push_back(SimilarPair{a, b, estimate, -1});
      }
    }
    EXPECT_EQ(*pairs, expected) << "threshold " << threshold;
    EXPECT_GT(expected.size(), 30u);
  }
}

TEST(NearDuplicatesTest, ExactVerificationReportsExactJaccard) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedTexts(400, 3);
  NearDuplicateOptions options;
  options.threshold = 0.7;
  options.verify_exact = true;
  std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
  NearDuplicateReport report;
  Result<std::vector<SimilarPair>> pairs = FindNearDuplicatePairs(fps, recipe, options, &report);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_GT(pairs->size(), 20u);
  EXPECT_GE(report.exact_checks, pairs->size());
  for (const SimilarPair& pair : *pairs) {
    double exact = ExactJaccard(fps[pair.a].chunks, fps[pair.b].chunks);
    EXPECT_EQ(pair.similarity, exact);
    EXPECT_GE(exact, 0.7);
  }
  // Every candidate pair whose estimate and exact Jaccard both reach the
  // threshold is found (exact verification only adds pairs the estimate
  // missed).
  for (uint32_t a = 0; a < fps.size(); ++a) {
    for (uint32_t b = a + 1; b < fps.size(); ++b) {
      if (fps[a].num_tokens == 0 || fps[b].num_tokens == 0) continue;
      if (!SharesABand(fps[a].kvalue_minhash, fps[b].kvalue_minhash, report.lsh.params)) continue;
      double exact = ExactJaccard(fps[a].chunks, fps[b].chunks);
      if (*EstimateJaccard(fps[a].minhash, fps[b].minhash) >= 0.7 && exact >= 0.7) {
        EXPECT_TRUE(std::binary_search(pairs->begin(), pairs->end(), SimilarPair{a, b, exact, -1},
                                       [](const SimilarPair& x, const SimilarPair& y) {
                                         return x.a != y.a ? x.a < y.a : x.b < y.b;
                                       }))
            << a << " " << b;
      }
    }
  }
}

TEST(NearDuplicatesTest, SameResultWhateverTheThreadCount) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<std::string> texts = PlantedTexts(500, 4);
  NearDuplicateOptions options;
  std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
  std::vector<SimilarPair> all = *FindNearDuplicatePairs(fps, recipe, options);
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  EXPECT_EQ(*FindNearDuplicatePairs(fps, recipe, options), all);
}

TEST(NearDuplicatesTest, BadOptionsAreErrors) {
  Recipe recipe = *PresetRecipe("default");
  std::vector<Fingerprint> none;
  NearDuplicateOptions simhash;
  simhash.method = NearDuplicateMethod::kSimHash;
  simhash.max_distance = 7;
  simhash.num_blocks = 6;
  Result<std::vector<SimilarPair>> bad = FindNearDuplicatePairs(none, recipe, simhash);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("max_distance (7)"));
  NearDuplicateOptions minhash;
  minhash.threshold = 1.5;
  EXPECT_FALSE(FindNearDuplicatePairs(none, recipe, minhash).ok());
  EXPECT_FALSE(ParseNearDuplicateMethod("tfidf").ok());
}

// A recorded MinHash choice (band keys cut by it): ChooseNearDuplicateScheme
// takes its bands when its options are those of the search's options
// (LshParamsOptionsForNearDuplicates), and chooses afresh otherwise. The
// record is altered on purpose here, so that taking it shows.
TEST(NearDuplicatesTest, ChooseNearDuplicateSchemeTakesAMatchingRecordedChoice) {
  for (int num_hashes : {64, 128, 256}) {
    Recipe recipe = *PresetRecipe("default");
    recipe.minhash.num_hashes = num_hashes;
    for (double threshold : {0.5, 0.8, 0.9}) {
      NearDuplicateOptions options;
      options.threshold = threshold;
      const LshParamsOptions lsh_options = LshParamsOptionsForNearDuplicates(recipe, options);
      Result<LshParamsChoice> choice = ChooseLshParams(lsh_options);
      ASSERT_TRUE(choice.ok());
      ChosenLshParams recorded{lsh_options, *choice};
      recorded.choice.params.num_bands = 1;
      recorded.choice.params.rows_per_band = 1;
      Result<NearDuplicateScheme> scheme = ChooseNearDuplicateScheme(recipe, options, 0, &recorded);
      ASSERT_TRUE(scheme.ok()) << scheme.status().ToString();
      EXPECT_EQ(scheme->num_hashes, num_hashes);
      EXPECT_EQ(scheme->lsh.params.num_bands, 1);
      EXPECT_EQ(scheme->lsh.params.rows_per_band, 1);
      EXPECT_EQ(scheme->num_parts, 1u);
      // Without a record, or with one of other options (threshold, either
      // weight): the search's choice.
      NearDuplicateOptions other = options;
      other.threshold = threshold - 0.1;
      NearDuplicateOptions other_fp = options;
      other_fp.false_positive_weight = 0.5;
      NearDuplicateOptions other_fn = options;
      other_fn.false_negative_weight = 0.5;
      for (const auto& [opts, record] :
           {std::pair{options, static_cast<const ChosenLshParams*>(nullptr)},
            std::pair{other, static_cast<const ChosenLshParams*>(&recorded)},
            std::pair{other_fp, static_cast<const ChosenLshParams*>(&recorded)},
            std::pair{other_fn, static_cast<const ChosenLshParams*>(&recorded)}}) {
        Result<NearDuplicateScheme> fresh = ChooseNearDuplicateScheme(recipe, opts, 0, record);
        Result<LshParamsChoice> expected =
            ChooseLshParams(LshParamsOptionsForNearDuplicates(recipe, opts));
        ASSERT_TRUE(fresh.ok() && expected.ok());
        EXPECT_EQ(fresh->lsh.params.num_bands, expected->params.num_bands);
        EXPECT_EQ(fresh->lsh.params.rows_per_band, expected->params.rows_per_band);
        EXPECT_EQ(fresh->lsh.weighted_error, expected->weighted_error);
        EXPECT_EQ(fresh->num_parts, static_cast<uint64_t>(expected->params.num_bands));
      }
    }
  }
  // A record does not spare the options their checks: one made for an
  // invalid threshold is refused with it.
  const Recipe recipe = *PresetRecipe("default");
  NearDuplicateOptions bad;
  bad.threshold = 1.5;
  NearDuplicateOptions good;
  ChosenLshParams recorded{LshParamsOptionsForNearDuplicates(recipe, bad),
                           *ChooseLshParams(LshParamsOptionsForNearDuplicates(recipe, good))};
  Result<NearDuplicateScheme> refused = ChooseNearDuplicateScheme(recipe, bad, 0, &recorded);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("threshold"));
}

// Splits [0, n) at the given cut points (sorted, each <= n), empty ranges
// included when two cuts are equal.
std::vector<PartRange> Split(uint64_t n, std::vector<uint64_t> cuts) {
  std::vector<PartRange> ranges;
  uint64_t begin = 0;
  for (uint64_t cut : cuts) {
    ranges.push_back({begin, cut});
    begin = cut;
  }
  ranges.push_back({begin, n});
  return ranges;
}

// The stages run in pieces (parts split into ranges, candidates verified in
// chunks, pairs concatenated) give exactly the one-call output, for both
// methods and several splits.
TEST(NearDuplicateStagesTest, PiecesGiveExactlyTheOneCallPairs) {
  const Recipe recipe = *PresetRecipe("default");
  const std::vector<std::string> texts = PlantedTexts(900, 7);
  for (NearDuplicateMethod method :
       {NearDuplicateMethod::kMinHash, NearDuplicateMethod::kSimHash}) {
    for (bool verify_exact : {true, false}) {
      if (method == NearDuplicateMethod::kSimHash && !verify_exact) continue;
      NearDuplicateOptions options;
      options.method = method;
      options.threshold = 0.6;
      options.max_distance = 4;
      options.verify_exact = verify_exact;
      const std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
      NearDuplicateReport one_call_report;
      const std::vector<SimilarPair> one_call =
          *FindNearDuplicatePairs(fps, recipe, options, &one_call_report);
      ASSERT_GT(one_call.size(), 30u);  // the planted copies are found

      const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe, options, fps.size());
      ASSERT_GT(scheme.num_parts, 3u);
      const std::vector<CandidatePair> all = *FindCandidates(fps, scheme, {0, scheme.num_parts});
      EXPECT_EQ(all.size(), one_call_report.candidates);
      const uint64_t n = scheme.num_parts;
      for (const std::vector<uint64_t>& cuts :
           {std::vector<uint64_t>{1}, {n / 2}, {1, 2, n - 1}, {0, 0, n / 3, n / 3, n}}) {
        std::vector<std::vector<CandidatePair>> lists;
        for (PartRange range : Split(n, cuts)) lists.push_back(*FindCandidates(fps, scheme, range));
        const std::vector<CandidatePair> merged = MergeCandidates(lists);
        ASSERT_EQ(merged, all) << "cuts of " << n << " parts";
        // Each part alone finds a proper subset (else the split proves nothing).
        if (cuts.size() == 1 && method == NearDuplicateMethod::kMinHash) {
          EXPECT_LT(lists[0].size(), all.size());
        }

        for (size_t chunk : {size_t{1}, size_t{97}, merged.size()}) {
          std::vector<std::vector<SimilarPair>> verified;
          for (size_t begin = 0; begin < merged.size(); begin += chunk) {
            const size_t end = std::min(merged.size(), begin + chunk);
            verified.push_back(*VerifyCandidates(
                fps, scheme, options,
                std::span<const CandidatePair>(merged.data() + begin, end - begin)));
          }
          // Reversed chunk order: MergePairs sorts.
          std::reverse(verified.begin(), verified.end());
          EXPECT_EQ(MergePairs(verified), one_call) << "chunks of " << chunk;
        }
      }
    }
  }
}

TEST(NearDuplicateStagesTest, BadRangesAndCandidatesAreErrors) {
  const Recipe recipe = *PresetRecipe("default");
  NearDuplicateOptions options;
  const std::vector<Fingerprint> fps = FingerprintTexts(PlantedTexts(20, 3), recipe, options);
  const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe, options, fps.size());
  EXPECT_FALSE(FindCandidates(fps, scheme, {0, scheme.num_parts + 1}).ok());
  EXPECT_FALSE(FindCandidates(fps, scheme, {3, 2}).ok());
  EXPECT_TRUE(FindCandidates(fps, scheme, {2, 2})->empty());
  for (const CandidatePair& bad :
       {CandidatePair{3, 3}, CandidatePair{4, 2}, CandidatePair{1, 20}}) {
    const std::vector<CandidatePair> candidates = {bad};
    Result<std::vector<SimilarPair>> verified = VerifyCandidates(fps, scheme, options, candidates);
    ASSERT_FALSE(verified.ok());
    EXPECT_THAT(verified.status().message(), HasSubstr("must have a < b < the 20 documents"));
  }
  NearDuplicateOptions bad_threshold;
  bad_threshold.threshold = 1.5;
  EXPECT_FALSE(ChooseNearDuplicateScheme(recipe, bad_threshold, 10).ok());
}

// A long candidate list is verified in blocks, many in flight at once, whose
// pairs go straight into one list in block order: at 1 and 3 threads the
// pairs equal those of its 4096-candidate pieces verified one by one.
TEST(NearDuplicateStagesTest, ManyBlocksKeepTheCandidatesOrder) {
  const Recipe recipe = *PresetRecipe("default");
  for (bool verify_exact : {true, false}) {
    NearDuplicateOptions options;
    options.threshold = 0.6;
    options.verify_exact = verify_exact;
    const std::vector<Fingerprint> fps = FingerprintTexts(PlantedTexts(80, 13), recipe, options);
    const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe, options, fps.size());
    std::vector<CandidatePair> every;
    for (uint64_t a = 0; a < fps.size(); ++a) {
      for (uint64_t b = a + 1; b < fps.size(); ++b) every.push_back({a, b});
    }
    const Result<std::vector<SimilarPair>> verified = VerifyCandidates(fps, scheme, options, every);
    ASSERT_TRUE(verified.ok());
    std::vector<CandidatePair> similar;
    for (const SimilarPair& pair : *verified) similar.push_back({pair.a, pair.b});
    ASSERT_GT(similar.size(), 10u);
    // 160 blocks and a part: many more than the blocks in flight at once.
    // Half of the candidates pairs that verify, half any pair.
    std::vector<CandidatePair> candidates;
    for (size_t i = 0; i < 160 * 4096 + 17; ++i) {
      candidates.push_back(i % 2 == 0 ? similar[(i * 7) % similar.size()]
                                      : every[(i * 7) % every.size()]);
    }
    std::vector<SimilarPair> pieces;
    for (size_t begin = 0; begin < candidates.size(); begin += 4096) {
      const size_t end = std::min(candidates.size(), begin + 4096);
      const std::vector<SimilarPair> piece =
          *VerifyCandidates(fps, scheme, options,
                            std::span<const CandidatePair>(candidates.data() + begin, end - begin));
      pieces.insert(pieces.end(), piece.begin(), piece.end());
    }
    ASSERT_GT(pieces.size(), 4096u);
    ASSERT_LT(pieces.size(), candidates.size());  // some candidates rejected
    for (int threads : {1, 3}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      NearDuplicateReport report;
      EXPECT_EQ(*VerifyCandidates(fps, scheme, options, candidates, &report), pieces)
          << threads << " threads, exact " << verify_exact;
    }
  }
}

// Documents with no features are never paired, even when a caller hands
// them in as candidates (their empty sketches would compare equal).
TEST(NearDuplicateStagesTest, EmptyDocumentsAreNeverVerified) {
  const Recipe recipe = *PresetRecipe("default");
  for (NearDuplicateMethod method :
       {NearDuplicateMethod::kMinHash, NearDuplicateMethod::kSimHash}) {
    NearDuplicateOptions options;
    options.method = method;
    const std::vector<Fingerprint> fps = FingerprintTexts({"", "", "a b c d e f"}, recipe, options);
    const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe, options, fps.size());
    const std::vector<CandidatePair> candidates = {{0, 1}, {0, 2}};
    EXPECT_TRUE(VerifyCandidates(fps, scheme, options, candidates)->empty());
  }
}

// Grouping documents by equal (band, key) gives exactly FindCandidates'
// candidates, for any range of bands: what the MPI shuffle relies on.
TEST(NearDuplicateStagesTest, EqualBandKeysGiveExactlyTheCandidates) {
  const Recipe recipe = *PresetRecipe("default");
  NearDuplicateOptions options;
  options.threshold = 0.6;
  const std::vector<Fingerprint> fps = FingerprintTexts(PlantedTexts(600, 11), recipe, options);
  const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe, options, fps.size());
  const uint64_t n = scheme.num_parts;
  for (PartRange range : {PartRange{0, n}, PartRange{1, n / 2}, PartRange{n - 1, n}}) {
    std::vector<std::pair<std::pair<uint64_t, uint64_t>, uint64_t>> keyed;  // ((band, key), doc)
    std::vector<uint64_t> keys;
    for (uint64_t doc = 0; doc < fps.size(); ++doc) {
      ASSERT_TRUE(ComputeBandKeys(fps[doc], scheme, range, &keys).ok());
      if (fps[doc].num_tokens == 0) {
        EXPECT_TRUE(keys.empty());
      }
      for (size_t i = 0; i < keys.size(); ++i) keyed.push_back({{range.begin + i, keys[i]}, doc});
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<CandidatePair> grouped;
    for (size_t begin = 0, end = 0; begin < keyed.size(); begin = end) {
      while (end < keyed.size() && keyed[end].first == keyed[begin].first) ++end;
      for (size_t x = begin; x < end; ++x) {
        for (size_t y = x + 1; y < end; ++y) grouped.push_back({keyed[x].second, keyed[y].second});
      }
    }
    std::sort(grouped.begin(), grouped.end());
    grouped.erase(std::unique(grouped.begin(), grouped.end()), grouped.end());
    const std::vector<CandidatePair> expected = *FindCandidates(fps, scheme, range);
    ASSERT_GT(expected.size(), 10u);
    EXPECT_EQ(grouped, expected) << "bands [" << range.begin << ", " << range.end << ")";
  }
  std::vector<uint64_t> keys;
  EXPECT_FALSE(ComputeBandKeys(fps[0], scheme, {0, n + 1}, &keys).ok());
  NearDuplicateOptions simhash;
  simhash.method = NearDuplicateMethod::kSimHash;
  EXPECT_FALSE(
      ComputeBandKeys(fps[0], *ChooseNearDuplicateScheme(recipe, simhash, 10), {0, 1}, &keys).ok());
}

// Band keys computed ahead (ComputeBandKeys over every band, as
// CollectFingerprints' band keys) give exactly FindCandidates' candidates and
// report, for any range of bands and thread count, whatever the keys of a
// document with no features hold; sizes, ranges and SimHash are refused.
TEST(NearDuplicateStagesTest, CandidatesFromBandKeysAreThoseOfTheSketches) {
  const Recipe recipe = *PresetRecipe("default");
  NearDuplicateOptions options;
  options.threshold = 0.6;
  std::vector<std::string> texts = PlantedTexts(600, 12);
  texts.insert(texts.begin() + 5, "");
  texts.insert(texts.begin() + 9, "");
  const std::vector<Fingerprint> fps = FingerprintTexts(texts, recipe, options);
  const NearDuplicateScheme scheme = *ChooseNearDuplicateScheme(recipe, options, fps.size());
  const uint64_t n = scheme.num_parts;
  std::vector<uint64_t> all_keys(fps.size() * n, 0);
  std::vector<uint64_t> keys;
  for (uint64_t doc = 0; doc < fps.size(); ++doc) {
    ASSERT_TRUE(ComputeBandKeys(fps[doc], scheme, {0, n}, &keys).ok());
    if (keys.empty()) {
      // Never a candidate: keys equal to another empty document's.
      continue;
    }
    std::copy(keys.begin(), keys.end(), all_keys.begin() + doc * n);
  }
  for (int threads : {1, 2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (PartRange range :
         {PartRange{0, n}, PartRange{1, n / 2}, PartRange{n - 1, n}, PartRange{2, 2}}) {
      NearDuplicateReport want_report, got_report;
      const std::vector<CandidatePair> want = *FindCandidates(fps, scheme, range, &want_report);
      Result<std::vector<CandidatePair>> got =
          FindCandidatesFromBandKeys(fps, all_keys, scheme, range, &got_report);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, want) << threads << " threads, bands [" << range.begin << ", " << range.end
                            << ")";
      EXPECT_EQ(got_report.candidates, want_report.candidates);
      EXPECT_EQ(got_report.lsh.params.num_bands, want_report.lsh.params.num_bands);
      if (range.end - range.begin == n) {
        EXPECT_GT(want.size(), 10u);
      }
    }
  }
  EXPECT_FALSE(FindCandidatesFromBandKeys(fps, all_keys, scheme, {0, n + 1}).ok());
  EXPECT_FALSE(FindCandidatesFromBandKeys(fps, all_keys, scheme, {3, 2}).ok());
  Result<std::vector<CandidatePair>> short_keys = FindCandidatesFromBandKeys(
      fps, std::span(all_keys).first(all_keys.size() - 1), scheme, {0, n});
  ASSERT_FALSE(short_keys.ok());
  EXPECT_THAT(short_keys.status().message(),
              HasSubstr("must be " + std::to_string(n) + " per document"));
  NearDuplicateOptions simhash;
  simhash.method = NearDuplicateMethod::kSimHash;
  EXPECT_FALSE(FindCandidatesFromBandKeys(fps, all_keys,
                                          *ChooseNearDuplicateScheme(recipe, simhash, 10), {0, 1})
                   .ok());
}

}  // namespace
}  // namespace neardup
