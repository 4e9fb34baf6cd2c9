// Running out of memory in the middle of an insert (session 17): each
// allocation an insert makes is failed in turn, through a global operator
// new replaced in this binary and armed only around the insert (the indexes'
// arrays below 2 MiB, all of them here, come from operator new). Each
// failed insert must return ResourceExhausted and leave the index answering
// every query as before; the insert then succeeds and the index answers as
// one built without failures.
#include <gtest/gtest.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <vector>

#include "neardup/hamming_index.h"
#include "neardup/hamming_store.h"
#include "neardup/lsh_index.h"
#include "neardup/lsh_store.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace {

// Allocations left before the one that fails; negative: none fails.
std::atomic<int64_t> g_allocations_before_failure{-1};
std::atomic<bool> g_failed{false};
// Every allocation after the failed one fails too (memory that stays
// exhausted: the error path itself must not need any).
std::atomic<bool> g_sticky{false};

void* Allocate(std::size_t bytes, std::size_t alignment) {
  if (g_sticky.load(std::memory_order_relaxed) && g_failed.load()) throw std::bad_alloc();
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

}  // namespace
}  // namespace neardup
