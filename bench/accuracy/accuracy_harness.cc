// Accuracy harness: precision, recall and F1 of every near-duplicate method
// (MinHash LSH at several thresholds, sketch sizes and verification modes;
// SimHash at several Hamming distances) against the exact Jaccard similarity
// of word 5-shingle sets, on real text plus seeded synthetic near-duplicates.
//
// Data: cache/corpora/spamassassin.jsonl (e-mail bodies) and brown.jsonl (the
// Brown corpus), made by scripts/fetch_corpora.sh; plus, for a seeded sample
// of source texts from both, one edited copy per edit rate in kEditRates
// (bench/accuracy/synthetic_text.h).
//
// Ground truth: the `default` recipe's word 5-shingle ids (a Fingerprinter
// with SketchSelection{.chunks = true}: sorted unique 32-bit ids); an inverted
// index chunk -> documents; for every pair sharing at least one chunk, the
// shared count s and Jaccard s / (|A| + |B| - s). Exact up to 32-bit id
// collisions (about |A|^2 / 2^33 per document: negligible).
//
// Scoring against a level L: positives are pairs with Jaccard >= L; pairs in
// the gray band [L - 0.05, L) count neither way (reporting one is not a false
// positive, missing one is not a false negative); everything else is a
// negative. Precision = TP / (TP + FP), recall = TP / positives.
//
// Output: markdown tables on stdout, progress on stderr. Run with
// bench/accuracy/run.sh, which fetches the corpora and builds first.
// Flags: --corpora=DIR (default <source>/cache/corpora), --max-spam=N (0: all),
//        --spam-sources=N (1500), --brown-sources=N (500), --seed=S (20240401).
#include <sys/resource.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "accuracy/synthetic_text.h"
#include "neardup/clustering.h"
#include "neardup/fingerprinter.h"
#include "neardup/lsh_params.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"
#include "neardup/similarity.h"
#include "util/mix.h"

namespace neardup::accuracy {
namespace {

constexpr std::array<double, 7> kEditRates = {0.01, 0.02, 0.05, 0.10, 0.20, 0.30, 0.40};
constexpr std::array<double, 3> kLevels = {0.8, 0.7, 0.5};
constexpr double kGrayBand = 0.05;
// LSH false-negative weights swept at threshold 0.8 (false-positive weight
// 1 - w); 0.5 is the library default.
constexpr std::array<double, 5> kFalseNegativeWeights = {0.5, 0.8, 0.9, 0.95, 0.99};
// Ground-truth pairs below this Jaccard are dropped: they are negatives at
// every level (0.5 - kGrayBand = 0.45).
constexpr double kKeepJaccard = 0.45;

struct Flags {
  std::string corpora = NEARDUP_SOURCE_DIR "/cache/corpora";
  size_t max_spam = 0;
  size_t spam_sources = 1500;
  size_t brown_sources = 500;
  uint64_t seed = 20240401;
};

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) -> const char* {
      if (arg.size() > name.size() + 1 && arg.substr(0, name.size()) == name &&
          arg[name.size()] == '=') {
        return argv[i] + name.size() + 1;
      }
      return nullptr;
    };
    if (const char* v = value("--corpora")) {
      flags.corpora = v;
    } else if (const char* v = value("--max-spam")) {
      flags.max_spam = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--spam-sources")) {
      flags.spam_sources = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--brown-sources")) {
      flags.brown_sources = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--seed")) {
      flags.seed = std::strtoull(v, nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "accuracy_harness: unknown flag \"%s\"\nflags: --corpora=DIR --max-spam=N "
                   "--spam-sources=N --brown-sources=N --seed=S\n",
                   argv[i]);
      std::exit(2);
    }
  }
  return flags;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

uint64_t PairKey(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }

// Indices 0..n-1 in a seeded random order (Fisher-Yates).
std::vector<size_t> Shuffled(size_t n, internal::SplitMix64& rng) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[UniformBelow(rng, i)]);
  return order;
}

enum class Origin { kSpam, kBrown, kSynthetic };

// The documents under test: real texts first, then the synthetic copies.
struct TestCorpus {
  LoadedCorpus spam;
  LoadedCorpus brown;
  std::vector<std::string> synthetic;
  std::vector<std::string_view> texts;
  std::vector<Origin> origin;
  // For a synthetic copy: its source document and edit-rate index; else -1.
  std::vector<int64_t> source;
  std::vector<int> rate_index;
  size_t spam_used = 0;
  uint64_t bytes = 0;
};

void BuildTestCorpus(const Flags& flags, TestCorpus* corpus) {
  corpus->spam = LoadJsonlOrDie(flags.corpora + "/spamassassin.jsonl");
  corpus->brown = LoadJsonlOrDie(flags.corpora + "/brown.jsonl");
  internal::SplitMix64 rng(flags.seed);

  // A seeded sample of the SpamAssassin bodies, kept in file order.
  std::vector<size_t> spam_docs(corpus->spam.texts.size());
  std::iota(spam_docs.begin(), spam_docs.end(), size_t{0});
  if (flags.max_spam != 0 && flags.max_spam < spam_docs.size()) {
    spam_docs = Shuffled(spam_docs.size(), rng);
    spam_docs.resize(flags.max_spam);
    std::sort(spam_docs.begin(), spam_docs.end());
  }
  corpus->spam_used = spam_docs.size();
  for (size_t i : spam_docs) {
    corpus->texts.push_back(corpus->spam.texts[i]);
    corpus->origin.push_back(Origin::kSpam);
  }
  for (const std::string& text : corpus->brown.texts) {
    corpus->texts.push_back(text);
    corpus->origin.push_back(Origin::kBrown);
  }
  const size_t num_real = corpus->texts.size();

  // Substituted and inserted words come from the Brown corpus: real English
  // with its real word frequencies.
  std::vector<std::string_view> vocabulary;
  for (const std::string& text : corpus->brown.texts) {
    for (std::string_view word : SplitWords(text)) vocabulary.push_back(word);
  }

  // Sources: texts of at least 50 words (shorter ones have too few shingles
  // for an edit rate to mean much), sampled with the seed.
  std::vector<size_t> sources;
  auto pick = [&](size_t begin, size_t end, size_t count) {
    std::vector<size_t> order = Shuffled(end - begin, rng);
    size_t taken = 0;
    for (size_t j = 0; j < order.size() && taken < count; ++j) {
      size_t doc = begin + order[j];
      if (SplitWords(corpus->texts[doc]).size() < 50) continue;
      sources.push_back(doc);
      ++taken;
    }
  };
  pick(0, corpus->spam_used, flags.spam_sources);
  pick(corpus->spam_used, num_real, flags.brown_sources);

  corpus->synthetic.reserve(sources.size() * kEditRates.size());
  for (size_t source : sources) {
    std::vector<std::string_view> words = SplitWords(corpus->texts[source]);
    for (size_t r = 0; r < kEditRates.size(); ++r) {
      corpus->synthetic.push_back(EditWords(words, kEditRates[r], vocabulary, rng));
    }
  }
  corpus->source.assign(num_real, -1);
  corpus->rate_index.assign(num_real, -1);
  for (size_t i = 0; i < corpus->synthetic.size(); ++i) {
    corpus->texts.push_back(corpus->synthetic[i]);
    corpus->origin.push_back(Origin::kSynthetic);
    corpus->source.push_back(static_cast<int64_t>(sources[i / kEditRates.size()]));
    corpus->rate_index.push_back(static_cast<int>(i % kEditRates.size()));
  }
  for (std::string_view text : corpus->texts) corpus->bytes += text.size();
}

std::vector<Fingerprint> FingerprintOrDie(const Recipe& recipe, const SketchSelection& selection,
                                          std::span<const std::string_view> texts) {
  Result<std::unique_ptr<Fingerprinter>> fingerprinter = CreateCpuFingerprinter(recipe, selection);
  if (!fingerprinter.ok()) {
    std::fprintf(stderr, "%s\n", fingerprinter.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<Fingerprint> out;
  Status status = (*fingerprinter)->ComputeBatch(texts, &out);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::exit(1);
  }
  return out;
}

struct GroundTruthPair {
  uint64_t key;  // PairKey(a, b), a < b
  float jaccard;
};

struct GroundTruth {
  // Every pair with Jaccard >= kKeepJaccard, sorted by key.
  std::vector<GroundTruthPair> pairs;
  uint64_t pairs_sharing_a_chunk = 0;
  uint64_t total_chunks = 0;
  uint64_t distinct_chunks = 0;
  double fingerprint_seconds = 0;
  double join_seconds = 0;
  // Each document's sorted unique shingle ids.
  std::vector<Fingerprint> shingles;
};

GroundTruth ComputeGroundTruth(std::span<const std::string_view> texts) {
  GroundTruth truth;
  auto start = std::chrono::steady_clock::now();
  SketchSelection selection;
  selection.chunks = true;
  truth.shingles = FingerprintOrDie(*PresetRecipe("default"), selection, texts);
  const std::vector<Fingerprint>& fps = truth.shingles;
  truth.fingerprint_seconds = Seconds(start);

  start = std::chrono::steady_clock::now();
  const auto num_docs = static_cast<uint32_t>(fps.size());
  // The inverted index: (chunk, doc) sorted, then postings[p] for p in
  // [chunk_begin[c], chunk_begin[c + 1]) are the documents holding chunk c
  // (dense chunk numbers), ascending.
  std::vector<uint64_t> entries;
  for (uint32_t d = 0; d < num_docs; ++d) {
    for (uint32_t chunk : fps[d].chunks) entries.push_back((uint64_t{chunk} << 32) | d);
  }
  truth.total_chunks = entries.size();
  tbb::parallel_sort(entries.begin(), entries.end());
  std::vector<uint32_t> postings(entries.size());
  std::vector<uint32_t> chunk_begin;
  std::vector<std::vector<uint32_t>> doc_chunks(num_docs);  // dense chunk numbers
  for (size_t p = 0; p < entries.size(); ++p) {
    if (p == 0 || (entries[p] >> 32) != (entries[p - 1] >> 32)) {
      chunk_begin.push_back(static_cast<uint32_t>(p));
    }
    auto doc = static_cast<uint32_t>(entries[p]);
    postings[p] = doc;
    doc_chunks[doc].push_back(static_cast<uint32_t>(chunk_begin.size() - 1));
  }
  truth.distinct_chunks = chunk_begin.size();
  chunk_begin.push_back(static_cast<uint32_t>(entries.size()));
  entries = {};

  struct Local {
    std::vector<uint32_t> shared;
    std::vector<uint32_t> touched;
    std::vector<GroundTruthPair> pairs;
    uint64_t sharing = 0;
  };
  tbb::enumerable_thread_specific<Local> locals;
  tbb::parallel_for(
      tbb::blocked_range<uint32_t>(0, num_docs, 16),
      [&](const tbb::blocked_range<uint32_t>& range) {
        Local& local = locals.local();
        if (local.shared.empty()) local.shared.assign(num_docs, 0);
        for (uint32_t a = range.begin(); a != range.end(); ++a) {
          for (uint32_t c : doc_chunks[a]) {
            const uint32_t* first = postings.data() + chunk_begin[c];
            const uint32_t* last = postings.data() + chunk_begin[c + 1];
            for (const uint32_t* p = std::upper_bound(first, last, a); p != last; ++p) {
              if (local.shared[*p]++ == 0) local.touched.push_back(*p);
            }
          }
          const double size_a = static_cast<double>(fps[a].chunks.size());
          for (uint32_t b : local.touched) {
            const double shared = local.shared[b];
            const double jaccard =
                shared / (size_a + static_cast<double>(fps[b].chunks.size()) - shared);
            if (jaccard >= kKeepJaccard) {
              local.pairs.push_back({PairKey(a, b), static_cast<float>(jaccard)});
            }
            local.shared[b] = 0;
          }
          local.sharing += local.touched.size();
          local.touched.clear();
        }
      });
  for (Local& local : locals) {
    truth.pairs.insert(truth.pairs.end(), local.pairs.begin(), local.pairs.end());
    truth.pairs_sharing_a_chunk += local.sharing;
  }
  std::sort(truth.pairs.begin(), truth.pairs.end(),
            [](const GroundTruthPair& x, const GroundTruthPair& y) { return x.key < y.key; });
  truth.join_seconds = Seconds(start);
  return truth;
}

struct Score {
  uint64_t true_positives = 0;
  uint64_t false_positives = 0;
  uint64_t positives = 0;
  double Precision() const {
    uint64_t reported = true_positives + false_positives;
    return reported == 0 ? 1.0 : static_cast<double>(true_positives) / reported;
  }
  double Recall() const {
    return positives == 0 ? 1.0 : static_cast<double>(true_positives) / positives;
  }
  double F1() const {
    double p = Precision(), r = Recall();
    return p + r == 0 ? 0.0 : 2 * p * r / (p + r);
  }
};

// Scores `pairs` (sorted by (a, b)) at every level of kLevels.
std::array<Score, kLevels.size()> ScorePairs(std::span<const SimilarPair> pairs,
                                             const GroundTruth& truth) {
  std::array<Score, kLevels.size()> scores;
  for (size_t l = 0; l < kLevels.size(); ++l) {
    for (const GroundTruthPair& t : truth.pairs) scores[l].positives += t.jaccard >= kLevels[l];
  }
  size_t t = 0;
  for (const SimilarPair& pair : pairs) {
    const uint64_t key = PairKey(pair.a, pair.b);
    while (t < truth.pairs.size() && truth.pairs[t].key < key) ++t;
    const double jaccard =
        t < truth.pairs.size() && truth.pairs[t].key == key ? truth.pairs[t].jaccard : 0.0;
    for (size_t l = 0; l < kLevels.size(); ++l) {
      if (jaccard >= kLevels[l]) {
        ++scores[l].true_positives;
      } else if (jaccard < kLevels[l] - kGrayBand) {
        ++scores[l].false_positives;
      }
    }
  }
  return scores;
}

// The (source, copy) pairs of the synthetic documents, sorted by key, with
// their edit-rate index and exact Jaccard.
struct CopyPair {
  uint64_t key;
  int rate_index;
  double jaccard;
};

std::vector<CopyPair> CopyPairs(const TestCorpus& corpus, const GroundTruth& truth) {
  // Copy pairs below kKeepJaccard are not in `truth.pairs`: compute them all.
  const std::vector<Fingerprint>& fps = truth.shingles;
  std::vector<CopyPair> pairs;
  for (size_t i = 0; i < corpus.source.size(); ++i) {
    if (corpus.source[i] < 0) continue;
    auto a = static_cast<uint32_t>(corpus.source[i]);
    auto b = static_cast<uint32_t>(i);
    pairs.push_back(
        {PairKey(a, b), corpus.rate_index[i], ExactJaccard(fps[a].chunks, fps[b].chunks)});
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const CopyPair& x, const CopyPair& y) { return x.key < y.key; });
  return pairs;
}

struct MethodRun {
  std::string method;
  std::string params;
  std::string lsh;  // "b x r" for MinHash
  NearDuplicateReport report;
  double seconds = 0;
  std::array<Score, kLevels.size()> scores;
  std::array<uint64_t, kEditRates.size()> copies_found{};
};

void CountCopiesFound(std::span<const SimilarPair> pairs, std::span<const CopyPair> copies,
                      MethodRun* run) {
  size_t c = 0;
  for (const SimilarPair& pair : pairs) {
    const uint64_t key = PairKey(pair.a, pair.b);
    while (c < copies.size() && copies[c].key < key) ++c;
    if (c < copies.size() && copies[c].key == key) ++run->copies_found[copies[c].rate_index];
  }
}

MethodRun RunMethod(std::span<const Fingerprint> fps, const Recipe& recipe,
                    const NearDuplicateOptions& options, const GroundTruth& truth,
                    std::span<const CopyPair> copies) {
  MethodRun run;
  auto start = std::chrono::steady_clock::now();
  Result<std::vector<SimilarPair>> pairs =
      FindNearDuplicatePairs(fps, recipe, options, &run.report);
  run.seconds = Seconds(start);
  if (!pairs.ok()) {
    std::fprintf(stderr, "FindNearDuplicatePairs: %s\n", pairs.status().ToString().c_str());
    std::exit(1);
  }
  run.scores = ScorePairs(*pairs, truth);
  CountCopiesFound(*pairs, copies, &run);
  return run;
}

std::string Format(const char* format, auto... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

void Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  const auto total_start = std::chrono::steady_clock::now();

  TestCorpus corpus;
  BuildTestCorpus(flags, &corpus);
  const size_t num_docs = corpus.texts.size();
  std::fprintf(stderr, "accuracy: %zu documents (%zu spam, %zu brown, %zu synthetic), %.1f MB\n",
               num_docs, corpus.spam_used, corpus.brown.texts.size(), corpus.synthetic.size(),
               corpus.bytes / 1e6);

  GroundTruth truth = ComputeGroundTruth(corpus.texts);
  std::fprintf(stderr, "accuracy: ground truth %.2f s + %.2f s, %zu pairs >= %.2f\n",
               truth.fingerprint_seconds, truth.join_seconds, truth.pairs.size(), kKeepJaccard);
  std::vector<CopyPair> copies = CopyPairs(corpus, truth);

  std::vector<MethodRun> runs;
  std::vector<MethodRun> weight_runs;  // threshold 0.8, LSH weights swept
  std::vector<std::string> fingerprint_times;
  for (int k : {64, 128, 256}) {
    Recipe recipe = *PresetRecipe("default");
    recipe.minhash.num_hashes = k;
    NearDuplicateOptions options;
    options.method = NearDuplicateMethod::kMinHash;
    options.verify_exact = true;
    recipe = RecipeForNearDuplicates(recipe, options);
    auto start = std::chrono::steady_clock::now();
    std::vector<Fingerprint> fps =
        FingerprintOrDie(recipe, SketchesForNearDuplicates(options), corpus.texts);
    fingerprint_times.push_back(
        Format("minhash k=%d (bottom-k + k-value + chunks): %.2f s", k, Seconds(start)));
    auto run_minhash = [&](double threshold, bool exact, double fn_weight,
                           std::vector<MethodRun>* out) {
      options.threshold = threshold;
      options.verify_exact = exact;
      options.false_negative_weight = fn_weight;
      options.false_positive_weight = 1.0 - fn_weight;
      MethodRun run = RunMethod(fps, recipe, options, truth, copies);
      run.method = "minhash";
      run.params = Format("t=%.1f k=%d %s", threshold, k, exact ? "exact" : "sketch");
      if (fn_weight != 0.5) run.params += Format(" fn=%.2f", fn_weight);
      run.lsh =
          Format("%dx%d", run.report.lsh.params.num_bands, run.report.lsh.params.rows_per_band);
      std::fprintf(stderr, "accuracy: %s %s %.3f s\n", run.method.c_str(), run.params.c_str(),
                   run.seconds);
      out->push_back(std::move(run));
    };
    for (bool exact : {false, true}) {
      for (double threshold : {0.5, 0.7, 0.8, 0.9}) run_minhash(threshold, exact, 0.5, &runs);
    }
    for (bool exact : {false, true}) {
      for (double fn_weight : kFalseNegativeWeights) {
        run_minhash(0.8, exact, fn_weight, &weight_runs);
      }
    }
  }
  {
    Recipe recipe = *PresetRecipe("default");
    NearDuplicateOptions options;
    options.method = NearDuplicateMethod::kSimHash;
    auto start = std::chrono::steady_clock::now();
    std::vector<Fingerprint> fps =
        FingerprintOrDie(recipe, SketchesForNearDuplicates(options), corpus.texts);
    fingerprint_times.push_back(Format("simhash 64 (3-shingles): %.2f s", Seconds(start)));
    for (int distance = 2; distance <= 6; ++distance) {
      options.max_distance = distance;
      // The library default (6 blocks) where valid; 8 blocks for distance 6
      // (C(8,6) = 28 tables keyed on 16 bits). The pairs do not depend on
      // num_blocks, only the time does.
      options.num_blocks = distance < 6 ? 6 : 8;
      MethodRun run = RunMethod(fps, recipe, options, truth, copies);
      run.method = "simhash";
      run.params = Format("d=%d blocks=%d", distance, options.num_blocks);
      run.lsh = "-";
      std::fprintf(stderr, "accuracy: %s %s %.3f s\n", run.method.c_str(), run.params.c_str(),
                   run.seconds);
      runs.push_back(std::move(run));
    }
  }

  // Tables.
  std::printf("## Data\n\n");
  std::printf("| documents | SpamAssassin bodies | Brown texts | synthetic copies | MB |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  std::printf("| %zu | %zu | %zu | %zu (%zu sources x %zu rates) | %.1f |\n\n", num_docs,
              corpus.spam_used, corpus.brown.texts.size(), corpus.synthetic.size(),
              corpus.synthetic.size() / kEditRates.size(), kEditRates.size(), corpus.bytes / 1e6);
  std::printf(
      "Ground truth: %llu shingles (%llu distinct), %llu pairs share a shingle; "
      "fingerprint %.2f s, inverted-index join %.2f s.\n\n",
      static_cast<unsigned long long>(truth.total_chunks),
      static_cast<unsigned long long>(truth.distinct_chunks),
      static_cast<unsigned long long>(truth.pairs_sharing_a_chunk), truth.fingerprint_seconds,
      truth.join_seconds);
  std::printf("| level L | pairs J >= L | gray band [L-0.05, L) |\n|---:|---:|---:|\n");
  for (double level : kLevels) {
    uint64_t positives = 0, gray = 0;
    for (const GroundTruthPair& t : truth.pairs) {
      positives += t.jaccard >= level;
      gray += t.jaccard < level && t.jaccard >= level - kGrayBand;
    }
    std::printf("| %.1f | %llu | %llu |\n", level, static_cast<unsigned long long>(positives),
                static_cast<unsigned long long>(gray));
  }
  std::printf("\nFingerprinting (all cores): ");
  for (size_t i = 0; i < fingerprint_times.size(); ++i) {
    std::printf("%s%s", i ? "; " : "", fingerprint_times[i].c_str());
  }
  std::printf(".\n\n## Precision / recall / F1\n\n");
  std::printf("| method | parameters | LSH bxr | candidates | exact checks | pairs | time ms |");
  for (double level : kLevels) std::printf(" P / R / F1 @%.1f |", level);
  std::printf("\n|---|---|---|---:|---:|---:|---:|---|---|---|\n");
  for (const MethodRun& run : runs) {
    std::printf("| %s | %s | %s | %llu | %llu | %llu | %.1f |", run.method.c_str(),
                run.params.c_str(), run.lsh.c_str(),
                static_cast<unsigned long long>(run.report.candidates),
                static_cast<unsigned long long>(run.report.exact_checks),
                static_cast<unsigned long long>(run.report.pairs), run.seconds * 1e3);
    for (const Score& s : run.scores) {
      std::printf(" %.3f / %.3f / %.3f |", s.Precision(), s.Recall(), s.F1());
    }
    std::printf("\n");
  }

  std::printf("\n## MinHash at threshold 0.8: LSH weights\n\n");
  std::printf(
      "fn = false_negative_weight, false_positive_weight = 1 - fn (default 0.5 / 0.5). "
      "Scored against J >= 0.8, gray band [0.75, 0.8).\n\n");
  std::printf(
      "| parameters | LSH bxr | P(cand) at J=0.8 / 0.9 | candidates | exact checks | "
      "pairs | time ms | precision | recall | F1 |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const MethodRun& run : weight_runs) {
    const Score& s = run.scores[0];
    std::printf("| %s | %s | %.3f / %.3f | %llu | %llu | %llu | %.1f | %.4f | %.4f | %.4f |\n",
                run.params.c_str(), run.lsh.c_str(),
                LshCandidateProbability(run.report.lsh.params, 0.8),
                LshCandidateProbability(run.report.lsh.params, 0.9),
                static_cast<unsigned long long>(run.report.candidates),
                static_cast<unsigned long long>(run.report.exact_checks),
                static_cast<unsigned long long>(run.report.pairs), run.seconds * 1e3, s.Precision(),
                s.Recall(), s.F1());
  }
  std::printf("\n## Synthetic copies found, by edit rate\n\n");
  std::printf(
      "Each cell: the fraction of (source, copy) pairs reported. Second row: the mean "
      "exact Jaccard of those pairs.\n\n| method | parameters |");
  for (double rate : kEditRates) std::printf(" %g%% |", rate * 100);
  std::printf("\n|---|---|");
  for (size_t r = 0; r < kEditRates.size(); ++r) std::printf("---:|");
  std::printf("\n| mean exact J | |");
  std::array<double, kEditRates.size()> sum{};
  std::array<uint64_t, kEditRates.size()> count{};
  for (const CopyPair& c : copies) {
    sum[c.rate_index] += c.jaccard;
    ++count[c.rate_index];
  }
  for (size_t r = 0; r < kEditRates.size(); ++r) std::printf(" %.3f |", sum[r] / count[r]);
  std::printf("\n");
  for (const MethodRun& run : runs) {
    std::printf("| %s | %s |", run.method.c_str(), run.params.c_str());
    for (size_t r = 0; r < kEditRates.size(); ++r) {
      std::printf(" %.2f |", static_cast<double>(run.copies_found[r]) / count[r]);
    }
    std::printf("\n");
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("\nTotal %.1f s wall, peak RSS %.0f MB.\n", Seconds(total_start),
              usage.ru_maxrss / 1024.0);
}

}  // namespace
}  // namespace neardup::accuracy

int main(int argc, char** argv) {
  neardup::accuracy::Main(argc, argv);
  return 0;
}
