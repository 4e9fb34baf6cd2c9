#include "io/jsonl_flat_record.h"

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "hash/cpu_path.h"
#include "io/json_unescape.h"

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
    const uint64_t in = left >= 64 ? ~uint64_t{0} : (uint64_t{1} << left) - 1;
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

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

const char* SkipSpace(const char* p, const char* end) {
  while (p < end && IsJsonSpace(*p)) ++p;
  return p;
}

template <ScanFn kScan>
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
      const StringScan scan = kScan(body, end);
      if (scan.end == nullptr) return give_up();
      const size_t size = static_cast<size_t>(scan.end - body);
      if (scan.high && !simdjson::validate_utf8(body, size)) return give_up();
      if (!scan.backslash) {
        field = {static_cast<size_t>(body - begin), size, false};
      } else {
        // Unescaped into the arena; for other keys only to see that
        // simdjson would accept it (the room is not committed).
        const size_t offset = arena->size();
        char* room = arena->Reserve(size + kUnescapeSlackBytes);
        const std::optional<size_t> value = UnescapeJsonString(std::string_view(body, size), room);
        if (!value.has_value()) return give_up();
        if (is_text || is_id) {
          arena->Commit(*value);
          field = {offset, *value, true};
        }
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

ScanFn ChooseScan() {
#ifdef NEARDUP_HAVE_FLAT_AVX512
  if (DetectCpuPath() == CpuPath::kAvx512) return &ScanStringAvx512;
#endif
  return &ScanStringPortable;
}

}  // namespace

bool TryParseFlatRecord(std::string_view line, std::string_view text_field,
                        std::string_view id_field, TextArena* arena, JsonlRecord* record) {
#ifdef NEARDUP_HAVE_FLAT_AVX512
  static const bool avx512 = ChooseScan() == &ScanStringAvx512;
  if (avx512) return TryParse<&ScanStringAvx512>(line, text_field, id_field, arena, record);
#endif
  return TryParse<&ScanStringPortable>(line, text_field, id_field, arena, record);
}

bool TryParseFlatRecordPortable(std::string_view line, std::string_view text_field,
                                std::string_view id_field, TextArena* arena, JsonlRecord* record) {
  return TryParse<&ScanStringPortable>(line, text_field, id_field, arena, record);
}

}  // namespace neardup::internal
