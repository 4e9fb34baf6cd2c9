// IndexJournal: the append-only change log of an index store
// (neardup/hamming_store.h, neardup/lsh_store.h). A WriteAheadLog
// (neardup/write_ahead_log.h: length, checksum, payload per record) whose
// first record is a header (the index kind and its parameters, then the
// u64 version of the state before the first change record), then one record
// per change; the store's version is that base version plus the records. Opening cuts a torn tail
// (a record cut short or with a bad checksum: a crash during an append) and keeps the valid prefix.
// Rewrite replaces the whole journal atomically (temporary file, fsync,
// rename, directory fsync): a crash leaves the old journal or the new one.
// Cost: an append is one write plus, with `sync`, one fdatasync.
// Thread safety: one caller at a time (the store's writer lock).
#ifndef NEARDUP_INDEX_INDEX_JOURNAL_H_
#define NEARDUP_INDEX_INDEX_JOURNAL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"
#include "neardup/write_ahead_log.h"

namespace neardup::internal {

class IndexJournal {
 public:
  // Opens the journal at `path`, creating it (with only its header, base
  // version 0) when it does not exist. `params` names the index kind and
  // parameters. *records receives the change records after the header, in
  // order. FailedPrecondition when the file's params differ (another kind of
  // index or other parameters); DataLoss when the file has no valid header
  // record; IoError on I/O failure.
  static Result<std::unique_ptr<IndexJournal>> Open(const std::string& path, std::string params,
                                                    bool sync, std::vector<std::string>* records);

  // Appends one record; with `sync`, returns once it is durable.
  Status Append(std::string_view record);

  // Replaces the journal by a header with `base_version` and `records`
  // (atomically) and goes on appending to the new file.
  Status Rewrite(std::span<const std::string> records, uint64_t base_version);

  // The change records of the file as it is now (its valid prefix), for a
  // rewrite that keeps some of them. IoError, DataLoss.
  Result<std::vector<std::string>> ReadRecords() const;

  // Change records in the journal (the header not counted).
  uint64_t num_records() const { return num_records_; }
  // The version of the state before the first change record.
  uint64_t base_version() const { return base_version_; }
  uint64_t bytes() const;
  // Why the tail was cut at open ("" when it was not).
  const std::string& tail_error() const { return tail_error_; }

 private:
  IndexJournal(std::string path, std::string params, bool sync)
      : path_(std::move(path)), params_(std::move(params)), sync_(sync) {}

  std::string path_;
  std::string params_;
  uint64_t base_version_ = 0;
  bool sync_;
  std::unique_ptr<WriteAheadLog> log_;
  uint64_t num_records_ = 0;
  std::string tail_error_;
};

// Little-endian fixed-width fields of journal records and headers.
void PutU32(uint32_t value, std::string* out);
void PutU64(uint64_t value, std::string* out);
// Reads a field at *pos and advances it; false when the payload is too short.
bool GetU32(std::string_view payload, size_t* pos, uint32_t* value);
bool GetU64(std::string_view payload, size_t* pos, uint64_t* value);

// A store's sticky failure once its index refused a journalled insert
// (`cause`), or (HammingStore) threw on a journalled remove, out of memory:
// the journal holds a change the index lacks, so the store must
// take no more writes (a retry would journal the insert twice, and replay
// refuses that) and no checkpoint (it would save the index without the
// entry and empty the journal); reopening it replays the insert.
// `store_name` ("hamming", "lsh") starts the message. When the message cannot
// be allocated, one that fits std::string's inline buffer.
Status JournalDivergedError(const char* store_name, const Status& cause);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_INDEX_JOURNAL_H_
