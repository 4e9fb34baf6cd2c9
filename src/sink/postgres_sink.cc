#include "sink/postgres_sink.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sink/copy_encoder.h"
#include "sink/top_n_lists.h"
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
CREATE TABLE IF NOT EXISTS neardup_clusters (
  cluster bigint NOT NULL,
  id text NOT NULL);
CREATE INDEX IF NOT EXISTS neardup_clusters_cluster ON neardup_clusters (cluster);
CREATE INDEX IF NOT EXISTS neardup_clusters_id ON neardup_clusters (id);
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

  Result<SinkStats> ReplacePairs(std::span<const PairRecord> pairs) override;
  Result<SinkStats> ReplaceClusters(std::span<const ClusterRecord> members) override;
  Result<SinkStats> UpdateTopN(std::span<const TopNRecord> rows) override;

 private:
  Status ServerError(std::string_view what, std::string_view message) const;

  // Runs `sql` (no parameters); the result when it succeeded.
  Result<ResultPtr> Exec(const char* sql, ExecStatusType expected = PGRES_COMMAND_OK);
  // The number of rows the command affected.
  static uint64_t Affected(const PGresult* result);

  // COPY `target` FROM STDIN: `encode_row(i, encoder)` encodes row i, for
  // i = 0, 1, ... num_rows - 1 in order; an error from it aborts the COPY. Adds the rows the
  // server took to *rows_sent when given.
  using EncodeRow = std::function<Status(size_t, CopyEncoder&)>;
  Status Copy(const std::string& target, size_t num_rows, const EncodeRow& encode_row,
              uint64_t* rows_sent);

  // A run that replaces the whole of `table` with the rows of `encode_row`.
  Result<SinkStats> ReplaceTable(const char* kind, const std::string& table,
                                 const std::string& columns, size_t num_rows,
                                 const EncodeRow& encode_row);

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
                          uint64_t* rows_sent) {
  CopyEncoder encoder(options_.copy_format);
  const std::string sql = "COPY " + target + " FROM STDIN " + std::string(encoder.CopyOptions());
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

Result<SinkStats> PostgresSink::ReplaceTable(const char* kind, const std::string& table,
                                             const std::string& columns, size_t num_rows,
                                             const EncodeRow& encode_row) {
  return RunTransaction(kind, [&](SinkStats* stats) -> Status {
    NEARDUP_ASSIGN_OR_RETURN(ResultPtr deleted, Exec(("DELETE FROM " + table).c_str()));
    stats->rows_deleted = Affected(deleted.get());
    return Copy(table + " " + columns, num_rows, encode_row, &stats->rows_written);
  });
}

Result<SinkStats> PostgresSink::ReplacePairs(std::span<const PairRecord> pairs) {
  std::string scratch_a, scratch_b;
  return ReplaceTable(
      "pairs", "neardup_pairs", "(a, b, similarity, distance)", pairs.size(),
      [&](size_t i, CopyEncoder& encoder) -> Status {
        const PairRecord& pair = pairs[i];
        NEARDUP_ASSIGN_OR_RETURN(std::string_view a, StorableText(pair.a, "an id", &scratch_a));
        NEARDUP_ASSIGN_OR_RETURN(std::string_view b, StorableText(pair.b, "an id", &scratch_b));
        encoder.BeginRow(4);
        encoder.AddText(a);
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

Result<SinkStats> PostgresSink::ReplaceClusters(std::span<const ClusterRecord> members) {
  std::string scratch;
  return ReplaceTable("clusters", "neardup_clusters", "(cluster, id)", members.size(),
                      [&](size_t i, CopyEncoder& encoder) -> Status {
                        NEARDUP_ASSIGN_OR_RETURN(std::string_view id,
                                                 StorableText(members[i].id, "an id", &scratch));
                        encoder.BeginRow(2);
                        encoder.AddInt8(static_cast<int64_t>(members[i].cluster));
                        encoder.AddText(id);
                        encoder.EndRow();
                        return Status::Ok();
                      });
}

Result<SinkStats> PostgresSink::UpdateTopN(std::span<const TopNRecord> rows) {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<TopNList> lists, GroupTopNLists(rows));
  return RunTransaction("similar", [&](SinkStats* stats) -> Status {
    // The stored lists' digests decide which lists change.
    NEARDUP_ASSIGN_OR_RETURN(ResultPtr stored,
                             Exec("SELECT a, digest FROM neardup_similar_lists", PGRES_TUPLES_OK));
    std::unordered_map<std::string, int64_t> stored_digest;
    const int num_stored = PQntuples(stored.get());
    stored_digest.reserve(static_cast<size_t>(num_stored));
    for (int i = 0; i < num_stored; ++i) {
      stored_digest.emplace(PQgetvalue(stored.get(), i, 0),
                            std::strtoll(PQgetvalue(stored.get(), i, 1), nullptr, 10));
    }
    stored.reset();
    std::vector<const TopNList*> changed;
    std::vector<std::string> stale;  // stored lists to delete: changed or gone
    for (const TopNList& list : lists) {
      auto it = stored_digest.find(list.a);
      if (it != stored_digest.end()) {
        const bool same = it->second == list.digest;
        stored_digest.erase(it);
        if (same) {
          ++stats->documents_unchanged;
          continue;
        }
        stale.push_back(list.a);
      }
      changed.push_back(&list);
    }
    stats->documents_replaced = changed.size();
    stats->documents_removed = stored_digest.size();
    for (auto& [a, digest] : stored_digest) stale.push_back(a);

    if (!stale.empty()) {
      NEARDUP_RETURN_IF_ERROR(
          Exec("CREATE TEMPORARY TABLE neardup_stale (a text NOT NULL) ON COMMIT DROP").status());
      NEARDUP_RETURN_IF_ERROR(Copy(
          "neardup_stale (a)", stale.size(),
          [&](size_t i, CopyEncoder& encoder) -> Status {
            encoder.BeginRow(1);
            encoder.AddText(stale[i]);
            encoder.EndRow();
            return Status::Ok();
          },
          nullptr));
      // Statistics, so that a large delete hashes instead of probing.
      NEARDUP_RETURN_IF_ERROR(Exec("ANALYZE neardup_stale").status());
      NEARDUP_ASSIGN_OR_RETURN(
          ResultPtr deleted,
          Exec("DELETE FROM neardup_similar s USING neardup_stale t WHERE s.a = t.a"));
      stats->rows_deleted = Affected(deleted.get());
      NEARDUP_RETURN_IF_ERROR(
          Exec("DELETE FROM neardup_similar_lists s USING neardup_stale t WHERE s.a = t.a")
              .status());
    }
    if (changed.empty()) return Status::Ok();
    // The rows of the changed lists, in order: Copy asks for them one after
    // another, so a cursor (list, i) walks them.
    size_t num_rows = 0;
    for (const TopNList* list : changed) num_rows += list->end - list->begin;
    size_t list = 0, i = changed[0]->begin;
    std::string scratch;
    NEARDUP_RETURN_IF_ERROR(Copy(
        "neardup_similar (a, rank, b, a_in_b, b_in_a)", num_rows,
        [&](size_t, CopyEncoder& encoder) -> Status {
          if (i == changed[list]->end) i = changed[++list]->begin;
          // Checked by GroupTopNLists; cleaned again here to encode.
          NEARDUP_ASSIGN_OR_RETURN(std::string_view b, StorableText(rows[i].b, "an id", &scratch));
          encoder.BeginRow(5);
          encoder.AddText(changed[list]->a);
          encoder.AddInt4(static_cast<int32_t>(i - changed[list]->begin + 1));
          encoder.AddText(b);
          encoder.AddFloat8(rows[i].a_in_b);
          encoder.AddFloat8(rows[i].b_in_a);
          encoder.EndRow();
          ++i;
          return Status::Ok();
        },
        &stats->rows_written));
    return Copy(
        "neardup_similar_lists (a, digest, length)", changed.size(),
        [&](size_t k, CopyEncoder& encoder) -> Status {
          encoder.BeginRow(3);
          encoder.AddText(changed[k]->a);
          encoder.AddInt8(changed[k]->digest);
          encoder.AddInt4(static_cast<int32_t>(changed[k]->end - changed[k]->begin));
          encoder.EndRow();
          return Status::Ok();
        },
        nullptr);
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
