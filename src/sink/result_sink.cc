#include "neardup/result_sink.h"

#include <string>

#ifdef NEARDUP_HAVE_LIBPQ
#include "sink/postgres_sink.h"
#include "util/module_loader.h"

// Weak: absent from a program that loads the module instead.
extern "C" __attribute__((weak)) const neardup::internal::PostgresSinkBackend*
neardup_postgres_sink_v1();
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
  // Linked in, the weak reference is the table's function; else the module.
  static const Result<const internal::PostgresSinkBackend*> backend =
      internal::LoadModuleTable(&neardup_postgres_sink_v1, "neardup_postgres.so",
                                "neardup_postgres_sink_v1", "writes to PostgreSQL");
  if (!backend.ok()) return backend.status();
  return (*backend)->open(url, std::move(options));
#else
  return UnimplementedError(
      "this neardup was built without libpq (libpq-dev): it cannot write to PostgreSQL");
#endif
}

}  // namespace neardup
