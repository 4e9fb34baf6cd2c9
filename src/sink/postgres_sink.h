// The PostgreSQL result sink (neardup/result_sink.h): one libpq connection,
// rows sent with COPY ... FROM STDIN, each run one transaction serialized
// with other neardup writers by a transaction-scoped advisory lock. The
// tables (created when missing) are described in docs/POSTGRESQL.md.
// Built only when libpq is found (NEARDUP_HAVE_LIBPQ), as the archive
// neardup_sink_postgres, which linking neardup_sink links in, except into a
// program with the target property NEARDUP_LIBRARIES_AS_MODULES (the
// `neardup` CLI): that one loads it as the module neardup_postgres.so when
// a run first opens a sink (util/module_loader.h), so that libpq and the
// ~25 objects it pulls in are not bound at every start.
#ifndef NEARDUP_SINK_POSTGRES_SINK_H_
#define NEARDUP_SINK_POSTGRES_SINK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "neardup/result_sink.h"
#include "util/module_loader.h"

namespace neardup::internal {

// Connects to `url` (a postgresql:// or postgres:// URL; missing parts come
// from the PG* environment variables, as for psql).
Result<std::unique_ptr<ResultSink>> OpenPostgresSink(std::string_view url,
                                                     ResultSinkOptions options);

// The module's table (neardup/loadable_module.h: kAbi is bumped when the head's
// place or this layout changes; the build id covers the types it passes).
struct PostgresSinkBackend {
  static constexpr uint32_t kAbi = 2;
  ModuleTableHead head{kAbi, ModuleBuildId()};
  Result<std::unique_ptr<ResultSink>> (*open)(std::string_view url, ResultSinkOptions options);
};

}  // namespace neardup::internal

// Defined in neardup_sink_postgres (exported by the module built from it).
// result_sink.cc redeclares it weak; no other file of a program that may
// load the module may odr-use it (a strong reference links libpq back in).
extern "C" const neardup::internal::PostgresSinkBackend* neardup_postgres_sink_v1();

#endif  // NEARDUP_SINK_POSTGRES_SINK_H_
