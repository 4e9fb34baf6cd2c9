#include "sink/postgres_sink.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sink/copy_encoder.h"
#include "sink/row_groups.h"
#include "sink/url_password.h"

namespace neardup::internal {
namespace {

// Every neardup writer takes this transaction-scoped advisory lock first
// ("neardup" as a big-endian integer), so two runs never interleave their
// deletes and copies. Readers take no lock and are never blocked.
constexpr const char* kLockRun = "SELECT pg_advisory_xact_lock(31073716643591536)";

// docs/POSTGRESQL.md describes these tables; change both together.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS neardup_runs (
  run bigserial PRIMARY KEY,
  kind text NOT NULL,
  finished timestamptz NOT NULL DEFAULT clock_timestamp(),
  rows_written bigint NOT NULL,
  rows_deleted bigint NOT NULL,
  documents_replaced bigint NOT NULL,
  documents_removed bigint NOT NULL,
  label text NOT NULL);
CREATE TABLE IF NOT EXISTS neardup_pairs (
  a text NOT NULL,
  b text NOT NULL,
  similarity double precision NOT NULL,
  distance integer);
CREATE INDEX IF NOT EXISTS neardup_pairs_a ON neardup_pairs (a);
CREATE INDEX IF NOT EXISTS neardup_pairs_b ON neardup_pairs (b);
CREATE TABLE IF NOT EXISTS neardup_pairs_lists (
  a text PRIMARY KEY,
  digest bigint NOT NULL,
  length integer NOT NULL);
CREATE TABLE IF NOT EXISTS neardup_clusters (
  cluster text NOT NULL,
  id text NOT NULL);
CREATE INDEX IF NOT EXISTS neardup_clusters_cluster ON neardup_clusters (cluster);
CREATE INDEX IF NOT EXISTS neardup_clusters_id ON neardup_clusters (id);
CREATE TABLE IF NOT EXISTS neardup_clusters_lists (
  cluster text PRIMARY KEY,
  digest bigint NOT NULL,
  length integer NOT NULL);
CREATE TABLE IF NOT EXISTS neardup_similar (
  a text NOT NULL,
  rank integer NOT NULL,
  b text NOT NULL,
  a_in_b double precision NOT NULL,
  b_in_a double precision NOT NULL,
  PRIMARY KEY (a, rank));
CREATE TABLE IF NOT EXISTS neardup_similar_lists (
  a text PRIMARY KEY,
  digest bigint NOT NULL,
  length integer NOT NULL);
)sql";

// A table of grouped rows and the table of its groups' digests (*_lists:
// key, digest, length), with the indexes a bulk load drops and builds again.
struct GroupedTable {
  const char* kind;     // neardup_runs.kind
  const char* table;    // the rows
  const char* columns;  // their columns, in the order encoded
  const char* key;      // the group's column, in both tables
  const char* lists;    // the digests
  const char* drop_indexes;
  const char* create_indexes;
};

constexpr GroupedTable kPairsTable = {
    "pairs",
    "neardup_pairs",
    "(a, b, similarity, distance)",
    "a",
    "neardup_pairs_lists",
    "DROP INDEX IF EXISTS neardup_pairs_a, neardup_pairs_b;"
    "ALTER TABLE neardup_pairs_lists DROP CONSTRAINT IF EXISTS neardup_pairs_lists_pkey",
    "CREATE INDEX neardup_pairs_a ON neardup_pairs (a);"
    "CREATE INDEX neardup_pairs_b ON neardup_pairs (b);"
    "ALTER TABLE neardup_pairs_lists ADD PRIMARY KEY (a)"};
constexpr GroupedTable kClustersTable = {
    "clusters",
    "neardup_clusters",
    "(cluster, id)",
    "cluster",
    "neardup_clusters_lists",
    "DROP INDEX IF EXISTS neardup_clusters_cluster, neardup_clusters_id;"
    "ALTER TABLE neardup_clusters_lists DROP CONSTRAINT IF EXISTS neardup_clusters_lists_pkey",
    "CREATE INDEX neardup_clusters_cluster ON neardup_clusters (cluster);"
    "CREATE INDEX neardup_clusters_id ON neardup_clusters (id);"
    "ALTER TABLE neardup_clusters_lists ADD PRIMARY KEY (cluster)"};
constexpr GroupedTable kSimilarTable = {
    "similar",
    "neardup_similar",
    "(a, rank, b, a_in_b, b_in_a)",
    "a",
    "neardup_similar_lists",
    "ALTER TABLE neardup_similar DROP CONSTRAINT IF EXISTS neardup_similar_pkey;"
    "ALTER TABLE neardup_similar_lists DROP CONSTRAINT IF EXISTS neardup_similar_lists_pkey",
    "ALTER TABLE neardup_similar ADD PRIMARY KEY (a, rank);"
    "ALTER TABLE neardup_similar_lists ADD PRIMARY KEY (a)"};

// Rows are sent in pieces of about this many bytes.
constexpr size_t kCopyChunkBytes = size_t{1} << 20;

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// Removes every secret a message could hold: the URL's passwords (as
// written and decoded) and PGPASSWORD. libpq does not print passwords, but
// its URL parser quotes the parts it rejects, and a server could echo one.
class Redactor {
 public:
  explicit Redactor(std::string_view url) : url_(RedactUrlPassword(url)) {
    for (std::string_view span : UrlPasswords(url)) {
      secrets_.emplace_back(span);
      secrets_.push_back(PercentDecode(span));
    }
    if (const char* env = std::getenv("PGPASSWORD"); env != nullptr && *env != '\0') {
      secrets_.emplace_back(env);
    }
  }

  // The URL without its passwords.
  const std::string& url() const { return url_; }

  std::string operator()(std::string message) const {
    for (const std::string& secret : secrets_) {
      for (size_t at = message.find(secret); at != std::string::npos;
           at = message.find(secret, at + 3)) {
        message.replace(at, secret.size(), "***");
      }
    }
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    return message;
  }

 private:
  std::string url_;
  std::vector<std::string> secrets_;
};

class PostgresSink final : public ResultSink {
 public:
  PostgresSink(PGconn* connection, Redactor redact, ResultSinkOptions options)
      : connection_(connection), redact_(std::move(redact)), options_(std::move(options)) {}
  ~PostgresSink() override { PQfinish(connection_); }
  PostgresSink(const PostgresSink&) = delete;
  PostgresSink& operator=(const PostgresSink&) = delete;

  Result<SinkStats> UpdatePairs(std::span<const PairRecord> pairs) override;
  Result<SinkStats> UpdateClusters(std::span<const ClusterRecord> members) override;
  Result<SinkStats> UpdateTopN(std::span<const TopNRecord> rows) override;

 private:
  Status ServerError(std::string_view what, std::string_view message) const;

  // Runs `sql` (no parameters); the result when it succeeded.
  Result<ResultPtr> Exec(const char* sql, ExecStatusType expected = PGRES_COMMAND_OK);
  // The number of rows the command affected.
  static uint64_t Affected(const PGresult* result);

  // COPY `target` FROM STDIN: `encode_row(i, encoder)` encodes row i, for
  // i = 0, 1, ... num_rows - 1 in order; an error from it aborts the COPY. Adds the rows the
  // server took to *rows_sent when given. `freeze`: COPY FREEZE (the table
  // was created or truncated in this transaction).
  using EncodeRow = std::function<Status(size_t, CopyEncoder&)>;
  Status Copy(const std::string& target, size_t num_rows, const EncodeRow& encode_row,
              uint64_t* rows_sent, bool freeze);

  // `encode_row(row, group, position in group, encoder)` encodes one row.
  using EncodeGroupRow = std::function<Status(size_t, const RowGroup&, size_t, CopyEncoder&)>;
  // A run that makes `table` hold `grouped`, rewriting only the groups whose
  // digest differs from the stored one and deleting the stored groups that
  // are gone; into empty digests, a bulk load.
  Result<SinkStats> UpdateGroups(const GroupedTable& table, const RowGroups& grouped,
                                 const EncodeGroupRow& encode_row);

  // BEGIN, the writers' lock and the tables; `body`; the run's row, the
  // before_commit hook and COMMIT. ROLLBACK when anything failed.
  Result<SinkStats> RunTransaction(const char* kind, const std::function<Status(SinkStats*)>& body);

  PGconn* connection_;
  Redactor redact_;
  ResultSinkOptions options_;
};

Status PostgresSink::ServerError(std::string_view what, std::string_view message) const {
  return IoError("PostgreSQL (" + redact_.url() + "): " + std::string(what) + ": " +
                 redact_(std::string(message)));
}

Result<ResultPtr> PostgresSink::Exec(const char* sql, ExecStatusType expected) {
  ResultPtr result(PQexec(connection_, sql));
  if (result == nullptr || PQresultStatus(result.get()) != expected) {
    std::string_view first_line(sql);
    while (!first_line.empty() && first_line.front() == '\n') first_line.remove_prefix(1);
    first_line = first_line.substr(0, first_line.find('\n'));
    return ServerError(first_line, result == nullptr ? PQerrorMessage(connection_)
                                                     : PQresultErrorMessage(result.get()));
  }
  return result;
}

uint64_t PostgresSink::Affected(const PGresult* result) {
  return std::strtoull(PQcmdTuples(const_cast<PGresult*>(result)), nullptr, 10);
}

Status PostgresSink::Copy(const std::string& target, size_t num_rows, const EncodeRow& encode_row,
                          uint64_t* rows_sent, bool freeze) {
  CopyEncoder encoder(options_.copy_format);
  const std::string sql = "COPY " + target + " FROM STDIN " + encoder.CopyOptions(freeze);
  NEARDUP_ASSIGN_OR_RETURN(ResultPtr started, Exec(sql.c_str(), PGRES_COPY_IN));
  auto flush = [&]() -> Status {
    std::string& buffer = encoder.buffer();
    if (buffer.empty()) return Status::Ok();
    if (PQputCopyData(connection_, buffer.data(), static_cast<int>(buffer.size())) != 1) {
      return ServerError(sql, PQerrorMessage(connection_));
    }
    buffer.clear();
    return Status::Ok();
  };
  Status status;
  for (size_t i = 0; i < num_rows && status.ok(); ++i) {
    status = encode_row(i, encoder);
    if (status.ok() && encoder.buffer().size() >= kCopyChunkBytes) status = flush();
  }
  if (status.ok()) {
    encoder.Finish();
    status = flush();
  }
  // End the COPY either way (an error message makes the server abort it),
  // then collect its result.
  if (PQputCopyEnd(connection_, status.ok() ? nullptr : "neardup stopped the copy") != 1 &&
      status.ok()) {
    status = ServerError(sql, PQerrorMessage(connection_));
  }
  while (PGresult* raw = PQgetResult(connection_)) {
    ResultPtr result(raw);
    if (status.ok() && PQresultStatus(raw) != PGRES_COMMAND_OK) {
      status = ServerError(sql, PQresultErrorMessage(raw));
    } else if (status.ok() && rows_sent != nullptr) {
      *rows_sent += Affected(raw);
    }
  }
  return status;
}

Result<SinkStats> PostgresSink::RunTransaction(const char* kind,
                                               const std::function<Status(SinkStats*)>& body) {
  SinkStats stats;
  auto run = [&]() -> Status {
    NEARDUP_RETURN_IF_ERROR(Exec("BEGIN").status());
    NEARDUP_RETURN_IF_ERROR(Exec(kLockRun, PGRES_TUPLES_OK).status());
    NEARDUP_RETURN_IF_ERROR(Exec(kSchema).status());
    NEARDUP_RETURN_IF_ERROR(body(&stats));
    const std::string numbers[] = {
        std::to_string(stats.rows_written), std::to_string(stats.rows_deleted),
        std::to_string(stats.documents_replaced), std::to_string(stats.documents_removed)};
    const char* values[] = {kind,
                            numbers[0].c_str(),
                            numbers[1].c_str(),
                            numbers[2].c_str(),
                            numbers[3].c_str(),
                            options_.label.c_str()};
    ResultPtr inserted(PQexecParams(connection_,
                                    "INSERT INTO neardup_runs (kind, rows_written, rows_deleted, "
                                    "documents_replaced, documents_removed, label) VALUES "
                                    "($1, $2, $3, $4, $5, $6)",
                                    6, nullptr, values, nullptr, nullptr, 0));
    if (inserted == nullptr || PQresultStatus(inserted.get()) != PGRES_COMMAND_OK) {
      return ServerError("INSERT INTO neardup_runs", inserted == nullptr
                                                         ? PQerrorMessage(connection_)
                                                         : PQresultErrorMessage(inserted.get()));
    }
    if (options_.before_commit) NEARDUP_RETURN_IF_ERROR(options_.before_commit());
    return Exec("COMMIT").status();
  };
  Status status = run();
  if (!status.ok()) {
    // Nothing of this run stays; a failed ROLLBACK (the connection is gone)
    // leaves nothing either: the server aborts the transaction.
    if (PQtransactionStatus(connection_) != PQTRANS_IDLE) PQclear(PQexec(connection_, "ROLLBACK"));
    return status;
  }
  return stats;
}

Result<SinkStats> PostgresSink::UpdateGroups(const GroupedTable& table, const RowGroups& grouped,
                                             const EncodeGroupRow& encode_row) {
  const std::vector<RowGroup>& groups = grouped.groups;
  return RunTransaction(table.kind, [&](SinkStats* stats) -> Status {
    // The stored groups' digests decide which groups change.
    const std::string select = std::string("SELECT ") + table.key + ", digest FROM " + table.lists;
    NEARDUP_ASSIGN_OR_RETURN(ResultPtr stored, Exec(select.c_str(), PGRES_TUPLES_OK));
    std::unordered_map<std::string, int64_t> stored_digest;
    const int num_stored = PQntuples(stored.get());
    stored_digest.reserve(static_cast<size_t>(num_stored));
    for (int i = 0; i < num_stored; ++i) {
      stored_digest.emplace(PQgetvalue(stored.get(), i, 0),
                            std::strtoll(PQgetvalue(stored.get(), i, 1), nullptr, 10));
    }
    stored.reset();
    const bool bulk = stored_digest.empty();
    std::vector<const RowGroup*> changed;
    std::vector<std::string> stale;  // stored groups to delete: changed or gone
    for (const RowGroup& group : groups) {
      auto it = stored_digest.find(group.key);
      if (it != stored_digest.end()) {
        const bool same = it->second == group.digest;
        stored_digest.erase(it);
        if (same) {
          ++stats->documents_unchanged;
          continue;
        }
        stale.push_back(group.key);
      }
      changed.push_back(&group);
    }
    stats->documents_replaced = changed.size();
    stats->documents_removed = stored_digest.size();
    for (auto& [key, digest] : stored_digest) stale.push_back(key);

    if (bulk) {
      // Nothing stored under digests (a first run, or rows of a version that
      // kept none): empty the tables and load them without their indexes,
      // which are built once at the end (a sort instead of one descent per
      // row); COPY FREEZE writes the rows already visible to all, so no
      // later VACUUM rewrites them. TRUNCATE locks readers out until COMMIT:
      // they then see the new result, never an empty or partial one.
      const std::string count = std::string("SELECT count(*) FROM ") + table.table;
      NEARDUP_ASSIGN_OR_RETURN(ResultPtr counted, Exec(count.c_str(), PGRES_TUPLES_OK));
      stats->rows_deleted = std::strtoull(PQgetvalue(counted.get(), 0, 0), nullptr, 10);
      const std::string truncate = std::string("TRUNCATE ") + table.table + ", " + table.lists;
      NEARDUP_RETURN_IF_ERROR(Exec(truncate.c_str()).status());
      NEARDUP_RETURN_IF_ERROR(Exec(table.drop_indexes).status());
    } else if (!stale.empty()) {
      NEARDUP_RETURN_IF_ERROR(
          Exec("CREATE TEMPORARY TABLE neardup_stale (key text NOT NULL) ON COMMIT DROP").status());
      NEARDUP_RETURN_IF_ERROR(Copy(
          "neardup_stale (key)", stale.size(),
          [&](size_t i, CopyEncoder& encoder) -> Status {
            encoder.BeginRow(1);
            encoder.AddText(stale[i]);
            encoder.EndRow();
            return Status::Ok();
          },
          nullptr, /*freeze=*/false));
      // Statistics, so that a large delete hashes instead of probing.
      NEARDUP_RETURN_IF_ERROR(Exec("ANALYZE neardup_stale").status());
      const std::string delete_rows = std::string("DELETE FROM ") + table.table +
                                      " s USING neardup_stale t WHERE s." + table.key + " = t.key";
      NEARDUP_ASSIGN_OR_RETURN(ResultPtr deleted, Exec(delete_rows.c_str()));
      stats->rows_deleted = Affected(deleted.get());
      const std::string delete_lists = std::string("DELETE FROM ") + table.lists +
                                       " s USING neardup_stale t WHERE s." + table.key + " = t.key";
      NEARDUP_RETURN_IF_ERROR(Exec(delete_lists.c_str()).status());
    }
    if (!changed.empty()) {
      // The rows of the changed groups, in order: Copy asks for them one
      // after another, so a cursor (group, position) walks them.
      size_t num_rows = 0;
      for (const RowGroup* group : changed) num_rows += group->end - group->begin;
      size_t group = 0, position = changed[0]->begin;
      NEARDUP_RETURN_IF_ERROR(Copy(
          std::string(table.table) + " " + table.columns, num_rows,
          [&](size_t, CopyEncoder& encoder) -> Status {
            while (position == changed[group]->end) position = changed[++group]->begin;
            const RowGroup& current = *changed[group];
            Status status =
                encode_row(grouped.Row(position), current, position - current.begin, encoder);
            ++position;
            return status;
          },
          &stats->rows_written, bulk));
      NEARDUP_RETURN_IF_ERROR(Copy(
          std::string(table.lists) + " (" + table.key + ", digest, length)", changed.size(),
          [&](size_t k, CopyEncoder& encoder) -> Status {
            encoder.BeginRow(3);
            encoder.AddText(changed[k]->key);
            encoder.AddInt8(changed[k]->digest);
            encoder.AddInt4(static_cast<int32_t>(changed[k]->end - changed[k]->begin));
            encoder.EndRow();
            return Status::Ok();
          },
          nullptr, bulk));
    }
    if (!bulk) return Status::Ok();
    NEARDUP_RETURN_IF_ERROR(Exec(table.create_indexes).status());
    // Statistics now rather than when autovacuum gets to it, so that the
    // next run's DELETE of a few groups is planned with the real number of
    // distinct keys (without them the planner guesses 200). Measured at 1M
    // top-100 lists, the next 1% update took 121 s with it and 155 s
    // without, at a high machine load (docs/BENCHMARKS.md).
    const std::string analyze = std::string("ANALYZE ") + table.table + ", " + table.lists;
    return Exec(analyze.c_str()).status();
  });
}

Result<SinkStats> PostgresSink::UpdatePairs(std::span<const PairRecord> pairs) {
  NEARDUP_ASSIGN_OR_RETURN(RowGroups grouped, GroupPairs(pairs));
  std::string scratch;
  return UpdateGroups(
      kPairsTable, grouped,
      [&](size_t row, const RowGroup& group, size_t, CopyEncoder& encoder) -> Status {
        const PairRecord& pair = pairs[row];
        // Checked by GroupPairs; cleaned again here to encode.
        NEARDUP_ASSIGN_OR_RETURN(std::string_view b, StorableText(pair.b, "an id", &scratch));
        encoder.BeginRow(4);
        encoder.AddText(group.key);
        encoder.AddText(b);
        encoder.AddFloat8(pair.similarity);
        if (pair.distance >= 0) {
          encoder.AddInt4(pair.distance);
        } else {
          encoder.AddNull();
        }
        encoder.EndRow();
        return Status::Ok();
      });
}

Result<SinkStats> PostgresSink::UpdateClusters(std::span<const ClusterRecord> members) {
  NEARDUP_ASSIGN_OR_RETURN(RowGroups grouped, GroupClusters(members));
  std::string scratch;
  return UpdateGroups(
      kClustersTable, grouped,
      [&](size_t row, const RowGroup& group, size_t, CopyEncoder& encoder) -> Status {
        NEARDUP_ASSIGN_OR_RETURN(std::string_view id,
                                 StorableText(members[row].id, "an id", &scratch));
        encoder.BeginRow(2);
        encoder.AddText(group.key);
        encoder.AddText(id);
        encoder.EndRow();
        return Status::Ok();
      });
}

Result<SinkStats> PostgresSink::UpdateTopN(std::span<const TopNRecord> rows) {
  NEARDUP_ASSIGN_OR_RETURN(RowGroups grouped, GroupTopNLists(rows));
  std::string scratch;
  return UpdateGroups(
      kSimilarTable, grouped,
      [&](size_t row, const RowGroup& group, size_t position, CopyEncoder& encoder) -> Status {
        // Checked by GroupTopNLists; cleaned again here to encode.
        NEARDUP_ASSIGN_OR_RETURN(std::string_view b, StorableText(rows[row].b, "an id", &scratch));
        encoder.BeginRow(5);
        encoder.AddText(group.key);
        encoder.AddInt4(static_cast<int32_t>(position + 1));
        encoder.AddText(b);
        encoder.AddFloat8(rows[row].a_in_b);
        encoder.AddFloat8(rows[row].b_in_a);
        encoder.EndRow();
        return Status::Ok();
      });
}

}  // namespace

Result<std::unique_ptr<ResultSink>> OpenPostgresSink(std::string_view url,
                                                     ResultSinkOptions options) {
  std::string url_text(url);
  Redactor redact(url);
  // Later keywords override earlier ones, and the URL's own parameters
  // override the defaults before it; PG* variables fill what none gives.
  std::vector<const char*> keywords = {"fallback_application_name"};
  std::vector<const char*> values = {"neardup"};
  if (std::getenv("PGCONNECT_TIMEOUT") == nullptr) {
    keywords.push_back("connect_timeout");
    values.push_back("10");
  }
  keywords.push_back("dbname");
  values.push_back(url_text.c_str());
  keywords.push_back("client_encoding");  // ids are sent and read as UTF-8
  values.push_back("UTF8");
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* connection = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  if (connection == nullptr) return ResourceExhaustedError("libpq could not allocate a connection");
  if (PQstatus(connection) != CONNECTION_OK) {
    Status status = IoError("cannot connect to PostgreSQL at " + redact.url() + ": " +
                            redact(PQerrorMessage(connection)));
    PQfinish(connection);
    return status;
  }
  // Notices ("relation ... already exists, skipping") are not errors: keep
  // them off the caller's stderr.
  PQsetNoticeProcessor(
      connection, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<ResultSink>(
      std::make_unique<PostgresSink>(connection, std::move(redact), std::move(options)));
}

}  // namespace neardup::internal

extern "C" __attribute__((visibility("default"))) const neardup::internal::PostgresSinkBackend*
neardup_postgres_sink_v1() {
  static const neardup::internal::PostgresSinkBackend backend{
      .open = &neardup::internal::OpenPostgresSink,
  };
  return &backend;
}
