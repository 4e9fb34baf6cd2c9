// Crash safety at every file operation (issue 11, section 2): a writer runs
// commits (adds, a modification, a removal), the background merges of the
// index tiers they start, and a compaction through a
// FaultInjectionEnv that stops the machine at the k-th file operation, for
// every k; the env then drops every write not synced (SimulateCrash). After
// each crash the collection must open, pass Verify(), and hold exactly the
// last acknowledged commit or the one after it. The SQLite catalog keeps its
// own durability (synchronous=FULL); what this test checks is that our
// files are durable before the catalog names them and that nothing is
// deleted while a commit can still need it.
//
// A full disk (ENOSPC) or an I/O error (EIO) while writing fails the commit
// with a clear error and leaves the collection at its last commit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fault_injection_env.h"
#include "neardup/collection.h"
#include "util/mix.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;
using testing::FaultInjectionEnv;

const std::set<std::string> kUntracked = {"catalog.db", "catalog.db-wal", "catalog.db-shm", "LOCK"};

std::vector<uint32_t> Chunks(uint64_t seed) {
  std::set<uint32_t> chunks;
  internal::SplitMix64 rng(seed);
  for (int i = 0; i < 20; ++i) chunks.insert(static_cast<uint32_t>(rng.Next() % 200));
  return {chunks.begin(), chunks.end()};
}

// One step: upserts (id, content seed) and removals; a step of nothing but
// "compact" compacts.
struct Step {
  std::vector<std::pair<std::string, uint64_t>> upserts;
  std::vector<std::string> removals;
  bool compact = false;
};

const std::vector<Step>& Steps() {
  static const std::vector<Step> steps = {
      {{{"a", 1}, {"b", 2}, {"c", 3}}, {}, false},  // merged with the base's tier
      {{{"f", 7}}, {}, false},                      // a second index tier, alone
      {{}, {"f"}, false},  // a removal: the emptied tier is dropped, no file written
      {{{"g", 8}}, {}, false},
      {{{"d", 4}, {"a", 5}}, {"b"}, false},  // add, modify a, remove b; tiers merged
      {{}, {}, true},                        // compact
      {{{"e", 6}}, {"c"}, false},
      {{}, {"d"}, false},  // a removal that only masks: no index file
  };
  return steps;
}

// id -> content seed after the first `count` steps.
std::map<std::string, uint64_t> Expected(size_t count) {
  std::map<std::string, uint64_t> state = {{"base", 99}};
  for (size_t s = 0; s < count; ++s) {
    for (const auto& [id, seed] : Steps()[s].upserts) state[id] = seed;
    for (const std::string& id : Steps()[s].removals) state.erase(id);
  }
  return state;
}

Status RunStep(Collection& c, const Step& step) {
  if (step.compact) return c.Compact();
  std::vector<std::string> texts;
  std::vector<std::vector<uint32_t>> chunks;
  for (const auto& [id, seed] : step.upserts) {
    texts.push_back("text " + std::to_string(seed));
    chunks.push_back(Chunks(seed));
  }
  std::vector<IncomingDocument> docs;
  for (size_t i = 0; i < step.upserts.size(); ++i) {
    docs.push_back({step.upserts[i].first, step.upserts[i].first, texts[i], chunks[i], 0});
  }
  return c.Commit(docs, step.removals).status();
}

// The state of a collection as id -> content seed (read back from its texts).
std::map<std::string, uint64_t> State(const Collection& c) {
  std::map<std::string, uint64_t> state;
  Result<std::vector<DocumentInfo>> docs = c.ListDocuments();
  EXPECT_TRUE(docs.ok());
  for (const DocumentInfo& d : *docs) {
    Result<std::string> text = c.Text(d.doc);
    EXPECT_TRUE(text.ok()) << text.status();
    if (text.ok()) state[d.id] = std::stoull(text->substr(5));
    Result<std::span<const uint32_t>> chunks = c.Chunks(d.doc);
    EXPECT_TRUE(chunks.ok());
    if (text.ok() && chunks.ok()) {
      EXPECT_TRUE(std::ranges::equal(*chunks, Chunks(state[d.id])));
    }
  }
  return state;
}

class CrashPointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::error_code ec;
    root_ = (fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path()) /
            ("neardup_crash_points_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    base_ = (root_ / "base").string();
    ASSERT_TRUE(Collection::Create(base_, *PresetRecipe("default"), {}).ok());
    auto c = Collection::Open(base_, {.mode = Collection::Mode::kReadWrite, .clock = {}});
    ASSERT_TRUE(c.ok());
    const std::vector<uint32_t> chunks = Chunks(99);
    const std::vector<IncomingDocument> docs = {{"base", "base", "text 99", chunks, 0}};
    ASSERT_TRUE((*c)->Commit(docs, {}).ok());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string Fresh() {
    const std::string dir = (root_ / "work").string();
    fs::remove_all(dir);
    fs::copy(base_, dir, fs::copy_options::recursive);
    return dir;
  }
  Result<std::unique_ptr<Collection>> OpenWith(const std::string& dir, Env* env,
                                               uint32_t max_index_tiers = 12) {
    Collection::OpenOptions options;
    options.mode = Collection::Mode::kReadWrite;
    options.env = env;
    options.max_index_tiers = max_index_tiers;
    return Collection::Open(dir, options);
  }
  // A collection of three index tiers (commits of 16, 4 and 1 documents,
  // each older tier at least 4 times the next) with dead postings (a
  // removal), in `dir`; returns its documents.
  std::map<std::string, uint64_t> PrepareThreeTiers(const std::string& dir);

  // Every crash point of the steps (every `stride`-th), with or without
  // MaintainIndex after each commit (RunSteps).
  void CheckEveryCrashPoint(bool maintain, uint64_t stride);

  fs::path root_;
  std::string base_;
};

std::map<std::string, uint64_t> CrashPointsTest::PrepareThreeTiers(const std::string& dir) {
  fs::copy(base_, dir, fs::copy_options::recursive);
  std::map<std::string, uint64_t> expected = {{"base", 99}};
  auto c = OpenWith(dir, Env::Default());
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return expected;
  uint64_t seed = 1000;
  for (int size : {16, 4, 1}) {
    Step step;
    for (int i = 0; i < size; ++i, ++seed)
      step.upserts.push_back({"d" + std::to_string(seed), seed});
    EXPECT_TRUE(RunStep(**c, step).ok());
    EXPECT_TRUE((*c)->MaintainIndex().ok());
    for (const auto& [id, s] : step.upserts) expected[id] = s;
  }
  EXPECT_TRUE(RunStep(**c, {{}, {"d1001"}, false}).ok());
  expected.erase("d1001");
  EXPECT_TRUE((*c)->MaintainIndex().ok());
  EXPECT_EQ((*c)->Stats()->index_tiers, 3u);
  EXPECT_GT((*c)->Stats()->index_dead_postings, 0u);
  return expected;
}

// Runs the steps from `first` on `c`, counting the acknowledged commits.
// `maintain`: after each commit, MaintainIndex waits for the background
// merge the commit started and installs it, so the merge's file operations
// come at a fixed place in the run and every crash point inside a
// background merge (its file, the rename, the manifest switch, the unlink
// of the replaced tiers) is visited. Otherwise the merge races the next
// commit, as in a server.
void RunSteps(Collection& c, size_t first, bool maintain, size_t* acknowledged) {
  for (size_t s = first; s < Steps().size(); ++s) {
    if (!RunStep(c, Steps()[s]).ok()) return;
    ++*acknowledged;
    if (maintain && !c.MaintainIndex().ok()) return;
  }
}

void CrashPointsTest::CheckEveryCrashPoint(bool maintain, uint64_t stride) {
  // How many file operations the whole run takes, without a crash.
  uint64_t total = 0;
  {
    FaultInjectionEnv env(kUntracked);
    const std::string dir = Fresh();
    auto c = OpenWith(dir, &env);
    ASSERT_TRUE(c.ok()) << c.status();
    // The run covers the index's tiers: some commits leave several tiers,
    // later ones merge them, a compaction leaves one.
    std::vector<uint64_t> tiers;
    for (const Step& step : Steps()) {
      ASSERT_TRUE(RunStep(**c, step).ok());
      if (maintain) {
        ASSERT_TRUE((*c)->MaintainIndex().ok());
      }
      tiers.push_back((*c)->Stats()->index_tiers);
    }
    if (maintain) {
      EXPECT_EQ(tiers, (std::vector<uint64_t>{1, 2, 1, 2, 1, 1, 1, 1}));
    }
    ASSERT_TRUE((*c)->MaintainIndex().ok());
    total = env.operations();
    EXPECT_EQ(State(**c), Expected(Steps().size()));
  }
  ASSERT_GT(total, 20u);
  for (uint64_t k = 1; k <= total + 1; k += stride) {
    FaultInjectionEnv env(kUntracked);
    env.CrashAtOperation(k);
    const std::string dir = Fresh();
    size_t acknowledged = 0;
    {
      auto c = OpenWith(dir, &env);
      ASSERT_TRUE(c.ok()) << "crash point " << k << ": " << c.status();
      RunSteps(**c, 0, maintain, &acknowledged);
    }  // the process "dies": its collection is closed with the env stopped
    env.SimulateCrash();
    auto c = Collection::Open(dir, {.mode = Collection::Mode::kReadWrite, .clock = {}});
    ASSERT_TRUE(c.ok()) << "crash point " << k << ": " << c.status();
    Status verified = (*c)->Verify();
    EXPECT_TRUE(verified.ok()) << "crash point " << k << ": " << verified;
    const auto state = State(**c);
    const bool last = state == Expected(acknowledged);
    const bool next = acknowledged < Steps().size() && state == Expected(acknowledged + 1);
    EXPECT_TRUE(last || next) << "crash point " << k << " after " << acknowledged
                              << " acknowledged steps";
    // And it keeps working: the rest of the steps on the recovered collection.
    const size_t from = last ? acknowledged : acknowledged + 1;
    size_t applied = 0;
    RunSteps(**c, from, maintain, &applied);
    ASSERT_EQ(from + applied, Steps().size()) << "crash point " << k;
    ASSERT_TRUE((*c)->MaintainIndex().ok()) << "crash point " << k;
    EXPECT_EQ(State(**c), Expected(Steps().size())) << "crash point " << k;
  }
}

TEST_F(CrashPointsTest, EveryCrashPointLeavesTheLastOrTheNextCommit) {
  CheckEveryCrashPoint(/*maintain=*/true, /*stride=*/1);
}

// The background merge racing the next commits (the order of their file
// operations varies from run to run): every fifth crash point.
TEST_F(CrashPointsTest, ACrashWhileAMergeRacesTheNextCommitLeavesTheLastOrTheNext) {
  CheckEveryCrashPoint(/*maintain=*/false, /*stride=*/5);
}

TEST_F(CrashPointsTest, AFullDiskFailsTheCommitAndKeepsTheLastOne) {
  for (const bool enospc : {true, false}) {
    FaultInjectionEnv env(kUntracked);
    env.FailWritesAfter(
        100, enospc ? ResourceExhaustedError("write seg-2.nds.tmp: No space left on device")
                    : IoError("write seg-2.nds.tmp: Input/output error"));
    const std::string dir = Fresh();
    {
      auto c = OpenWith(dir, &env);
      ASSERT_TRUE(c.ok());
      Status status = RunStep(**c, Steps()[0]);
      EXPECT_EQ(status.code(), enospc ? StatusCode::kResourceExhausted : StatusCode::kIoError);
      EXPECT_NE(status.message().find(enospc ? "No space left" : "Input/output"), std::string::npos)
          << status;
      // The same collection object is still at its last commit.
      EXPECT_EQ(State(**c), Expected(0));
      EXPECT_TRUE((*c)->Verify().ok());
    }
    for (const auto& entry : fs::directory_iterator(dir + "/data")) {
      EXPECT_NE(entry.path().extension(), ".tmp") << "a temporary file was left";
    }
    auto c = Collection::Open(dir, {});
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE((*c)->Verify().ok());
    EXPECT_EQ(State(**c), Expected(0));
  }
}

// A full merge of the index tiers (MaintainIndex({.full = true}): the
// server's idle merge, `neardup index maintain --full`) crashed at every
// file operation, run on the calling thread or on the merge thread
// (.wait = false, installed when the writer closes): the collection opens,
// passes Verify, holds the same documents, and has its tiers from before
// or the one merged tier.
TEST_F(CrashPointsTest, EveryCrashPointOfAFullMergeLeavesTheTiersBeforeOrOne) {
  // Commits of 16, 4 and 1 documents and a removal: three tiers (each
  // older tier at least 4 times the next) and dead postings.
  const std::string prepared = (root_ / "prepared").string();
  const std::map<std::string, uint64_t> expected = PrepareThreeTiers(prepared);
  if (HasFatalFailure()) return;
  for (const bool wait : {true, false}) {
    uint64_t total = 0;
    {
      FaultInjectionEnv env(kUntracked);
      const std::string dir = (root_ / "work").string();
      fs::remove_all(dir);
      fs::copy(prepared, dir, fs::copy_options::recursive);
      auto c = OpenWith(dir, &env);
      ASSERT_TRUE(c.ok());
      ASSERT_TRUE((*c)->MaintainIndex({.full = true, .wait = wait}).ok());
      ASSERT_TRUE((*c)->MaintainIndex().ok());  // installs the background one
      EXPECT_EQ((*c)->Stats()->index_tiers, 1u);
      total = env.operations();
    }
    ASSERT_GE(total, 4u);  // the merge file, its sync, the rename, the directory sync...
    for (uint64_t k = 1; k <= total + 1; ++k) {
      FaultInjectionEnv env(kUntracked);
      env.CrashAtOperation(k);
      const std::string dir = (root_ / "work").string();
      fs::remove_all(dir);
      fs::copy(prepared, dir, fs::copy_options::recursive);
      {
        auto c = OpenWith(dir, &env);
        ASSERT_TRUE(c.ok()) << "crash point " << k << ": " << c.status();
        (*c)->MaintainIndex({.full = true, .wait = wait}).IgnoreError();
      }  // the process "dies"; a background merge is waited for by the close
      env.SimulateCrash();
      auto c = Collection::Open(dir, {.mode = Collection::Mode::kReadWrite, .clock = {}});
      ASSERT_TRUE(c.ok()) << "crash point " << k << ": " << c.status();
      Status verified = (*c)->Verify();
      EXPECT_TRUE(verified.ok()) << "crash point " << k << ": " << verified;
      EXPECT_EQ(State(**c), expected) << "crash point " << k;
      const uint64_t tiers = (*c)->Stats()->index_tiers;
      EXPECT_TRUE(tiers == 3 || tiers == 1) << "crash point " << k << ": " << tiers << " tiers";
      // And it keeps working: the full merge again, then a commit.
      ASSERT_TRUE((*c)->MaintainIndex({.full = true}).ok()) << "crash point " << k;
      EXPECT_EQ((*c)->Stats()->index_tiers, 1u);
      EXPECT_TRUE((*c)->Verify().ok()) << "crash point " << k;
      for (const auto& entry : fs::directory_iterator(dir + "/data")) {
        EXPECT_NE(entry.path().filename(), "index-merge.ndi") << "crash point " << k;
      }
    }
  }
}

// FaultInjectionEnv whose background merge (its file, data/index-merge.ndi)
// waits at a gate until Open() (at most 20 s) before its first file
// operation, so that the writer's commits meanwhile come first, in a fixed
// order of file operations.
class MergeGateFaultEnv : public FaultInjectionEnv {
 public:
  using FaultInjectionEnv::FaultInjectionEnv;
  void Open() {
    {
      std::lock_guard<std::mutex> lock(gate_mu_);
      open_ = true;
    }
    gate_cv_.notify_all();
  }
  // Waits (at most 20 s) until a merge is at the gate.
  bool WaitForMerge() {
    std::unique_lock<std::mutex> lock(gate_mu_);
    return gate_cv_.wait_for(lock, std::chrono::seconds(20), [this] { return waiting_ > 0; });
  }
  int passed() {
    std::lock_guard<std::mutex> lock(gate_mu_);
    return passed_;
  }
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    if (fs::path(path).filename().string().starts_with("index-merge")) {
      std::unique_lock<std::mutex> lock(gate_mu_);
      ++waiting_;
      gate_cv_.notify_all();
      gate_cv_.wait_for(lock, std::chrono::seconds(20), [this] { return open_; });
      ++passed_;
    }
    return FaultInjectionEnv::NewWritableFile(path);
  }

 private:
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool open_ = false;
  int waiting_ = 0;
  int passed_ = 0;
};

// Session 20: commits past max_index_tiers while a full merge runs (the
// server's idle merge, held at its gate) merge only the tiers committed
// since it started, without waiting for it; crashed at every file
// operation of those commits, of the merge and of its installation, the
// collection opens, passes Verify and holds the last acknowledged commit
// or the next, and then goes on.
TEST_F(CrashPointsTest, EveryCrashPointOfCommitsPastARunningMergeLeavesTheLastOrTheNext) {
  const std::string prepared = (root_ / "prepared").string();
  std::map<std::string, uint64_t> prepared_state = PrepareThreeTiers(prepared);
  if (HasFatalFailure()) return;
  constexpr uint32_t kMaxTiers = 4;
  // The running full merge's run is tiers 0-2; the first commit adds a
  // fourth tier, the next two merge theirs with it.
  const std::vector<Step> steps = {
      {{{"n1", 2001}}, {}, false},
      {{{"n2", 2002}}, {}, false},
      {{{"n3", 2003}}, {"d1000"}, false},
  };
  const auto expected = [&](size_t count) {
    std::map<std::string, uint64_t> state = prepared_state;
    for (size_t s = 0; s < count; ++s) {
      for (const auto& [id, seed] : steps[s].upserts) state[id] = seed;
      for (const std::string& id : steps[s].removals) state.erase(id);
    }
    return state;
  };
  const auto fresh = [&] {
    const std::string dir = (root_ / "work").string();
    fs::remove_all(dir);
    fs::copy(prepared, dir, fs::copy_options::recursive);
    return dir;
  };
  uint64_t total = 0;
  {
    MergeGateFaultEnv env(kUntracked);
    auto c = OpenWith(fresh(), &env, kMaxTiers);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->MaintainIndex({.full = true, .wait = false}).ok());
    ASSERT_TRUE(env.WaitForMerge());
    for (const Step& step : steps) {
      ASSERT_TRUE(RunStep(**c, step).ok());
      EXPECT_EQ((*c)->Stats()->index_tiers, kMaxTiers);
      EXPECT_TRUE((*c)->index_merge_pending());
    }
    ASSERT_EQ(env.passed(), 0);  // no commit waited for the merge
    env.Open();
    ASSERT_TRUE((*c)->MaintainIndex().ok());  // installs it: one tier, and the commits' one
    EXPECT_EQ((*c)->Stats()->index_tiers, 2u);
    EXPECT_EQ(State(**c), expected(steps.size()));
    total = env.operations();
  }
  ASSERT_GE(total, 10u);
  for (uint64_t k = 1; k <= total + 1; ++k) {
    MergeGateFaultEnv env(kUntracked);
    env.CrashAtOperation(k);
    const std::string dir = fresh();
    size_t acknowledged = 0;
    {
      auto c = OpenWith(dir, &env, kMaxTiers);
      ASSERT_TRUE(c.ok()) << "crash point " << k << ": " << c.status();
      (*c)->MaintainIndex({.full = true, .wait = false}).IgnoreError();
      ASSERT_TRUE(env.WaitForMerge()) << "crash point " << k;
      for (const Step& step : steps) {
        if (!RunStep(**c, step).ok()) break;
        ++acknowledged;
      }
      env.Open();
      (*c)->MaintainIndex().IgnoreError();
    }  // the process "dies"
    env.SimulateCrash();
    auto c = OpenWith(dir, Env::Default(), kMaxTiers);
    ASSERT_TRUE(c.ok()) << "crash point " << k << ": " << c.status();
    Status verified = (*c)->Verify();
    EXPECT_TRUE(verified.ok()) << "crash point " << k << ": " << verified;
    const auto state = State(**c);
    const bool last = state == expected(acknowledged);
    const bool next = acknowledged < steps.size() && state == expected(acknowledged + 1);
    EXPECT_TRUE(last || next) << "crash point " << k << " after " << acknowledged
                              << " acknowledged commits";
    EXPECT_LE((*c)->Stats()->index_tiers, kMaxTiers) << "crash point " << k;
    for (size_t s = last ? acknowledged : acknowledged + 1; s < steps.size(); ++s) {
      ASSERT_TRUE(RunStep(**c, steps[s]).ok()) << "crash point " << k;
    }
    ASSERT_TRUE((*c)->MaintainIndex({.full = true}).ok()) << "crash point " << k;
    EXPECT_EQ((*c)->Stats()->index_tiers, 1u);
    EXPECT_TRUE((*c)->Verify().ok()) << "crash point " << k;
    EXPECT_EQ(State(**c), expected(steps.size())) << "crash point " << k;
    for (const auto& entry : fs::directory_iterator(dir + "/data")) {
      EXPECT_NE(entry.path().filename(), "index-merge.ndi") << "crash point " << k;
    }
  }
}

}  // namespace
}  // namespace neardup
