#include "io/jsonl_flat_record.h"

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "hash/cpu_path.h"
#include "io/json_unescape.h"
#include "io/json_unescape_avx512bw_inl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_HAVE_FLAT_AVX512 1
#endif

namespace neardup::internal {
namespace {

// What a string body holds, from the scan that finds its end.
struct StringScan {
  const char* end = nullptr;  // the closing quote; nullptr: not a string simdjson
                              // accepts unchanged (control character, no end)
  bool backslash = false;     // an escape in the body
  bool high = false;          // a byte >= 0x80 in the body
};

// A quote at `quote` ends the string that starts at `body` unless an odd
// number of backslashes stands right before it.
bool QuoteIsEscaped(const char* body, const char* quote) {
  size_t run = 0;
  while (quote - run > body && quote[-1 - static_cast<std::ptrdiff_t>(run)] == '\\') ++run;
  return (run & 1) != 0;
}

// The byte loop: the string body starting at `p`, within [p, end).
StringScan ScanStringPortable(const char* p, const char* end) {
  StringScan scan;
  for (const char* q = p; q < end; ++q) {
    const auto c = static_cast<unsigned char>(*q);
    if (c == '"' && !QuoteIsEscaped(p, q)) {
      scan.end = q;
      return scan;
    }
    if (c < 0x20) return scan;
    scan.backslash |= c == '\\';
    scan.high |= c >= 0x80;
  }
  return scan;
}

#ifdef NEARDUP_HAVE_FLAT_AVX512
// The bytes of a 64-byte window that an escape makes literal (the byte after
// each odd-length run of backslashes), from its backslash mask: Langdale and
// Lemire's carry trick (simdjson's first stage, 2019). *odd_carry: the
// previous window ended in an odd run (its first byte is escaped); updated
// for the next window.
inline uint64_t EscapedBytes(uint64_t backslash, uint64_t* odd_carry) {
  constexpr uint64_t kEvenBits = 0x5555555555555555ULL;
  const uint64_t start_edges = backslash & ~(backslash << 1);
  // A run at bit 0 after an odd run continues it: its parity flips.
  const uint64_t even_start_mask = kEvenBits ^ *odd_carry;
  const uint64_t even_starts = start_edges & even_start_mask;
  const uint64_t odd_starts = start_edges & ~even_start_mask;
  const uint64_t even_carries = backslash + even_starts;
  uint64_t odd_carries;
  const bool ends_odd = __builtin_add_overflow(backslash, odd_starts, &odd_carries);
  odd_carries |= *odd_carry;
  *odd_carry = ends_odd ? 1 : 0;
  const uint64_t even_start_odd_end = even_carries & ~backslash & ~kEvenBits;
  const uint64_t odd_start_even_end = odd_carries & ~backslash & kEvenBits;
  return even_start_odd_end | odd_start_even_end;
}

// 64 bytes per step: the quote, backslash, control and high masks of the
// window; the lowest quote that no escape makes literal ends the string, with
// no branch per quote (mail bodies are full of \"). Reads up to 63 bytes past
// `end`, inside the line's padding.
__attribute__((target("avx512f,avx512bw,bmi"))) StringScan ScanStringAvx512(const char* p,
                                                                            const char* end) {
  StringScan scan;
  uint64_t backslashes = 0;
  uint64_t high = 0;
  uint64_t odd_carry = 0;
  for (const char* w = p; w < end; w += 64) {
    const __m512i v = _mm512_loadu_si512(w);
    const size_t left = static_cast<size_t>(end - w);
    const uint64_t in = LowBits(left);
    const uint64_t backslash = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\')) & in;
    const uint64_t escaped = (backslash | odd_carry) == 0 ? 0 : EscapedBytes(backslash, &odd_carry);
    const uint64_t quote = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')) & in & ~escaped;
    // The window's bytes before its closing quote (all when it has none).
    const uint64_t before = quote == 0 ? in : _blsmsk_u64(quote) >> 1;
    if ((_mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)) & before) != 0) return scan;
    backslashes |= backslash & before;
    high |= _mm512_movepi8_mask(v) & before;
    if (quote != 0) {
      scan.end = w + __builtin_ctzll(quote);
      break;
    }
  }
  scan.backslash = backslashes != 0;
  scan.high = high != 0;
  return scan;
}
#endif

using ScanFn = StringScan (*)(const char*, const char*);

// A string value: its scan and, when it holds a backslash, its value
// unescaped into the arena's room past arena->size() (not committed).
// scan.end == nullptr also when an escape is one simdjson refuses.
struct ValueScan {
  StringScan scan;
  size_t unescaped_size = 0;
};
using ValueScanFn = ValueScan (*)(const char* body, const char* end, TextArena* arena);

// Two passes: the end first, then UnescapeJsonString over the body.
template <ScanFn kScan>
ValueScan ScanThenUnescape(const char* body, const char* end, TextArena* arena) {
  ValueScan value{kScan(body, end)};
  if (value.scan.end == nullptr || !value.scan.backslash) return value;
  const size_t size = static_cast<size_t>(value.scan.end - body);
  char* room = arena->Reserve(size + kUnescapeSlackBytes);
  const std::optional<size_t> unescaped = UnescapeJsonString(std::string_view(body, size), room);
  if (!unescaped.has_value()) value.scan.end = nullptr;
  value.unescaped_size = unescaped.value_or(0);
  return value;
}

#ifdef NEARDUP_HAVE_FLAT_AVX512
#define NEARDUP_FLAT_UNESCAPE_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")))

// ScanStringAvx512 that also unescapes, in the same pass over the body
// (session 10: the separate unescaping pass was 7% of one thread of
// `fingerprint` on mail, whose bodies have a `\n` every ~25 bytes). From
// the window of the first backslash on, each window's bytes before the
// closing quote go to the arena's room as UnescapeJsonString's AVX-512 path
// writes them: short escapes mapped by one 128-entry byte permute, the
// backslashes squeezed out by one `vpcompressb`; an escape whose backslash
// ends a window is decoded in the next one (its escaped byte arrives as bit
// 0, by the odd-run carry). An escape that is not short (`\u`, or one
// simdjson refuses) stops the window at its backslash: DecodeJsonEscape
// decodes it and the scan resumes after it, with no carry (its last byte
// is a hex digit). The bytes, the end and every refusal are those of
// ScanThenUnescape (jsonl_flat_record_test: escapes of every kind at every
// offset around the windows, and random lines, against both the byte loop
// and simdjson).
NEARDUP_FLAT_UNESCAPE_TARGET ValueScan ScanAndUnescapeAvx512(const char* body, const char* end,
                                                             TextArena* arena) {
  ValueScan value;
  const __m512i table_low = _mm512_loadu_si512(JsonShortEscapeTable());
  const __m512i table_high = _mm512_loadu_si512(JsonShortEscapeTable() + 64);
  uint64_t high = 0;
  uint64_t odd_carry = 0;
  char* room = nullptr;  // set at the first backslash
  char* out = nullptr;
  const char* w = body;
  while (w < end) {
    const __m512i v = _mm512_loadu_si512(w);
    const size_t left = static_cast<size_t>(end - w);
    const uint64_t in = LowBits(left);
    const uint64_t backslash = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\')) & in;
    uint64_t escapes = 0;
    const uint64_t escaped =
        (backslash | odd_carry) == 0 ? 0 : AllEscapedBytes(backslash, &odd_carry, &escapes);
    const uint64_t quote = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')) & in & ~escaped;
    const uint64_t before = quote == 0 ? in : _blsmsk_u64(quote) >> 1;
    if ((_mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)) & before) != 0) return value;
    const uint64_t high_bytes = _mm512_movepi8_mask(v);
    high |= high_bytes & before;
    if (room == nullptr) {
      if ((backslash & before) == 0) {
        if (quote != 0) {
          value.scan.end = w + __builtin_ctzll(quote);
          break;
        }
        w += 64;
        continue;
      }
      // The room is the rest of the line: the value is never longer.
      room = arena->Reserve(static_cast<size_t>(end - body) + kUnescapeSlackBytes);
      std::memcpy(room, body, static_cast<size_t>(w - body));
      out = room + (w - body);
    }
    const uint64_t starts = escapes & before;
    const __m512i decoded = _mm512_permutex2var_epi8(table_low, v, table_high);
    const uint64_t not_short =
        (_mm512_testn_epi8_mask(decoded, decoded) | high_bytes) & escaped & before;
    // Bit i of not_short: the escape's backslash is at w + i - 1 (the
    // previous window's last byte when i == 0).
    const uint64_t commit = not_short == 0 ? before : _blsmsk_u64(not_short) >> 1;
    const uint64_t keep = commit & ~starts;
    const __m512i values = _mm512_mask_blend_epi8(escaped, v, decoded);
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi8(keep, values));
    out += __builtin_popcountll(keep);
    if (not_short != 0) {
      const char* at = w + __builtin_ctzll(not_short) - 1;
      if (!DecodeJsonEscape(&at, &out)) return value;
      w = at;
      odd_carry = 0;
      continue;
    }
    if (quote != 0) {
      value.scan.end = w + __builtin_ctzll(quote);
      break;
    }
    w += 64;
  }
  value.scan.backslash = room != nullptr;
  value.scan.high = high != 0;
  value.unescaped_size = room == nullptr ? 0 : static_cast<size_t>(out - room);
  return value;
}

// The same one pass for CPUs without VBMI/VBMI2 (Skylake-SP, Cascade Lake):
// from the window of the first backslash on, UnescapeWindowAvx512Bw copies
// each window's runs between escapes by one 64-byte load and store each and
// decodes the escapes one at a time (json_unescape_avx512bw_inl.h). An escape
// that ends in the next window (its backslash the window's last byte, or a
// `\u` escape across the edge) needs no restart: the odd-run carry marks
// the next window's first byte escaped, and the bytes it consumed are
// skipped there. The two-pass route it replaces (the scan, then the
// portable unescape's memchr and memcpy per run) read each body twice.
NEARDUP_UNESCAPE_BW_TARGET ValueScan ScanAndUnescapeAvx512Bw(const char* body, const char* end,
                                                             TextArena* arena) {
  ValueScan value;
  const uint8_t* const short_escapes = JsonShortEscapeTable();
  uint64_t high = 0;
  uint64_t odd_carry = 0;
  char* room = nullptr;  // set at the first backslash
  char* out = nullptr;
  const char* src = body;  // the next byte to unescape, once room is set
  for (const char* w = body; w < end; w += 64) {
    const __m512i v = _mm512_loadu_si512(w);
    const size_t left = static_cast<size_t>(end - w);
    const uint64_t in = LowBits(left);
    const uint64_t backslash = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\')) & in;
    uint64_t escapes = 0;
    const uint64_t escaped =
        (backslash | odd_carry) == 0 ? 0 : AllEscapedBytes(backslash, &odd_carry, &escapes);
    const uint64_t quote = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')) & in & ~escaped;
    const uint64_t before = quote == 0 ? in : _blsmsk_u64(quote) >> 1;
    if ((_mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)) & before) != 0) return value;
    high |= _mm512_movepi8_mask(v) & before;
    if (room == nullptr) {
      if ((backslash & before) == 0) {
        if (quote != 0) {
          value.scan.end = w + __builtin_ctzll(quote);
          break;
        }
        continue;
      }
      // The room is the rest of the line: the value is never longer.
      room = arena->Reserve(static_cast<size_t>(end - body) + kUnescapeSlackBytes);
      std::memcpy(room, body, static_cast<size_t>(w - body));
      out = room + (w - body);
      src = w;
    }
    // `before` is the window's low `limit` bits.
    const size_t limit =
        quote != 0 ? static_cast<size_t>(__builtin_ctzll(quote)) : (left >= 64 ? 64 : left);
    if (!UnescapeWindowAvx512Bw<true>(w, v, escapes & before, limit, short_escapes, &src, &out)) {
      return value;
    }
    if (quote != 0) {
      value.scan.end = w + __builtin_ctzll(quote);
      break;
    }
  }
  value.scan.backslash = room != nullptr;
  value.scan.high = high != 0;
  value.unescaped_size = room == nullptr ? 0 : static_cast<size_t>(out - room);
  return value;
}
#endif

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

const char* SkipSpace(const char* p, const char* end) {
  while (p < end && IsJsonSpace(*p)) ++p;
  return p;
}

template <ScanFn kScan, ValueScanFn kValue>
bool TryParse(std::string_view line, std::string_view text_field, std::string_view id_field,
              TextArena* arena, JsonlRecord* record) {
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  const size_t arena_start = arena->size();
  auto give_up = [&] {
    arena->Truncate(arena_start);
    return false;
  };
  JsonlRecord out;
  bool text_found = false;
  const char* p = SkipSpace(begin, end);
  if (p == end || *p != '{') return false;
  p = SkipSpace(p + 1, end);
  if (p == end || *p == '}') return false;  // {}: no text field (simdjson decides)
  while (true) {
    // A key: plain ASCII without escapes, compared as it stands.
    if (p == end || *p != '"') return give_up();
    const StringScan key_scan = kScan(p + 1, end);
    if (key_scan.end == nullptr || key_scan.backslash || key_scan.high) return give_up();
    const std::string_view key(p + 1, static_cast<size_t>(key_scan.end - (p + 1)));
    p = SkipSpace(key_scan.end + 1, end);
    if (p == end || *p != ':') return give_up();
    p = SkipSpace(p + 1, end);
    if (p == end) return give_up();
    const bool is_text = key == text_field;
    const bool is_id = key == id_field;
    JsonlField field;
    if (*p == '"') {
      const char* body = p + 1;
      // With a backslash, unescaped into the arena; for other keys only to
      // see that simdjson would accept it (the room is not committed).
      const size_t offset = arena->size();
      const ValueScan value = kValue(body, end, arena);
      const StringScan& scan = value.scan;
      if (scan.end == nullptr) return give_up();
      const size_t size = static_cast<size_t>(scan.end - body);
      if (scan.high && !simdjson::validate_utf8(body, size)) return give_up();
      if (!scan.backslash) {
        field = {static_cast<size_t>(body - begin), size, false};
      } else if (is_text || is_id) {
        arena->Commit(value.unescaped_size);
        field = {offset, value.unescaped_size, true};
      }
      p = scan.end + 1;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
      if (is_text) return give_up();  // a number text: simdjson's error
      const char* token = p;
      while (p < end && !IsJsonSpace(*p) && *p != ',' && *p != '}') ++p;
      if (!IsJsonNumber(std::string_view(token, static_cast<size_t>(p - token)))) {
        return give_up();
      }
      field = {static_cast<size_t>(token - begin), static_cast<size_t>(p - token), false};
    } else {
      return give_up();  // true, false, null, objects, arrays, errors
    }
    // The last occurrence of a key counts; both names may be one field.
    if (is_text) {
      text_found = true;
      out.text = field;
    }
    if (is_id) {
      out.has_id = true;
      out.id = field;
    }
    p = SkipSpace(p, end);
    if (p == end) return give_up();
    if (*p == '}') break;
    if (*p != ',') return give_up();
    p = SkipSpace(p + 1, end);
  }
  if (SkipSpace(p + 1, end) != end || !text_found) return give_up();
  *record = out;
  return true;
}

}  // namespace

bool TryParseFlatRecord(std::string_view line, std::string_view text_field,
                        std::string_view id_field, TextArena* arena, JsonlRecord* record) {
#ifdef NEARDUP_HAVE_FLAT_AVX512
  enum class Route { kPortable, kAvx512Bw, kAvx512Unescaping };
  static const Route route = [] {
    if (DetectCpuPath() != CpuPath::kAvx512) return Route::kPortable;
    if (JsonUnescapeAvx512Supported()) return Route::kAvx512Unescaping;
    return JsonUnescapeAvx512BwSupported() ? Route::kAvx512Bw : Route::kPortable;
  }();
  if (route == Route::kAvx512Unescaping) {
    return TryParse<&ScanStringAvx512, &ScanAndUnescapeAvx512>(line, text_field, id_field, arena,
                                                               record);
  }
  if (route == Route::kAvx512Bw) {
    return TryParseFlatRecordAvx512Bw(line, text_field, id_field, arena, record);
  }
#endif
  return TryParseFlatRecordPortable(line, text_field, id_field, arena, record);
}

bool TryParseFlatRecordAvx512Bw(std::string_view line, std::string_view text_field,
                                std::string_view id_field, TextArena* arena, JsonlRecord* record) {
#ifdef NEARDUP_HAVE_FLAT_AVX512
  return TryParse<&ScanStringAvx512, &ScanAndUnescapeAvx512Bw>(line, text_field, id_field, arena,
                                                               record);
#else
  return TryParseFlatRecordPortable(line, text_field, id_field, arena, record);
#endif
}

bool TryParseFlatRecordPortable(std::string_view line, std::string_view text_field,
                                std::string_view id_field, TextArena* arena, JsonlRecord* record) {
  return TryParse<&ScanStringPortable, &ScanThenUnescape<&ScanStringPortable>>(
      line, text_field, id_field, arena, record);
}

}  // namespace neardup::internal
