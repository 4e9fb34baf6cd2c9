// Running out of memory in the middle of an insert (session 17): each
// allocation an insert makes is failed in turn, through a global operator
// new replaced in this binary and armed only around the insert (the indexes'
// arrays below 2 MiB, all of them here, come from operator new). Each
// failed insert must return ResourceExhausted and leave the index answering
// every query as before; the insert then succeeds and the index answers as
// one built without failures. Session 18: HammingIndex::Remove (allocates
// nothing), HammingStore's journalled remove, and a stream's Add, AddBatch
// and Remove (a failed one leaves the stream answering as before, and a
// durable stream reopens with exactly the acknowledged adds).
#include <gtest/gtest.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "neardup/hamming_index.h"
#include "neardup/hamming_store.h"
#include "neardup/lsh_index.h"
#include "neardup/lsh_store.h"
#include "neardup/stream.h"
#include "neardup/write_ahead_log.h"
#include "support/file_size_limit.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace {

// Allocations left before the one that fails; negative: none fails.
std::atomic<int64_t> g_allocations_before_failure{-1};
std::atomic<bool> g_failed{false};
// Every allocation after the failed one fails too (memory that stays
// exhausted: the error path itself must not need any).
std::atomic<bool> g_sticky{false};
// Every allocation of at least this many bytes fails; 0: none.
std::atomic<std::size_t> g_failing_from_bytes{0};

void* Allocate(std::size_t bytes, std::size_t alignment) {
  if (g_sticky.load(std::memory_order_relaxed) && g_failed.load()) throw std::bad_alloc();
  const std::size_t failing_from = g_failing_from_bytes.load(std::memory_order_relaxed);
  if (failing_from != 0 && bytes >= failing_from) {
    g_failed = true;
    throw std::bad_alloc();
  }
  if (g_allocations_before_failure.load(std::memory_order_relaxed) >= 0 &&
      g_allocations_before_failure.fetch_sub(1) == 0) {
    g_failed = true;
    throw std::bad_alloc();
  }
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(bytes);
  } else if (posix_memalign(&p, alignment, bytes) != 0) {
    p = nullptr;
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

// Every form, so that no allocation of this binary takes another allocator
// (the nothrow forms return null on a failed allocation, as they must).
void* operator new(std::size_t bytes) { return Allocate(bytes, 0); }
void* operator new[](std::size_t bytes) { return Allocate(bytes, 0); }
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  return Allocate(bytes, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) {
  return Allocate(bytes, static_cast<std::size_t>(alignment));
}
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return Allocate(bytes, 0);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  return operator new(bytes, std::nothrow);
}
void* operator new(std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return Allocate(bytes, static_cast<std::size_t>(alignment));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, std::align_val_t alignment,
                     const std::nothrow_t&) noexcept {
  return operator new(bytes, alignment, std::nothrow);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace neardup {
namespace {

using internal::SplitMix64;
using Sketch = std::vector<uint64_t>;

// Runs `insert` with its allocation number `failing` (from 0) failing, and
// when `sticky` every one after it too; true if that allocation was reached
// (and failed).
bool FailAllocation(int64_t failing, const std::function<Status()>& insert, Status* status,
                    bool sticky) {
  g_failed = false;
  g_sticky = sticky;
  g_allocations_before_failure = failing;
  *status = insert();
  g_allocations_before_failure = -1;
  g_sticky = false;
  return g_failed;
}

// Fails each allocation of `insert` in turn (0, 1, ...; with `sticky`, each
// and every one after it): every failed insert must return
// ResourceExhausted (not throw) and leave answers() as before, until the
// insert succeeds. Returns how many failed.
template <typename Answers>
int FailEachAllocation(const std::function<Status()>& insert, const Answers& answers,
                       bool sticky = false) {
  const auto before = answers();
  for (int64_t failing = 0;; ++failing) {
    Status status;
    const bool failed = FailAllocation(failing, insert, &status, sticky);
    // An insert may also succeed past a failed allocation that only
    // postponed work (HammingIndex's merging of its runs).
    if (status.ok()) return static_cast<int>(failing);
    EXPECT_TRUE(failed) << status.ToString();
    EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
    EXPECT_TRUE(answers() == before) << "allocation " << failing << ": " << status.ToString();
    if (::testing::Test::HasFailure()) return static_cast<int>(failing);
  }
}

constexpr int kNumHashes = 16;
constexpr LshParams kParams{8, 2};

// Half the sketches draw from 6 values, so that many documents share band
// keys (long chains); the other half are random (many keys, table growth).
Sketch MakeSketch(SplitMix64& rng, size_t i) {
  Sketch sketch(kNumHashes);
  for (uint64_t& v : sketch) v = i % 2 == 0 ? rng.Next() % 6 : rng.Next();
  return sketch;
}

struct LshCase {
  LshCase() : index(LshIndex::Create(kParams, kNumHashes).value()) {}

  // The index's size and its answer to every sketch made so far.
  std::vector<std::vector<uint64_t>> Answers() const {
    std::vector<std::vector<uint64_t>> out{{index.size()}};
    for (const Sketch& sketch : sketches) out.push_back(index.Query(sketch).value());
    return out;
  }
  // Makes `count` more documents (ids from sketches.size()).
  std::vector<uint64_t> More(size_t count) {
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < count; ++i) {
      ids.push_back(sketches.size());
      sketches.push_back(MakeSketch(rng, sketches.size()));
    }
    return ids;
  }
  std::vector<uint64_t> Rows(const std::vector<uint64_t>& ids) const {
    std::vector<uint64_t> rows;
    for (uint64_t id : ids) rows.insert(rows.end(), sketches[id].begin(), sketches[id].end());
    return rows;
  }

  SplitMix64 rng{17};
  std::vector<Sketch> sketches;
  LshIndex index;
};

TEST(IndexAllocFailureTest, LshInsertLeavesTheIndexAsItWas) {
  LshCase c;
  LshIndex reference = LshIndex::Create(kParams, kNumHashes).value();
  int failures = 0;
  for (uint64_t id : c.More(300)) {
    ASSERT_TRUE(reference.Insert(id, c.sketches[id]).ok());
    // Every fifth document with memory that stays exhausted.
    failures += FailEachAllocation([&] { return c.index.Insert(id, c.sketches[id]); },
                                   [&] { return c.Answers(); }, /*sticky=*/id % 5 == 0);
    ASSERT_FALSE(HasFailure()) << "document " << id;
  }
  EXPECT_GT(failures, 0);
  // As an index that never failed, also after removals.
  for (uint64_t id = 0; id < 300; id += 3) {
    ASSERT_TRUE(c.index.Remove(id));
    ASSERT_TRUE(reference.Remove(id));
  }
  for (const Sketch& sketch : c.sketches) {
    EXPECT_EQ(c.index.Query(sketch).value(), reference.Query(sketch).value());
  }
}

// Serial (small) and parallel (4096 documents or more) batches.
void CheckBulk(size_t stored, size_t batch, bool sticky = false) {
  // oneTBB starts its threads at its first parallel call, with allocations
  // not failed here (a failed one there can leave its start-up spinning).
  tbb::parallel_for(0, 64, [](int) {});
  LshCase c;
  const std::vector<uint64_t> first = c.More(stored);
  ASSERT_TRUE(c.index.InsertBulk(first, c.Rows(first)).ok());
  const std::vector<uint64_t> ids = c.More(batch);
  const std::vector<uint64_t> rows = c.Rows(ids);
  // The answers, and whether the index holds each id of the batch.
  auto answers = [&] {
    std::vector<std::vector<uint64_t>> out = c.Answers();
    for (uint64_t id : ids) out.push_back({c.index.Contains(id)});
    return out;
  };
  const int failures =
      FailEachAllocation([&] { return c.index.InsertBulk(ids, rows); }, answers, sticky);
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_GT(failures, 0);
  LshIndex reference = LshIndex::Create(kParams, kNumHashes).value();
  ASSERT_TRUE(reference.InsertBulk(first, c.Rows(first)).ok());
  ASSERT_TRUE(reference.InsertBulk(ids, rows).ok());
  for (const Sketch& sketch : c.sketches) {
    ASSERT_EQ(c.index.Query(sketch).value(), reference.Query(sketch).value());
  }
  // Also after removals (slot moves through the links a bulk undo restored).
  for (uint64_t id = 0; id < c.sketches.size(); id += 3) {
    ASSERT_TRUE(c.index.Remove(id));
    ASSERT_TRUE(reference.Remove(id));
  }
  for (const Sketch& sketch : c.sketches) {
    ASSERT_EQ(c.index.Query(sketch).value(), reference.Query(sketch).value());
  }
}

TEST(IndexAllocFailureTest, LshSerialInsertBulkLeavesTheIndexAsItWas) { CheckBulk(500, 1500); }

// The serial path with memory that stays exhausted (oneTBB's parallel path
// needs memory to hand the exception over).
TEST(IndexAllocFailureTest, LshSerialInsertBulkLeavesTheIndexAsItWasWhenMemoryStaysExhausted) {
  CheckBulk(500, 1500, /*sticky=*/true);
}

TEST(IndexAllocFailureTest, LshParallelInsertBulkLeavesTheIndexAsItWas) { CheckBulk(500, 5000); }

struct HammingCase {
  HammingCase() : index(HammingIndex::Create(HammingIndexOptions{6, 3}).value()) {}

  std::vector<std::vector<HammingMatch>> Answers() const {
    std::vector<std::vector<HammingMatch>> out;
    out.push_back({HammingMatch{index.size(), 0, 0}});
    for (const HammingEntry& e : entries) out.push_back(index.FindAll(e.fingerprint));
    return out;
  }
  HammingEntry More() {
    // Clustered: fingerprints a few bits from a handful of centres.
    uint64_t fp = centres[rng.Next() % 4];
    for (int flips = static_cast<int>(rng.Next() % 4); flips > 0; --flips) {
      fp ^= uint64_t{1} << (rng.Next() % 64);
    }
    entries.push_back({fp, entries.size()});
    return entries.back();
  }

  SplitMix64 rng{29};
  uint64_t centres[4] = {rng.Next(), rng.Next(), rng.Next(), rng.Next()};
  std::vector<HammingEntry> entries;
  HammingIndex index;
};

TEST(IndexAllocFailureTest, HammingInsertLeavesTheIndexAsItWas) {
  HammingCase c;
  int failures = 0;
  for (int i = 0; i < 200; ++i) {
    const HammingEntry entry = c.More();
    failures += FailEachAllocation(
        [&]() -> Status {
          Result<bool> added = c.index.Insert(entry);
          if (!added.ok()) return added.status();
          return *added ? Status::Ok() : InternalError("not added");
        },
        [&] { return c.Answers(); }, /*sticky=*/i % 5 == 0);
    ASSERT_FALSE(HasFailure()) << "entry " << i;
  }
  EXPECT_GT(failures, 0);
}

TEST(IndexAllocFailureTest, HammingInsertBulkLeavesTheIndexAsItWas) {
  HammingCase c;
  std::vector<HammingEntry> first;
  for (int i = 0; i < 400; ++i) first.push_back(c.More());
  ASSERT_EQ(c.index.InsertBulk(first).value(), first.size());
  // Tombstones to revive, live entries to skip, new entries to add.
  std::vector<HammingEntry> batch;
  for (size_t i = 0; i < first.size(); i += 5) {
    ASSERT_TRUE(c.index.Remove(first[i]));
    batch.push_back(first[i]);
  }
  for (size_t i = 1; i < first.size(); i += 20) batch.push_back(first[i]);
  for (int i = 0; i < 150; ++i) batch.push_back(c.More());
  const size_t expected = first.size() / 5 + 150;
  const int failures = FailEachAllocation(
      [&]() -> Status {
        Result<size_t> added = c.index.InsertBulk(batch);
        if (!added.ok()) return added.status();
        return *added == expected ? Status::Ok() : InternalError("added " + std::to_string(*added));
      },
      [&] { return c.Answers(); });
  ASSERT_FALSE(HasFailure());
  EXPECT_GT(failures, 0);
  std::set<HammingEntry> all(c.entries.begin(), c.entries.end());
  EXPECT_EQ(c.index.size(), all.size());
  for (const HammingEntry& e : c.entries) EXPECT_TRUE(c.index.Contains(e));
}

// The stores journal an insert before the index takes it. When the index
// then runs out of memory, the store must refuse every later write (a retry
// would journal the insert twice) and reopen with the insert applied.
// `insert` runs with allocation `failing` failing and returns the insert's
// status ("threw" for an escaping bad_alloc: the record not yet built).
Status StoreInsertFailing(int64_t failing, const std::function<Status()>& insert) {
  g_failed = false;
  g_allocations_before_failure = failing;
  Status status;
  try {
    status = insert();
  } catch (const std::bad_alloc&) {
    status = InternalError("threw");
  }
  g_allocations_before_failure = -1;
  return status;
}

bool Diverged(const Status& status) {
  return status.message().find("diverged from its journal") != std::string::npos;
}

IndexStoreOptions NoSync() {
  IndexStoreOptions o;
  o.sync = false;
  return o;
}

TEST(IndexAllocFailureTest, LshStoreFailsAfterAJournaledInsertRunsOutOfMemory) {
  test_support::TempDir dir;
  LshCase c;
  std::unique_ptr<LshStore> store =
      LshStore::Open(dir.path(), kParams, kNumHashes, NoSync()).value();
  for (uint64_t id : c.More(50)) ASSERT_TRUE(store->Insert(id, c.sketches[id]).ok());
  int diverged = 0;
  for (int64_t failing = 0;; ++failing) {
    ASSERT_LT(failing, 1000);
    const uint64_t id = c.More(1)[0];
    const size_t size = store->size();
    const uint64_t records = store->journal_records();
    const Status status =
        StoreInsertFailing(failing, [&] { return store->Insert(id, c.sketches[id]); });
    if (status.ok() && !g_failed) break;  // past the insert's last allocation
    if (!status.ok()) {
      // The natural response: a retry. Refused once the insert is
      // journaled (before this test, it journaled the insert twice and the
      // store no longer opened).
      const Status retried = store->Insert(id, c.sketches[id]);
      if (Diverged(status)) {
        ++diverged;
        EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
        EXPECT_EQ(retried, status);
        EXPECT_EQ(store->Remove(0).status(), status);
        EXPECT_EQ(store->Checkpoint(), status);
        EXPECT_EQ(store->size(), size);
        EXPECT_EQ(store->journal_records(), records + 1);
      } else {
        EXPECT_TRUE(retried.ok()) << status.ToString() << " then " << retried.ToString();
      }
    }
    // Reopened, the store holds the document.
    store.reset();
    Result<std::unique_ptr<LshStore>> reopened =
        LshStore::Open(dir.path(), kParams, kNumHashes, NoSync());
    ASSERT_TRUE(reopened.ok()) << "allocation " << failing << ": " << status.ToString()
                               << "; reopening: " << reopened.status().ToString();
    store = std::move(*reopened);
    ASSERT_EQ(store->size(), c.sketches.size()) << "allocation " << failing;
    ASSERT_FALSE(HasFailure()) << "allocation " << failing << ": " << status.ToString();
  }
  EXPECT_GT(diverged, 0);
  // As an index that never failed.
  LshIndex reference = LshIndex::Create(kParams, kNumHashes).value();
  for (size_t id = 0; id < c.sketches.size(); ++id) {
    ASSERT_TRUE(reference.Insert(id, c.sketches[id]).ok());
  }
  for (const Sketch& sketch : c.sketches) {
    EXPECT_EQ(store->Query(sketch).value(), reference.Query(sketch).value());
  }
  EXPECT_TRUE(store->Checkpoint().ok());
}

TEST(IndexAllocFailureTest, HammingStoreFailsAfterAJournaledInsertRunsOutOfMemory) {
  test_support::TempDir dir;
  HammingCase c;
  auto open = [&] { return HammingStore::Open(dir.path(), c.index.options(), NoSync()).value(); };
  std::unique_ptr<HammingStore> store = open();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(store->Insert(c.More()).value());
  int diverged = 0;
  for (int64_t failing = 0;; ++failing) {
    ASSERT_LT(failing, 1000);
    const HammingEntry entry = c.More();
    const size_t size = store->Read().index().size();
    const uint64_t records = store->journal_records();
    const Status status =
        StoreInsertFailing(failing, [&] { return store->Insert(entry).status(); });
    if (status.ok() && !g_failed) break;
    if (!status.ok()) {
      const Result<bool> retried = store->Insert(entry);
      if (Diverged(status)) {
        ++diverged;
        EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
        EXPECT_EQ(retried.status(), status);
        EXPECT_EQ(store->Remove(c.entries[0]).status(), status);
        EXPECT_EQ(store->Checkpoint(), status);
        EXPECT_EQ(store->Read().index().size(), size);
        EXPECT_EQ(store->journal_records(), records + 1);
      } else {
        EXPECT_TRUE(retried.ok()) << status.ToString() << " then " << retried.status().ToString();
      }
    }
    store.reset();
    store = open();
    ASSERT_EQ(store->Read().index().size(), c.entries.size()) << "allocation " << failing;
    ASSERT_FALSE(HasFailure()) << "allocation " << failing << ": " << status.ToString();
  }
  EXPECT_GT(diverged, 0);
  for (const HammingEntry& e : c.entries) EXPECT_TRUE(store->Read().index().Contains(e));
}

// The entries of `c` whose bit in `removed` is clear, in an index that never
// failed: the answers every removal must leave.
std::vector<std::vector<HammingMatch>> HammingAnswersWithout(const HammingCase& c,
                                                             const std::vector<bool>& removed) {
  HammingIndex reference = HammingIndex::Create(c.index.options()).value();
  for (size_t i = 0; i < c.entries.size(); ++i) {
    if (!removed[i]) {
      EXPECT_TRUE(reference.Insert(c.entries[i]).value());
    }
  }
  std::vector<std::vector<HammingMatch>> out;
  out.push_back({HammingMatch{reference.size(), 0, 0}});
  for (const HammingEntry& e : c.entries) out.push_back(reference.FindAll(e.fingerprint));
  return out;
}

// Session 18: a remove from runs that Insert built allocates nothing (their
// tombstone bits come with them), so it cannot throw after HammingStore
// journalled it or after a stream stored the document it evicts for; a
// compaction that runs out of memory leaves the run as it is.
TEST(IndexAllocFailureTest, HammingRemoveAllocatesNothingAndCannotFail) {
  HammingCase c;
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(c.index.Insert(c.More()).value());
  std::vector<bool> removed(c.entries.size(), false);
  SplitMix64 order(3);
  for (int i = 0; i < 250; ++i) {
    size_t k = order.Next() % c.entries.size();
    while (removed[k]) k = (k + 1) % c.entries.size();
    // Allocation 0 fails: a compaction (merge) is the only thing that may
    // ask for one, and it gives up.
    Status status;
    bool found = false;
    const bool failed = FailAllocation(
        0,
        [&] {
          found = c.index.Remove(c.entries[k]);
          return Status::Ok();
        },
        &status, /*sticky=*/i % 2 == 0);
    ASSERT_TRUE(found) << "remove " << i;
    removed[k] = true;
    if (i % 10 == 0 || failed) {
      ASSERT_TRUE(c.Answers() == HammingAnswersWithout(c, removed)) << "remove " << i;
    }
  }
  // And once memory is back, removes compact again.
  for (size_t k = 0; k < c.entries.size(); ++k) {
    if (!removed[k]) continue;
    ASSERT_FALSE(c.index.Remove(c.entries[k]));
  }
  ASSERT_TRUE(c.Answers() == HammingAnswersWithout(c, removed));
}

// A store's journalled remove whose index runs out of memory (the first
// remove from a run of a loaded checkpoint allocates its tombstone bits)
// fails the store for good, as an insert does, and the reopened store has
// the remove.
TEST(IndexAllocFailureTest, HammingStoreFailsAfterAJournaledRemoveRunsOutOfMemory) {
  test_support::TempDir dir;
  HammingCase c;
  auto open = [&] { return HammingStore::Open(dir.path(), c.index.options(), NoSync()).value(); };
  std::unique_ptr<HammingStore> store = open();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->Insert(c.More()).value());
  ASSERT_TRUE(store->Checkpoint().ok());
  int diverged = 0;
  size_t live = c.entries.size();
  for (int64_t failing = 0;; ++failing) {
    ASSERT_LT(failing, 1000);
    // A fresh checkpoint, loaded: its runs have no tombstone bits yet (a
    // replayed remove would have allocated them).
    ASSERT_TRUE(store->Checkpoint().ok());
    store.reset();
    store = open();
    const HammingEntry entry = c.entries[static_cast<size_t>(failing)];
    const uint64_t records = store->journal_records();
    const Status status =
        StoreInsertFailing(failing, [&] { return store->Remove(entry).status(); });
    if (status.ok() && !g_failed) {
      --live;
      break;
    }
    if (status.message() == "threw") {
      // Before the journal (the record's own allocations): nothing changed.
      EXPECT_EQ(store->journal_records(), records);
      EXPECT_TRUE(store->Read().index().Contains(entry));
      ASSERT_TRUE(store->Remove(entry).value());
    } else if (!status.ok()) {
      ASSERT_TRUE(Diverged(status)) << status.ToString();
      ++diverged;
      EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
      EXPECT_EQ(store->Remove(c.entries.back()).status(), status);
      EXPECT_EQ(store->Insert(entry).status(), status);
      EXPECT_EQ(store->Checkpoint(), status);
      EXPECT_EQ(store->Read().index().size(), live);
      EXPECT_EQ(store->journal_records(), records + 1);
    }
    --live;
    store.reset();
    store = open();
    ASSERT_EQ(store->Read().index().size(), live) << "allocation " << failing;
    ASSERT_FALSE(store->Read().index().Contains(entry)) << "allocation " << failing;
    ASSERT_FALSE(HasFailure()) << "allocation " << failing << ": " << status.ToString();
  }
  EXPECT_GT(diverged, 0);
}

// Ends the failures (the call under test has returned), then copies `r`'s
// status: the copy allocates.
template <typename R>
Status DisarmedStatus(const R& r) {
  g_allocations_before_failure = -1;
  g_sticky = false;
  return r.status();
}

// A write that fails part way (a file size limit) with every allocation
// failing: the torn record is cut and the log goes on from the last whole
// one (session 18's review: the error's message was built before the cut,
// and a bad_alloc there left the torn bytes in the file and the offset
// past them, so the next record followed garbage).
TEST(IndexAllocFailureTest, AFailedLogWriteIsCutWithoutMemoryForItsMessage) {
  test_support::TempDir dir;
  const std::string path = dir.path() + "/log";
  std::unique_ptr<WriteAheadLog> log = std::move(WriteAheadLog::Open(path, 0)).value();
  ASSERT_TRUE(log->Append("before").ok());
  const uint64_t start = log->size();
  std::string framed;
  std::vector<size_t> ends;
  for (int k = 0; k < 4; ++k) {
    AppendLogRecord(std::string(100, 'r'), &framed);
    ends.push_back(framed.size());
  }
  Status status;
  size_t appended = 99;
  bool threw = false;
  {
    test_support::ScopedFileSizeLimit limit(start + ends[1] + 50);
    FailAllocation(
        0,
        [&] {
          try {
            return log->AppendFramed(framed, ends, &appended).status();
          } catch (const std::bad_alloc&) {
            threw = true;
            return Status(StatusCode::kResourceExhausted, "threw");
          }
        },
        &status, /*sticky=*/true);
  }
  EXPECT_FALSE(threw);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(appended, 2u);
  EXPECT_EQ(log->size(), start + ends[1]);
  EXPECT_EQ(std::filesystem::file_size(path), start + ends[1]);
  EXPECT_FALSE(log->broken());
  Result<uint64_t> after = log->Append("after");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(std::filesystem::file_size(path), *after);
}

// Streams (session 18). Texts from a small vocabulary; every third one a
// near copy of an earlier one (one word changed), so that documents are
// both kept and near-duplicates.
std::string StreamText(size_t i) {
  static const char* const kWords[] = {"alpha", "bravo", "charlie", "delta",  "echo",  "foxtrot",
                                       "golf",  "hotel", "india",   "juliet", "kilo",  "lima",
                                       "mike",  "oscar", "papa",    "quebec", "romeo", "sierra"};
  SplitMix64 rng(i % 3 == 2 ? i - 2 : i);
  std::string text;
  for (int w = 0; w < 60; ++w) {
    text += kWords[rng.Next() % 18];
    text += ' ';
  }
  if (i % 3 == 2) text += "zulu";
  return text;
}

// The rotating case's text: every fifth one of 720 KB (kept in the
// stream), so that a snapshot piece (reserved for the step and 64 KiB, its
// buffer kept up to 2 MiB) grows, and allocates, after the cursor passed
// the records before it.
bool IsLongText(size_t i) { return i % 5 == 1; }

std::string StreamText(size_t i, bool rotating) {
  if (!rotating || !IsLongText(i)) return StreamText(i);
  std::string text;
  for (int k = 0; k < 2000; ++k) text += StreamText(i);
  return text;
}

std::string StreamId(size_t i) {
  // Past 15 bytes every other one: the id table's copy allocates.
  return (i % 2 == 0 ? "document-with-a-long-id-" : "d") + std::to_string(i);
}

// What a stream answers: its counts, each id's stored answer (or absence),
// and what an add of each text would answer now (Check: the index and the
// stored documents must agree).
std::vector<std::string> StreamAnswers(const NearDuplicateStream& stream, size_t n,
                                       bool rotating = false) {
  std::vector<std::string> out;
  const StreamStats stats = stream.Stats();
  out.push_back(std::to_string(stats.documents) + " " + std::to_string(stats.kept) + " " +
                std::to_string(stats.added) + " " + std::to_string(stats.evicted) + " " +
                std::to_string(stats.removed));
  auto show = [](const Result<StreamAnswer>& a) {
    if (!a.ok()) return a.status().ToString();
    return a->id + " " + std::string(StreamStatusName(a->status)) + " " + a->of + " " +
           std::to_string(a->similarity) + " " + std::to_string(a->time);
  };
  for (size_t i = 0; i < n; ++i) {
    out.push_back(show(stream.Get(StreamId(i))));
    if (rotating && IsLongText(i)) continue;  // Get tells (each Check would hash 720 KB)
    out.push_back(show(stream.Check("probe", StreamText(i), static_cast<int64_t>(i))));
  }
  return out;
}

// A copy of the durable stream in `dir` opens and answers as `stream`: its
// log holds exactly what the stream acknowledged and holds.
void ExpectReopensAs(const std::string& dir, const NearDuplicateStream& stream, size_t n,
                     bool rotating = false) {
  const std::string copy_dir = dir + "-copy";
  std::filesystem::remove_all(copy_dir);
  std::filesystem::copy(dir, copy_dir);
  StreamOpenOptions options;
  options.sync = false;
  Result<std::unique_ptr<NearDuplicateStream>> copy =
      NearDuplicateStream::OpenExisting(copy_dir, options);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ(StreamAnswers(**copy, n, rotating), StreamAnswers(stream, n, rotating));
  copy->reset();
  std::filesystem::remove_all(copy_dir);
}

struct StreamCase {
  NearDuplicateMethod method;
  bool durable;
  // Durable only: a roll-over or a rotation every few adds, the snapshot
  // written by the writers in small steps (session 18's review).
  bool rotating = false;
};

std::unique_ptr<NearDuplicateStream> OpenStream(const StreamCase& c, const std::string& dir) {
  StreamConfig config;
  config.method = c.method;
  config.threshold = 0.7;
  config.max_distance = 10;
  config.max_documents = 40;  // evictions from the 41st add on
  config.keep_texts = c.rotating;
  if (!c.durable) return NearDuplicateStream::Create(config).value();
  StreamOpenOptions options;
  options.sync = false;
  if (c.rotating) {
    options.snapshot_log_bytes = 8 << 10;
    options.snapshot_grows_with_state = false;  // a snapshot every 8 KiB
    options.snapshot_step_bytes = 2 << 10;
    options.background_snapshots = false;  // no thread allocates while the test fails allocations
  }
  return NearDuplicateStream::Open(dir, config, options).value();
}

// Fails each allocation of each Add (then of some Removes and of AddBatch
// calls) in turn: a failed call returns ResourceExhausted and leaves the
// stream answering as before; the durable stream then reopens with
// exactly the acknowledged calls' effects.
void CheckStream(const StreamCase& c) {
  test_support::TempDir dir;
  std::unique_ptr<NearDuplicateStream> stream = OpenStream(c, dir.path());
  const bool r = c.rotating;
  constexpr size_t kDocs = 60;
  int failures = 0;
  for (size_t i = 0; i < kDocs; ++i) {
    const std::string id = StreamId(i);
    const std::string text = StreamText(i, r);
    const std::vector<std::string> before = StreamAnswers(*stream, kDocs, r);
    for (int64_t failing = 0;; ++failing) {
      ASSERT_LT(failing, 100000);
      Status status;
      FailAllocation(
          failing, [&] { return stream->Add(id, text, static_cast<int64_t>(i)).status(); }, &status,
          /*sticky=*/i % 4 == 0);
      if (status.ok()) break;
      ++failures;
      ASSERT_EQ(status.code(), StatusCode::kResourceExhausted)
          << "add " << i << ", allocation " << failing << ": " << status.ToString();
      ASSERT_EQ(StreamAnswers(*stream, kDocs, r), before)
          << "add " << i << ", allocation " << failing << ": " << status.ToString();
      // The first eviction, the last add; rotating: every 8th failure.
      if (c.durable && (r ? failing % 8 == 0 : i == 39 || i == kDocs - 1)) {
        ExpectReopensAs(dir.path(), *stream, kDocs, r);
        ASSERT_FALSE(::testing::Test::HasFailure()) << "add " << i << ", allocation " << failing;
      }
    }
  }
  // Removes (of documents in the window; an evicted one is NotFound).
  for (size_t i = kDocs - 30; i < kDocs; i += 3) {
    const std::vector<std::string> before = StreamAnswers(*stream, kDocs, r);
    const std::string id = StreamId(i);
    for (int64_t failing = 0;; ++failing) {
      ASSERT_LT(failing, 100000);
      Status status;
      FailAllocation(
          failing, [&] { return stream->Remove(id); }, &status, false);
      if (status.ok()) break;
      ++failures;
      ASSERT_EQ(status.code(), StatusCode::kResourceExhausted)
          << "remove " << i << ", allocation " << failing << ": " << status.ToString();
      ASSERT_EQ(StreamAnswers(*stream, kDocs, r), before)
          << "remove " << i << ", allocation " << failing << ": " << status.ToString();
      if (c.durable && failing % 4 == 0) {
        ExpectReopensAs(dir.path(), *stream, kDocs, r);
        ASSERT_FALSE(::testing::Test::HasFailure()) << "remove " << i << ", allocation " << failing;
      }
    }
  }
  // A batch: a failed one stores the documents before the one that failed
  // (as on any error), each with the answer a retry gives.
  std::vector<std::string> ids;
  std::vector<std::string> texts;
  for (size_t i = kDocs; i < kDocs + 12; ++i) {
    ids.push_back(StreamId(i));
    texts.push_back(StreamText(i, r));
  }
  std::vector<StreamDocument> batch;
  for (size_t k = 0; k < ids.size(); ++k) {
    batch.push_back({ids[k], texts[k], static_cast<int64_t>(kDocs + k)});
  }
  std::vector<StreamAnswer> answers;
  for (int64_t failing = 0;; failing += 7) {
    ASSERT_LT(failing, 100000);
    const std::vector<std::string> before = StreamAnswers(*stream, kDocs + 12, r);
    Status status;
    FailAllocation(
        failing,
        [&] {
          Result<std::vector<StreamAnswer>> added = stream->AddBatch(batch);
          if (!added.ok()) return std::move(added).status();
          answers = std::move(added).value();
          return Status::Ok();
        },
        &status, false);
    if (status.ok()) break;
    ++failures;
    ASSERT_EQ(status.code(), StatusCode::kResourceExhausted)
        << "batch, allocation " << failing << ": " << status.ToString();
    if (c.durable) {
      ExpectReopensAs(dir.path(), *stream, kDocs + 12, r);
      ASSERT_FALSE(::testing::Test::HasFailure())
          << "batch, allocation " << failing << ": " << status.ToString();
    }
    // Stored: a prefix of the batch, each document as Get tells.
    size_t stored = 0;
    while (stored < ids.size() && stream->Get(ids[stored]).ok()) ++stored;
    for (size_t k = stored; k < ids.size(); ++k) {
      ASSERT_FALSE(stream->Get(ids[k]).ok()) << "batch, allocation " << failing << ", " << k;
    }
    if (stored == 0) {
      ASSERT_EQ(StreamAnswers(*stream, kDocs + 12, r), before)
          << "batch, allocation " << failing << ": " << status.ToString();
    }
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(answers[k], stream->Get(ids[k]).value()) << k;
  }
  EXPECT_GT(failures, 0);
  // As a stream that never failed.
  test_support::TempDir reference_dir;
  std::unique_ptr<NearDuplicateStream> reference = OpenStream(c, reference_dir.path());
  for (size_t i = 0; i < kDocs; ++i) {
    ASSERT_TRUE(reference->Add(StreamId(i), StreamText(i, r), static_cast<int64_t>(i)).ok());
  }
  for (size_t i = kDocs - 30; i < kDocs; i += 3) {
    ASSERT_TRUE(reference->Remove(StreamId(i)).ok());
  }
  ASSERT_TRUE(reference->AddBatch(batch).ok());
  const std::vector<std::string> expected = StreamAnswers(*reference, kDocs + 12, r);
  EXPECT_EQ(StreamAnswers(*stream, kDocs + 12, r), expected);
  if (r) {
    // Still rotating: a snapshot whose finish ran out of memory was given
    // up (the next rotation starts a new one), not left finishing for ever.
    const uint64_t snapshots = stream->Stats().snapshots;
    for (size_t i = kDocs + 12; i < kDocs + 40; ++i) {
      ASSERT_TRUE(stream->Add(StreamId(i), StreamText(i, r), static_cast<int64_t>(i)).ok());
    }
    EXPECT_GT(stream->Stats().snapshots, snapshots);
  }
  if (c.durable) {
    const std::vector<std::string> live = StreamAnswers(*stream, kDocs + 40, r);
    stream.reset();
    StreamOpenOptions options;
    options.sync = false;
    stream = NearDuplicateStream::OpenExisting(dir.path(), options).value();
    EXPECT_EQ(StreamAnswers(*stream, kDocs + 40, r), live);
  }
}

TEST(IndexAllocFailureTest, MinHashStreamCallsLeaveTheStreamAsItWas) {
  tbb::parallel_for(0, 64, [](int) {});  // oneTBB started before any failure
  CheckStream({NearDuplicateMethod::kMinHash, false});
}

TEST(IndexAllocFailureTest, SimHashStreamCallsLeaveTheStreamAsItWas) {
  tbb::parallel_for(0, 64, [](int) {});
  CheckStream({NearDuplicateMethod::kSimHash, false});
}

TEST(IndexAllocFailureTest, DurableMinHashStreamReopensWithTheAcknowledgedCalls) {
  tbb::parallel_for(0, 64, [](int) {});
  CheckStream({NearDuplicateMethod::kMinHash, true});
}

TEST(IndexAllocFailureTest, DurableSimHashStreamReopensWithTheAcknowledgedCalls) {
  tbb::parallel_for(0, 64, [](int) {});
  CheckStream({NearDuplicateMethod::kSimHash, true});
}

// Session 18's review: out of memory during a roll-over, a snapshot step
// (after the cursor passed records) or a snapshot's finish, after the
// operation's records are written and applied. The call succeeds and is
// durable; the snapshot is given up, so none lacks a document whose log it
// deletes, and the rotations go on.
TEST(IndexAllocFailureTest, RotatingMinHashStreamReopensWithTheAcknowledgedCalls) {
  tbb::parallel_for(0, 64, [](int) {});
  CheckStream({NearDuplicateMethod::kMinHash, true, /*rotating=*/true});
}

TEST(IndexAllocFailureTest, RotatingSimHashStreamReopensWithTheAcknowledgedCalls) {
  tbb::parallel_for(0, 64, [](int) {});
  CheckStream({NearDuplicateMethod::kSimHash, true, /*rotating=*/true});
}

// The piece of a snapshot step runs out of memory on a long record after
// the cursor passed shorter ones (every allocation of 256 KiB or more fails
// during the short adds, whose own allocations are smaller): the snapshot
// is given up, and every acknowledged document stays on disk. Before the
// fix the snapshot skipped the piece's records, and its finish deleted the
// logs that held them.
TEST(IndexAllocFailureTest, SnapshotStepOutOfMemoryKeepsEveryDocument) {
  tbb::parallel_for(0, 64, [](int) {});
  const StreamCase c{NearDuplicateMethod::kMinHash, true, /*rotating=*/true};
  test_support::TempDir dir;
  std::unique_ptr<NearDuplicateStream> stream = OpenStream(c, dir.path());
  constexpr size_t kDocs = 80;
  int failed = 0;
  for (size_t i = 0; i < kDocs; ++i) {
    const std::string text = StreamText(i, true);
    if (IsLongText(i)) {
      ASSERT_TRUE(stream->Add(StreamId(i), text, static_cast<int64_t>(i)).ok()) << i;
      continue;
    }
    g_failed = false;
    g_failing_from_bytes = size_t{256} << 10;
    const Status status = stream->Add(StreamId(i), text, static_cast<int64_t>(i)).status();
    g_failing_from_bytes = 0;
    if (g_failed) ++failed;
    ASSERT_TRUE(status.ok()) << "add " << i << ": " << status.ToString();
    ExpectReopensAs(dir.path(), *stream, kDocs, true);
    ASSERT_FALSE(::testing::Test::HasFailure()) << "add " << i;
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(stream->Stats().snapshots, 0u);
}

// Each allocation of Snapshot() failing in turn, its finish's included:
// the snapshot is given up, not left finishing for ever, so the adds after
// it still rotate (no snapshot ever completed again before the fix).
TEST(IndexAllocFailureTest, SnapshotFinishOutOfMemoryLeavesTheStreamRotating) {
  tbb::parallel_for(0, 64, [](int) {});
  const StreamCase c{NearDuplicateMethod::kMinHash, true, /*rotating=*/true};
  test_support::TempDir dir;
  std::unique_ptr<NearDuplicateStream> stream = OpenStream(c, dir.path());
  size_t next = 0;  // of the next document (short texts only)
  auto add = [&](size_t count) {
    for (size_t k = 0; k < count; ++k, ++next) {
      ASSERT_TRUE(stream->Add(StreamId(next), StreamText(next), static_cast<int64_t>(next)).ok());
    }
  };
  add(20);
  for (int64_t failing = 0;; ++failing) {
    ASSERT_LT(failing, 10000);
    Status status;
    FailAllocation(
        failing,
        [&] {
          try {
            return stream->Snapshot();
          } catch (const std::bad_alloc&) {  // its start still throws (not a write call)
            return Status(StatusCode::kResourceExhausted, "threw");
          }
        },
        &status, false);
    if (status.ok()) {
      EXPECT_GT(failing, 0);
      break;
    }
    const uint64_t snapshots = stream->Stats().snapshots;
    add(30);
    ASSERT_GT(stream->Stats().snapshots, snapshots)
        << "allocation " << failing << ": " << status.ToString();
    if (failing % 4 == 0) {
      ExpectReopensAs(dir.path(), *stream, next);
      ASSERT_FALSE(::testing::Test::HasFailure()) << "allocation " << failing;
    }
  }
}

}  // namespace
}  // namespace neardup
