// The JSON writing helpers (neardup/json_writer.h) under the names the
// library's own code uses.
#ifndef NEARDUP_UTIL_JSON_WRITER_H_
#define NEARDUP_UTIL_JSON_WRITER_H_

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

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_JSON_WRITER_H_
