// What chunk sampling (recipe chunks.sample_modulus = m: keep a chunk when
// its id % m == 0) costs in accuracy and saves in index size and search time.
//
// Archive: NEARDUP_SAMPLING_DOCS documents (default 50000) of the synthetic
// archive of containment_bench.cc (accuracy/archive_text.h, same seed);
// queries: the first NEARDUP_SAMPLING_QUERIES of them (default 2000), each
// searched against the whole archive without itself, as `neardup similar`
// does: top 10, min 0.1, cap 1000.
//
// The reference is m = 1 (every chunk): exact capped containment. For each m
// the program reports
//   postings        index size, and its ratio to m = 1
//   recall@10       |sampled top-10 ∩ exact top-10| / |exact top-10|, over all queries
//   recall >= 0.5   the same for exact pairs scoring >= 0.5 (substantial reuse)
//   in top-100      the share of the exact top-10 found anywhere in the sampled
//                   top-100: whether sampling loses a match or only reorders it
//   |error|         |estimated score - exact score| of the pairs the sampled
//                   search returns (score = max(a_in_b, b_in_a)): mean, p95, max
//   search          CPU microseconds per query (search only)
// A sampled chunk set is the full set filtered by id % m (the Fingerprinter
// does exactly that; the program checks it on the first 200 documents with a
// real sampled recipe), so the archive is fingerprinted once.
//
// Run:
//   cmake --build --preset release --target containment_sampling
//   build/release/bench/containment_sampling
// Figures: docs/CONTAINMENT.md.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "accuracy/archive_text.h"
#include "neardup/chunk_index.h"
#include "neardup/containment.h"
#include "neardup/fingerprinter.h"
#include "util/mix.h"

namespace neardup {
namespace {

constexpr uint32_t kCap = 1000;
constexpr size_t kTop = 10;
constexpr double kMin = 0.1;

size_t EnvOr(const char* name, size_t fallback) {
  const char* env = std::getenv(name);
  return env != nullptr ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) : fallback;
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::unique_ptr<Fingerprinter> ChunkFingerprinter(uint32_t sample_modulus) {
  Recipe recipe = *PresetRecipe("default");
  recipe.chunks.sample_modulus = sample_modulus;
  Result<std::unique_ptr<Fingerprinter>> f =
      CreateCpuFingerprinter(recipe, {.simhash = false, .chunks = true});
  if (!f.ok()) {
    std::fprintf(stderr, "fingerprinter: %s\n", f.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(f).value();
}

std::vector<uint32_t> Sample(const std::vector<uint32_t>& chunks, uint32_t m) {
  std::vector<uint32_t> kept;
  for (uint32_t c : chunks) {
    if (c % m == 0) kept.push_back(c);
  }
  return kept;
}

// Exact capped score of a pair: shared counted chunks over the full sets.
double ExactScore(const ChunkIndex& full, const std::vector<uint32_t>& a,
                  const std::vector<uint32_t>& b) {
  uint32_t shared = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      if (full.Postings(a[i]).size() <= kCap) ++shared;
      ++i;
      ++j;
    }
  }
  const double s = static_cast<double>(shared);
  return std::max(s / static_cast<double>(a.size()), s / static_cast<double>(b.size()));
}

int Main() {
  const size_t num_docs = EnvOr("NEARDUP_SAMPLING_DOCS", 50000);
  const size_t num_queries = std::min(num_docs, EnvOr("NEARDUP_SAMPLING_QUERIES", 2000));
  accuracy::ArchiveTextMaker maker;
  internal::SplitMix64 rng(20240601);  // containment_bench's archive seed
  std::vector<std::string> texts;
  for (size_t i = 0; i < num_docs; ++i) texts.push_back(maker.Make(rng));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<Fingerprint> fingerprints;
  if (!ChunkFingerprinter(1)->ComputeBatch(views, &fingerprints).ok()) return 1;
  std::vector<std::vector<uint32_t>> full_sets;
  for (Fingerprint& f : fingerprints) full_sets.push_back(std::move(f.chunks));

  auto build = [&](uint32_t m, std::vector<std::vector<uint32_t>>* sets) {
    sets->clear();
    for (const auto& s : full_sets) sets->push_back(m == 1 ? s : Sample(s, m));
    std::vector<ChunkDocument> docs;
    for (size_t i = 0; i < sets->size(); ++i)
      docs.push_back({static_cast<uint32_t>(i), (*sets)[i]});
    return std::move(ChunkIndex::Build(docs)).value();
  };
  auto search_all = [&](const ChunkIndex& index, const std::vector<std::vector<uint32_t>>& sets,
                        double* cpu_seconds, size_t top = kTop) {
    ContainmentSearcher searcher(index);
    const ContainmentOptions options{
        .max_document_frequency = kCap, .top_n = top, .min_similarity = kMin};
    std::vector<std::vector<ContainmentMatch>> results(num_queries);
    const double c0 = CpuSeconds();
    for (size_t q = 0; q < num_queries; ++q) {
      results[q] = searcher.Search(sets[q], options, static_cast<uint32_t>(q));
    }
    *cpu_seconds = CpuSeconds() - c0;
    return results;
  };

  std::vector<std::vector<uint32_t>> exact_sets;
  const ChunkIndex full = build(1, &exact_sets);
  double exact_cpu = 0;
  const auto exact = search_all(full, exact_sets, &exact_cpu);
  uint64_t text_bytes = 0;
  for (const std::string& t : texts) text_bytes += t.size();
  std::printf(
      "archive: %zu documents, %.1f MB of text, %llu postings; %zu queries; "
      "top %zu, min %.2f, cap %u\n\n",
      num_docs, static_cast<double>(text_bytes) / 1e6,
      static_cast<unsigned long long>(full.num_postings()), num_queries, kTop, kMin, kCap);
  std::printf(
      "| m | postings | of m=1 | recall@10 | recall >= 0.5 | in top-100 | mean error | "
      "p95 error | max error | search us/query |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");

  for (uint32_t m : {1u, 2u, 4u, 8u, 16u}) {
    // The Fingerprinter's own sampling equals filtering the full set.
    std::unique_ptr<Fingerprinter> sampled = ChunkFingerprinter(m);
    for (size_t i = 0; i < std::min<size_t>(200, num_docs); ++i) {
      Fingerprint f;
      if (!sampled->Compute(texts[i], &f).ok() || f.chunks != Sample(full_sets[i], m)) {
        std::fprintf(stderr,
                     "sample_modulus %u: the fingerprinter's chunks differ from the "
                     "filtered full set (document %zu)\n",
                     m, i);
        return 1;
      }
    }
    std::vector<std::vector<uint32_t>> sets;
    const ChunkIndex index = build(m, &sets);
    double cpu = 0;
    const auto found = search_all(index, sets, &cpu);
    double unused = 0;
    const auto found_100 = search_all(index, sets, &unused, 100);
    uint64_t exact_total = 0, hit = 0, strong_total = 0, strong_hit = 0, hit_100 = 0;
    std::vector<double> errors;
    for (size_t q = 0; q < num_queries; ++q) {
      for (const ContainmentMatch& e : exact[q]) {
        const bool in = std::any_of(found[q].begin(), found[q].end(),
                                    [&](const ContainmentMatch& f) { return f.doc == e.doc; });
        ++exact_total;
        hit += in;
        hit_100 += std::any_of(found_100[q].begin(), found_100[q].end(),
                               [&](const ContainmentMatch& f) { return f.doc == e.doc; });
        if (e.score() >= 0.5) {
          ++strong_total;
          strong_hit += in;
        }
      }
      for (const ContainmentMatch& f : found[q]) {
        errors.push_back(std::fabs(f.score() - ExactScore(full, exact_sets[q], exact_sets[f.doc])));
      }
    }
    std::sort(errors.begin(), errors.end());
    double mean = 0;
    for (double e : errors) mean += e;
    mean = errors.empty() ? 0 : mean / static_cast<double>(errors.size());
    const double p95 = errors.empty() ? 0 : errors[errors.size() * 95 / 100];
    const double max = errors.empty() ? 0 : errors.back();
    std::printf(
        "| %u | %llu | %.3f | %.3f | %.3f | %.3f | %.4f | %.4f | %.4f | %.1f |\n", m,
        static_cast<unsigned long long>(index.num_postings()),
        static_cast<double>(index.num_postings()) / static_cast<double>(full.num_postings()),
        exact_total ? static_cast<double>(hit) / static_cast<double>(exact_total) : 1.0,
        strong_total ? static_cast<double>(strong_hit) / static_cast<double>(strong_total) : 1.0,
        exact_total ? static_cast<double>(hit_100) / static_cast<double>(exact_total) : 1.0, mean,
        p95, max, cpu * 1e6 / static_cast<double>(num_queries));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace neardup

int main() { return neardup::Main(); }
