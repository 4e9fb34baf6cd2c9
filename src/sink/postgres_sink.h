// The PostgreSQL result sink (neardup/result_sink.h): one libpq connection,
// rows sent with COPY ... FROM STDIN, each run one transaction serialized
// with other neardup writers by a transaction-scoped advisory lock. The
// tables (created when missing) are described in docs/POSTGRESQL.md.
// Built only when libpq is found (NEARDUP_HAVE_LIBPQ).
#ifndef NEARDUP_SINK_POSTGRES_SINK_H_
#define NEARDUP_SINK_POSTGRES_SINK_H_

#include <memory>
#include <string_view>

#include "neardup/result_sink.h"

namespace neardup::internal {

// Connects to `url` (a postgresql:// or postgres:// URL; missing parts come
// from the PG* environment variables, as for psql).
Result<std::unique_ptr<ResultSink>> OpenPostgresSink(std::string_view url,
                                                     ResultSinkOptions options);

}  // namespace neardup::internal

#endif  // NEARDUP_SINK_POSTGRES_SINK_H_
