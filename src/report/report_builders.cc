// The two builders of ReportData (neardup/report.h): from a containment
// collection and from near-duplicate pairs over the input documents.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "engine/containment_passages.h"
#include "neardup/near_duplicates.h"
#include "neardup/report.h"

namespace neardup {
namespace {

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// The passages of every pair, in parallel (one pair's two texts chunked at
// a time, so memory stays that of the texts).
Status AddPassages(const internal::PassageMatcher& matcher,
                   const std::function<bool(uint32_t)>& counted, ReportData* data) {
  std::vector<Status> errors(data->pairs.size());
  tbb::parallel_for(size_t{0}, data->pairs.size(), [&](size_t p) {
    ReportPair& pair = data->pairs[p];
    const auto& a = data->documents[pair.a].text;
    const auto& b = data->documents[pair.b].text;
    if (!a || !b) return;
    Result<std::vector<Passage>> passages = matcher.Match(*a, *b, counted);
    if (!passages.ok()) {
      errors[p] = passages.status();
      return;
    }
    pair.passages = *std::move(passages);
  });
  for (const Status& error : errors) NEARDUP_RETURN_IF_ERROR(error);
  return Status::Ok();
}

}  // namespace

Result<ReportData> BuildCollectionReport(const Collection& collection,
                                         const CollectionReportOptions& options) {
  SimilarOptions similar;
  similar.top_n = options.top_n;
  similar.min_similarity = options.min_similarity;
  NEARDUP_ASSIGN_OR_RETURN(bool current, SimilaritiesAreCurrent(collection, similar));
  std::vector<SimilarityRow> rows;
  if (current) {
    NEARDUP_ASSIGN_OR_RETURN(rows, collection.ReadSimilarities());
  } else {
    NEARDUP_ASSIGN_OR_RETURN(rows, ComputeAllSimilarities(collection, similar));
  }
  NEARDUP_ASSIGN_OR_RETURN(std::vector<DocumentInfo> infos, collection.ListDocuments());

  ReportData data;
  data.kind = ReportKind::kContainment;
  data.summary.recipe_id = collection.recipe_id();
  data.summary.recipe_json = CanonicalJson(collection.recipe());
  data.summary.method = "containment: top " + std::to_string(options.top_n) + ", min " +
                        Number(options.min_similarity) + ", boilerplate cap " +
                        std::to_string(collection.max_document_frequency()) + " documents";
  data.summary.documents = infos.size();
  std::unordered_map<uint32_t, uint64_t> index_of;  // document number -> report index
  std::vector<uint32_t> number_of;
  for (const DocumentInfo& info : infos) {
    index_of[info.doc] = data.documents.size();
    number_of.push_back(info.doc);
    data.documents.push_back({info.id, 0, std::nullopt, 0.0});
  }
  // Each unordered pair once, a the smaller number; scores from a's side.
  std::map<std::pair<uint32_t, uint32_t>, size_t> pair_of;
  for (const SimilarityRow& row : rows) {
    auto a = index_of.find(row.a);
    auto b = index_of.find(row.b);
    if (a == index_of.end() || b == index_of.end()) continue;
    ReportDocument& doc = data.documents[a->second];
    doc.best_score = std::max({doc.best_score, row.a_in_b, row.b_in_a});
    const bool swap = row.a > row.b;
    const auto key = swap ? std::make_pair(row.b, row.a) : std::make_pair(row.a, row.b);
    if (pair_of.contains(key)) continue;
    pair_of[key] = data.pairs.size();
    ReportPair pair;
    pair.a = swap ? b->second : a->second;
    pair.b = swap ? a->second : b->second;
    pair.a_in_b = swap ? row.b_in_a : row.a_in_b;
    pair.b_in_a = swap ? row.a_in_b : row.b_in_a;
    pair.similarity = std::max(row.a_in_b, row.b_in_a);
    data.pairs.push_back(std::move(pair));
  }
  if (!collection.stores_texts()) return data;

  std::vector<bool> in_pair(data.documents.size(), false);
  for (const ReportPair& pair : data.pairs) in_pair[pair.a] = in_pair[pair.b] = true;
  for (size_t i = 0; i < data.documents.size(); ++i) {
    if (!in_pair[i]) continue;
    NEARDUP_ASSIGN_OR_RETURN(std::string text, collection.Text(number_of[i]));
    data.documents[i].length = text.size();
    data.summary.bytes_total += text.size();
    data.documents[i].text = std::move(text);
  }
  NEARDUP_ASSIGN_OR_RETURN(internal::PassageMatcher matcher,
                           internal::PassageMatcher::Create(collection.recipe()));
  const uint32_t cap = collection.max_document_frequency();
  const TieredChunkIndex index = collection.index();
  NEARDUP_RETURN_IF_ERROR(AddPassages(
      matcher, [&](uint32_t id) { return cap == 0 || index.DocumentFrequency(id) <= cap; }, &data));
  return data;
}

Result<ReportData> BuildNearDuplicateReport(DocumentReader& reader,
                                            const std::vector<PairLine>& pairs,
                                            const std::vector<std::vector<std::string>>& clusters,
                                            const NearDuplicateReportOptions& options) {
  // Only the documents named by a pair or cluster are kept, so the report's
  // size follows the result, not the corpus.
  std::unordered_map<std::string, uint64_t> index_of;
  for (const PairLine& pair : pairs) {
    index_of.emplace(pair.a, 0);
    index_of.emplace(pair.b, 0);
  }
  for (const auto& cluster : clusters) {
    for (const std::string& id : cluster) index_of.emplace(id, 0);
  }
  ReportData data;
  data.kind = ReportKind::kNearDuplicates;
  std::unordered_map<std::string, bool> seen;
  Document document;
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool more, reader.Next(&document));
    if (!more) break;
    ++data.summary.documents;
    data.summary.bytes_total += document.text.size();
    auto it = index_of.find(document.id);
    if (it == index_of.end() || seen.contains(document.id)) continue;
    seen[document.id] = true;
    it->second = data.documents.size();
    data.documents.push_back({document.id, document.text.size(), std::move(document.text), 0.0});
  }
  auto index = [&](const std::string& id) -> Result<uint64_t> {
    if (!seen.contains(id)) {
      return InvalidArgumentError("id \"" + id + "\" of the results is not among the inputs");
    }
    return index_of[id];
  };
  for (const PairLine& record : pairs) {
    ReportPair pair;
    NEARDUP_ASSIGN_OR_RETURN(pair.a, index(record.a));
    NEARDUP_ASSIGN_OR_RETURN(pair.b, index(record.b));
    pair.similarity = record.similarity;
    pair.distance = record.distance;
    data.pairs.push_back(std::move(pair));
  }

  // Clusters: as given, else formed from the pairs (documents numbered in
  // input order, as `neardup clusters` numbers them).
  std::vector<std::vector<uint64_t>> groups;
  for (const auto& cluster : clusters) {
    std::vector<uint64_t> members;
    for (const std::string& id : cluster) {
      NEARDUP_ASSIGN_OR_RETURN(uint64_t member, index(id));
      members.push_back(member);
    }
    groups.push_back(std::move(members));
  }
  if (clusters.empty()) {
    std::vector<SimilarPair> ordered;
    for (const ReportPair& pair : data.pairs) {
      if (pair.a == pair.b) continue;
      ordered.push_back({std::min(pair.a, pair.b), std::max(pair.a, pair.b), pair.similarity});
    }
    std::sort(ordered.begin(), ordered.end(), [](const SimilarPair& x, const SimilarPair& y) {
      return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    });
    ordered.erase(std::unique(ordered.begin(), ordered.end(),
                              [](const SimilarPair& x, const SimilarPair& y) {
                                return x.a == y.a && x.b == y.b;
                              }),
                  ordered.end());
    NEARDUP_ASSIGN_OR_RETURN(
        std::vector<uint64_t> cluster_of,
        ClusterDocuments(data.documents.size(), ordered, options.cluster_rule));
    std::map<uint64_t, std::vector<uint64_t>> by_cluster;
    for (uint64_t doc = 0; doc < cluster_of.size(); ++doc)
      by_cluster[cluster_of[doc]].push_back(doc);
    for (auto& [first, members] : by_cluster) {
      if (members.size() >= 2) groups.push_back(std::move(members));
    }
  }
  static constexpr const char* kRuleNames[] = {"first", "longest", "shortest"};
  for (std::vector<uint64_t>& members : groups) {
    // The keep rule of `neardup dedup`, applied to this cluster alone.
    std::vector<uint64_t> cluster_of(members.size(), 0);
    std::vector<uint64_t> lengths;
    for (uint64_t member : members) lengths.push_back(data.documents[member].length);
    NEARDUP_ASSIGN_OR_RETURN(std::vector<bool> keep,
                             ChooseKept(cluster_of, lengths, options.keep_rule));
    ReportCluster cluster;
    const size_t kept = std::find(keep.begin(), keep.end(), true) - keep.begin();
    cluster.kept = members[kept];
    const std::string length = std::to_string(lengths[kept]) + " bytes";
    switch (options.keep_rule) {
      case KeepRule::kFirst:
        cluster.why = "first in input order (--keep first)";
        break;
      case KeepRule::kLongest:
        cluster.why = "longest, " + length + " (--keep longest; ties go to the earlier)";
        break;
      case KeepRule::kShortest:
        cluster.why = "shortest, " + length + " (--keep shortest; ties go to the earlier)";
        break;
    }
    cluster.members = std::move(members);
    data.clusters.push_back(std::move(cluster));
  }
  data.summary.keep_rule = kRuleNames[static_cast<int>(options.keep_rule)];
  data.summary.cluster_rule =
      clusters.empty() ? (options.cluster_rule == ClusterRule::kLeader ? "leader" : "components")
                       : "as given";
  data.summary.recipe_id = RecipeId(options.recipe);
  data.summary.recipe_json = CanonicalJson(options.recipe);

  // Passages over the shingles the MinHash verification compares.
  Result<internal::PassageMatcher> matcher =
      internal::PassageMatcher::Create(NearDuplicatePassageRecipe(options.recipe));
  if (matcher.ok()) NEARDUP_RETURN_IF_ERROR(AddPassages(*matcher, {}, &data));
  return data;
}

}  // namespace neardup
