// LshStore: an LshIndex that queries read while a writer changes it, kept on
// disk as an append-only journal in a directory.
//
// Concurrency: the reader/writer contract of neardup/index_store.h. Any
// number of threads query through Read() (or the Query shorthand) while one
// thread at a time changes the store (Insert, Remove, Checkpoint).
//
// Persistence: `dir`/lsh.journal (neardup/write_ahead_log.h records: a
// header with the parameters, then per change an insert record (id and
// sketch, 13 + 8 * num_hashes bytes) or a remove record (9 bytes)), appended
// and synced per change (IndexStoreOptions::sync). The index itself keeps
// only band keys, so the journal is the store: Open replays it (O(records x
// num_bands)), cutting a torn last record, so the store holds every change
// that returned OK and at most the one being written at a crash. Checkpoint
// (and the automatic one when the journal holds more than
// checkpoint_after_records dead records) rewrites the journal with the live
// documents' insert records only (read back from the journal: O(journal)
// time and memory), atomically.
// Formats: docs/formats/index_store.md.
#ifndef NEARDUP_LSH_STORE_H_
#define NEARDUP_LSH_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "neardup/index_store.h"
#include "neardup/lsh_index.h"
#include "neardup/status.h"

namespace neardup {

namespace internal {
class IndexJournal;
}  // namespace internal

class LshStore {
 public:
  // Opens the store in `dir` (created when missing), or creates an empty
  // one. FailedPrecondition when the directory holds a store of other
  // parameters; DataLoss when the journal is corrupt before its tail;
  // InvalidArgument for invalid parameters (LshIndex::Create); IoError.
  static Result<std::unique_ptr<LshStore>> Open(const std::string& dir, LshParams params,
                                                int num_hashes,
                                                const IndexStoreOptions& store_options = {});
  ~LshStore();
  LshStore(const LshStore&) = delete;
  LshStore& operator=(const LshStore&) = delete;

  using ReadView = IndexReadView<LshIndex>;
  ReadView Read() const;

  // Read().index().Query(sketch).
  Result<std::vector<uint64_t>> Query(std::span<const uint64_t> sketch) const;

  // Stores `sketch` under `doc_id`; the errors of LshIndex::Insert (checked
  // before anything is journaled), IoError when the journal cannot be
  // written. On those errors the store is unchanged. When the index runs out
  // of memory after the insert is journaled (ResourceExhausted), the store
  // has failed: it returns that error from every later Insert, Remove and
  // Checkpoint, reads go on, and reopening it applies the journaled insert.
  Status Insert(uint64_t doc_id, std::span<const uint64_t> sketch);
  // Removes `doc_id`: true if it was there. IoError; a failed store's error.
  Result<bool> Remove(uint64_t doc_id);
  // Rewrites the journal with the live documents only. IoError; a failed
  // store's error.
  Status Checkpoint();

  uint64_t version() const;
  uint64_t journal_records() const;
  size_t size() const;
  // Why the journal's tail was cut when it was opened ("" when it was not).
  const std::string& recovered_tail_error() const { return tail_error_; }

 private:
  LshStore(std::string dir, IndexStoreOptions store_options, LshIndex index);
  Status Apply(const std::string& record);  // REQUIRES: index_lock_ held exclusively
  Status CheckpointLocked();                // REQUIRES: writer_mutex_ held

  const std::string dir_;
  const IndexStoreOptions store_options_;
  mutable std::mutex writer_mutex_;                  // one writer at a time
  IndexStoreLock index_lock_;                        // readers shared, the apply exclusive
  LshIndex index_;                                   // guarded by index_lock_
  uint64_t version_ = 0;                             // guarded by index_lock_
  std::unique_ptr<internal::IndexJournal> journal_;  // guarded by writer_mutex_
  Status failed_;  // guarded by writer_mutex_: set once, when the index refused a journaled insert
  std::string tail_error_;
};

}  // namespace neardup

#endif  // NEARDUP_LSH_STORE_H_
