#include "neardup/lsh_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "index/index_store_test_util.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

using test_support::ReadFileBytes;
using test_support::TempDir;
using test_support::WriteFileBytes;

constexpr LshParams kParams{4, 3};
constexpr int kNumHashes = 13;  // one value past the bands, unused by them

using Sketch = std::vector<uint64_t>;
using State = std::map<uint64_t, Sketch>;

IndexStoreOptions NoSync() {
  IndexStoreOptions o;
  o.sync = false;
  return o;
}

// Query by brute force: the stored ids that agree with `sketch` on every
// value of at least one band.
std::vector<uint64_t> BruteForce(const State& state, const Sketch& sketch) {
  std::vector<uint64_t> out;
  for (const auto& [id, stored] : state) {
    for (int b = 0; b < kParams.num_bands; ++b) {
      const auto first = stored.begin() + b * kParams.rows_per_band;
      if (std::equal(first, first + kParams.rows_per_band,
                     sketch.begin() + b * kParams.rows_per_band)) {
        out.push_back(id);
        break;
      }
    }
  }
  return out;  // ascending: a std::map's order
}

// Values from a small alphabet, so that bands collide often.
Sketch RandomSketch(internal::SplitMix64* rng) {
  Sketch s(kNumHashes);
  for (uint64_t& v : s) v = rng->Next() % 3;
  return s;
}

struct Op {
  bool insert;
  uint64_t doc_id;
  Sketch sketch;  // inserts
};

// Changes that always change the state.
std::vector<Op> MakeOps(size_t count, uint64_t seed) {
  internal::SplitMix64 rng(seed);
  State live;
  std::vector<Op> ops;
  uint64_t next_id = 7;
  while (ops.size() < count) {
    if (!live.empty() && rng.Next() % 3 == 0) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng.Next() % live.size()));
      ops.push_back({false, it->first, {}});
      live.erase(it);
    } else {
      const uint64_t id = (rng.Next() % 2 == 0 && next_id > 20) ? next_id - 13 : next_id;
      ++next_id;
      if (live.count(id) != 0) continue;
      ops.push_back({true, id, RandomSketch(&rng)});
      live[id] = ops.back().sketch;
    }
  }
  return ops;
}

State StateAfter(const std::vector<Op>& ops, size_t count) {
  State state;
  for (size_t i = 0; i < count; ++i) {
    if (ops[i].insert) {
      state[ops[i].doc_id] = ops[i].sketch;
    } else {
      state.erase(ops[i].doc_id);
    }
  }
  return state;
}

void Apply(LshStore* store, const Op& op) {
  if (op.insert) {
    ASSERT_TRUE(store->Insert(op.doc_id, op.sketch).ok());
  } else {
    Result<bool> removed = store->Remove(op.doc_id);
    ASSERT_TRUE(removed.ok() && *removed);
  }
}

void ExpectHolds(const LshStore& store, const State& want, const std::vector<Op>& ops) {
  LshStore::ReadView view = store.Read();
  ASSERT_EQ(view.index().size(), want.size());
  for (const Op& op : ops) {
    ASSERT_EQ(view.index().Contains(op.doc_id), want.count(op.doc_id) == 1);
    if (!op.insert) continue;
    Result<std::vector<uint64_t>> got = view.index().Query(op.sketch);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(*got, BruteForce(want, op.sketch));
  }
}

TEST(LshStoreTest, ReopenGivesTheSameStateAndCheckpointKeepsOnlyLiveDocuments) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(500, 1);
  const State want = StateAfter(ops, 500);
  {
    auto store = LshStore::Open(dir.path(), kParams, kNumHashes, NoSync());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const Op& op : ops) Apply(store->get(), op);
    EXPECT_EQ((*store)->journal_records(), 500u);
    EXPECT_EQ((*store)->version(), 500u);
    // Bad input changes nothing and is not journaled.
    EXPECT_EQ((*store)->Insert(1, Sketch(3)).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ((*store)->Insert(want.begin()->first, want.begin()->second).code(),
              StatusCode::kInvalidArgument);
    EXPECT_FALSE(*(*store)->Remove(999999));
    EXPECT_EQ((*store)->journal_records(), 500u);
  }
  {
    auto store = LshStore::Open(dir.path(), kParams, kNumHashes, NoSync());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->version(), 500u);
    ExpectHolds(**store, want, ops);
    const auto before = std::filesystem::file_size(dir.Path("lsh.journal"));
    ASSERT_TRUE((*store)->Checkpoint().ok());
    EXPECT_EQ((*store)->journal_records(), want.size());
    EXPECT_LT(std::filesystem::file_size(dir.Path("lsh.journal")), before);
    EXPECT_EQ((*store)->version(), 500u);
  }
  auto store = LshStore::Open(dir.path(), kParams, kNumHashes, NoSync());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->version(), 500u);
  ExpectHolds(**store, want, ops);
}

TEST(LshStoreTest, AChangeAppendsOneRecord) {
  TempDir dir;
  auto store = LshStore::Open(dir.path(), kParams, kNumHashes, NoSync());
  ASSERT_TRUE(store.ok());
  internal::SplitMix64 rng(2);
  ASSERT_TRUE((*store)->Insert(1, RandomSketch(&rng)).ok());
  const auto size = std::filesystem::file_size(dir.Path("lsh.journal"));
  ASSERT_TRUE((*store)->Insert(2, RandomSketch(&rng)).ok());
  EXPECT_EQ(std::filesystem::file_size(dir.Path("lsh.journal")), size + 12 + 13 + 8 * kNumHashes);
  ASSERT_TRUE(*(*store)->Remove(1));
  EXPECT_EQ(std::filesystem::file_size(dir.Path("lsh.journal")),
            size + 12 + 13 + 8 * kNumHashes + 12 + 9);
}

TEST(LshStoreTest, ATornLastRecordIsCutAndTheRestKept) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(60, 3);
  {
    auto store = LshStore::Open(dir.path(), kParams, kNumHashes);  // synced changes
    ASSERT_TRUE(store.ok());
    for (const Op& op : ops) Apply(store->get(), op);
  }
  const std::string journal = dir.Path("lsh.journal");
  const std::string bytes = ReadFileBytes(journal);
  for (size_t cut : {size_t{1}, size_t{5}, size_t{12}}) {
    WriteFileBytes(journal, bytes.substr(0, bytes.size() - cut));
    auto store = LshStore::Open(dir.path(), kParams, kNumHashes);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_NE((*store)->recovered_tail_error(), "");
    EXPECT_EQ((*store)->version(), 59u);
    ExpectHolds(**store, StateAfter(ops, 59), ops);
  }
  // After the cut the store goes on: the next change and a reopening agree.
  {
    auto store = LshStore::Open(dir.path(), kParams, kNumHashes);
    ASSERT_TRUE(store.ok());
    Apply(store->get(), ops[59]);
  }
  auto store = LshStore::Open(dir.path(), kParams, kNumHashes);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->recovered_tail_error(), "");
  ExpectHolds(**store, StateAfter(ops, 60), ops);
}

TEST(LshStoreTest, OtherParametersAreAClearError) {
  TempDir dir;
  ASSERT_TRUE(LshStore::Open(dir.path(), kParams, kNumHashes).ok());
  auto other = LshStore::Open(dir.path(), LshParams{3, 4}, kNumHashes);
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  auto invalid = LshStore::Open(dir.Path("x"), LshParams{0, 4}, kNumHashes);
  EXPECT_EQ(invalid.status().code(), StatusCode::kInvalidArgument);
}

// Readers query continuously while a writer inserts, removes and compacts;
// every answer equals the brute-force answer on the pinned version's state.
TEST(LshStoreTest, ConcurrentReadersSeeExactlyThePinnedState) {
  TempDir dir;
  const std::vector<Op> ops = MakeOps(1200, 5);
  IndexStoreOptions options = NoSync();
  options.checkpoint_after_records = 100;  // compactions while readers run
  auto opened = LshStore::Open(dir.path(), kParams, kNumHashes, options);
  ASSERT_TRUE(opened.ok());
  LshStore& store = **opened;

  struct Seen {
    uint64_t version;
    size_t query;  // an op whose sketch is the query
    std::vector<uint64_t> ids;
  };
  const std::vector<Seen> all = internal::testing::ReadWhileWriting<Seen>(
      3, 3000,
      [&](internal::SplitMix64* rng) {
        size_t q = rng->Next() % ops.size();
        while (!ops[q].insert) q = (q + 1) % ops.size();
        LshStore::ReadView view = store.Read();
        Result<std::vector<uint64_t>> ids = view.index().Query(ops[q].sketch);
        EXPECT_TRUE(ids.ok());
        return Seen{view.version(), q, ids.ok() ? std::move(*ids) : std::vector<uint64_t>{}};
      },
      [&] {
        for (const Op& op : ops) Apply(&store, op);
      });
  State state;
  internal::testing::CheckInVersionOrder(
      all,
      [&](size_t i) {
        if (ops[i].insert) {
          state[ops[i].doc_id] = ops[i].sketch;
        } else {
          state.erase(ops[i].doc_id);
        }
      },
      [&](const Seen& s) {
        ASSERT_EQ(s.ids, BruteForce(state, ops[s.query].sketch)) << "version " << s.version;
      });
  EXPECT_EQ(store.version(), ops.size());
  auto reopened = LshStore::Open(dir.path(), kParams, kNumHashes, options);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->version(), ops.size());
  ExpectHolds(**reopened, StateAfter(ops, ops.size()), ops);
}

}  // namespace
}  // namespace neardup
