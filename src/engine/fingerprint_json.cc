#include "engine/fingerprint_json.h"

#include <charconv>
#include <cstring>
#include <span>

#include "sketch/digest_simhash.h"
#include "util/base64.h"
#include "util/json_writer.h"

namespace neardup::internal {
namespace {

// The 16 lowercase hex digits of `value`, most significant first, as
// AppendHex64 writes them, without a table or a loop: each nibble is spread
// into a byte of its own (SWAR), turned into its ASCII digit, and the bytes
// are put in big-endian order. About 30 instructions for 16 digits, where a
// digit-per-iteration loop and a string append per value made this writer
// the largest single cost of `neardup fingerprint --minhash` (128 values per
// document; docs/BENCHMARKS.md, session 8).
inline void WriteHex64(char* out, uint64_t value) {
  // 32 bits into 8 nibbles, one per byte, least significant nibble in the
  // lowest byte.
  auto spread = [](uint64_t x) {
    x = ((x & 0xFFFF0000u) << 16) | (x & 0xFFFFu);
    x = ((x & 0x0000FF000000FF00u) << 8) | (x & 0x000000FF000000FFu);
    x = ((x & 0x00F000F000F000F0u) << 4) | (x & 0x000F000F000F000Fu);
    return x;
  };
  auto digits = [](uint64_t nibbles) {
    // 0-9 -> '0'-'9', 10-15 -> 'a'-'f': add '0', and 'a' - '0' - 10 = 39
    // where the nibble is 10 or more (bit 4 of nibble + 6).
    const uint64_t letters = ((nibbles + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
    return nibbles + 0x3030303030303030u + letters * 39;
  };
  const uint64_t high = __builtin_bswap64(digits(spread(value >> 32)));
  const uint64_t low = __builtin_bswap64(digits(spread(value & 0xFFFFFFFFu)));
  std::memcpy(out, &high, 8);
  std::memcpy(out + 8, &low, 8);
}

// ["v0","v1",...], written in place: one resize for the whole array.
void AppendHexArray(std::string* out, std::span<const uint64_t> values) {
  constexpr size_t kPerValue = 19;  // "0123456789abcdef",
  const size_t start = out->size();
  out->resize(start + 2 + values.size() * kPerValue);
  char* p = out->data() + start;
  *p++ = '[';
  for (size_t i = 0; i < values.size(); ++i) {
    p[0] = '"';
    WriteHex64(p + 1, values[i]);
    p[17] = '"';
    p[18] = ',';
    p += kPerValue;
  }
  if (!values.empty()) --p;  // no comma after the last value
  *p++ = ']';
  out->resize(static_cast<size_t>(p - out->data()));
}

void AppendHex(std::string* out, uint64_t value) {
  const size_t start = out->size();
  out->resize(start + 16);
  WriteHex64(out->data() + start, value);
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
  AppendJsonString(out, id);
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
    AppendHexArray(out, fingerprint.minhash());
  }
  if (selection.kvalue_minhash) {
    out->append(",\"kminhash\":");
    if (fingerprint.kvalue_empty()) {
      out->append("[]");
    } else {
      AppendHexArray(out, fingerprint.kvalue_minhash());
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
