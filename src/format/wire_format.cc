#include "neardup/format/wire_format.h"

#include "engine/fingerprint_json.h"
#include "util/json_writer.h"

namespace neardup::format {

void AppendJsonString(std::string* out, std::string_view value) {
  internal::AppendJsonString(out, value);
}

void AppendJsonScore(std::string* out, double value) { internal::AppendJsonDouble(out, value); }

void AppendCsvField(std::string* out, std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(value);
    return;
  }
  out->push_back('"');
  for (char c : value) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendFingerprintLine(std::string* out, std::string_view id, const Fingerprint& fingerprint,
                           const SketchSelection& selection, int simhash_bits,
                           std::string_view recipe_id) {
  internal::AppendFingerprintJson(out, id, fingerprint, selection, simhash_bits, recipe_id);
  out->push_back('\n');
}

void AppendPairLine(std::string* out, std::string_view a, std::string_view b,
                    const SimilarPair& pair) {
  out->append("{\"a\":");
  AppendJsonString(out, a);
  out->append(",\"b\":");
  AppendJsonString(out, b);
  if (pair.distance >= 0) out->append(",\"distance\":" + std::to_string(pair.distance));
  out->append(",\"similarity\":");
  AppendJsonScore(out, pair.similarity);
  out->append("}\n");
}

void AppendClusterLine(std::string* out, uint64_t cluster,
                       const std::vector<std::string_view>& ids) {
  out->append("{\"cluster\":" + std::to_string(cluster) + ",\"ids\":[");
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(out, ids[i]);
  }
  out->append("]}\n");
}

void AppendDedupDecisionLine(std::string* out, std::string_view id,
                             std::optional<std::string_view> duplicate_of) {
  out->append("{\"id\":");
  AppendJsonString(out, id);
  if (!duplicate_of.has_value()) {
    out->append(",\"kept\":true}\n");
    return;
  }
  out->append(",\"kept\":false,\"duplicate_of\":");
  AppendJsonString(out, *duplicate_of);
  out->append("}\n");
}

void AppendSimilarityLine(std::string* out, std::string_view a, std::string_view b, double a_in_b,
                          double b_in_a) {
  out->append("{\"a\":");
  AppendJsonString(out, a);
  out->append(",\"b\":");
  AppendJsonString(out, b);
  out->append(",\"a_in_b\":");
  AppendJsonScore(out, a_in_b);
  out->append(",\"b_in_a\":");
  AppendJsonScore(out, b_in_a);
  out->append("}\n");
}

void AppendSimilarityCsvHeader(std::string* out) { out->append("a,b,a_in_b,b_in_a\n"); }

void AppendSimilarityCsvLine(std::string* out, std::string_view a, std::string_view b,
                             double a_in_b, double b_in_a) {
  AppendCsvField(out, a);
  out->push_back(',');
  AppendCsvField(out, b);
  out->push_back(',');
  AppendJsonScore(out, a_in_b);
  out->push_back(',');
  AppendJsonScore(out, b_in_a);
  out->push_back('\n');
}

void AppendQueryResultLine(std::string* out, std::string_view query_id, const QueryResult& result,
                           size_t passages_top) {
  out->append("{\"query\":");
  AppendJsonString(out, query_id);
  out->append(",\"chunks\":" + std::to_string(result.num_chunks) + ",\"matches\":[");
  for (size_t i = 0; i < result.matches.size(); ++i) {
    const QueryMatch& m = result.matches[i];
    if (i > 0) out->push_back(',');
    out->append("{\"b\":");
    AppendJsonString(out, m.id);
    out->append(",\"a_in_b\":");
    AppendJsonScore(out, m.a_in_b);
    out->append(",\"b_in_a\":");
    AppendJsonScore(out, m.b_in_a);
    if (!m.format.empty()) {
      out->append(",\"b_format\":");
      AppendJsonString(out, m.format);
      if (!m.name.empty() && m.name != m.id) {
        out->append(",\"b_name\":");
        AppendJsonString(out, m.name);
      }
    }
    if (i < passages_top) {
      out->append(",\"passages\":[");
      for (size_t j = 0; j < m.passages.size(); ++j) {
        const Passage& p = m.passages[j];
        if (j > 0) out->push_back(',');
        out->append("{\"query\":[" + std::to_string(p.query_begin) + "," +
                    std::to_string(p.query_end) + "],\"match\":[" + std::to_string(p.match_begin) +
                    "," + std::to_string(p.match_end) + "]}");
      }
      out->push_back(']');
    }
    out->push_back('}');
  }
  out->append("]}\n");
}

}  // namespace neardup::format
