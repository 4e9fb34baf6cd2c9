// The engine of neardup.pairs(), clusters() and dedup(): the same library
// calls as the CLI's `pairs`, `clusters` and `dedup` (FindNearDuplicatePairs,
// ClusterDocuments, ChooseKept), so both give the same answer on the same
// texts. python/neardup/_near_duplicates.py shapes the result.
#include <string>

#include "bindings.h"
#include "neardup/clustering.h"
#include "neardup/near_duplicates.h"

namespace neardup::python {
namespace {

struct NearDuplicateArgs {
  std::string method;
  double threshold;
  int max_distance;
  int num_blocks;
  std::string verify;
  double fp_weight;
  double fn_weight;
  std::string rule;
  std::string keep;
};

NearDuplicateOptions ResolveOptions(const NearDuplicateArgs& args) {
  NearDuplicateOptions options;
  options.method = ValueOrThrow(ParseNearDuplicateMethod(args.method));
  if (!(args.threshold >= 0.0 && args.threshold <= 1.0)) {
    throw StatusException{InvalidArgumentError("threshold (" + std::to_string(args.threshold) +
                                               ") must be in [0, 1]")};
  }
  options.threshold = args.threshold;
  options.max_distance = args.max_distance;
  options.num_blocks = args.num_blocks;
  options.false_positive_weight = args.fp_weight;
  options.false_negative_weight = args.fn_weight;
  if (options.method == NearDuplicateMethod::kSimHash) {
    options.verify_exact = false;
  } else if (args.verify == "sketch") {
    options.verify_exact = false;
  } else if (args.verify == "exact" || args.verify.empty()) {
    options.verify_exact = true;
  } else {
    throw StatusException{
        InvalidArgumentError("verify (\"" + args.verify + "\") must be \"sketch\" or \"exact\"")};
  }
  return options;
}

py::dict NearDuplicates(const py::handle& documents, const NearDuplicateArgs& args,
                        const py::object& recipe_arg, int threads) {
  std::shared_ptr<const PyRecipe> recipe = RecipeOrDefault(recipe_arg);
  const NearDuplicateOptions options = ResolveOptions(args);
  const ClusterRule rule = ValueOrThrow(ParseClusterRule(args.rule));
  const KeepRule keep_rule = ValueOrThrow(ParseKeepRule(args.keep));
  // The fingerprinter the CLI builds for these options.
  const PyRecipe adjusted(RecipeForNearDuplicates(recipe->recipe(), options));
  std::shared_ptr<const Fingerprinter> fingerprinter =
      adjusted.GetFingerprinter(SketchesForNearDuplicates(options));
  DocumentViews docs = ReadDocuments(documents);

  const size_t n = docs.texts.size();
  Status status;
  std::vector<SimilarPair> pairs;
  std::vector<uint64_t> cluster_of;
  std::vector<uint8_t> keep(n, 1);
  RunWithoutGil(threads, [&] {
    std::vector<Fingerprint> fingerprints;
    status = fingerprinter->ComputeBatch(docs.texts, &fingerprints);
    if (!status.ok()) return;
    Result<std::vector<SimilarPair>> found =
        FindNearDuplicatePairs(fingerprints, recipe->recipe(), options);
    if (!found.ok()) {
      status = found.status();
      return;
    }
    pairs = std::move(found).value();
    Result<std::vector<uint64_t>> clusters = ClusterDocuments(n, pairs, rule);
    if (!clusters.ok()) {
      status = clusters.status();
      return;
    }
    cluster_of = std::move(clusters).value();
    std::vector<uint64_t> lengths(n);
    for (size_t i = 0; i < n; ++i) lengths[i] = docs.texts[i].size();
    Result<std::vector<bool>> kept = ChooseKept(cluster_of, lengths, keep_rule);
    if (!kept.ok()) {
      status = kept.status();
      return;
    }
    for (size_t i = 0; i < n; ++i) keep[i] = (*kept)[i] ? 1 : 0;
  });
  ThrowIfError(status);

  py::list pair_list(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const SimilarPair& p = pairs[i];
    pair_list[i] = py::make_tuple(p.a, p.b, p.similarity,
                                  p.distance >= 0 ? py::object(py::int_(p.distance)) : py::none());
  }
  py::dict out;
  out["ids"] = docs.ids;
  out["pairs"] = pair_list;
  const auto size = static_cast<py::ssize_t>(n);
  out["cluster_of"] = OwningArray(std::move(cluster_of), {size});
  out["keep"] = OwningArray(std::move(keep), {size}).attr("astype")("bool");
  return out;
}

}  // namespace

void RegisterNearDuplicates(py::module_& m) {
  m.def(
      "_near_duplicates",
      [](const py::handle& documents, const std::string& method, double threshold, int max_distance,
         int num_blocks, const std::string& verify, double fp_weight, double fn_weight,
         const std::string& rule, const std::string& keep, const py::object& recipe, int threads) {
        return NearDuplicates(
            documents,
            {method, threshold, max_distance, num_blocks, verify, fp_weight, fn_weight, rule, keep},
            recipe, threads);
      },
      py::arg("documents"), py::arg("method"), py::arg("threshold"), py::arg("max_distance"),
      py::arg("num_blocks"), py::arg("verify"), py::arg("fp_weight"), py::arg("fn_weight"),
      py::arg("rule"), py::arg("keep"), py::arg("recipe"), py::arg("threads"),
      "The engine of pairs(), clusters() and dedup(): pairs of document numbers, the "
      "cluster of each document and which are kept.");
}

}  // namespace neardup::python
