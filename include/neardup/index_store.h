// What the index stores (neardup/hamming_store.h, neardup/lsh_store.h)
// share: their options and the read view that pins one state of an index.
//
// The reader/writer contract of a store: any number of threads read through
// views while one thread at a time changes the store. A view holds a shared
// lock, so the index it shows does not change while the view lives, and
// version() names that state: the number of changes applied since the store
// was created (persisted across reopenings). A change is journaled and
// synced without blocking readers; only applying it in memory waits for the
// views alive at that moment to close, so keep views short (one query or one
// batch of queries).
// Thread safety: a view is used by the thread that took it; the store must
// outlive it.
#ifndef NEARDUP_INDEX_STORE_H_
#define NEARDUP_INDEX_STORE_H_

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <utility>

namespace neardup {

struct IndexStoreOptions {
  // fdatasync the journal before a change returns (default true): a change
  // that returned OK survives a crash. false: changes reach the disk when the
  // system writes them back (a crash may lose the recent ones, never corrupt
  // the store), for bulk loads followed by Checkpoint.
  bool sync = true;
  // Checkpoint automatically once the journal holds this many records
  // (default 1M; 0: only when Checkpoint is called). For an LSH store the
  // bound is on the records beyond twice the live documents (the dead ones).
  uint64_t checkpoint_after_records = uint64_t{1} << 20;
};

// The lock of a store: readers share it, a change holds it alone, and a
// waiting change goes before readers that come after it (the gate), so a
// steady stream of readers cannot starve the writer (the POSIX rwlock under
// std::shared_mutex prefers readers on glibc).
class IndexStoreLock {
 public:
  std::shared_lock<std::shared_mutex> LockShared() const {
    std::lock_guard<std::mutex> gate(gate_);
    return std::shared_lock<std::shared_mutex>(mutex_);
  }
  std::unique_lock<std::shared_mutex> LockExclusive() const {
    std::lock_guard<std::mutex> gate(gate_);  // held until the readers in have left
    return std::unique_lock<std::shared_mutex>(mutex_);
  }

 private:
  mutable std::mutex gate_;
  mutable std::shared_mutex mutex_;
};

// One pinned state of an index of type `Index`.
template <typename Index>
class IndexReadView {
 public:
  IndexReadView(std::shared_lock<std::shared_mutex> lock, const Index* index, uint64_t version)
      : lock_(std::move(lock)), index_(index), version_(version) {}

  const Index& index() const { return *index_; }
  uint64_t version() const { return version_; }

 private:
  std::shared_lock<std::shared_mutex> lock_;
  const Index* index_;
  uint64_t version_;
};

}  // namespace neardup

#endif  // NEARDUP_INDEX_STORE_H_
