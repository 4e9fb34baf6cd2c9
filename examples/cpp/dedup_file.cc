// dedup_file: reads documents (a JSONL file, a text file or a directory),
// finds the pairs whose word 5-shingle Jaccard is at least 0.8, groups them
// with the leader rule and prints the id of every document kept (the first of
// each cluster), in input order: what `neardup dedup --threshold 0.8 --keep
// first` keeps.
//
//   dedup_file corpus.jsonl
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "neardup/clustering.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicates.h"
#include "neardup/recipe.h"

namespace {

int Fail(const neardup::Status& status) {
  std::fprintf(stderr, "dedup_file: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dedup_file INPUT...\n");
    return 2;
  }
  neardup::NearDuplicateOptions options;
  options.method = neardup::NearDuplicateMethod::kMinHash;
  options.threshold = 0.8;

  neardup::Result<neardup::Recipe> preset = neardup::PresetRecipe("default");
  if (!preset.ok()) return Fail(preset.status());
  // Exact verification needs the shingle sets as well as the sketches.
  const neardup::Recipe recipe = neardup::RecipeForNearDuplicates(*preset, options);
  auto fingerprinter =
      neardup::CreateCpuFingerprinter(recipe, neardup::SketchesForNearDuplicates(options));
  if (!fingerprinter.ok()) return Fail(fingerprinter.status());

  auto reader = neardup::DocumentReader::Open(std::vector<std::string>(argv + 1, argv + argc),
                                              neardup::InputOptions{});
  if (!reader.ok()) return Fail(reader.status());
  neardup::FingerprintedCorpus corpus;
  if (neardup::Status status =
          neardup::CollectFingerprints(**reader, **fingerprinter, {}, false, &corpus);
      !status.ok()) {
    return Fail(status);
  }

  auto pairs = neardup::FindNearDuplicatePairs(corpus.fingerprints, recipe, options);
  if (!pairs.ok()) return Fail(pairs.status());
  auto cluster_of =
      neardup::ClusterDocuments(corpus.ids.size(), *pairs, neardup::ClusterRule::kLeader);
  if (!cluster_of.ok()) return Fail(cluster_of.status());
  auto keep = neardup::ChooseKept(*cluster_of, corpus.lengths, neardup::KeepRule::kFirst);
  if (!keep.ok()) return Fail(keep.status());

  size_t kept = 0;
  for (size_t i = 0; i < keep->size(); ++i) {
    if (!(*keep)[i]) continue;
    std::printf("%s\n", corpus.ids[i].c_str());
    ++kept;
  }
  std::fprintf(stderr, "dedup_file: %zu documents, %zu pairs, %zu kept\n", corpus.ids.size(),
               pairs->size(), kept);
  return 0;
}
