// HammingStore: a HammingIndex that queries read while a writer changes it,
// kept on disk incrementally in a directory.
//
// Concurrency: the reader/writer contract of neardup/index_store.h. Any
// number of threads query through Read() (or the FindAll/FindFirst
// shorthands) while one thread at a time changes the store (Insert, Remove,
// Checkpoint; further writers wait on an internal lock). Applying a change
// in memory (HammingIndex::Insert, amortised O(num_tables log N)) is the only
// step that waits for open views; Checkpoint writes the base file while
// readers go on.
//
// Persistence (a base file plus an append-only journal) in `dir`:
//   hamming.base     HammingIndex::Save of the state at the last checkpoint
//                    (absent until the first one); opened by mapping.
//   hamming.journal  the changes since (neardup/write_ahead_log.h records:
//                    a header with the index parameters, then one
//                    17-byte record per change), appended and synced per
//                    change (IndexStoreOptions::sync).
// A change costs one journal record, never a rewrite of the index. Open maps
// the base and replays the journal; a torn last record (a crash during an
// append) is cut off, so the store holds every change that returned OK and
// at most the one being written at the crash. Checkpoint replaces the base
// (temporary file, fsync, rename) and then empties the journal; after a
// crash between the two, replaying the old journal on the new base gives the
// same set again (a journal holds set inserts and removes: the last change
// of an entry decides, and base and journal agree on it).
// Formats: docs/formats/index_store.md. Thread safety: as above; the
// object itself must outlive its views.
#ifndef NEARDUP_HAMMING_STORE_H_
#define NEARDUP_HAMMING_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "neardup/hamming_index.h"
#include "neardup/index_store.h"
#include "neardup/status.h"

namespace neardup {

namespace internal {
class IndexJournal;
}  // namespace internal

class HammingStore {
 public:
  // Opens the store in `dir` (created when missing), or creates an empty
  // one with `options`. FailedPrecondition when the directory holds a store
  // of other options; DataLoss when its files are corrupt (other than a torn
  // journal tail, which is cut); InvalidArgument for invalid options; IoError.
  static Result<std::unique_ptr<HammingStore>> Open(const std::string& dir,
                                                    const HammingIndexOptions& options,
                                                    const IndexStoreOptions& store_options = {});
  ~HammingStore();
  HammingStore(const HammingStore&) = delete;
  HammingStore& operator=(const HammingStore&) = delete;

  // A pinned state: the index as of version(), unchanged while the view
  // lives (neardup/index_store.h).
  using ReadView = IndexReadView<HammingIndex>;
  ReadView Read() const;

  // Read().index().FindAll(query) / FindFirst(query).
  std::vector<HammingMatch> FindAll(uint64_t query) const;
  std::optional<HammingMatch> FindFirst(uint64_t query) const;

  // Adds `entry`: true if it was not there (only then is it journaled).
  // ResourceExhausted when the index is full; IoError when the journal
  // cannot be written (the store is then unchanged). When the index runs out
  // of memory after the insert is journaled (ResourceExhausted), the store
  // has failed: it returns that error from every later Insert, Remove and
  // Checkpoint, reads go on, and reopening it applies the journaled insert.
  Result<bool> Insert(HammingEntry entry);
  // Removes `entry`: true if it was there. IoError as Insert; a failed
  // store's error.
  Result<bool> Remove(HammingEntry entry);
  // Writes the base file and empties the journal. IoError; a failed store's
  // error.
  Status Checkpoint();

  // The number of changes applied since the store was created (persisted).
  uint64_t version() const;
  uint64_t journal_records() const;
  // Why the journal's tail was cut when it was opened ("" when it was not).
  const std::string& recovered_tail_error() const { return tail_error_; }

 private:
  HammingStore(std::string dir, IndexStoreOptions store_options, HammingIndex index);
  Result<bool> Change(char op, HammingEntry entry);
  Status CheckpointLocked();  // REQUIRES: writer_mutex_ held

  const std::string dir_;
  const IndexStoreOptions store_options_;
  mutable std::mutex writer_mutex_;  // one writer at a time; held across journal and apply
  IndexStoreLock index_lock_;        // readers shared, the apply exclusive
  HammingIndex index_;               // guarded by index_lock_
  uint64_t version_ = 0;             // guarded by index_lock_
  std::unique_ptr<internal::IndexJournal> journal_;  // guarded by writer_mutex_
  Status failed_;  // guarded by writer_mutex_: set once, when the index refused a journaled insert
  std::string tail_error_;
};

}  // namespace neardup

#endif  // NEARDUP_HAMMING_STORE_H_
