// StatusOrShort: a Status built where memory may have run out (a bad_alloc
// handler, or state that must not be left half-changed by an exception).
// Session 18: one helper for what session 17 wrote out five times.
// OutOfMemoryStatus: the constant "out of memory" status of such handlers.
#ifndef NEARDUP_UTIL_STATUS_FALLBACK_H_
#define NEARDUP_UTIL_STATUS_FALLBACK_H_

#include <cstddef>
#include <new>

#include "neardup/status.h"

namespace neardup::internal {

// What make() returns (a Status whose message it builds, which allocates),
// or, when that throws std::bad_alloc, Status(code, short_message): a
// message of at most 15 characters fits std::string's inline buffer, so
// this one allocates nothing and the caller gets a Status, not an exception.
template <size_t N, typename Make>
Status StatusOrShort(StatusCode code, const char (&short_message)[N], Make make) {
  static_assert(N - 1 <= 15, "the short message must fit std::string's inline buffer");
  try {
    return make();
  } catch (const std::bad_alloc&) {
    return Status(code, short_message);
  }
}

// Status(kResourceExhausted, "out of memory"), for a bad_alloc handler:
// the message (13 characters) fits std::string's inline buffer, so building
// it allocates nothing.
inline Status OutOfMemoryStatus() {
  return Status(StatusCode::kResourceExhausted, "out of memory");
}

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_STATUS_FALLBACK_H_
