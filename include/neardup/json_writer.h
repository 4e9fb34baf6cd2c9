// Writing JSON text by hand into a std::string: the pieces every wire
// format of neardup is made of (the CLI's JSON lines, the service's answers,
// the bindings' exports). The output paths are hot (one line per document),
// so no DOM is built.
// Frozen: the text these produce is part of every output format (numbers
// and escapes never change between releases).
// Thread safety: pure functions.
#ifndef NEARDUP_JSON_WRITER_H_
#define NEARDUP_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace neardup {

// Appends `value` as a quoted JSON string. Control characters and the quote
// and backslash are escaped; bytes that are not valid UTF-8 (ids from file
// names can hold any byte) become \ufffd, so the output is always valid JSON.
void AppendJsonString(std::string* out, std::string_view value);

// Appends exactly 16 lower-case hex digits.
void AppendHex64(std::string* out, uint64_t value);

// Returns exactly 16 lower-case hex digits.
std::string Hex64(uint64_t value);

// Appends a double as printf("%.6g") prints it: up to 6 significant
// decimals, in exponent form below 1e-4 and from 1e6 (after rounding to 6
// digits), never NaN/Inf (REQUIRES: finite).
void AppendJsonDouble(std::string* out, double value);

}  // namespace neardup

#endif  // NEARDUP_JSON_WRITER_H_
