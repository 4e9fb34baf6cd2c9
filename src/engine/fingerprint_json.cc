#include "engine/fingerprint_json.h"

#include <charconv>
#include <span>

#include "engine/hex_strings.h"
#include "sketch/digest_simhash.h"
#include "util/base64.h"
#include "util/json_writer.h"

namespace neardup::internal {
namespace {

// An id is nearly always printable ASCII without '"' or '\\': then it is
// its own JSON text, appended whole, instead of AppendJsonString's byte at a
// time.
void AppendId(std::string* out, std::string_view id) {
  for (const char c : id) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x80 || byte == '"' || byte == '\\') {
      AppendJsonString(out, id);
      return;
    }
  }
  out->push_back('"');
  out->append(id);
  out->push_back('"');
}

void AppendHex(std::string* out, uint64_t value) {
  const size_t start = out->size();
  out->resize(start + 16);
  WriteHex64Digits(out->data() + start, value);
}

// "v0,v1,...": written in place (a chunk set has thousands of values; one
// resize, then std::to_chars, instead of a string per value).
void AppendDecimalList(std::string* out, std::span<const uint32_t> values) {
  constexpr size_t kMaxDigits = 10;  // UINT32_MAX
  const size_t start = out->size();
  out->resize(start + values.size() * (kMaxDigits + 1));
  char* p = out->data() + start;
  char* const end = out->data() + out->size();
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *p++ = ',';
    p = std::to_chars(p, end, values[i]).ptr;
  }
  out->resize(static_cast<size_t>(p - out->data()));
}

// A Fingerprint read through FingerprintView's accessors, so that one
// writer serves both.
class FingerprintAccess {
 public:
  explicit FingerprintAccess(const Fingerprint& f) : f_(f) {}
  uint64_t num_tokens() const { return f_.num_tokens; }
  uint64_t simhash() const { return f_.simhash; }
  SimHash128 simhash128() const { return f_.simhash128; }
  const WideSimHash& simhash_wide() const { return f_.simhash_wide; }
  std::span<const uint64_t> minhash() const { return f_.minhash.values; }
  std::span<const uint64_t> kvalue_minhash() const { return f_.kvalue_minhash.values; }
  bool kvalue_empty() const { return f_.kvalue_minhash.empty; }
  std::span<const uint32_t> chunks() const { return f_.chunks; }

 private:
  const Fingerprint& f_;
};

template <typename Document>
void AppendJson(std::string* out, std::string_view id, const Document& fingerprint,
                const SketchSelection& selection, int simhash_bits, std::string_view recipe_id) {
  out->append("{\"id\":");
  AppendId(out, id);
  out->append(",\"recipe\":\"");
  out->append(recipe_id);
  out->append("\",\"tokens\":");
  char digits[24];
  out->append(digits, std::to_chars(digits, digits + sizeof digits, fingerprint.num_tokens()).ptr);
  if (selection.simhash && fingerprint.simhash_wide().bits > 0) {
    // The digest route: every bit in hex, and the bytes in Base64 as ExLSH
    // prints them.
    const std::vector<uint8_t> bytes = WideSimHashBytes(fingerprint.simhash_wide());
    out->append(",\"simhash\":\"");
    for (const uint8_t byte : bytes) {
      static constexpr char kHex[] = "0123456789abcdef";
      out->push_back(kHex[byte >> 4]);
      out->push_back(kHex[byte & 15]);
    }
    out->append("\",\"simhash_base64\":\"");
    AppendBase64(out, bytes);
    out->push_back('"');
  } else if (selection.simhash) {
    out->append(",\"simhash\":\"");
    if (simhash_bits == 128) {
      const SimHash128 value = fingerprint.simhash128();
      AppendHex(out, value.high);
      AppendHex(out, value.low);
    } else {
      AppendHex(out, fingerprint.simhash());
    }
    out->push_back('"');
  }
  if (selection.minhash) {
    out->append(",\"minhash\":");
    AppendHexStringArray(out, fingerprint.minhash());
  }
  if (selection.kvalue_minhash) {
    out->append(",\"kminhash\":");
    if (fingerprint.kvalue_empty()) {
      out->append("[]");
    } else {
      AppendHexStringArray(out, fingerprint.kvalue_minhash());
    }
  }
  if (selection.chunks) {
    out->append(",\"chunks\":[");
    AppendDecimalList(out, fingerprint.chunks());
    out->push_back(']');
  }
  out->push_back('}');
}

}  // namespace

void AppendFingerprintJson(std::string* out, std::string_view id, const Fingerprint& fingerprint,
                           const SketchSelection& selection, int simhash_bits,
                           std::string_view recipe_id) {
  AppendJson(out, id, FingerprintAccess(fingerprint), selection, simhash_bits, recipe_id);
}

void AppendFingerprintJson(std::string* out, std::string_view id,
                           const FingerprintView& fingerprint, const SketchSelection& selection,
                           int simhash_bits, std::string_view recipe_id) {
  AppendJson(out, id, fingerprint, selection, simhash_bits, recipe_id);
}

}  // namespace neardup::internal
