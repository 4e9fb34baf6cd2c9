// A minimal RAII wrapper over the SQLite C API for the collection catalog:
// a connection, prepared statements and transactions, with every failure
// turned into a Status that names the database and the statement.
// Thread safety: a connection is serialized (SQLITE_OPEN_FULLMUTEX): calls
// from several threads are safe; a statement belongs to one thread.
#ifndef NEARDUP_STORE_SQLITE_DB_H_
#define NEARDUP_STORE_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "neardup/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace neardup::internal {

class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQLite.
  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, double value);
  SqliteStatement& Bind(int index, std::string_view value);

  // true: a row is available; false: done. Resets itself after done or error.
  Result<bool> Step();
  // Runs to completion, ignoring rows.
  Status Run();
  void Reset();

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;
};

class SqliteDb {
 public:
  // Opens (creating when `create`) the database at `path`, in WAL mode with
  // synchronous=FULL, so a committed transaction survives a crash.
  // `read_only` opens never write, lock for writing or create a file where
  // they lack the permission: SQLite's mode=ro, falling back to immutable=1
  // where the WAL index cannot be opened and the log is empty (a read-only
  // mount); see docs/CONTAINMENT.md.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool create,
                                                bool read_only);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  Status Exec(std::string_view sql);
  Result<SqliteStatement> Prepare(std::string_view sql);
  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  static Result<std::unique_ptr<SqliteDb>> OpenReadOnly(const std::string& path);
  static Result<std::unique_ptr<SqliteDb>> OpenUri(const std::string& path,
                                                   const std::string& query);
  sqlite3* db_;
  std::string path_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
class SqliteTransaction {
 public:
  static Result<std::unique_ptr<SqliteTransaction>> Begin(SqliteDb* db);
  ~SqliteTransaction();
  Status Commit();

 private:
  explicit SqliteTransaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;
  bool done_ = false;
};

}  // namespace neardup::internal

#endif  // NEARDUP_STORE_SQLITE_DB_H_
