// The report pages of the service (`neardup serve` at /ui/, docs/REPORT.md):
// the HTML report of `neardup report --collection` for a live collection
// (from the reader view current when the request starts, so it never
// waits for an add), a stream's near-duplicate answers as the same report
// (a page at a time, with its counts, links and a search form), and an
// index of both.
// Pages are built per request; a collection page costs what `neardup report
// --collection` costs (its top-N lists are read when the stored table is
// current for the asked top/min, else computed for the page, not stored).
#include <httplib.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "http_responses.h"
#include "neardup/recipe.h"
#include "neardup/report.h"
#include "service.h"
#include "stream_answers.h"

namespace neardup::server {
namespace {

// The pages only read, and come from this server: the same policy as the
// report file's own <meta> (no request can leave the page).
void SendPage(httplib::Response& res, std::string html) {
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
                 "img-src data:");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(std::move(html), "text/html; charset=utf-8");
}

// `text` for a query string: unreserved bytes as they are, others %XX.
std::string UrlEncoded(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Count(uint64_t value) { return std::to_string(value); }

std::vector<std::pair<std::string, std::string>> StreamFacts(const NearDuplicateStream& stream) {
  const StreamConfig& config = stream.config();
  const StreamStats stats = stream.Stats();
  const bool simhash = config.method == NearDuplicateMethod::kSimHash;
  char rule[96];
  if (simhash) {
    std::snprintf(rule, sizeof(rule), "simhash, at most %d bits apart", config.max_distance);
  } else {
    std::snprintf(rule, sizeof(rule), "minhash, Jaccard at least %g", config.threshold);
  }
  std::vector<std::pair<std::string, std::string>> facts = {
      {"method", rule},
      {"preset", config.preset},
      {"recipe id", RecipeId(stream.recipe())},
      {"documents in the window", Count(stats.documents)},
      {"kept (indexed)", Count(stats.kept)},
      {"near-duplicates in the window", Count(stats.documents - stats.kept)},
      {"added since created", Count(stats.added)},
      {"evicted", Count(stats.evicted)},
      {"removed", Count(stats.removed)},
  };
  if (config.window_seconds > 0) {
    facts.emplace_back("window", std::to_string(config.window_seconds) + " s");
  }
  if (config.max_documents > 0) facts.emplace_back("cap", Count(config.max_documents));
  return facts;
}

}  // namespace

void Service::GetUiIndex(const Request&, Response& res) {
  std::vector<ReportIndexEntry> entries;
  for (const auto& [name, collection] : collections_) {
    ReportIndexEntry entry{"collection " + name, "/ui/collections/" + name, {}};
    Result<CollectionStats> stats = collection->Stats();
    if (stats.ok()) entry.facts.emplace_back("documents", Count(stats->documents));
    entry.facts.emplace_back("recipe id", collection->recipe_id());
    entries.push_back(std::move(entry));
  }
  std::map<std::string, std::shared_ptr<NearDuplicateStream>> streams;
  {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    streams = streams_;
  }
  for (const auto& [name, stream] : streams) {
    entries.push_back({"stream " + name, "/ui/streams/" + name, StreamFacts(*stream)});
  }
  SendPage(res, RenderReportIndex(
                    "neardup serve",
                    ready_ ? "Live results of this service." : "Recovering the streams.", entries));
}

void Service::GetUiCollection(const Request& req, Response& res) {
  ServedCollection* collection = FindCollection(req, res);
  if (!collection) return;
  double top = 0, min = 0, max_text_kb = 0, page_size = 0;
  if (!NumberParam(req, res, "top", 10, 1, 1000, true, &top) ||
      !NumberParam(req, res, "min", 0.1, 0, 1, false, &min) ||
      !NumberParam(req, res, "max_text_kb", 64, 1, 1024, true, &max_text_kb) ||
      !NumberParam(req, res, "page_size", 100, 1, 10000, true, &page_size)) {
    return;
  }
  CollectionReportOptions options;
  options.top_n = static_cast<size_t>(top);
  options.min_similarity = min;
  std::shared_ptr<const Collection> view = collection->ReaderView();
  Result<ReportData> data = BuildCollectionReport(*view, options);
  if (!data.ok()) return SendStatus(res, data.status());
  data->summary.command_line = "neardup serve: GET " + req.target + " (live)";
  ReportOptions render;
  render.max_text_bytes = static_cast<size_t>(max_text_kb) << 10;
  render.page_size = static_cast<size_t>(page_size);
  Result<std::string> html = RenderReport(*data, render);
  if (!html.ok()) return SendStatus(res, html.status());
  SendPage(res, *std::move(html));
}

void Service::GetUiStream(const Request& req, Response& res) {
  std::string name;
  if (!CheckReady(res) || !NameOf(req, res, "stream", &name)) return;
  std::shared_ptr<NearDuplicateStream> stream = FindStream(name);
  if (!stream) return SendError(res, 404, "not_found", "no stream \"" + name + "\"");
  StreamListOptions options;
  double max_text_kb = 0;
  if (!ParseStreamListParams(req, res, &options) ||
      !NumberParam(req, res, "max_text_kb", 64, 1, 1024, true, &max_text_kb)) {
    return;
  }
  Result<StreamReport> report = BuildStreamReport(*stream, options);
  if (!report.ok()) return SendStatus(res, report.status());
  ReportData& data = report->data;
  data.summary.command_line = "neardup serve: GET " + req.target + " (live)";
  // The page's own parameters, to carry into its links and form.
  const std::string base = "/ui/streams/" + name;
  std::vector<std::pair<std::string, std::string>> kept;
  for (const char* key : {"q", "from", "to", "limit", "order", "max_text_kb"}) {
    if (req.has_param(key)) kept.emplace_back(key, req.get_param_value(key));
  }
  auto href = [&](const std::string& cursor) {
    std::string out = base;
    char separator = '?';
    for (const auto& [key, value] : kept) {
      out += separator + key + "=" + UrlEncoded(value);
      separator = '&';
    }
    if (!cursor.empty()) out += separator + std::string("cursor=") + UrlEncoded(cursor);
    return out;
  };
  ReportNavigation& navigation = data.navigation;
  navigation.facts = StreamFacts(*stream);
  navigation.facts.emplace_back(
      "this page", std::to_string(data.pairs.size()) + " near-duplicate answers, " +
                       (options.oldest_first ? "oldest" : "newest") + " first" +
                       (options.cursor.empty() ? "" : ", after cursor " + options.cursor));
  if (!stream->config().keep_texts) {
    navigation.facts.emplace_back("texts",
                                  "not kept by this stream: ids, times and similarities only");
  }
  navigation.links.emplace_back("first page", href(""));
  if (!report->next_cursor.empty())
    navigation.links.emplace_back("next page", href(report->next_cursor));
  navigation.links.emplace_back("all streams and collections", "/ui/");
  navigation.form_action = base;
  for (const auto& [key, label] :
       std::vector<std::pair<std::string, std::string>>{{"q", "id contains"},
                                                        {"from", "from time"},
                                                        {"to", "to time"},
                                                        {"limit", "per page"},
                                                        {"order", "order (newest | oldest)"}}) {
    navigation.form_fields.push_back(
        {key, label, req.has_param(key) ? req.get_param_value(key) : std::string()});
  }
  ReportOptions render;
  render.max_text_bytes = static_cast<size_t>(max_text_kb) << 10;
  Result<std::string> html = RenderReport(data, render);
  if (!html.ok()) return SendStatus(res, html.status());
  SendPage(res, *std::move(html));
}

}  // namespace neardup::server
