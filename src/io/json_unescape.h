// UnescapeJsonString: the body of a JSON string (the bytes between its
// quotes) decoded to its value, byte for byte as simdjson's unescaper
// (`ondemand::parser::unescape`, the code behind get_string) decodes it,
// including what it refuses: the eight short escapes and `\uXXXX` with
// surrogate pairs are decoded; any other escape, a `\u` without four hex
// digits, a high surrogate not followed by a `\u` low surrogate, and a low
// surrogate alone are errors (nullopt), which the reader reports as
// simdjson's "Problem while parsing a string". json_unescape_test pins all
// of this against the simdjson the reader links.
//
// Why not simdjson's own: it restarts its 64-byte window after every escape,
// which on mail bodies (a `\n` every ~25 bytes) made it the largest single
// cost of `neardup fingerprint` after the fingerprint kernels (17% of one
// thread; docs/BENCHMARKS.md, session 8). The AVX-512 path here decodes
// every short escape of a 64-byte window at once (escape starts from the
// backslash mask by the odd-run carry trick of Langdale and Lemire, the
// escaped bytes mapped by one table permute, the backslashes squeezed out
// by one compress) and handles only `\u` escapes one at a time. The
// AVX-512BW path (CPUs without VBMI) copies the runs between escapes 64
// bytes a step and decodes each escape alone; the portable path copies the
// runs with memcpy.
//
// Cost: one pass over the body, no allocation. Thread safety: pure function.
#ifndef NEARDUP_IO_JSON_UNESCAPE_H_
#define NEARDUP_IO_JSON_UNESCAPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace neardup::internal {

// Room UnescapeJsonString may write past the decoded bytes.
inline constexpr size_t kUnescapeSlackBytes = 64;

// Writes the value of the JSON string whose body is `body` to `dst` and
// returns its size (never more than body.size()), or nullopt when simdjson
// would refuse the string (what was written is then meaningless).
// REQUIRES: body is the whole body of a string token as simdjson's first
//   stage delimits it (every '"' in it escaped, its last byte not an escape
//   start), and at least 12 readable bytes follow it (the closing quote and
//   the line's padding): a `\u` near the end is read as simdjson reads it.
//   `dst` has room for body.size() + kUnescapeSlackBytes bytes.
std::optional<size_t> UnescapeJsonString(std::string_view body, char* dst);

// The three implementations, for differential tests. UnescapeJsonString
// runs the AVX-512 one when the CPU path (hash/cpu_path.h,
// NEARDUP_CPU_PATH) is avx512 and the CPU has VBMI and VBMI2, the AVX-512BW
// one on the avx512 path without them (Skylake-SP, Cascade Lake: the runs
// between escapes copied 64 bytes a step, the escapes decoded one at a
// time; json_unescape_avx512bw_inl.h), else the portable one.
std::optional<size_t> UnescapeJsonStringPortable(std::string_view body, char* dst);
// REQUIRES: JsonUnescapeAvx512Supported().
std::optional<size_t> UnescapeJsonStringAvx512(std::string_view body, char* dst);
bool JsonUnescapeAvx512Supported();
// REQUIRES: JsonUnescapeAvx512BwSupported() (AVX-512 F/BW and BMI2; BMI1,
// which every AVX-512 CPU has, is not probed).
std::optional<size_t> UnescapeJsonStringAvx512Bw(std::string_view body, char* dst);
bool JsonUnescapeAvx512BwSupported();

// The pieces, for a scanner that unescapes in its own pass
// (jsonl_flat_record.cc). DecodeJsonEscape: the escape whose backslash is
// at *src, its bytes written at *out, both pointers advanced past it; false
// when simdjson refuses it (an unknown escape, a `\u` without four hex
// digits, a high surrogate not followed by a `\u` low surrogate, a low
// surrogate alone). REQUIRES: 12 readable bytes at *src, room for 4 at
// *out. JsonShortEscapeTable: 128 bytes, by the ASCII byte after the
// backslash, the byte a short escape stands for; 0 for `u` and for bytes
// that are no escape.
bool DecodeJsonEscape(const char** src, char** out);
const uint8_t* JsonShortEscapeTable();

}  // namespace neardup::internal

#endif  // NEARDUP_IO_JSON_UNESCAPE_H_
