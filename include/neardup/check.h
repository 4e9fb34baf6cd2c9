// NEARDUP_CHECK and NEARDUP_DCHECK: assertions for programmer errors.
//
// A failed check prints the condition, the location and any streamed message
// to stderr and aborts. CHECK is always on; DCHECK only in builds without
// NDEBUG. User input must never be able to trigger either: bad input is
// reported with a Status (neardup/status.h).
#ifndef NEARDUP_CHECK_H_
#define NEARDUP_CHECK_H_

#include <sstream>

namespace neardup::internal {

// Collects the streamed message, then aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* condition, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `NEARDUP_CHECK(x) << "message"` compile as a void expression.
struct CheckVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace neardup::internal

#define NEARDUP_CHECK(condition)                      \
  (condition) ? (void)0                               \
              : ::neardup::internal::CheckVoidify() & \
                    ::neardup::internal::CheckFailure(#condition, __FILE__, __LINE__).stream()

#ifdef NDEBUG
#define NEARDUP_DCHECK(condition) \
  while (false) NEARDUP_CHECK(condition)
#else
#define NEARDUP_DCHECK(condition) NEARDUP_CHECK(condition)
#endif

#endif  // NEARDUP_CHECK_H_
