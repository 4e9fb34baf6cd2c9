// The pieces of JSON string unescaping shared by UnescapeJsonString's
// AVX-512BW kernel (json_unescape.cc) and the flat-record scanner's
// one-pass BW route (jsonl_flat_record.cc; AllEscapedBytes also serves its
// VBMI2 route, ScanAndUnescapeAvx512), for CPUs with AVX-512 F/BW but
// without VBMI/VBMI2 (Skylake-SP, Cascade Lake): no byte permute to decode
// the short escapes of a window at once and no `vpcompressb` to squeeze
// out their backslashes. Each 64-byte window is found by one compare;
// the runs between escapes are copied by one 64-byte load and store each,
// and only the escapes themselves are decoded one at a time (a table load
// for the short ones, DecodeJsonEscape for `\u`). The portable path this
// replaces on those CPUs ran memchr and memcpy per run (session 21: the
// memcpy alone was ~6% of one thread of `fingerprint --simhash` there).
// Private to those two files; x86-64 only.
#ifndef NEARDUP_IO_JSON_UNESCAPE_AVX512BW_INL_H_
#define NEARDUP_IO_JSON_UNESCAPE_AVX512BW_INL_H_

#include "util/intrinsics_warnings.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

NEARDUP_INTRINSICS_WARNINGS_OFF
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "io/json_unescape.h"

// What JsonUnescapeAvx512BwSupported() checks, plus BMI1 (blsr, blsmsk,
// tzcnt), which CpuFeatures does not probe: every AVX-512 CPU has it, as
// the text kernels' "bmi" targets assume too.
#define NEARDUP_UNESCAPE_BW_TARGET __attribute__((target("avx512f,avx512bw,bmi,bmi2")))

namespace neardup::internal {

// The low `count` bits of a mask, all 64 from 64 on (the window masks of
// json_unescape.cc and jsonl_flat_record.cc). BMI2 code spells it
// `_bzhi_u64(~uint64_t{0}, count)`, one instruction, the same for count <
// 256 (the BW window code below).
inline uint64_t LowBits(size_t count) {
  return count >= 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1;
}

// Used by the BW kernels and the flat-record scanner's VBMI2 route alike
// (plain integer code, no target needed). Every byte of a window that an escape makes
// literal (a backslash escaped inside a run too), and in *escapes the
// backslashes that start an escape: simdjson's json_escape_scanner (first
// stage). *next_is_escaped: the previous window's last byte started an
// escape; updated for the next window. Only `\` and its next byte are
// taken as the escape: a `\u` escape's hex digits hold no backslash unless
// simdjson refuses it, so the starts stay right past `\u` escapes too.
inline uint64_t AllEscapedBytes(uint64_t backslash, uint64_t* next_is_escaped, uint64_t* escapes) {
  constexpr uint64_t kOddBits = 0xAAAAAAAAAAAAAAAAULL;
  const uint64_t potential = backslash & ~*next_is_escaped;
  const uint64_t codes = (((potential << 1) | kOddBits) - potential) ^ kOddBits;
  const uint64_t escaped = codes ^ (backslash | *next_is_escaped);
  *escapes = codes & backslash;
  *next_is_escaped = *escapes >> 63;
  return escaped;
}

// The `count` bytes at `from` in a vector (the rest unspecified when
// kPadded, zero otherwise). kPadded: 64 bytes are readable at `from`.
// REQUIRES: count <= 64.
template <bool kPadded>
NEARDUP_UNESCAPE_BW_TARGET inline __m512i LoadUnescapeRun(const char* from, size_t count) {
  if constexpr (kPadded) {
    (void)count;
    return _mm512_loadu_si512(from);
  } else {
    return _mm512_maskz_loadu_epi8(_bzhi_u64(~uint64_t{0}, static_cast<unsigned>(count)), from);
  }
}

// Unescapes the 64-byte window at `window_start` (its bytes as loaded in
// `window`) from *src up to window_start + limit into *out: the runs between
// the escapes whose backslashes are the set bits of `starts` copied, the
// short escapes decoded by `short_escapes` (JsonShortEscapeTable()), the
// others by DecodeJsonEscape. Advances *src past what it consumed (an escape
// that starts in the window may end in the next one, *src then lies past
// window_start + limit and the next call skips those bytes and their
// starts) and *out past what it wrote. Returns false at an escape simdjson
// refuses (*src and *out are then meaningless).
// REQUIRES: window_start <= *src; `starts` are the escape starts of the
//   window (AllEscapedBytes) below `limit` <= 64; 12 readable bytes follow
//   each escape's backslash; room for 64 bytes past every position *out
//   reaches; kPadded: 64 readable bytes at every byte before
//   window_start + limit, else only those bytes are read (masked loads).
template <bool kPadded>
NEARDUP_UNESCAPE_BW_TARGET inline bool UnescapeWindowAvx512Bw(const char* window_start,
                                                              __m512i window, uint64_t starts,
                                                              size_t limit,
                                                              const uint8_t* short_escapes,
                                                              const char** src, char** out) {
  const char* from = *src;
  char* to = *out;
  // The bytes an escape of the previous window (or this one) consumed.
  starts &= ~_bzhi_u64(~uint64_t{0}, static_cast<unsigned>(from - window_start));
  while (starts != 0) {
    const char* const escape = window_start + __builtin_ctzll(starts);
    const size_t run = static_cast<size_t>(escape - from);
    _mm512_storeu_si512(to, LoadUnescapeRun<kPadded>(from, run));
    to += run;
    const auto after = static_cast<unsigned char>(escape[1]);
    const uint8_t value = after < 128 ? short_escapes[after] : 0;
    if (value != 0) {
      *to++ = static_cast<char>(value);
      from = escape + 2;
      // Its escaped byte is no start: only its own bit goes (a one-cycle
      // chain from escape to escape).
      starts = _blsr_u64(starts);
    } else {
      // Through copies: `from` and `to` whose addresses were taken would
      // live in memory for the whole loop (a store and a reload per escape).
      const char* at = escape;
      char* written = to;
      if (!DecodeJsonEscape(&at, &written)) return false;
      from = at;
      to = written;
      // At most 12 bytes past the window's last byte: below 256 for bzhi.
      starts &= ~_bzhi_u64(~uint64_t{0}, static_cast<unsigned>(from - window_start));
    }
  }
  const char* const stop = window_start + limit;
  if (from < stop) {
    const size_t run = static_cast<size_t>(stop - from);
    _mm512_storeu_si512(to, from == window_start ? window : LoadUnescapeRun<kPadded>(from, run));
    to += run;
    from = stop;
  }
  *src = from;
  *out = to;
  return true;
}

}  // namespace neardup::internal

NEARDUP_INTRINSICS_WARNINGS_ON
#endif  // x86-64

#endif  // NEARDUP_IO_JSON_UNESCAPE_AVX512BW_INL_H_
