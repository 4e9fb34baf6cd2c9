#include "store/sqlite_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>

namespace neardup::internal {
namespace {

Status SqliteError(sqlite3* db, const std::string& what) {
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  std::string message = "SQLite " + std::string(file != nullptr ? file : "") + ": " + what + ": " +
                        (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
  int code = db != nullptr ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM;
  switch (code) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLossError(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return FailedPreconditionError(std::move(message));
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return ResourceExhaustedError(std::move(message));
    case SQLITE_CONSTRAINT:
      return InvalidArgumentError(std::move(message));
    default:
      return IoError(std::move(message));
  }
}

}  // namespace

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), sql_(std::move(other.sql_)) {
  other.stmt_ = nullptr;
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Result<bool> SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    sqlite3_reset(stmt_);
    return false;
  }
  Status status = SqliteError(db_, sql_);
  sqlite3_reset(stmt_);
  return status;
}

Status SqliteStatement::Run() {
  while (true) {
    NEARDUP_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqliteStatement::Double(int column) const { return sqlite3_column_double(stmt_, column); }
bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
std::string SqliteStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), size);
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool create,
                                                 bool read_only) {
  if (read_only) return OpenReadOnly(path);
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_READWRITE;
  if (create) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = rc == SQLITE_CANTOPEN ? NotFoundError("cannot open catalog " + path)
                                          : SqliteError(db, "open");
    sqlite3_close(db);
    return status;
  }
  sqlite3_busy_timeout(db, 10000);
  std::unique_ptr<SqliteDb> result(new SqliteDb(db, path));
  // The write-ahead log and its index (-wal, -shm) stay when the writer
  // closes (emptied, not deleted): a reader without write permission, or on
  // a read-only mount, can use them but could not create them.
  int persist = 1;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  NEARDUP_RETURN_IF_ERROR(result->Exec("PRAGMA journal_mode=WAL"));
  NEARDUP_RETURN_IF_ERROR(result->Exec("PRAGMA journal_size_limit=0"));
  NEARDUP_RETURN_IF_ERROR(result->Exec("PRAGMA synchronous=FULL"));
  return result;
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::OpenReadOnly(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return NotFoundError("cannot open catalog " + path);
  // mode=ro first: it sees a concurrent writer's commits through the WAL.
  // It needs the -shm file (or the right to create it); where neither is
  // there (a read-only mount or directory of a collection whose writer
  // predates persistent WAL files) and the log holds nothing, the catalog
  // file alone is the whole committed state, and immutable=1 reads it with
  // no file created and no lock taken.
  Result<std::unique_ptr<SqliteDb>> db = OpenUri(path, "mode=ro");
  if (db.ok() ||
      (db.status().code() != StatusCode::kIoError && db.status().code() != StatusCode::kNotFound)) {
    return db;
  }
  struct stat wal;
  const bool wal_empty = ::stat((path + "-wal").c_str(), &wal) != 0 || wal.st_size == 0;
  if (!wal_empty) {
    return IoError("cannot read catalog " + path + " without write access: its write-ahead log (" +
                   path + "-wal) holds commits, and no -shm file is there to read it with (" +
                   db.status().message() + "); open the collection once with write access");
  }
  return OpenUri(path, "immutable=1");
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::OpenUri(const std::string& path,
                                                    const std::string& query) {
  // A URI path escapes '%', '?' and '#' (RFC 3986 as SQLite reads it).
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof(escaped), "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri.push_back(c);
    }
  }
  uri += "?" + query;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &db,
                           SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    Status status = rc == SQLITE_CANTOPEN ? NotFoundError("cannot open catalog " + path)
                                          : SqliteError(db, "open");
    sqlite3_close(db);
    return status;
  }
  sqlite3_busy_timeout(db, 10000);
  std::unique_ptr<SqliteDb> result(new SqliteDb(db, path));
  // Opening is lazy: read the schema now, so a catalog that cannot be read
  // this way fails here, where the caller can try another.
  NEARDUP_RETURN_IF_ERROR(result->Exec("SELECT count(*) FROM sqlite_master"));
  return result;
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

Status SqliteDb::Exec(std::string_view sql) {
  std::string text(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);
  if (rc != SQLITE_OK) return SqliteError(db_, text);
  return Status::Ok();
}

Result<SqliteStatement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, std::string(sql));
  return SqliteStatement(db_, stmt, std::string(sql));
}

Result<std::unique_ptr<SqliteTransaction>> SqliteTransaction::Begin(SqliteDb* db) {
  NEARDUP_RETURN_IF_ERROR(db->Exec("BEGIN IMMEDIATE"));
  return std::unique_ptr<SqliteTransaction>(new SqliteTransaction(db));
}

SqliteTransaction::~SqliteTransaction() {
  if (!done_) db_->Exec("ROLLBACK").IgnoreError();
}

Status SqliteTransaction::Commit() {
  done_ = true;
  Status status = db_->Exec("COMMIT");
  if (!status.ok()) db_->Exec("ROLLBACK").IgnoreError();
  return status;
}

}  // namespace neardup::internal
