#include "neardup/result_sink.h"

#include <string>

#ifdef NEARDUP_HAVE_LIBPQ
#include "sink/postgres_sink.h"
#endif

namespace neardup {
namespace {

constexpr std::string_view kSchemes[] = {"postgresql://", "postgres://"};

}  // namespace

bool IsResultSinkUrl(std::string_view url) {
  for (std::string_view scheme : kSchemes) {
    if (url.substr(0, scheme.size()) == scheme) return true;
  }
  return false;
}

Result<std::unique_ptr<ResultSink>> OpenResultSink(std::string_view url,
                                                   ResultSinkOptions options) {
  if (!IsResultSinkUrl(url)) {
    return InvalidArgumentError("the sink \"" + RedactUrlPassword(url) +
                                "\" is not a postgresql:// or postgres:// URL");
  }
#ifdef NEARDUP_HAVE_LIBPQ
  return internal::OpenPostgresSink(url, std::move(options));
#else
  return UnimplementedError(
      "this neardup was built without libpq (libpq-dev): it cannot write to PostgreSQL");
#endif
}

}  // namespace neardup
