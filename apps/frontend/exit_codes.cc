#include "exit_codes.h"

#include <cstdio>

namespace neardup::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAlreadyExists:
    case StatusCode::kUnimplemented:
      return kExitUsage;
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
    case StatusCode::kResourceExhausted:
      return kExitIo;
    case StatusCode::kDataLoss:
      return kExitDataLoss;
    case StatusCode::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "neardup: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

}  // namespace neardup::cli
