// The collection routes of the service (the archive case, docs/SERVER.md):
// query a document against a containment collection, add, look up and
// remove documents, compact, a stored document's most similar ones, the
// collection's counts. Every answer
// line is the one the CLI prints (neardup/format/wire_format.h).
#include <httplib.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "http_responses.h"
#include "json_input.h"
#include "metrics.h"
#include "neardup/format/wire_format.h"
#include "neardup/json_writer.h"
#include "service.h"

namespace neardup::server {
namespace {

// The query parameter `key` as an integer in [min, max] (`fallback` when
// absent), or false with a 400 naming it sent.
bool CountParam(const httplib::Request& req, httplib::Response& res, const char* key,
                uint64_t fallback, uint64_t min, uint64_t max, size_t* out) {
  *out = static_cast<size_t>(fallback);
  if (!req.has_param(key)) return true;
  const std::string text = req.get_param_value(key);
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-' || value < min || value > max) {
    SendError(res, 400, "invalid_argument",
              std::string("parameter \"") + key + "\" (" + text + ") must be an integer in [" +
                  std::to_string(min) + ", " + std::to_string(max) + "]");
    return false;
  }
  *out = static_cast<size_t>(value);
  return true;
}

// The query parameter `key` as a number in [0, 1].
bool FractionParam(const httplib::Request& req, httplib::Response& res, const char* key,
                   double fallback, double* out) {
  *out = fallback;
  if (!req.has_param(key)) return true;
  const std::string text = req.get_param_value(key);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0.0 && value <= 1.0)) {
    SendError(res, 400, "invalid_argument",
              std::string("parameter \"") + key + "\" (" + text + ") must be a number in [0, 1]");
    return false;
  }
  *out = value;
  return true;
}

constexpr uint64_t kMaxTop = uint64_t{1} << 32;

}  // namespace

ServedCollection* Service::FindCollection(const Request& req, Response& res) {
  std::string name;
  if (!NameOf(req, res, "collection", &name)) return nullptr;
  auto it = collections_.find(name);
  if (it == collections_.end()) {
    SendError(res, 404, "not_found", "no collection \"" + name + "\" (see --collection)");
    return nullptr;
  }
  return it->second.get();
}

void Service::GetCollection(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  Result<CollectionStats> stats = collection->Stats();
  if (!stats.ok()) return SendStatus(res, stats.status());
  std::string out = "{\"name\":";
  AppendJsonString(&out, req.name);
  out += ",\"recipe_id\":";
  AppendJsonString(&out, collection->recipe_id());
  out += ",\"documents\":" + std::to_string(stats->documents) +
         ",\"generation\":" + std::to_string(stats->generation) +
         ",\"segments\":" + std::to_string(stats->segments) +
         ",\"dead_rows\":" + std::to_string(stats->dead_rows) +
         ",\"index_bytes\":" + std::to_string(stats->index_bytes) +
         ",\"index_tiers\":" + std::to_string(stats->index_tiers) +
         ",\"index_dead_postings\":" + std::to_string(stats->index_dead_postings) +
         ",\"idle_index_merges\":" + std::to_string(collection->idle_index_merges()) +
         ",\"segment_bytes\":" + std::to_string(stats->segment_bytes) +
         ",\"memory_bytes\":" + std::to_string(stats->memory_bytes) +
         ",\"max_document_frequency\":" + std::to_string(stats->max_document_frequency) + "}\n";
  res.set_content(out, "application/json");
}

void Service::QueryCollection(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  QueryOptions options;
  double min = options.min_similarity;
  size_t passages = 0;
  // Passages by default (3, as `neardup query`), none when texts are not
  // stored unless asked for (then QueryDocument's error).
  const bool stores_texts = collection->stores_texts();
  if (!CountParam(req, res, "top", options.top_n, 1, kMaxTop, &options.top_n) ||
      !FractionParam(req, res, "min", min, &min) ||
      !CountParam(req, res, "passages", stores_texts ? 3 : 0, 0, kMaxTop, &passages)) {
    return;
  }
  options.min_similarity = min;
  options.passages_top = passages;
  const bool lines = IsJsonLines(req);
  Result<std::vector<DocumentInput>> documents =
      ParseDocuments(req.body, lines, /*id_optional=*/true, MaxDocumentBytes());
  if (!documents.ok()) return SendDocumentsError(res, documents.status());
  std::string body;
  for (const DocumentInput& document : *documents) {
    Result<QueryResult> result = collection->Query(document.text, options);
    if (!result.ok()) return SendStatus(res, result.status());
    format::AppendQueryResultLine(&body, document.id, *result, options.passages_top);
  }
  res.set_content(body, lines ? "application/x-ndjson" : "application/json");
}

void Service::AddToCollection(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  Result<std::vector<DocumentInput>> documents =
      ParseDocuments(req.body, IsJsonLines(req), /*id_optional=*/false, MaxDocumentBytes());
  if (!documents.ok()) return SendDocumentsError(res, documents.status());
  std::vector<CollectionInput> inputs;
  inputs.reserve(documents->size());
  for (DocumentInput& document : *documents) {
    inputs.push_back({std::move(document.id), std::move(document.text)});
  }
  Result<CommitResult> committed = collection->Add(inputs);
  if (!committed.ok()) return SendStatus(res, committed.status());
  res.set_content("{\"added\":" + std::to_string(committed->added) +
                      ",\"modified\":" + std::to_string(committed->modified) +
                      ",\"unchanged\":" + std::to_string(committed->unchanged) +
                      ",\"generation\":" + std::to_string(committed->generation) + "}\n",
                  "application/json");
}

void Service::GetSimilar(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  size_t top = 0;
  double min = 0;
  // The defaults of `neardup similar`.
  if (!CountParam(req, res, "top", 100, 1, kMaxTop, &top) ||
      !FractionParam(req, res, "min", 0.1, &min)) {
    return;
  }
  const std::string id = req.id;
  Result<std::vector<SimilarDocument>> similar = collection->Similar(id, top, min);
  if (!similar.ok()) return SendStatus(res, similar.status());
  std::string body;
  for (const SimilarDocument& document : *similar) {
    format::AppendSimilarityLine(&body, id, document.id, document.a_in_b, document.b_in_a);
  }
  res.set_content(body, "application/x-ndjson");
}

void Service::GetCollectionDocument(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  const std::string id = req.id;
  Result<std::optional<DocumentInfo>> info = collection->Find(id);
  if (!info.ok()) return SendStatus(res, info.status());
  if (!info->has_value()) {
    return SendError(res, 404, "not_found", "no document \"" + id + "\" in the collection");
  }
  const DocumentInfo& document = **info;
  std::string out = "{\"id\":";
  AppendJsonString(&out, document.id);
  out += ",\"name\":";
  AppendJsonString(&out, document.name);
  out += ",\"doc\":" + std::to_string(document.doc) +
         ",\"chunks\":" + std::to_string(document.num_chunks) + ",\"content_hash\":";
  AppendJsonString(&out, document.content_hash);
  out += ",\"added_at\":" + std::to_string(document.added_at) +
         ",\"modified_at\":" + std::to_string(document.modified_at) + "}\n";
  res.set_content(out, "application/json");
}

void Service::RemoveFromCollection(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  const std::string ids[] = {req.id};
  // NotFound (404, nothing committed) for an id the collection lacks.
  Result<CommitResult> committed = collection->Remove(ids);
  if (!committed.ok()) return SendStatus(res, committed.status());
  res.status = 204;
}

void Service::CompactCollection(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  if (Status compacted = collection->Compact(); !compacted.ok()) {
    return SendStatus(res, compacted);
  }
  Result<CollectionStats> stats = collection->Stats();
  if (!stats.ok()) return SendStatus(res, stats.status());
  res.set_content("{\"documents\":" + std::to_string(stats->documents) +
                      ",\"segments\":" + std::to_string(stats->segments) +
                      ",\"dead_rows\":" + std::to_string(stats->dead_rows) +
                      ",\"segment_bytes\":" + std::to_string(stats->segment_bytes) +
                      ",\"generation\":" + std::to_string(stats->generation) + "}\n",
                  "application/json");
}

void Service::AppendCollectionMetrics(std::string* out) {
  struct Series {
    const char* name;
    const char* help;
    uint64_t CollectionStats::*field;
  };
  static constexpr Series kSeries[] = {
      {"neardup_collection_documents", "Live documents of the collection.",
       &CollectionStats::documents},
      {"neardup_collection_generation", "The collection's last commit.",
       &CollectionStats::generation},
      {"neardup_collection_index_bytes", "Size of the collection's chunk index files.",
       &CollectionStats::index_bytes},
      {"neardup_collection_index_tiers",
       "Chunk index files (tiers) a query searches; one after an idle merge.",
       &CollectionStats::index_tiers},
  };
  std::vector<std::pair<std::string, CollectionStats>> stats;
  for (const auto& [name, collection] : collections_) {
    Result<CollectionStats> one = collection->Stats();
    if (one.ok()) stats.emplace_back(name, *one);
  }
  for (const Series& series : kSeries) {
    *out += std::string("# HELP ") + series.name + " " + series.help + "\n# TYPE " + series.name +
            " gauge\n";
    for (const auto& [name, one] : stats) {
      *out += std::string(series.name) + "{collection=\"" + EscapeLabel(name) + "\"} " +
              std::to_string(one.*series.field) + "\n";
    }
  }
}

}  // namespace neardup::server
