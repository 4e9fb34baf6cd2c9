// The JSON writing helpers (neardup/json_writer.h) under the names the
// library's own code uses.
#ifndef NEARDUP_UTIL_JSON_WRITER_H_
#define NEARDUP_UTIL_JSON_WRITER_H_

#include <cstddef>
#include <string_view>

#include "neardup/json_writer.h"

namespace neardup::internal {

using ::neardup::AppendHex64;
using ::neardup::AppendJsonDouble;
using ::neardup::AppendJsonString;
using ::neardup::Hex64;

// The length of `value`'s longest prefix that is its own JSON string body:
// bytes 0x20-0x7F other than '"' and '\\', which AppendJsonString copies as
// they are. Eight bytes at a time (ids are paths and URLs of ~30-80 bytes),
// so a caller can copy a plain string whole: value.size() when nothing needs
// escaping.
size_t VerbatimJsonPrefix(std::string_view value);

// The most characters AppendJsonDouble writes ("-2.22507e-308" is 13).
inline constexpr size_t kMaxJsonDoubleChars = 16;

// Writes what AppendJsonDouble appends (printf("%.6g")) at `out` and returns
// its end; no allocation, for callers that build a line in a local buffer.
// A value in [2^-13, 1] (every similarity above 0.000122) takes an exact
// integer path: its 53-bit mantissa times 5^p, shifted, rounded half to even
// on the exact remainder as printf rounds, then written as fixed digits with
// the trailing zeros dropped (to_chars's general path takes every other
// value). REQUIRES: finite; room for kMaxJsonDoubleChars.
char* WriteJsonDouble(char* out, double value);

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_JSON_WRITER_H_
