// Background merges of the chunk index's tiers (collection_merge.cc): a
// commit returns while a merge runs, every view (the writer's, a reader's)
// searches exactly as a rebuild of its live documents, a finished merge is
// installed by the next call, a failed one is dropped and reported, and
// the tier count stays bounded when merges cannot keep up (back-pressure).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment.h"
#include "store/collection_test_util.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using internal::testing::DataFiles;
using internal::testing::ExpectIndexEqualsRebuild;
using internal::testing::Incoming;
using internal::testing::Owned;
using ::testing::HasSubstr;

// The default Env, except for the file of a background merge
// (data/index-merge.ndi, written through a temporary name): its creation
// waits while the gate is closed (at most 20 s, so a broken build fails
// rather than hangs), or fails while `failures` > 0.
class MergeGateEnv : public Env {
 public:
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Waits (at most 20 s) until `n` merges have reached their file, the
  // gate; false if they did not. A merge runs on its own thread (std::async)
  // and merges the tiers in memory before it creates its file, so a commit
  // returns before it gets there: a test that counts merges must wait for
  // them (session 11: under load the count was read before the merge
  // thread had run at all, "expected one merge, saw none").
  bool WaitForMerges(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return merges >= n; });
  }
  std::atomic<int> failures{0};
  std::atomic<int> merges{0};  // merge files begun

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    if (std::filesystem::path(path).filename().string().starts_with("index-merge")) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++merges;
      }
      cv_.notify_all();
      if (failures > 0) {
        --failures;
        return IoError("write " + path + ": injected failure");
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(20), [this] { return open_; });
    }
    return Env::Default()->NewWritableFile(path);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    return Env::Default()->RenameFile(from, to);
  }
  Status RemoveFile(const std::string& path) override { return Env::Default()->RemoveFile(path); }
  Status SyncDirectory(const std::string& dir) override {
    return Env::Default()->SyncDirectory(dir);
  }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return Env::Default()->LockFile(path);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
};

class CollectionMergeTest : public ::testing::Test {
 protected:
  std::string Dir() const { return (temp_.dir() / "c").string(); }

  std::unique_ptr<Collection> CreateAndOpen(uint32_t max_tiers = 12) {
    EXPECT_TRUE(Collection::Create(Dir(), *PresetRecipe("default"), {}).ok());
    Collection::OpenOptions options;
    options.mode = Collection::Mode::kReadWrite;
    options.env = &env_;
    options.max_index_tiers = max_tiers;
    Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), options);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  static CommitResult Commit(Collection* c, const std::vector<Owned>& docs,
                             std::vector<std::string> removals = {}) {
    Result<CommitResult> r = c->Commit(Incoming(docs), removals);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommitResult{};
  }
  static std::vector<Owned> Base() {
    std::vector<Owned> base;
    for (int i = 0; i < 60; ++i) {
      base.push_back({"base" + std::to_string(i), "w" + std::to_string(i) + " shared x" +
                                                      std::to_string(i % 13) + " y" +
                                                      std::to_string(i * 3)});
    }
    return base;
  }
  static Owned Small(int i) {
    return {"one" + std::to_string(i), "w" + std::to_string(i) + " shared new" + std::to_string(i) +
                                           " x" + std::to_string(i % 13)};
  }
  static uint64_t Tiers(const Collection& c) { return c.index().num_tiers(); }
  // A reader's view of the latest commit searches as a rebuild of its live
  // documents, with the writer's live documents.
  void ExpectReaderExact(const Collection& writer) {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ((*reader)->LiveDocuments(), writer.LiveDocuments());
    EXPECT_EQ((*reader)->index().num_tiers(), writer.index().num_tiers());
    ExpectIndexEqualsRebuild(**reader);
  }

  neardup::test_support::TempDir temp_;
  MergeGateEnv env_;
};

TEST_F(CollectionMergeTest, ACommitReturnsWhileAMergeRunsAndEveryViewStaysExact) {
  auto c = CreateAndOpen();
  Commit(c.get(), Base());
  Commit(c.get(), {Small(0)});  // a tier of its own: the base is > 4 times larger
  EXPECT_EQ(Tiers(*c), 2u);
  env_.Close();
  // Two one-document tiers call for a merge: it starts, and waits at the gate.
  Commit(c.get(), {Small(1)});
  EXPECT_EQ(Tiers(*c), 3u);
  ASSERT_TRUE(env_.WaitForMerges(1));
  // The writer goes on: each commit adds its tier, the merge's tiers stay.
  Commit(c.get(), {Small(2)});
  Commit(c.get(), {}, {"one0"});  // a document of the merging run
  Commit(c.get(), {{"base5", "modified w5 x5"}});
  EXPECT_EQ(Tiers(*c), 5u);
  // One at a time: the first still waits at the gate, and no commit began
  // another (one that did would most likely have reached its file by now,
  // after the three commits and their fsyncs).
  EXPECT_EQ(env_.merges, 1);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  const uint64_t generation = c->generation();

  env_.Open();
  // The merge is installed as a manifest switch of its own (a generation),
  // then MaintainIndex runs what the policy asks for next.
  ASSERT_TRUE(c->MaintainIndex().ok());
  EXPECT_GT(c->generation(), generation);
  EXPECT_LT(Tiers(*c), 5u);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  // Nothing left to do: no new generation, no merge file.
  const uint64_t settled = c->generation();
  ASSERT_TRUE(c->MaintainIndex().ok());
  EXPECT_EQ(c->generation(), settled);
  for (const std::string& f : DataFiles(Dir())) EXPECT_FALSE(f.starts_with("index-merge")) << f;
  c.reset();
  Result<std::unique_ptr<Collection>> reopened =
      Collection::Open(Dir(), {.mode = Collection::Mode::kReadWrite, .clock = {}});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  ASSERT_TRUE((*reopened)->Verify().ok());
  ExpectIndexEqualsRebuild(**reopened);
}

// Every live document's search (top 1000, no cut-off) as (external id,
// a_in_b, b_in_a), sorted: comparable across collections whose document
// numbers differ.
std::map<std::string, std::vector<std::tuple<std::string, double, double>>> AnswersById(
    const Collection& c) {
  std::map<std::string, std::vector<std::tuple<std::string, double, double>>> answers;
  const TieredChunkIndex index = c.index();
  ContainmentSearcher searcher(index);
  Result<std::vector<DocumentInfo>> docs = c.ListDocuments();
  EXPECT_TRUE(docs.ok());
  if (!docs.ok()) return answers;
  for (const DocumentInfo& d : *docs) {
    for (uint32_t cap : {0u, 3u}) {
      const std::vector<ContainmentMatch> matches =
          searcher.Search(*c.Chunks(d.doc), {cap, 1000, 0.0}, d.doc);
      std::vector<uint32_t> numbers;
      for (const ContainmentMatch& m : matches) numbers.push_back(m.doc);
      Result<std::map<uint32_t, std::string>> ids = c.ExternalIds(numbers);
      EXPECT_TRUE(ids.ok());
      auto& out = answers[d.id + "/" + std::to_string(cap)];
      for (const ContainmentMatch& m : matches) out.emplace_back((*ids)[m.doc], m.a_in_b, m.b_in_a);
      std::sort(out.begin(), out.end());
    }
  }
  return answers;
}

// Many small commits leave several tiers; MaintainIndex({.full = true})
// merges them into one, and every answer equals the one before and a fresh
// collection's that got the same documents in one commit. A reader pinned
// before keeps its tiers and answers.
TEST_F(CollectionMergeTest, AFullMergeLeavesOneTierAndTheSameAnswers) {
  auto c = CreateAndOpen();
  Commit(c.get(), Base());
  std::vector<Owned> all = Base();
  for (int i = 0; i < 20; ++i) {
    Commit(c.get(), {Small(i)});
    all.push_back(Small(i));
  }
  Commit(c.get(), {{"base7", "modified w7 x7 shared"}}, {"one3", "base11"});
  ASSERT_TRUE(c->MaintainIndex().ok());  // the policy's merges only
  ASSERT_GT(Tiers(*c), 1u);
  const auto before = AnswersById(*c);
  Result<std::unique_ptr<Collection>> pinned = Collection::Open(Dir(), {});
  ASSERT_TRUE(pinned.ok());
  const uint64_t pinned_tiers = (*pinned)->index().num_tiers();
  const uint64_t generation = c->generation();

  ASSERT_TRUE(c->MaintainIndex({.full = true}).ok());
  EXPECT_EQ(Tiers(*c), 1u);
  EXPECT_EQ(c->index().num_dead_postings(), 0u);
  EXPECT_EQ(c->generation(), generation + 1);  // one manifest switch
  EXPECT_FALSE(c->index_merge_pending());
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  EXPECT_EQ(AnswersById(*c), before);
  // The pinned reader still maps the replaced tiers (unlinked now).
  EXPECT_EQ((*pinned)->index().num_tiers(), pinned_tiers);
  EXPECT_EQ(AnswersById(**pinned), before);
  // Nothing left to merge: no new generation.
  ASSERT_TRUE(c->MaintainIndex({.full = true}).ok());
  EXPECT_EQ(c->generation(), generation + 1);

  // A fresh collection given the same live documents in one commit.
  std::map<std::string, std::string> live;
  for (const Owned& d : all) live[d.id] = d.text;
  live["base7"] = "modified w7 x7 shared";
  live.erase("one3");
  live.erase("base11");
  std::vector<Owned> once;
  for (const auto& [id, text] : live) once.push_back({id, text});
  const std::string fresh_dir = (temp_.dir() / "fresh").string();
  ASSERT_TRUE(Collection::Create(fresh_dir, *PresetRecipe("default"), {}).ok());
  Result<std::unique_ptr<Collection>> fresh =
      Collection::Open(fresh_dir, {.mode = Collection::Mode::kReadWrite, .clock = {}});
  ASSERT_TRUE(fresh.ok());
  Commit(fresh->get(), once);
  EXPECT_EQ((*fresh)->index().num_tiers(), 1u);
  EXPECT_EQ(AnswersById(**fresh), before);
  EXPECT_EQ((*fresh)->index().num_postings(), c->index().num_postings());
}

// The idle-time form a server uses: MaintainIndex({.full, .wait = false})
// starts the full merge on the merge thread and returns; a commit while it
// runs keeps its own tier; a later call installs the merge (the committed
// tier stays) and the next one merges the rest.
TEST_F(CollectionMergeTest, ABackgroundFullMergeRacesACommit) {
  auto c = CreateAndOpen();
  Commit(c.get(), Base());
  for (int i = 0; i < 6; ++i) Commit(c.get(), {Small(i)});
  ASSERT_TRUE(c->MaintainIndex().ok());
  const uint64_t tiers = Tiers(*c);
  ASSERT_GT(tiers, 1u);
  env_.Close();
  const int merges = env_.merges;
  ASSERT_TRUE(c->MaintainIndex({.full = true, .wait = false}).ok());
  EXPECT_TRUE(c->index_merge_pending());
  ASSERT_TRUE(env_.WaitForMerges(merges + 1));
  // A call while it runs returns at once and changes nothing.
  const uint64_t generation = c->generation();
  ASSERT_TRUE(c->MaintainIndex({.full = true, .wait = false}).ok());
  EXPECT_EQ(c->generation(), generation);
  // The writer commits meanwhile (an add, and a removal of a merged document).
  Commit(c.get(), {Small(100)}, {"one1"});
  EXPECT_EQ(Tiers(*c), tiers + 1);
  const uint64_t committed = c->generation();
  ExpectIndexEqualsRebuild(*c);
  env_.Open();
  // Installed by a later call (polled: the merge thread finishes on its own).
  // The call that installs it leaves the merged tier plus the one committed
  // during the merge, and starts a second full merge (that tier, and the
  // removal's dead postings), which a later call installs.
  std::optional<uint64_t> tiers_at_install;
  for (int i = 0; i < 2000 && c->index_merge_pending(); ++i) {
    ASSERT_TRUE(c->MaintainIndex({.full = true, .wait = false}).ok());
    if (!tiers_at_install && c->generation() != committed) tiers_at_install = Tiers(*c);
    if (c->index_merge_pending()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(c->index_merge_pending());
  ASSERT_TRUE(tiers_at_install.has_value());
  EXPECT_EQ(*tiers_at_install, 2u);
  EXPECT_EQ(Tiers(*c), 1u);
  EXPECT_EQ(c->index().num_dead_postings(), 0u);
  // The `.wait = false` calls did it all: a waiting call finds nothing.
  const uint64_t polled = c->generation();
  EXPECT_EQ(polled, committed + 2);  // the two full merges
  ASSERT_TRUE(c->MaintainIndex({.full = true}).ok());
  EXPECT_EQ(c->generation(), polled);
  EXPECT_EQ(Tiers(*c), 1u);
  EXPECT_FALSE(c->index_merge_pending());
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  for (const std::string& f : DataFiles(Dir())) EXPECT_FALSE(f.starts_with("index-merge")) << f;
}

// The server's idle merge is size-tiered (MaintainIndexOptions::
// size_tiered): with an oldest tier of at least index_tier_ratio (4) times
// the postings of the newer ones, only those are merged into one, and the
// oldest tier's file is not rewritten; with one newer tier left nothing is
// asked for, and dead postings alone ask for nothing.
TEST_F(CollectionMergeTest, ASizeTieredFullMergeDoesNotRewriteALargeOldestTier) {
  auto c = CreateAndOpen();
  auto index_files = [&] {
    std::vector<std::string> files;
    for (const std::string& f : DataFiles(Dir())) {
      if (f.starts_with("index-")) files.push_back(f);
    }
    return files;
  };
  Commit(c.get(), Base());  // 60 documents
  ASSERT_EQ(index_files().size(), 1u);
  const std::string oldest = index_files()[0];
  std::vector<Owned> eight;
  for (int i = 0; i < 8; ++i) eight.push_back(Small(i));
  Commit(c.get(), eight);
  ASSERT_TRUE(c->MaintainIndex().ok());
  Commit(c.get(), {Small(8)});
  ASSERT_TRUE(c->MaintainIndex().ok());
  // 60, 8 and 1 documents: geometric, so the policy merges nothing.
  ASSERT_EQ(Tiers(*c), 3u);
  const uint64_t postings0 = c->index().tiers()[0].num_postings();
  ASSERT_GE(postings0,
            4 * (c->index().tiers()[1].num_postings() + c->index().tiers()[2].num_postings()));
  const auto before = AnswersById(*c);
  const uint64_t generation = c->generation();

  ASSERT_TRUE(c->MaintainIndex({.full = true, .size_tiered = true}).ok());
  EXPECT_EQ(Tiers(*c), 2u);
  EXPECT_EQ(c->generation(), generation + 1);
  EXPECT_EQ(c->index().tiers()[0].num_postings(), postings0);
  std::vector<std::string> files = index_files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_THAT(files, ::testing::Contains(oldest));  // not rewritten
  EXPECT_EQ(AnswersById(*c), before);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  // One newer tier: nothing more, neither waiting nor in the background.
  ASSERT_TRUE(c->MaintainIndex({.full = true, .size_tiered = true}).ok());
  ASSERT_TRUE(c->MaintainIndex({.full = true, .size_tiered = true, .wait = false}).ok());
  EXPECT_FALSE(c->index_merge_pending());
  EXPECT_EQ(c->generation(), generation + 1);
  // Dead postings alone do not count either.
  Commit(c.get(), {}, {"one8"});
  const uint64_t removed = c->generation();
  ASSERT_TRUE(c->MaintainIndex().ok());
  ASSERT_EQ(Tiers(*c), 2u);
  ASSERT_TRUE(c->MaintainIndex({.full = true, .size_tiered = true}).ok());
  EXPECT_EQ(c->generation(), removed);
  EXPECT_THAT(index_files(), ::testing::Contains(oldest));
}

// The other side of the size-tiered rule. The policy keeps tiers of 60, 15
// and 3 documents (each tier at least 4 times the live postings of the
// newer ones it was compared with), but the oldest holds less than 4 times
// the two newer ones together: all tiers are merged into one.
TEST_F(CollectionMergeTest, ASizeTieredFullMergeMergesAllWhenTheOldestTierIsNotLarge) {
  auto c = CreateAndOpen();
  Commit(c.get(), Base());
  std::vector<Owned> fifteen;
  for (int i = 0; i < 15; ++i) fifteen.push_back(Small(i));
  Commit(c.get(), fifteen);
  ASSERT_TRUE(c->MaintainIndex().ok());
  Commit(c.get(), {Small(50), Small(51), Small(52)});
  ASSERT_TRUE(c->MaintainIndex().ok());
  ASSERT_EQ(Tiers(*c), 3u);
  // index() returns a copy: keep it alive while its tiers are read.
  const TieredChunkIndex index = c->index();
  const auto& tiers = index.tiers();
  ASSERT_LT(tiers[0].num_postings(), 4 * (tiers[1].num_postings() + tiers[2].num_postings()))
      << tiers[0].num_postings() << " " << tiers[1].num_postings() << " "
      << tiers[2].num_postings();
  const auto before = AnswersById(*c);
  ASSERT_TRUE(c->MaintainIndex({.full = true, .size_tiered = true}).ok());
  EXPECT_EQ(Tiers(*c), 1u);
  EXPECT_EQ(c->index().num_dead_postings(), 0u);
  EXPECT_EQ(AnswersById(*c), before);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
}

TEST_F(CollectionMergeTest, ManySmallCommitsWithMergesInstalledOnTheWay) {
  auto c = CreateAndOpen();
  Commit(c.get(), Base());
  for (int i = 0; i < 30; ++i) {
    if (i % 7 == 6) {
      Commit(c.get(), {}, {"base" + std::to_string(i)});
    } else if (i % 7 == 5) {
      Commit(c.get(), {{"base" + std::to_string(i + 30), "modified w" + std::to_string(i)}});
    } else {
      Commit(c.get(), {Small(i)});
    }
    ASSERT_TRUE(c->Verify().ok()) << i;
    ExpectIndexEqualsRebuild(*c);
    EXPECT_LE(Tiers(*c), 12u);
  }
  ExpectReaderExact(*c);
  EXPECT_GT(env_.merges, 0);
  ASSERT_TRUE(c->MaintainIndex().ok());
  EXPECT_LE(Tiers(*c), 4u);
  ExpectIndexEqualsRebuild(*c);
  // Closing a writer installs its running merge: a reopened one agrees.
  const std::vector<uint32_t> live = c->LiveDocuments();
  c.reset();
  auto reader = Collection::Open(Dir(), {});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->LiveDocuments(), live);
  ASSERT_TRUE((*reader)->Verify().ok());
}

// Back-pressure: a merge slower than the commits never lets the tier count
// pass max_index_tiers; when the running merge's tiers reach the bound (here
// 3: its run is tiers 1 and 2 of 3), the commit that would pass it waits for
// the merge; when merges fail outright, commits merge themselves.
TEST_F(CollectionMergeTest, SlowOrFailingMergesKeepTheTierCountBounded) {
  auto c = CreateAndOpen(/*max_tiers=*/3);
  Commit(c.get(), Base());
  env_.Close();
  // The merge started by the third tier is stuck at the gate: each commit
  // adds a tier, up to the bound.
  for (int i = 0; i < 2; ++i) {
    Commit(c.get(), {Small(i)});
    EXPECT_EQ(Tiers(*c), static_cast<uint64_t>(i) + 2);
  }
  ASSERT_EQ(Tiers(*c), 3u);
  ASSERT_TRUE(env_.WaitForMerges(1));
  // The next commit must wait for the merge: the gate opens 200 ms later.
  std::atomic<bool> opened{false};
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    opened = true;
    env_.Open();
  });
  Commit(c.get(), {Small(2)});
  EXPECT_TRUE(opened);  // it returned only after the merge could finish
  EXPECT_LE(Tiers(*c), 3u);
  opener.join();
  for (int i = 3; i < 16; ++i) {
    Commit(c.get(), {Small(i)});
    EXPECT_LE(Tiers(*c), 3u) << i;
  }
  ExpectIndexEqualsRebuild(*c);

  env_.failures = 1000;
  for (int i = 16; i < 28; ++i) {
    Commit(c.get(), {Small(i)});
    EXPECT_LE(Tiers(*c), 3u) << i;
  }
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  // The failures are reported by MaintainIndex, not by the commits (whose
  // own work was durable); the merge file never stays behind.
  Status maintained = c->MaintainIndex();
  EXPECT_EQ(maintained.code(), StatusCode::kIoError) << maintained;
  EXPECT_THAT(maintained.message(), HasSubstr("injected failure"));
  for (const std::string& f : DataFiles(Dir())) EXPECT_FALSE(f.starts_with("index-merge")) << f;
  env_.failures = 0;
  ASSERT_TRUE(c->MaintainIndex().ok());
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
}

// Session 20: at the bound (4) a commit no longer waits for a running merge
// whose tiers end below it: it merges the tiers committed since the merge
// started with its own and returns while the merge is still held at its
// gate; the merge is installed later over its own run, and every view
// stays exact throughout.
TEST_F(CollectionMergeTest, ACommitAtTheBoundMergesOnlyTheTiersSinceTheRunningMerge) {
  auto c = CreateAndOpen(/*max_tiers=*/4);
  Commit(c.get(), Base());
  env_.Close();
  // The merge of tiers 1 and 2 starts with the third tier and is stuck at
  // the gate; the fourth tier is committed meanwhile.
  for (int i = 0; i < 3; ++i) {
    Commit(c.get(), {Small(i)});
    EXPECT_EQ(Tiers(*c), static_cast<uint64_t>(i) + 2);
  }
  ASSERT_EQ(Tiers(*c), 4u);
  ASSERT_TRUE(env_.WaitForMerges(1));
  const std::vector<uint64_t> run = {c->index().tiers()[1].num_postings(),
                                     c->index().tiers()[2].num_postings()};
  // The gate opens 20 s later at the earliest (a commit that waited for the
  // merge would return only then).
  std::atomic<bool> opened{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread opener([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return done; });
    opened = true;
    env_.Open();
  });
  for (int i = 3; i < 8; ++i) {
    Commit(c.get(), {Small(i)},
           i == 5 ? std::vector<std::string>{"one1"} : std::vector<std::string>{});
    EXPECT_FALSE(opened) << i;  // returned while the merge is held
    EXPECT_EQ(Tiers(*c), 4u) << i;
    EXPECT_TRUE(c->index_merge_pending()) << i;
    // The merge's run is untouched; the tiers after it became one.
    EXPECT_EQ(c->index().tiers()[1].num_postings(), run[0]) << i;
    EXPECT_EQ(c->index().tiers()[2].num_postings(), run[1]) << i;
    ASSERT_TRUE(c->Verify().ok()) << i;
    ExpectIndexEqualsRebuild(*c);
  }
  ExpectReaderExact(*c);
  EXPECT_EQ(env_.merges, 1);
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  opener.join();
  // Installed over its run (the tier committed since stays), then the policy.
  const uint64_t generation = c->generation();
  ASSERT_TRUE(c->MaintainIndex().ok());
  EXPECT_GT(c->generation(), generation);
  EXPECT_LT(Tiers(*c), 4u);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  for (const std::string& f : DataFiles(Dir())) EXPECT_FALSE(f.starts_with("index-merge")) << f;
}

// A commit that only removes adds no tier, so at the bound (3), with the
// running merge's run ending at it, it does not wait for that merge (it did:
// the tier count was counted with a new tier).
TEST_F(CollectionMergeTest, ARemovalAtTheBoundDoesNotWaitForTheRunningMerge) {
  auto c = CreateAndOpen(/*max_tiers=*/3);
  Commit(c.get(), Base());
  env_.Close();
  // The merge of tiers 1 and 2 starts with the third tier, held at the gate.
  for (int i = 0; i < 2; ++i) Commit(c.get(), {Small(i)});
  ASSERT_EQ(Tiers(*c), 3u);
  ASSERT_TRUE(env_.WaitForMerges(1));
  // The gate opens 20 s later at the earliest (a commit that waited for the
  // merge would return only then).
  std::atomic<bool> opened{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread opener([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return done; });
    opened = true;
    env_.Open();
  });
  const CommitResult removed = Commit(c.get(), {}, {"base7", "one0"});
  EXPECT_EQ(removed.removed, 2u);
  EXPECT_FALSE(opened);  // returned while the merge is held
  EXPECT_EQ(Tiers(*c), 3u);
  EXPECT_TRUE(c->index_merge_pending());
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  opener.join();
  ASSERT_TRUE(c->MaintainIndex().ok());
  EXPECT_LT(Tiers(*c), 3u);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  ExpectReaderExact(*c);
}

TEST_F(CollectionMergeTest, MaxIndexTiersBelowTwoIsRefusedAndReadersCannotMaintain) {
  ASSERT_TRUE(Collection::Create(Dir(), *PresetRecipe("default"), {}).ok());
  Collection::OpenOptions options;
  options.mode = Collection::Mode::kReadWrite;
  options.max_index_tiers = 1;
  Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), options);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("max_index_tiers (1) must be at least 2"));
  Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->MaintainIndex().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace neardup
