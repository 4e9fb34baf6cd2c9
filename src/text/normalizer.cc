#include "text/normalizer.h"

#include <utf8proc.h>

#include <array>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

// Per-thread scratch, kept between calls so steady-state normalization does
// not allocate. Buffers grown past kMaxRetainedCodePoints by one huge document
// are released afterwards.
constexpr size_t kMaxRetainedCodePoints = size_t{1} << 22;

struct Scratch {
  std::string sanitized;
  std::vector<utf8proc_int32_t> code_points;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// kAsciiFolded[c]: c with A-Z mapped to a-z. kAsciiIsPunctuation[c]: 1 for
// ASCII P*.
constexpr std::array<char, 128> kAsciiFolded = [] {
  std::array<char, 128> table{};
  for (int c = 0; c < 128; ++c) table[c] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return table;
}();
constexpr std::array<uint8_t, 128> kAsciiIsPunctuation = [] {
  std::array<uint8_t, 128> table{};
  for (int c = 0; c < 128; ++c) table[c] = (kAsciiClass[c] & kAsciiPunctuationBit) != 0;
  return table;
}();

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_AVX512_NORMALIZE 1

bool HasAvx512Vbmi2() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
}

constexpr size_t kPrefetchBytes = 1024;

// The AVX-512 form of the ASCII copy. REQUIRES: `dst` has room for
// text.size() + 64 bytes. Copies `text` up to the first 64-byte block that
// holds a byte >= 0x80 (the ASCII check and the copy in one pass), sets
// *consumed to the bytes copied (all of them for ASCII text) and returns the
// bytes written.
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2"))) size_t AppendAsciiAvx512(
    std::string_view text, bool fold, bool drop_punctuation, char* dst, size_t* consumed) {
  const __m512i table_lo = _mm512_loadu_si512(kAsciiIsPunctuation.data());
  const __m512i table_hi = _mm512_loadu_si512(kAsciiIsPunctuation.data() + 64);
  char* const begin = dst;
  const char* p = text.data();
  size_t remaining = text.size();
  // The text is usually not in cache (a new document): ask for its first
  // lines at once rather than one miss at a time until the hardware
  // prefetcher has seen the stream.
  for (size_t ahead = 0; ahead < remaining && ahead < kPrefetchBytes; ahead += 64) {
    _mm_prefetch(p + ahead, _MM_HINT_T0);
  }
  while (remaining > 0) {
    if (remaining > kPrefetchBytes) _mm_prefetch(p + kPrefetchBytes, _MM_HINT_T0);
    const size_t n = remaining < 64 ? remaining : 64;
    const __mmask64 valid = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    __m512i v = _mm512_maskz_loadu_epi8(valid, p);  // masked: never reads past the end
    if (_mm512_movepi8_mask(v) != 0) break;
    if (fold) {
      const __mmask64 upper =
          _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('A')), _mm512_set1_epi8(26));
      v = _mm512_mask_add_epi8(v, upper, v, _mm512_set1_epi8(0x20));
    }
    if (drop_punctuation) {
      // Byte i of the permute is the table entry for the low 7 bits of v[i].
      const __m512i punct = _mm512_permutex2var_epi8(table_lo, v, table_hi);
      const __mmask64 keep = _mm512_testn_epi8_mask(punct, punct) & valid;
      _mm512_storeu_si512(dst, _mm512_maskz_compress_epi8(keep, v));
      dst += __builtin_popcountll(keep);
    } else {
      _mm512_storeu_si512(dst, v);
      dst += n;
    }
    p += n;
    remaining -= n;
  }
  *consumed = text.size() - remaining;
  return static_cast<size_t>(dst - begin);
}
#endif

// Appends the ASCII path's form of `text`: `fold` maps A-Z to a-z,
// `drop_punctuation` deletes ASCII P*. Returns the bytes of `text` it
// consumed. `avx512` (the CPU has AVX-512 VBMI2): stops at the first 64-byte
// block with a byte >= 0x80, so any text may be passed; otherwise REQUIRES:
// `text` is ASCII (all of it is consumed).
size_t AppendAscii(std::string_view text, bool fold, bool drop_punctuation, bool avx512,
                   std::string* out) {
  const size_t old_size = out->size();
#ifdef NEARDUP_HAVE_AVX512_NORMALIZE
  if (avx512) {
    out->resize(old_size + text.size() + 64);
    size_t consumed = 0;
    const size_t written =
        AppendAsciiAvx512(text, fold, drop_punctuation, out->data() + old_size, &consumed);
    out->resize(old_size + written);
    return consumed;
  }
#else
  (void)avx512;
#endif
  if (!fold && !drop_punctuation) {
    out->append(text);
    return text.size();
  }
  out->resize(old_size + text.size());
  char* const begin = out->data() + old_size;
  char* dst = begin;
  if (!drop_punctuation) {
    // Arithmetic, not a table: the compiler vectorizes this form.
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      *dst++ = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    }
  } else {
    // Branch-free: every byte is written, a punctuation byte is overwritten
    // by the next (dst never passes the input position, so it stays in range).
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      *dst = fold ? kAsciiFolded[c] : ch;
      dst += 1 - kAsciiIsPunctuation[c];
    }
  }
  out->resize(old_size + static_cast<size_t>(dst - begin));
  return text.size();
}

// AppendAscii for a stretch of ASCII text between two runs of bytes >= 0x80:
// those are mostly a space or a few characters, for which the vector copy's
// setup and its 64 bytes of room cost more than a byte loop.
void AppendAsciiStretch(std::string_view text, bool fold, bool drop_punctuation, bool avx512,
                        std::string* out) {
  if (text.size() >= 32) {
    AppendAscii(text, fold, drop_punctuation, avx512, out);
    return;
  }
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (drop_punctuation && kAsciiIsPunctuation[c]) continue;
    out->push_back(fold ? kAsciiFolded[c] : ch);
  }
}

// Appends valid UTF-8 `text` to *out without its punctuation.
void AppendWithoutPunctuation(std::string_view text, std::string* out) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    DecodedCodePoint d = DecodeUtf8(p, end);
    if (!IsPunctuation(d.code_point)) out->append(p, d.length);
    p += d.length;
  }
}

utf8proc_option_t Utf8procOptions(const NormalizationOptions& options) {
  int flags = UTF8PROC_STABLE;
  if (options.nfkc) flags |= UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_IGNORE;
  if (options.case_fold) flags |= UTF8PROC_CASEFOLD;
  return static_cast<utf8proc_option_t>(flags);
}

// Appends utf8proc's normalization of valid UTF-8 `text`.
void AppendUtf8proc(std::string_view text, utf8proc_option_t flags, bool drop_punctuation,
                    std::vector<utf8proc_int32_t>* buffer, std::string* out) {
  // A first guess of one code point per byte; decompositions can expand
  // further (U+FDFA is 18 code points under NFKC), then we retry at the size
  // utf8proc asks for.
  if (buffer->size() < text.size()) buffer->resize(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto length = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t count;
  while (true) {
    count = utf8proc_decompose(bytes, length, buffer->data(),
                               static_cast<utf8proc_ssize_t>(buffer->size()), flags);
    // Invalid UTF-8 was repaired before and the flags are a fixed valid set.
    NEARDUP_CHECK(count >= 0) << "utf8proc_decompose: " << utf8proc_errmsg(count);
    if (static_cast<size_t>(count) <= buffer->size()) break;
    buffer->resize(static_cast<size_t>(count));
  }
  count = utf8proc_normalize_utf32(buffer->data(), count, flags);
  NEARDUP_CHECK(count >= 0) << "utf8proc_normalize_utf32: " << utf8proc_errmsg(count);

  const size_t old_size = out->size();
  out->resize(old_size + static_cast<size_t>(count) * 4);
  auto* const begin = reinterpret_cast<utf8proc_uint8_t*>(out->data() + old_size);
  auto* dst = begin;
  for (utf8proc_ssize_t i = 0; i < count; ++i) {
    const utf8proc_int32_t cp = (*buffer)[i];
    if (drop_punctuation && IsPunctuation(static_cast<char32_t>(cp))) continue;
    dst += utf8proc_encode_char(cp, dst);
  }
  out->resize(old_size + static_cast<size_t>(dst - begin));
}

// Context-free code points. A BMP code point X is context-free for a choice
// of (nfkc, case_fold) when
//   - X has canonical combining class 0 and is not the second code point of
//     any canonical composition (utf8proc's comb_index marks those with bit
//     15; Hangul jamo, composed algorithmically, are excluded by range),
//   - the decomposition of X under the options (compatibility, case fold,
//     ignorables removed; not composed) is not empty and starts with such a
//     code point, and
//   - the whole normalization of X alone is at most 15 bytes.
// Then no reordering or composition crosses the start of X (as for an ASCII
// character), so the text splits exactly before X; and when the code point
// after X is context-free too (or ASCII), X alone is a unit whose output is
// the table's bytes. Everything else still goes through utf8proc, with the
// context-free code point before it as its base.
struct ContextFreeTable {
  // entries[cp]: kContextFree | punctuation bit | length << 26 | offset of
  // the output bytes in `bytes`; 0 = not context-free.
  std::vector<uint32_t> entries;
  std::string bytes;
};
constexpr uint32_t kContextFree = uint32_t{1} << 31;
constexpr uint32_t kOutputHasPunctuation = uint32_t{1} << 30;
constexpr int kLengthShift = 26;
constexpr uint32_t kOffsetMask = (uint32_t{1} << kLengthShift) - 1;

bool MayComposeAsSecond(utf8proc_int32_t cp) {
  // Hangul vowel and trailing jamo compose (algorithmically) with what is
  // before them; leading jamo only with what follows.
  if ((cp >= 0x1160 && cp <= 0x11FF) || (cp >= 0xD7B0 && cp <= 0xD7FF)) return true;
  const utf8proc_property_t* property = utf8proc_get_property(cp);
  return property->comb_index != UINT16_MAX && (property->comb_index & 0x8000) != 0;
}

bool IsStarterThatComposesWithNothingBefore(utf8proc_int32_t cp) {
  return utf8proc_get_property(cp)->combining_class == 0 && !MayComposeAsSecond(cp);
}

ContextFreeTable BuildContextFreeTable(utf8proc_option_t flags) {
  ContextFreeTable table;
  table.entries.assign(0x10000, 0);
  // The decomposition normalization starts from (utf8proc decomposes only
  // with COMPOSE or DECOMPOSE set).
  const auto decompose_flags = static_cast<utf8proc_option_t>(
      (flags & UTF8PROC_COMPOSE) != 0 ? (flags & ~UTF8PROC_COMPOSE) | UTF8PROC_DECOMPOSE : flags);
  utf8proc_int32_t buffer[32];
  std::string output;
  for (utf8proc_int32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (!IsStarterThatComposesWithNothingBefore(cp)) continue;
    int boundclass = UTF8PROC_BOUNDCLASS_START;
    utf8proc_ssize_t n = utf8proc_decompose_char(cp, buffer, 32, decompose_flags, &boundclass);
    if (n < 1 || n > 32 || !IsStarterThatComposesWithNothingBefore(buffer[0])) continue;
    boundclass = UTF8PROC_BOUNDCLASS_START;
    n = utf8proc_decompose_char(cp, buffer, 32, flags, &boundclass);
    if (n < 1 || n > 32) continue;
    n = utf8proc_normalize_utf32(buffer, n, flags);
    if (n < 1) continue;
    output.clear();
    bool punctuation = false;
    for (utf8proc_ssize_t i = 0; i < n; ++i) {
      AppendUtf8(static_cast<char32_t>(buffer[i]), &output);
      punctuation |= IsPunctuation(static_cast<char32_t>(buffer[i]));
    }
    if (output.size() > 15) continue;
    table.entries[cp] = kContextFree | (punctuation ? kOutputHasPunctuation : 0) |
                        static_cast<uint32_t>(output.size()) << kLengthShift |
                        static_cast<uint32_t>(table.bytes.size());
    table.bytes += output;
  }
  return table;
}

// The table for the options' (nfkc, case_fold), built once per process on
// first use (about 64K utf8proc lookups).
const ContextFreeTable& ContextFreeTableFor(const NormalizationOptions& options) {
  // One static per branch: only the tables in use are built.
  if (options.nfkc && options.case_fold) {
    static const ContextFreeTable both = BuildContextFreeTable(Utf8procOptions({true, true}));
    return both;
  }
  if (options.nfkc) {
    static const ContextFreeTable nfkc = BuildContextFreeTable(Utf8procOptions({true, false}));
    return nfkc;
  }
  static const ContextFreeTable fold = BuildContextFreeTable(Utf8procOptions({false, true}));
  return fold;
}

// Appends the normalization of the run of bytes >= 0x80 that starts at
// `begin` (it ends at the first ASCII byte or at `text_end`) and returns its
// end; its code points before the first context-free one go through
// utf8proc with `base` (the text before the run, empty or the ASCII
// character whose output the caller took back). Returns null, having
// appended part of the run, when the run is not valid UTF-8 (the caller
// then truncates *out and repairs the run): validation and normalization in
// one decode.
const char* AppendRun(std::string_view base, const char* begin, const char* text_end,
                      const ContextFreeTable& table, utf8proc_option_t flags, bool fold,
                      bool drop_punctuation, Scratch* scratch, std::string* out) {
  // The current unit: [unit, p), utf8proc'd at the next context-free code
  // point; `unit_is_free` while it is one context-free code point.
  const char* unit = begin;
  bool unit_is_free = false;
  uint32_t unit_entry = 0;
  bool first_unit = true;
  auto flush = [&](const char* unit_end) {
    if (unit_is_free && !(drop_punctuation && (unit_entry & kOutputHasPunctuation))) {
      out->append(table.bytes.data() + (unit_entry & kOffsetMask),
                  (unit_entry >> kLengthShift) & 0xF);
    } else if (first_unit && !base.empty() && unit_end == begin) {
      // The run starts with a context-free code point: the base is alone,
      // its ASCII output is put back.
      const auto c = static_cast<unsigned char>(base[0]);
      if (!(drop_punctuation && kAsciiIsPunctuation[c])) {
        out->push_back(fold ? kAsciiFolded[c] : static_cast<char>(c));
      }
    } else if (first_unit && !base.empty()) {
      // base + the leading non-context-free code points, contiguous in the
      // caller's text.
      AppendUtf8proc(std::string_view(base.data(), static_cast<size_t>(unit_end - base.data())),
                     flags, drop_punctuation, &scratch->code_points, out);
    } else if (unit_end > unit) {
      AppendUtf8proc(std::string_view(unit, static_cast<size_t>(unit_end - unit)), flags,
                     drop_punctuation, &scratch->code_points, out);
    }
    first_unit = false;
  };
  const char* p = begin;
  while (p < text_end && static_cast<unsigned char>(*p) >= 0x80) {
    const DecodedCodePoint d = DecodeUtf8(p, text_end);
    if (!d.valid) return nullptr;
    const uint32_t entry = d.code_point < 0x10000 ? table.entries[d.code_point] : 0;
    if (entry & kContextFree) {
      flush(p);
      unit = p;
      unit_is_free = true;
      unit_entry = entry;
    } else {
      unit_is_free = false;
    }
    p += d.length;
  }
  flush(p);
  return p;
}

// The reference path (CpuPath::kReference): the whole text validated and
// repaired first, then split at ASCII characters as in Normalize. Kept as
// the definition the run-by-run path is tested against.
void NormalizeReference(std::string_view text, const NormalizationOptions& options,
                        std::string* out, NormalizeStats* stats) {
  if (IsAscii(text)) {
    AppendAscii(text, options.case_fold, options.remove_punctuation, false, out);
    return;
  }
  Scratch& scratch = ThreadScratch();
  std::string_view valid = text;
  if (!IsValidUtf8(text)) {
    uint64_t replaced = SanitizeUtf8(text, &scratch.sanitized);
    if (stats != nullptr) stats->invalid_utf8_sequences += replaced;
    valid = scratch.sanitized;
  }
  if (!options.nfkc && !options.case_fold) {
    if (options.remove_punctuation) {
      AppendWithoutPunctuation(valid, out);
    } else {
      out->assign(valid);
    }
    return;
  }
  const utf8proc_option_t flags = Utf8procOptions(options);
  size_t pos = 0;
  while (pos < valid.size()) {
    const size_t non_ascii = FindFirstNonAscii(valid, pos);
    const size_t ascii_end =
        (non_ascii < valid.size() && non_ascii > pos) ? non_ascii - 1 : non_ascii;
    AppendAscii(valid.substr(pos, ascii_end - pos), options.case_fold, options.remove_punctuation,
                false, out);
    if (non_ascii == valid.size()) break;
    size_t next_ascii = non_ascii;
    while (next_ascii < valid.size() && static_cast<unsigned char>(valid[next_ascii]) >= 0x80) {
      ++next_ascii;
    }
    AppendUtf8proc(valid.substr(ascii_end, next_ascii - ascii_end), flags,
                   options.remove_punctuation, &scratch.code_points, out);
    pos = next_ascii;
  }
}

}  // namespace

void Normalize(std::string_view text, const NormalizationOptions& options, std::string* out,
               NormalizeStats* stats, CpuPath path) {
#ifdef NEARDUP_HAVE_AVX512_NORMALIZE
  const bool avx512 = path == CpuPath::kAvx512 && HasAvx512Vbmi2();
#else
  const bool avx512 = false;
  (void)path;
#endif
  const bool fold = options.case_fold;
  const bool drop = options.remove_punctuation;
  if (path == CpuPath::kReference) {
    out->clear();
    NormalizeReference(text, options, out, stats);
    return;
  }
  size_t pos = 0;
#ifdef NEARDUP_HAVE_AVX512_NORMALIZE
  if (avx512) {
    // One pass for ASCII text; other text continues below from the block
    // where the first byte >= 0x80 is. The bytes *out already holds (the
    // previous text's) serve as room: resize zero-fills only what it adds.
    if (out->size() < text.size() + 64) out->resize(text.size() + 64);
    out->resize(AppendAsciiAvx512(text, fold, drop, out->data(), &pos));
  }
#endif
  if (!avx512) {
    out->clear();
    if (IsAscii(text)) {
      AppendAscii(text, fold, drop, avx512, out);
      return;
    }
  }
  if (pos == text.size()) return;

  // Text with bytes >= 0x80: ASCII stretches take the ASCII copy; each
  // maximal run of bytes >= 0x80 is validated (and repaired) on its own and
  // normalized on its own. Both are exact:
  // - UTF-8 validity and the maximal invalid subparts (utf8.h) never cross
  //   an ASCII byte (it is never part of a multi-byte sequence), so
  //   repairing the runs one by one repairs the whole text.
  // - Unicode normalization is per code point except canonical reordering
  //   and composition, which never cross the start of an ASCII character
  //   (ASCII characters are starters that compose with nothing before them),
  //   nor an ASCII character with an ASCII character before it. So each run
  //   goes through utf8proc with the ASCII character before it (a base that
  //   a combining mark may compose with), whose ASCII output is taken back.
  Scratch& scratch = ThreadScratch();
  const bool unicode = options.nfkc || options.case_fold;
  const utf8proc_option_t flags = Utf8procOptions(options);
  while (pos < text.size()) {
    const size_t run = FindFirstNonAscii(text, pos);
    AppendAsciiStretch(text.substr(pos, run - pos), fold, drop, avx512, out);
    if (run == text.size()) break;
    const size_t base = unicode && run > 0 ? 1 : 0;
    if (unicode) {
      // text[run - 1] is ASCII and the last byte of *out unless dropped.
      if (base != 0 && !(drop && kAsciiIsPunctuation[static_cast<unsigned char>(text[run - 1])])) {
        out->pop_back();
      }
      // Code point by code point where the table allows (AppendRun).
      const size_t mark = out->size();
      const char* end =
          AppendRun(text.substr(run - base, base), text.data() + run, text.data() + text.size(),
                    ContextFreeTableFor(options), flags, fold, drop, &scratch, out);
      if (end != nullptr) {
        pos = static_cast<size_t>(end - text.data());
        continue;
      }
      out->resize(mark);  // invalid UTF-8: repaired below
    }
    size_t run_end = run;
    while (run_end < text.size() && static_cast<unsigned char>(text[run_end]) >= 0x80) ++run_end;
    // With the base character in front when there is one.
    std::string_view segment = text.substr(run - base, run_end - run + base);
    if (!IsValidUtf8(segment.substr(base))) {
      const uint64_t replaced = SanitizeUtf8(segment.substr(base), &scratch.sanitized);
      if (stats != nullptr) stats->invalid_utf8_sequences += replaced;
      if (base != 0) scratch.sanitized.insert(scratch.sanitized.begin(), text[run - 1]);
      segment = scratch.sanitized;
    }
    if (!unicode) {
      if (drop) {
        AppendWithoutPunctuation(segment, out);
      } else {
        out->append(segment);
      }
    } else {
      AppendUtf8proc(segment, flags, drop, &scratch.code_points, out);
    }
    pos = run_end;
  }

  if (scratch.code_points.size() > kMaxRetainedCodePoints) {
    std::vector<utf8proc_int32_t>().swap(scratch.code_points);
  }
  if (scratch.sanitized.capacity() > kMaxRetainedCodePoints) std::string().swap(scratch.sanitized);
}

}  // namespace neardup::internal
