// BuildStreamReport (neardup/report.h): a page of a stream's near-duplicate
// answers as the report's pairs, clusters and documents.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "neardup/report.h"

namespace neardup {
namespace {

std::string MethodOf(const StreamConfig& config) {
  char text[96];
  if (config.method == NearDuplicateMethod::kSimHash) {
    std::snprintf(text, sizeof(text), "stream, simhash, at most %d bits apart",
                  config.max_distance);
  } else {
    std::snprintf(text, sizeof(text), "stream, minhash, Jaccard at least %g", config.threshold);
  }
  return text;
}

// Passages of `entry` are this document (query) against its kept one
// (match); in the report the kept one is A.
Passage KeptFirst(const Passage& p) {
  return Passage{p.match_begin, p.match_end, p.query_begin, p.query_end, p.chunks};
}

}  // namespace

Result<StreamReport> BuildStreamReport(const NearDuplicateStream& stream,
                                       StreamListOptions options) {
  const StreamConfig& config = stream.config();
  options.detail.texts = config.keep_texts;
  options.detail.passages = config.keep_texts;
  NEARDUP_ASSIGN_OR_RETURN(StreamPage page, stream.List(options));
  const StreamStats stats = stream.Stats();

  StreamReport report;
  report.next_cursor = page.next_cursor;
  ReportData& data = report.data;
  data.kind = ReportKind::kNearDuplicates;
  data.summary.recipe_id = RecipeId(stream.recipe());
  data.summary.recipe_json = CanonicalJson(stream.recipe());
  data.summary.method = MethodOf(config);
  data.summary.keep_rule = "first";
  data.summary.cluster_rule = "leader";
  data.summary.documents = stats.documents;

  // Each id once: the kept documents first seen as an `of`, then listed.
  std::map<std::string, uint64_t> index_of;
  auto document = [&](const std::string& id, std::optional<int64_t> time,
                      const std::optional<std::string>& text) {
    auto [it, added] = index_of.emplace(id, data.documents.size());
    if (added) {
      ReportDocument doc;
      doc.id = id;
      doc.time = time;
      if (text) {
        doc.length = text->size();
        doc.text = *text;
        data.summary.bytes_total += text->size();
      }
      data.documents.push_back(std::move(doc));
    }
    return it->second;
  };
  std::map<uint64_t, size_t> cluster_of;  // kept document -> cluster
  for (const StreamEntry& entry : page.entries) {
    const StreamAnswer& answer = entry.answer;
    ReportPair pair;
    pair.a = document(answer.of, entry.of_time, entry.of_text);
    pair.b = document(answer.id, answer.time, entry.text);
    pair.similarity = answer.similarity;
    if (config.method == NearDuplicateMethod::kSimHash) {
      pair.distance = static_cast<int>(std::lround((1.0 - answer.similarity) * 64));
    }
    for (const Passage& passage : entry.passages) pair.passages.push_back(KeptFirst(passage));
    auto [it, added] = cluster_of.emplace(pair.a, data.clusters.size());
    if (added) {
      ReportCluster cluster;
      cluster.kept = pair.a;
      cluster.members = {pair.a};
      cluster.why =
          "the leader rule: the earliest kept document in the window that each member is "
          "verified similar to";
      data.clusters.push_back(std::move(cluster));
    }
    data.clusters[it->second].members.push_back(pair.b);
    data.pairs.push_back(std::move(pair));
  }
  return report;
}

}  // namespace neardup
