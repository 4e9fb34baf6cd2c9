#include "engine/fingerprint_json.h"

#include <charconv>
#include <cstring>
#include <span>

#include "engine/hex_strings.h"
#include "sketch/digest_simhash.h"
#include "util/base64.h"
#include "util/json_writer.h"

namespace neardup::internal {
namespace {

// Copies the literal `text` (without its terminating zero) to p.
template <size_t N>
char* WriteLiteral(char* p, const char (&text)[N]) {
  std::memcpy(p, text, N - 1);
  return p + N - 1;
}

char* CopyBytes(char* p, std::string_view text) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}

constexpr size_t kMaxTokenDigits = 20;  // UINT64_MAX

// The head's SimHash in hex: none (count 0), 64 bits (1 word) or 128 bits
// (2 words, high then low). The wide (digest) SimHash is not written here.
struct HeadSimHash {
  uint64_t words[2];
  int count;
};

// The most bytes WriteHeadTail writes for `recipe_id`.
size_t HeadTailMaxSize(std::string_view recipe_id) {
  constexpr size_t kFixed = sizeof ",\"recipe\":\"\",\"tokens\":" - 1;
  constexpr size_t kSimHash = sizeof ",\"simhash\":\"\"" - 1 + 32;
  return kFixed + recipe_id.size() + kMaxTokenDigits + kSimHash;
}

// ,"recipe":"RECIPE","tokens":N and, unless simhash.count is 0,
// ,"simhash":"HEX" (its words in hex), written at p (HeadTailMaxSize bytes of
// room); returns the end.
char* WriteHeadTail(char* p, std::string_view recipe_id, uint64_t num_tokens,
                    const HeadSimHash& simhash) {
  p = WriteLiteral(p, ",\"recipe\":\"");
  p = CopyBytes(p, recipe_id);
  p = WriteLiteral(p, "\",\"tokens\":");
  p = std::to_chars(p, p + kMaxTokenDigits, num_tokens).ptr;
  if (simhash.count > 0) {
    p = WriteLiteral(p, ",\"simhash\":\"");
    for (int i = 0; i < simhash.count; ++i) {
      WriteHex64Digits(p, simhash.words[i]);
      p += 16;
    }
    *p++ = '"';
  }
  return p;
}

// {"id":ID and WriteHeadTail's fields: one resize and stores of known sizes
// instead of an append per piece (the whole line's writing was ~1.5% of one
// thread of `fingerprint --simhash`, session 15). An id that is not its own
// JSON string body takes AppendJsonString first.
void AppendHead(std::string* out, std::string_view id, std::string_view recipe_id,
                uint64_t num_tokens, const HeadSimHash& simhash) {
  const size_t tail_size = HeadTailMaxSize(recipe_id);
  char* p;
  if (VerbatimJsonPrefix(id) == id.size()) {
    const size_t start = out->size();
    constexpr size_t kId = sizeof "{\"id\":\"\"" - 1;
    out->resize(start + kId + id.size() + tail_size);
    p = WriteLiteral(out->data() + start, "{\"id\":\"");
    p = CopyBytes(p, id);
    *p++ = '"';
  } else {
    out->append("{\"id\":");
    AppendJsonString(out, id);
    const size_t start = out->size();
    out->resize(start + tail_size);
    p = out->data() + start;
  }
  p = WriteHeadTail(p, recipe_id, num_tokens, simhash);
  out->resize(static_cast<size_t>(p - out->data()));
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
  const bool wide = selection.simhash && fingerprint.simhash_wide().bits > 0;
  HeadSimHash simhash{{}, 0};
  if (selection.simhash && !wide) {
    if (simhash_bits == 128) {
      const SimHash128 value = fingerprint.simhash128();
      simhash = {{value.high, value.low}, 2};
    } else {
      simhash = {{fingerprint.simhash()}, 1};
    }
  }
  AppendHead(out, id, recipe_id, fingerprint.num_tokens(), simhash);
  if (wide) {
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
