// Snapshots (issue 11 section 1, issue 12 item 6): reader threads query
// their pinned view continuously while a writer adds, modifies, removes and
// compacts. Every answer must equal a brute-force scan of the view the
// reader pinned (its live documents' chunk sets, read from its segments),
// and every match must have its external id in that same view -- the
// catalog and the files of one commit, never a mixture. Bounded in time
// (about two seconds of writing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

constexpr uint32_t kUniverse = 400;  // chunk ids: a small universe, so documents overlap

std::vector<uint32_t> RandomChunks(internal::SplitMix64& rng) {
  std::set<uint32_t> chunks;
  const int count = 5 + static_cast<int>(rng.Next() % 40);
  for (int i = 0; i < count; ++i) chunks.insert(static_cast<uint32_t>(rng.Next() % kUniverse));
  return {chunks.begin(), chunks.end()};
}

// What one reader checks on the view it holds; "" or the first breach.
std::string CheckView(const Collection& c, internal::SplitMix64& rng, uint64_t* queries) {
  const std::vector<uint32_t> live = c.LiveDocuments();
  std::map<uint32_t, std::vector<uint32_t>> chunks;
  for (uint32_t doc : live) {
    Result<std::span<const uint32_t>> span = c.Chunks(doc);
    if (!span.ok()) return "chunks of a live document: " + span.status().ToString();
    chunks[doc].assign(span->begin(), span->end());
  }
  Result<std::vector<DocumentInfo>> listed = c.ListDocuments();
  if (!listed.ok() || listed->size() != live.size()) return "catalog and files disagree";
  const TieredChunkIndex index = c.index();
  ContainmentSearcher searcher(index);
  for (int q = 0; q < 4; ++q) {
    std::vector<uint32_t> query = RandomChunks(rng);
    std::vector<ContainmentMatch> got =
        searcher.Search(query, {.max_document_frequency = 0, .top_n = SIZE_MAX});
    std::map<uint32_t, uint32_t> expected;  // doc -> shared
    for (const auto& [doc, set] : chunks) {
      std::vector<uint32_t> both;
      std::set_intersection(query.begin(), query.end(), set.begin(), set.end(),
                            std::back_inserter(both));
      if (!both.empty()) expected[doc] = static_cast<uint32_t>(both.size());
    }
    std::map<uint32_t, uint32_t> found;
    std::vector<uint32_t> docs;
    for (const ContainmentMatch& m : got) {
      found[m.doc] = m.shared;
      docs.push_back(m.doc);
    }
    if (found != expected) return "search differs from brute force on the pinned view";
    Result<std::map<uint32_t, std::string>> ids = c.ExternalIds(docs);
    if (!ids.ok()) return "ids: " + ids.status().ToString();
    for (const auto& [doc, id] : *ids) {
      if (id.empty()) return "empty id for document " + std::to_string(doc);
      Result<std::optional<DocumentInfo>> info = c.FindDocument(id);
      if (!info.ok() || !info->has_value() || (*info)->doc != doc) return "id of another view";
    }
    ++*queries;
  }
  return "";
}

TEST(CollectionSnapshotTest, ReadersSeeOneCommitWhileAWriterChangesEverything) {
  test_support::TempDir temp;
  const std::string dir = temp.Path("c");
  ASSERT_TRUE(Collection::Create(dir, *PresetRecipe("default"), {}).ok());
  auto writer = Collection::Open(dir, {.mode = Collection::Mode::kReadWrite, .clock = {}});
  ASSERT_TRUE(writer.ok()) << writer.status();

  constexpr int kReaders = 3;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> commits{0};
  std::vector<std::atomic<uint64_t>> views(kReaders);  // distinct commits each reader checked
  std::thread write([&] {
    struct Done {
      std::atomic<bool>* done;
      ~Done() { *done = true; }  // also when an assertion returns early
    } set_done{&done};
    internal::SplitMix64 rng(1);
    std::vector<std::string> live;
    int next_id = 0;
    // About two seconds, but at least 30 commits and until every reader has
    // checked a few views (a loaded machine slows either side), at most 20 s.
    const auto start = std::chrono::steady_clock::now();
    auto enough = [&](int step) {
      const auto elapsed = std::chrono::steady_clock::now() - start;
      if (elapsed > std::chrono::seconds(20)) return true;
      if (step < 30 || elapsed < std::chrono::seconds(2)) return false;
      for (const std::atomic<uint64_t>& v : views) {
        if (v.load() < 3) return false;
      }
      return true;
    };
    for (int step = 0; step < 2000 && !enough(step); ++step) {
      std::vector<std::vector<uint32_t>> chunk_sets;
      std::vector<std::string> ids, texts;
      for (int i = 0; i < 3; ++i) ids.push_back("d" + std::to_string(next_id++));
      if (step % 4 == 3 && !live.empty()) ids.push_back(live[rng.Next() % live.size()]);  // modify
      for (const std::string& id : ids) {
        chunk_sets.push_back(RandomChunks(rng));
        texts.push_back(id + " text " + std::to_string(step));
      }
      std::vector<IncomingDocument> docs;
      for (size_t i = 0; i < ids.size(); ++i) {
        docs.push_back({ids[i], ids[i], texts[i], chunk_sets[i], 0});
      }
      std::vector<std::string> removals;
      if (step % 3 == 2 && live.size() > 4) {
        size_t k = rng.Next() % live.size();
        if (std::find(ids.begin(), ids.end(), live[k]) == ids.end()) {
          removals.push_back(live[k]);
          live.erase(live.begin() + static_cast<ptrdiff_t>(k));
        }
      }
      Result<CommitResult> r = (*writer)->Commit(docs, removals);
      ASSERT_TRUE(r.ok()) << r.status();
      for (int i = 0; i < 3; ++i) live.push_back(ids[i]);
      if (step % 10 == 9) {
        ASSERT_TRUE((*writer)->Compact().ok());
      }
      ++commits;
    }
  });

  std::vector<std::string> failures(kReaders);
  std::vector<uint64_t> queries(kReaders, 0);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      internal::SplitMix64 rng(100 + r);
      auto c = Collection::Open(dir, {});
      if (!c.ok()) {
        failures[r] = c.status().ToString();
        return;
      }
      uint64_t last_generation = UINT64_MAX;
      while (!done && failures[r].empty()) {
        Status refreshed = (*c)->Refresh();
        if (!refreshed.ok()) {
          failures[r] = "refresh: " + refreshed.ToString();
          break;
        }
        const bool moved = (*c)->generation() != last_generation;
        last_generation = (*c)->generation();
        // The same pinned view, queried several times while the writer
        // moves on.
        for (int round = 0; round < 3 && failures[r].empty(); ++round) {
          failures[r] = CheckView(**c, rng, &queries[r]);
        }
        if (moved) ++views[r];
      }
    });
  }
  write.join();
  for (std::thread& t : readers) t.join();
  for (int r = 0; r < kReaders; ++r) {
    EXPECT_EQ(failures[r], "") << "reader " << r;
    EXPECT_GT(queries[r], 0u);
    EXPECT_GT(views[r].load(), 1u) << "reader " << r << " never saw the writer move";
  }
  EXPECT_GT(commits.load(), 10u);
  EXPECT_TRUE((*writer)->Verify().ok());
}

// A view keeps answering from its commit after the writer compacted the
// segments it maps away and replaced the index file it maps.
TEST(CollectionSnapshotTest, AViewOutlivesTheFilesItMaps) {
  test_support::TempDir temp;
  const std::string dir = temp.Path("c");
  ASSERT_TRUE(Collection::Create(dir, *PresetRecipe("default"), {}).ok());
  auto writer = Collection::Open(dir, {.mode = Collection::Mode::kReadWrite, .clock = {}});
  ASSERT_TRUE(writer.ok());
  const std::vector<uint32_t> a = {1, 2, 3}, b = {2, 3, 4};
  std::vector<IncomingDocument> first = {{"a", "a", "text a", a, 0}};
  std::vector<IncomingDocument> second = {{"b", "b", "text b", b, 0}};
  ASSERT_TRUE((*writer)->Commit(first, {}).ok());
  ASSERT_TRUE((*writer)->Commit(second, {}).ok());

  auto reader = Collection::Open(dir, {});
  ASSERT_TRUE(reader.ok());
  const TieredChunkIndex pinned = (*reader)->index();
  const std::vector<std::string> remove_a = {"a"};
  ASSERT_TRUE((*writer)->Commit({}, remove_a).ok());
  ASSERT_TRUE((*writer)->Compact().ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/data/seg-1.nds"));  // unlinked...

  // ...and still read through the view that maps it.
  EXPECT_THAT((*reader)->LiveDocuments(), ::testing::ElementsAre(0, 1));
  Result<std::string> text = (*reader)->Text(0);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "text a");
  EXPECT_EQ(pinned.Postings(2).size(), 2u);
  Result<std::optional<DocumentInfo>> info = (*reader)->FindDocument("a");
  ASSERT_TRUE(info.ok() && info->has_value());  // the catalog as of the view
  EXPECT_TRUE((*reader)->Verify().ok());

  ASSERT_TRUE((*reader)->Refresh().ok());
  EXPECT_THAT((*reader)->LiveDocuments(), ::testing::ElementsAre(1));
  info = (*reader)->FindDocument("a");
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->has_value());
  EXPECT_EQ((*reader)->index().Postings(2).size(), 1u);
  EXPECT_EQ(pinned.Postings(2).size(), 2u);  // a copy keeps its own arrays
}

}  // namespace
}  // namespace neardup
