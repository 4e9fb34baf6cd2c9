#include "engine/fingerprint_json.h"

#include "util/json_writer.h"

namespace neardup::internal {
namespace {

void AppendHexArray(std::string* out, const std::vector<uint64_t>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->push_back('"');
    AppendHex64(out, values[i]);
    out->push_back('"');
  }
  out->push_back(']');
}

}  // namespace

void AppendFingerprintJson(std::string* out, std::string_view id, const Fingerprint& fingerprint,
                           const SketchSelection& selection, int simhash_bits,
                           std::string_view recipe_id) {
  out->append("{\"id\":");
  AppendJsonString(out, id);
  out->append(",\"recipe\":\"");
  out->append(recipe_id);
  out->append("\",\"tokens\":");
  out->append(std::to_string(fingerprint.num_tokens));
  if (selection.simhash) {
    out->append(",\"simhash\":\"");
    if (simhash_bits == 128) {
      AppendHex64(out, fingerprint.simhash128.high);
      AppendHex64(out, fingerprint.simhash128.low);
    } else {
      AppendHex64(out, fingerprint.simhash);
    }
    out->push_back('"');
  }
  if (selection.minhash) {
    out->append(",\"minhash\":");
    AppendHexArray(out, fingerprint.minhash.values);
  }
  if (selection.kvalue_minhash) {
    out->append(",\"kminhash\":");
    if (fingerprint.kvalue_minhash.empty) {
      out->append("[]");
    } else {
      AppendHexArray(out, fingerprint.kvalue_minhash.values);
    }
  }
  if (selection.chunks) {
    out->append(",\"chunks\":[");
    for (size_t i = 0; i < fingerprint.chunks.size(); ++i) {
      if (i > 0) out->push_back(',');
      out->append(std::to_string(fingerprint.chunks[i]));
    }
    out->push_back(']');
  }
  out->push_back('}');
}

}  // namespace neardup::internal
