// Status and Result<T>: how every fallible library call reports failure.
//
// A Status is a code plus a human-readable message that names the thing, the
// bound and the value ("max_distance (7) must be smaller than num_blocks (6)").
// Result<T> holds either a T or a non-OK Status. Both are [[nodiscard]]: an
// ignored error is a compile error under -Werror. No exception crosses the
// library boundary; front ends map a Status to an exit code in one place.
//
// Cost: an OK Status is one enum and an empty string (no allocation).
// Thread safety: value types; distinct objects may be used concurrently.
#ifndef NEARDUP_STATUS_H_
#define NEARDUP_STATUS_H_

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "neardup/check.h"

namespace neardup {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller passed a bad parameter or input
  kNotFound,            // a named file, id or key does not exist
  kAlreadyExists,       // creating something that is already there
  kOutOfRange,          // a value outside the supported range
  kFailedPrecondition,  // the system is not in a state for this call
  kDataLoss,            // corrupt or truncated stored data
  kIoError,             // the operating system refused a read or write
  kResourceExhausted,   // memory, disk or a configured cap ran out
  kUnimplemented,       // a recognised request this build cannot serve
  kInternal,            // a bug in neardup
};

// Returns a stable lower-case name for `code`, e.g. "invalid_argument".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid_argument: message", or "ok".
  std::string ToString() const;

  // Returns a copy whose message is "`context`: message"; OK stays OK.
  Status WithContext(std::string_view context) const;

  // Marks a Status as deliberately ignored.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status OutOfRangeError(std::string message);
Status FailedPreconditionError(std::string message);
Status DataLossError(std::string message);
Status IoError(std::string message);
Status ResourceExhaustedError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);

// Result<T> holds a T or a non-OK Status.
// Invariant: exactly one of value_ and a non-OK status_ is present.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(const T& value) : value_(value) {}             // NOLINT: implicit by design
  Result(T&& value) : value_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    NEARDUP_CHECK(!status_.ok()) << "Result constructed from an OK Status";
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  // REQUIRES: ok().
  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T& value() & {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  void CheckOk() const { NEARDUP_CHECK(ok()) << "Result has no value: " << status_; }

  Status status_;
  std::optional<T> value_;
};

}  // namespace neardup

#define NEARDUP_INTERNAL_CONCAT_IMPL(a, b) a##b
#define NEARDUP_INTERNAL_CONCAT(a, b) NEARDUP_INTERNAL_CONCAT_IMPL(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define NEARDUP_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::neardup::Status neardup_status_ = (expr);        \
    if (!neardup_status_.ok()) return neardup_status_; \
  } while (false)

// `lhs = value of expr` where expr is a Result<T>; returns its Status on error.
#define NEARDUP_ASSIGN_OR_RETURN(lhs, expr) \
  NEARDUP_INTERNAL_ASSIGN_OR_RETURN(NEARDUP_INTERNAL_CONCAT(neardup_result_, __LINE__), lhs, expr)
#define NEARDUP_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                      \
  if (!tmp.ok()) return std::move(tmp).status();          \
  lhs = std::move(tmp).value()

#endif  // NEARDUP_STATUS_H_
