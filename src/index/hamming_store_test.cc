#include "neardup/hamming_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <set>
#include <vector>

#include "index/index_store_test_util.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

using test_support::ReadFileBytes;
using test_support::TempDir;
using test_support::WriteFileBytes;

constexpr HammingIndexOptions kOptions{6, 3};

IndexStoreOptions NoSync() {
  IndexStoreOptions o;
  o.sync = false;
  return o;
}

// FindAll by brute force over a set of entries, in FindAll's order.
std::vector<HammingMatch> BruteForce(const std::set<HammingEntry>& entries, uint64_t query,
                                     int max_distance) {
  std::vector<HammingMatch> out;
  for (const HammingEntry& e : entries) {
    const int d = std::popcount(e.fingerprint ^ query);
    if (d <= max_distance) out.push_back({e.fingerprint, e.id, d});
  }
  std::sort(out.begin(), out.end(), [](const HammingMatch& a, const HammingMatch& b) {
    return std::tie(a.distance, a.id, a.fingerprint) < std::tie(b.distance, b.id, b.fingerprint);
  });
  return out;
}

// A change that always changes the state: an insert of an absent entry or
// a remove of a present one. Fingerprints come from a few clusters, so
// queries have matches.
struct Op {
  bool insert;
  HammingEntry entry;
};

std::vector<Op> MakeOps(size_t count, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  std::vector<uint64_t> centres(20);
  for (uint64_t& c : centres) c = rng.Next();
  std::set<HammingEntry> live;
  std::vector<Op> ops;
  while (ops.size() < count) {
    if (!live.empty() && rng.Next() % 3 == 0) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng.Next() % live.size()));
      ops.push_back({false, *it});
      live.erase(it);
    } else {
      uint64_t fp = centres[rng.Next() % centres.size()];
      for (int flips = static_cast<int>(rng.Next() % 6); flips > 0; --flips) {
        fp ^= uint64_t{1} << (rng.Next() % 64);
      }
      const HammingEntry e{fp, rng.Next() % 1000};
      if (!live.insert(e).second) continue;
      ops.push_back({true, e});
    }
  }
  return ops;
}

std::set<HammingEntry> StateAfter(const std::vector<Op>& ops, size_t count) {
  std::set<HammingEntry> state;
  for (size_t i = 0; i < count; ++i) {
    if (ops[i].insert) {
      state.insert(ops[i].entry);
    } else {
      state.erase(ops[i].entry);
    }
  }
  return state;
}

void Apply(HammingStore* store, const Op& op) {
  Result<bool> changed = op.insert ? store->Insert(op.entry) : store->Remove(op.entry);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_TRUE(*changed);
}

// The store holds exactly `want`: size, membership of every entry ever
// used, and FindAll of each against brute force.
void ExpectHolds(const HammingStore& store, const std::set<HammingEntry>& want,
                 const std::vector<Op>& ops) {
  HammingStore::ReadView view = store.Read();
  ASSERT_EQ(view.index().size(), want.size());
  for (const Op& op : ops) {
    ASSERT_EQ(view.index().Contains(op.entry), want.count(op.entry) == 1);
    ASSERT_EQ(view.index().FindAll(op.entry.fingerprint ^ 1),
              BruteForce(want, op.entry.fingerprint ^ 1, kOptions.max_distance));
  }
}

TEST(HammingStoreTest, ReopenGivesTheSameStateWithAndWithoutCheckpoints) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(600, 1);
  {
    auto store = HammingStore::Open(dir.path(), kOptions, NoSync());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (size_t i = 0; i < 300; ++i) Apply(store->get(), ops[i]);
    ASSERT_TRUE((*store)->Checkpoint().ok());
    EXPECT_EQ((*store)->journal_records(), 0u);
    for (size_t i = 300; i < 600; ++i) Apply(store->get(), ops[i]);
    EXPECT_EQ((*store)->journal_records(), 300u);
    // A change that changes nothing is not journaled and keeps the version.
    const HammingEntry present = *StateAfter(ops, 600).begin();
    EXPECT_FALSE(*(*store)->Insert(present));
    EXPECT_FALSE(*(*store)->Remove(HammingEntry{present.fingerprint, present.id + 5000}));
    EXPECT_EQ((*store)->journal_records(), 300u);
    EXPECT_EQ((*store)->version(), 600u);
  }
  auto reopened = HammingStore::Open(dir.path(), kOptions, NoSync());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->version(), 600u);
  ExpectHolds(**reopened, StateAfter(ops, 600), ops);
  EXPECT_EQ((*reopened)->recovered_tail_error(), "");
}

TEST(HammingStoreTest, AChangeCostsOneJournalRecordNotARewrite) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(2000, 2);
  auto store = HammingStore::Open(dir.path(), kOptions, NoSync());
  ASSERT_TRUE(store.ok());
  for (size_t i = 0; i < 1999; ++i) Apply(store->get(), ops[i]);
  ASSERT_TRUE((*store)->Checkpoint().ok());
  const auto base_bytes = std::filesystem::file_size(dir.Path("hamming.base"));
  const auto journal_bytes = std::filesystem::file_size(dir.Path("hamming.journal"));
  Apply(store->get(), ops[1999]);
  // 12 bytes of framing and a 17-byte record; the base is untouched.
  EXPECT_EQ(std::filesystem::file_size(dir.Path("hamming.journal")), journal_bytes + 29);
  EXPECT_EQ(std::filesystem::file_size(dir.Path("hamming.base")), base_bytes);
}

TEST(HammingStoreTest, ATornLastRecordIsCutAndTheRestKept) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(50, 3);
  {
    auto store = HammingStore::Open(dir.path(), kOptions);  // synced changes
    ASSERT_TRUE(store.ok());
    for (const Op& op : ops) Apply(store->get(), op);
  }
  const std::string journal = dir.Path("hamming.journal");
  const std::string bytes = ReadFileBytes(journal);
  for (size_t cut : {size_t{1}, size_t{10}, size_t{28}}) {
    WriteFileBytes(journal, bytes.substr(0, bytes.size() - cut));
    auto store = HammingStore::Open(dir.path(), kOptions);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_NE((*store)->recovered_tail_error(), "") << cut;
    EXPECT_EQ((*store)->version(), 49u);
    ExpectHolds(**store, StateAfter(ops, 49), ops);
  }
  // A flipped byte in the last record, then a change after the cut: both
  // survive the next reopening as they should.
  std::string flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x40;
  WriteFileBytes(journal, flipped);
  {
    auto store = HammingStore::Open(dir.path(), kOptions);
    ASSERT_TRUE(store.ok());
    Apply(store->get(), ops[49]);
  }
  auto store = HammingStore::Open(dir.path(), kOptions);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->recovered_tail_error(), "");
  EXPECT_EQ((*store)->version(), 50u);
  ExpectHolds(**store, StateAfter(ops, 50), ops);
}

TEST(HammingStoreTest, ACrashBetweenBaseAndJournalRewriteReplaysToTheSameSet) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(400, 4);
  std::string old_journal;
  {
    auto store = HammingStore::Open(dir.path(), kOptions, NoSync());
    ASSERT_TRUE(store.ok());
    for (size_t i = 0; i < 200; ++i) Apply(store->get(), ops[i]);
    ASSERT_TRUE((*store)->Checkpoint().ok());
    for (size_t i = 200; i < 400; ++i) Apply(store->get(), ops[i]);
    old_journal = ReadFileBytes(dir.Path("hamming.journal"));
    ASSERT_TRUE((*store)->Checkpoint().ok());
  }
  // The new base with the journal as it was before the checkpoint.
  WriteFileBytes(dir.Path("hamming.journal"), old_journal);
  auto store = HammingStore::Open(dir.path(), kOptions);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->version(), 400u);
  ExpectHolds(**store, StateAfter(ops, 400), ops);
}

TEST(HammingStoreTest, OtherOptionsOrDamagedFilesAreClearErrors) {
  TempDir dir;
  {
    auto store = HammingStore::Open(dir.path(), kOptions);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Insert({42, 1}).ok());
  }
  auto other = HammingStore::Open(dir.path(), HammingIndexOptions{8, 3});
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition) << other.status().ToString();
  auto invalid = HammingStore::Open(dir.Path("x"), HammingIndexOptions{3, 3});
  EXPECT_EQ(invalid.status().code(), StatusCode::kInvalidArgument);
  // A journal whose header record is damaged is not a journal.
  std::string bytes = ReadFileBytes(dir.Path("hamming.journal"));
  bytes[14] ^= 1;
  WriteFileBytes(dir.Path("hamming.journal"), bytes);
  auto damaged = HammingStore::Open(dir.path(), kOptions);
  EXPECT_EQ(damaged.status().code(), StatusCode::kDataLoss) << damaged.status().ToString();
}

// Readers query continuously while a writer inserts, removes and
// checkpoints; every answer equals the brute-force answer on the state of the
// version the reader's view pinned.
TEST(HammingStoreTest, ConcurrentReadersSeeExactlyThePinnedState) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(1500, 5);
  IndexStoreOptions options = NoSync();
  options.checkpoint_after_records = 200;  // checkpoints while readers run
  auto opened = HammingStore::Open(dir.path(), kOptions, options);
  ASSERT_TRUE(opened.ok());
  HammingStore& store = **opened;

  struct Seen {
    uint64_t version;
    uint64_t query;
    std::vector<HammingMatch> matches;
  };
  const std::vector<Seen> all = internal::testing::ReadWhileWriting<Seen>(
      3, 3000,
      [&](internal::SplitMix64* rng) {
        const uint64_t query =
            ops[rng->Next() % ops.size()].entry.fingerprint ^ (uint64_t{1} << (rng->Next() % 64));
        HammingStore::ReadView view = store.Read();
        return Seen{view.version(), query, view.index().FindAll(query)};
      },
      [&] {
        for (const Op& op : ops) Apply(&store, op);
      });
  std::set<HammingEntry> state;
  internal::testing::CheckInVersionOrder(
      all,
      [&](size_t i) {
        if (ops[i].insert) {
          state.insert(ops[i].entry);
        } else {
          state.erase(ops[i].entry);
        }
      },
      [&](const Seen& s) {
        ASSERT_EQ(s.matches, BruteForce(state, s.query, kOptions.max_distance))
            << "version " << s.version;
      });
  EXPECT_LT((store.journal_records()), 200u);  // the automatic checkpoints ran
}

}  // namespace
}  // namespace neardup
