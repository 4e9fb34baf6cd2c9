#include "neardup/result_sink.h"

#include <mutex>
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

#ifdef NEARDUP_HAVE_LIBPQ
Result<const internal::PostgresSinkBackend*> LoadPostgresSink() {
  // Linked in: the table is here (the weak reference is resolved).
  if (&neardup_postgres_sink_v1 != nullptr) return neardup_postgres_sink_v1();
  NEARDUP_ASSIGN_OR_RETURN(
      void* entry, internal::LoadModuleEntry("neardup_postgres.so", "neardup_postgres_sink_v1",
                                             "writes to PostgreSQL"));
  const internal::PostgresSinkBackend* backend =
      reinterpret_cast<const internal::PostgresSinkBackend* (*)()>(entry)();
  if (backend == nullptr || backend->abi != internal::kPostgresSinkAbi ||
      backend->options_size != sizeof(ResultSinkOptions) ||
      backend->status_size != sizeof(Status)) {
    return FailedPreconditionError(
        "the PostgreSQL module neardup_postgres.so is of another neardup build");
  }
  return backend;
}
#endif

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
  static std::once_flag once;
  static Result<const internal::PostgresSinkBackend*> backend = InternalError("not loaded");
  std::call_once(once, [] { backend = LoadPostgresSink(); });
  if (!backend.ok()) return backend.status();
  return (*backend)->open(url, std::move(options));
#else
  return UnimplementedError(
      "this neardup was built without libpq (libpq-dev): it cannot write to PostgreSQL");
#endif
}

}  // namespace neardup
