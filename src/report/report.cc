// RenderReport: the data as JSON embedded once in the page template
// (report_template.html, compiled in by CMake), the summary and the plots as
// static HTML.
#include "neardup/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "neardup/check.h"
#include "neardup/format/wire_format.h"
#include "report/report_svg.h"
#include "report/report_text.h"

namespace neardup {
namespace internal {
extern const char kReportTemplate[];  // report_template.cc, generated
}  // namespace internal

namespace {

using internal::AppendHtmlEscaped;
using internal::AppendScriptJsonString;

Status CheckData(const ReportData& data) {
  const uint64_t n = data.documents.size();
  for (size_t i = 0; i < data.pairs.size(); ++i) {
    const ReportPair& pair = data.pairs[i];
    if (pair.a >= n || pair.b >= n) {
      return InvalidArgumentError("report pair " + std::to_string(i) + " names document " +
                                  std::to_string(std::max(pair.a, pair.b)) + " of " +
                                  std::to_string(n));
    }
    for (double score : {pair.similarity, pair.a_in_b, pair.b_in_a}) {
      if (!std::isfinite(score)) {
        return InvalidArgumentError("report pair " + std::to_string(i) +
                                    " has a score that is not finite");
      }
    }
  }
  for (size_t i = 0; i < data.clusters.size(); ++i) {
    const ReportCluster& cluster = data.clusters[i];
    bool kept_is_member = false;
    for (uint64_t member : cluster.members) {
      if (member >= n) {
        return InvalidArgumentError("report cluster " + std::to_string(i) + " names document " +
                                    std::to_string(member) + " of " + std::to_string(n));
      }
      kept_is_member = kept_is_member || member == cluster.kept;
    }
    if (!kept_is_member) {
      return InvalidArgumentError("report cluster " + std::to_string(i) +
                                  ": the kept document is not a member");
    }
  }
  for (const ReportDocument& doc : data.documents) {
    if (!std::isfinite(doc.best_score)) {
      return InvalidArgumentError("report document " + doc.id + " has a score that is not finite");
    }
  }
  return Status::Ok();
}

// Where each document's text is cut (its full length when not cut).
std::vector<size_t> TextCuts(const ReportData& data, size_t max_text_bytes) {
  std::vector<size_t> cuts(data.documents.size(), 0);
  for (size_t i = 0; i < data.documents.size(); ++i) {
    const auto& text = data.documents[i].text;
    if (text) cuts[i] = internal::CutAtCharacterBoundary(*text, max_text_bytes);
  }
  return cuts;
}

// The passages of every pair as UTF-16 offsets of the embedded texts, four
// per passage (a begin, a end, b begin, b end), clipped to the cuts; a
// passage wholly past both cuts is dropped (empty vector entry pair).
std::vector<std::vector<uint32_t>> PassageUnits(const ReportData& data,
                                                const std::vector<size_t>& cuts) {
  // Offsets per document, converted in one walk over its text each.
  struct Slot {
    size_t pair;
    size_t index;
  };
  std::vector<std::vector<uint32_t>> offsets(data.documents.size());
  std::vector<std::vector<Slot>> slots(data.documents.size());
  std::vector<std::vector<uint32_t>> units(data.pairs.size());
  for (size_t p = 0; p < data.pairs.size(); ++p) {
    const ReportPair& pair = data.pairs[p];
    if (!data.documents[pair.a].text || !data.documents[pair.b].text) continue;
    const uint32_t cut_a = static_cast<uint32_t>(cuts[pair.a]);
    const uint32_t cut_b = static_cast<uint32_t>(cuts[pair.b]);
    for (const Passage& passage : pair.passages) {
      const uint32_t values[4] = {
          std::min(passage.query_begin, cut_a), std::min(passage.query_end, cut_a),
          std::min(passage.match_begin, cut_b), std::min(passage.match_end, cut_b)};
      if (values[0] == values[1] && values[2] == values[3]) continue;
      for (int k = 0; k < 4; ++k) {
        const uint64_t doc = k < 2 ? pair.a : pair.b;
        slots[doc].push_back({p, units[p].size()});
        offsets[doc].push_back(values[k]);
        units[p].push_back(0);
      }
    }
  }
  for (size_t doc = 0; doc < data.documents.size(); ++doc) {
    if (offsets[doc].empty()) continue;
    std::string_view text = *data.documents[doc].text;
    const std::vector<uint32_t> converted =
        internal::Utf16Offsets(text.substr(0, cuts[doc]), offsets[doc]);
    for (size_t i = 0; i < converted.size(); ++i) {
      units[slots[doc][i].pair][slots[doc][i].index] = converted[i];
    }
  }
  return units;
}

void AppendScore(std::string* out, double value) { format::AppendJsonScore(out, value); }

std::string DataJson(const ReportData& data, const ReportOptions& options) {
  const std::vector<size_t> cuts = TextCuts(data, options.max_text_bytes);
  const std::vector<std::vector<uint32_t>> units = PassageUnits(data, cuts);
  std::string json;
  json += "{\"kind\":";
  json += data.kind == ReportKind::kContainment ? "\"containment\"" : "\"near-duplicates\"";
  json += ",\"page\":" + std::to_string(options.page_size);
  json += ",\"max_text_bytes\":" + std::to_string(options.max_text_bytes);
  // docs: [id, length, text or null, cut (0/1), best score(, time)]
  json += ",\"docs\":[";
  for (size_t i = 0; i < data.documents.size(); ++i) {
    const ReportDocument& doc = data.documents[i];
    if (i > 0) json += ',';
    json += '[';
    AppendScriptJsonString(&json, doc.id);
    json += ',' + std::to_string(doc.length) + ',';
    if (doc.text) {
      AppendScriptJsonString(&json, std::string_view(*doc.text).substr(0, cuts[i]));
    } else {
      json += "null";
    }
    json += doc.text && cuts[i] < doc.text->size() ? ",1," : ",0,";
    AppendScore(&json, doc.best_score);
    if (doc.time) json += ',' + std::to_string(*doc.time);
    json += ']';
  }
  // pairs: [a, b, similarity, distance, a_in_b, b_in_a, [a0, a1, b0, b1, ...]]
  json += "],\"pairs\":[";
  for (size_t p = 0; p < data.pairs.size(); ++p) {
    const ReportPair& pair = data.pairs[p];
    if (p > 0) json += ',';
    json += '[' + std::to_string(pair.a) + ',' + std::to_string(pair.b) + ',';
    AppendScore(&json, pair.similarity);
    json += ',' + std::to_string(pair.distance) + ',';
    if (pair.a_in_b < 0) {
      json += "-1,-1";
    } else {
      AppendScore(&json, pair.a_in_b);
      json += ',';
      AppendScore(&json, pair.b_in_a);
    }
    json += ",[";
    for (size_t k = 0; k < units[p].size(); ++k) {
      if (k > 0) json += ',';
      json += std::to_string(units[p][k]);
    }
    json += "]]";
  }
  // clusters: [kept, why, [members]]
  json += "],\"clusters\":[";
  for (size_t c = 0; c < data.clusters.size(); ++c) {
    const ReportCluster& cluster = data.clusters[c];
    if (c > 0) json += ',';
    json += '[' + std::to_string(cluster.kept) + ',';
    AppendScriptJsonString(&json, cluster.why);
    json += ",[";
    for (size_t m = 0; m < cluster.members.size(); ++m) {
      if (m > 0) json += ',';
      json += std::to_string(cluster.members[m]);
    }
    json += "]]";
  }
  json += "]}";
  return json;
}

void SummaryItem(std::string* html, std::string_view key, std::string_view name,
                 std::string_view value) {
  *html += "<dt>";
  AppendHtmlEscaped(html, name);
  *html += "</dt><dd data-key=\"";
  AppendHtmlEscaped(html, key);
  *html += "\">";
  AppendHtmlEscaped(html, value);
  *html += "</dd>";
}

std::string SummaryHtml(const ReportData& data, const ReportOptions& options) {
  const ReportSummary& summary = data.summary;
  uint64_t bytes_removed = 0, documents_removed = 0;
  for (const ReportCluster& cluster : data.clusters) {
    for (uint64_t member : cluster.members) {
      if (member == cluster.kept) continue;
      bytes_removed += data.documents[member].length;
      ++documents_removed;
    }
  }
  std::string html = "<dl id=\"summary\">";
  SummaryItem(&html, "documents", "Documents", std::to_string(summary.documents));
  SummaryItem(&html, "pairs", "Pairs", std::to_string(data.pairs.size()));
  if (data.kind == ReportKind::kNearDuplicates) {
    SummaryItem(&html, "clusters", "Clusters (two or more)", std::to_string(data.clusters.size()));
    SummaryItem(&html, "removed", "Removed by dedup",
                std::to_string(documents_removed) + " documents, " + std::to_string(bytes_removed) +
                    " of " + std::to_string(summary.bytes_total) + " bytes");
    SummaryItem(&html, "bytes_removed", "Bytes removed", std::to_string(bytes_removed));
    SummaryItem(&html, "rules", "Rules",
                "clusters: " + summary.cluster_rule + "; kept: " + summary.keep_rule);
  }
  SummaryItem(&html, "method", "Method", summary.method);
  SummaryItem(&html, "recipe_id", "Recipe id", summary.recipe_id);
  SummaryItem(&html, "command", "Command line", summary.command_line);
  SummaryItem(&html, "max_text", "Texts shown up to",
              std::to_string(options.max_text_bytes) + " bytes each (longer ones are cut)");
  html += "</dl><details><summary>Recipe</summary><pre id=\"recipe\">";
  AppendHtmlEscaped(&html, summary.recipe_json);
  html += "</pre></details>";
  return html;
}

// The facts, links and search form of a live page; "" for a report file.
std::string NavigationHtml(const ReportNavigation& navigation) {
  std::string html;
  if (!navigation.facts.empty()) {
    html += "<dl id=\"live-facts\">";
    for (const auto& [label, value] : navigation.facts) SummaryItem(&html, label, label, value);
    html += "</dl>";
  }
  if (!navigation.form_action.empty() && internal::IsLocalPath(navigation.form_action)) {
    html += "<form id=\"live-search\" method=\"get\" action=\"";
    AppendHtmlEscaped(&html, navigation.form_action);
    html += "\">";
    for (const ReportFormField& field : navigation.form_fields) {
      html += "<label>";
      AppendHtmlEscaped(&html, field.label);
      html += " <input type=\"text\" name=\"";
      AppendHtmlEscaped(&html, field.name);
      html += "\" value=\"";
      AppendHtmlEscaped(&html, field.value);
      html += "\"></label> ";
    }
    html += "<button type=\"submit\">show</button></form>";
  }
  std::string links;
  for (const auto& [label, href] : navigation.links) {
    if (!internal::IsLocalPath(href)) continue;
    links += "<a href=\"";
    AppendHtmlEscaped(&links, href);
    links += "\">";
    AppendHtmlEscaped(&links, label);
    links += "</a> ";
  }
  if (!links.empty()) html += "<p id=\"live-links\">" + links + "</p>";
  return html.empty() ? html : "<section id=\"live\">" + html + "</section>";
}

std::string PlotsHtml(const ReportData& data) {
  std::vector<double> scores;
  scores.reserve(data.pairs.size());
  for (const ReportPair& pair : data.pairs) scores.push_back(pair.similarity);
  const bool containment = data.kind == ReportKind::kContainment;
  std::string html = internal::BarChartSvg(
      "plot-similarity", containment ? "Pairs by max(a_in_b, b_in_a)" : "Pairs by similarity",
      containment ? "containment" : "similarity", internal::ScoreBins(scores, 20));
  if (containment) {
    std::vector<double> best;
    best.reserve(data.documents.size());
    for (const ReportDocument& doc : data.documents) best.push_back(doc.best_score);
    html += internal::BarChartSvg("plot-best", "Documents by best containment",
                                  "best max(a_in_b, b_in_a) of the document",
                                  internal::ScoreBins(best, 20));
  } else {
    std::vector<uint64_t> sizes;
    for (const ReportCluster& cluster : data.clusters) sizes.push_back(cluster.members.size());
    html += internal::BarChartSvg("plot-clusters", "Clusters by size", "members",
                                  internal::ClusterSizeBars(sizes));
  }
  return html;
}

}  // namespace

Result<std::string> RenderReport(const ReportData& data, const ReportOptions& options) {
  NEARDUP_RETURN_IF_ERROR(CheckData(data));
  if (options.page_size == 0) return InvalidArgumentError("page_size must be at least 1");
  std::string title = data.kind == ReportKind::kContainment ? "neardup: similar documents"
                                                            : "neardup: near-duplicates";
  const std::pair<std::string_view, std::string> parts[] = {
      {"TITLE", title},
      {"SUMMARY", SummaryHtml(data, options)},
      {"PLOTS", PlotsHtml(data)},
      {"NAV", NavigationHtml(data.navigation)},
      {"DATA", DataJson(data, options)},
  };
  // Placeholders are looked for in the template only, never in what replaces
  // them, so no text of the data can inject one.
  std::string_view page = internal::kReportTemplate;
  std::string html;
  size_t reserve = page.size();
  for (const auto& part : parts) reserve += part.second.size();
  html.reserve(reserve);
  size_t at = 0;
  while (true) {
    const size_t open = page.find("@@", at);
    if (open == std::string_view::npos) break;
    const size_t close = page.find("@@", open + 2);
    NEARDUP_CHECK(close != std::string_view::npos);
    const std::string_view key = page.substr(open + 2, close - open - 2);
    const std::string* value = nullptr;
    for (const auto& part : parts) {
      if (part.first == key) value = &part.second;
    }
    NEARDUP_CHECK(value != nullptr);
    html.append(page.substr(at, open - at));
    html.append(*value);
    at = close + 2;
  }
  html.append(page.substr(at));
  return html;
}

}  // namespace neardup
