#include "neardup/format/wire_format.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <initializer_list>
#include <limits>

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

void AppendFingerprintLine(std::string* out, std::string_view id,
                           const FingerprintView& fingerprint, const SketchSelection& selection,
                           int simhash_bits, std::string_view recipe_id) {
  internal::AppendFingerprintJson(out, id, fingerprint, selection, simhash_bits, recipe_id);
  out->push_back('\n');
}

namespace {

// Copies `text` to `at` and returns its end.
char* Put(char* at, std::string_view text) {
  std::memcpy(at, text.data(), text.size());
  return at + text.size();
}

// The most characters of a pair line other than its ids: the keys, quotes,
// an int and a score.
constexpr size_t kMaxPairLineFrame =
    64 + std::numeric_limits<int>::digits10 + 2 + internal::kMaxJsonDoubleChars;
// A line whose ids fit here is built on the stack and appended at once.
constexpr size_t kPairLineBuffer = 512;

}  // namespace

void AppendPairLine(std::string* out, std::string_view a, std::string_view b,
                    const SimilarPair& pair) {
  // Plain ids (nothing to escape, the common case) are copied whole and the
  // line is appended in one piece: no growth check per field, no temporary.
  if (a.size() + b.size() <= kPairLineBuffer - kMaxPairLineFrame &&
      internal::VerbatimJsonPrefix(a) == a.size() && internal::VerbatimJsonPrefix(b) == b.size()) {
    char line[kPairLineBuffer];
    char* at = Put(line, "{\"a\":\"");
    at = Put(at, a);
    at = Put(at, "\",\"b\":\"");
    at = Put(at, b);
    *at++ = '"';
    if (pair.distance >= 0) {
      at = Put(at, ",\"distance\":");
      at = std::to_chars(at, line + kPairLineBuffer, pair.distance).ptr;
    }
    at = Put(at, ",\"similarity\":");
    at = internal::WriteJsonDouble(at, pair.similarity);
    at = Put(at, "}\n");
    out->append(line, static_cast<size_t>(at - line));  // a pointer pair would go by _M_replace
    return;
  }
  out->append("{\"a\":");
  AppendJsonString(out, a);
  out->append(",\"b\":");
  AppendJsonString(out, b);
  if (pair.distance >= 0) {
    char distance[std::numeric_limits<int>::digits10 + 2];
    out->append(",\"distance\":");
    out->append(distance, std::to_chars(distance, distance + sizeof(distance), pair.distance).ptr);
  }
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

void AppendSimilarityCsvHeader(std::string* out) {
  AppendSimilarityTableHeader(out, TableFormat::kCsv);
}

void AppendSimilarityCsvLine(std::string* out, std::string_view a, std::string_view b,
                             double a_in_b, double b_in_a) {
  AppendSimilarityTableRow(out, a, b, a_in_b, b_in_a, TableFormat::kCsv);
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

std::optional<TableFormat> ParseTableFormat(std::string_view name) {
  if (name == "csv") return TableFormat::kCsv;
  if (name == "tsv") return TableFormat::kTsv;
  return std::nullopt;
}

namespace {

void AppendTableField(std::string* out, std::string_view value, TableFormat format) {
  if (format == TableFormat::kCsv) return AppendCsvField(out, value);
  // Runs of plain bytes are copied whole (a field without a tab, line break
  // or backslash in one append).
  size_t plain = internal::VerbatimJsonPrefix(value);
  out->append(value.data(), plain);
  for (size_t i = plain; i < value.size(); ++i) {
    switch (value[i]) {
      case '\t':
        out->append("\\t");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\\':
        out->append("\\\\");
        break;
      default:
        out->push_back(value[i]);
    }
  }
}

// The fields, separated, then '\n'.
void AppendTableRow(std::string* out, std::initializer_list<std::string_view> fields,
                    TableFormat format) {
  bool first = true;
  for (std::string_view field : fields) {
    if (!first) out->push_back(format == TableFormat::kCsv ? ',' : '\t');
    first = false;
    AppendTableField(out, field, format);
  }
  out->push_back('\n');
}

// A score or a count as text in place: no allocation per row.
class Number {
 public:
  explicit Number(double score)
      : size_(static_cast<size_t>(internal::WriteJsonDouble(text_, score) - text_)) {}
  // Empty for a negative (absent) value.
  static Number Count(int64_t value) {
    Number number;
    if (value >= 0) {
      number.size_ = static_cast<size_t>(
          std::to_chars(number.text_, number.text_ + kSize, value).ptr - number.text_);
    }
    return number;
  }
  operator std::string_view() const { return {text_, size_}; }

 private:
  static constexpr size_t kSize = std::max<size_t>(internal::kMaxJsonDoubleChars, 24);
  Number() = default;
  char text_[kSize];
  size_t size_ = 0;
};

}  // namespace

void AppendPairTableHeader(std::string* out, TableFormat format) {
  AppendTableRow(out, {"a", "b", "similarity", "distance"}, format);
}

void AppendPairTableRow(std::string* out, std::string_view a, std::string_view b,
                        const SimilarPair& pair, TableFormat format) {
  AppendTableRow(out, {a, b, Number(pair.similarity), Number::Count(pair.distance)}, format);
}

void AppendClusterTableHeader(std::string* out, TableFormat format) {
  AppendTableRow(out, {"cluster", "id"}, format);
}

void AppendClusterTableRows(std::string* out, uint64_t cluster,
                            const std::vector<std::string_view>& ids, TableFormat format) {
  const std::string number = std::to_string(cluster);
  for (std::string_view id : ids) AppendTableRow(out, {number, id}, format);
}

void AppendSimilarityTableHeader(std::string* out, TableFormat format) {
  AppendTableRow(out, {"a", "b", "a_in_b", "b_in_a"}, format);
}

void AppendSimilarityTableRow(std::string* out, std::string_view a, std::string_view b,
                              double a_in_b, double b_in_a, TableFormat format) {
  AppendTableRow(out, {a, b, Number(a_in_b), Number(b_in_a)}, format);
}

void AppendQueryTableHeader(std::string* out, TableFormat format) {
  AppendTableRow(out, {"query", "chunks", "b", "a_in_b", "b_in_a", "passages"}, format);
}

void AppendQueryTableRows(std::string* out, std::string_view query_id, const QueryResult& result,
                          size_t passages_top, TableFormat format) {
  const std::string chunks = std::to_string(result.num_chunks);
  if (result.matches.empty()) AppendTableRow(out, {query_id, chunks, "", "", "", ""}, format);
  for (size_t i = 0; i < result.matches.size(); ++i) {
    const QueryMatch& m = result.matches[i];
    std::string passages;
    for (size_t j = 0; i < passages_top && j < m.passages.size(); ++j) {
      const Passage& p = m.passages[j];
      if (j > 0) passages.push_back(' ');
      passages += std::to_string(p.query_begin) + "-" + std::to_string(p.query_end) + ":" +
                  std::to_string(p.match_begin) + "-" + std::to_string(p.match_end);
    }
    AppendTableRow(out, {query_id, chunks, m.id, Number(m.a_in_b), Number(m.b_in_a), passages},
                   format);
  }
}

}  // namespace neardup::format
