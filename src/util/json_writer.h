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

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_JSON_WRITER_H_
