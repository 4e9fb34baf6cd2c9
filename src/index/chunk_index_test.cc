#include "neardup/chunk_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "index/chunk_index_test_util.h"
#include "neardup/containment.h"
#include "neardup/similarity.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

using neardup::test_support::ReadFileBytes;
using neardup::test_support::WriteFileBytes;

using internal::testing::AsInput;
using internal::testing::BruteForce;
using internal::testing::BuildOrDie;
using internal::testing::Docs;
using internal::testing::RandomDocs;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

void ExpectPostingsMatch(const ChunkIndex& index, const Docs& docs) {
  std::map<uint32_t, std::vector<uint32_t>> expected;
  for (const auto& [doc, chunks] : docs) {
    for (uint32_t c : chunks) expected[c].push_back(doc);
  }
  ASSERT_EQ(index.num_keys(), expected.size());
  uint64_t postings = 0;
  for (const auto& [chunk, list] : expected) {
    EXPECT_THAT(index.Postings(chunk), ElementsAreArray(list)) << chunk;
    postings += list.size();
  }
  EXPECT_EQ(index.num_postings(), postings);
  EXPECT_TRUE(index.Postings(0xdeadbeef).empty());
  for (const auto& [doc, chunks] : docs) EXPECT_EQ(index.DocumentSize(doc), chunks.size());
}

class ChunkIndexFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
};

TEST(ChunkIndexTest, EmptyIndexFindsNothing) {
  ChunkIndex index;
  EXPECT_EQ(index.num_keys(), 0u);
  EXPECT_EQ(index.num_documents(), 0u);
  EXPECT_TRUE(index.Postings(7).empty());
  ContainmentSearcher searcher(index);
  std::vector<uint32_t> query = {1, 2, 3};
  EXPECT_TRUE(searcher.Search(query, {}).empty());
}

TEST(ChunkIndexTest, PostingsEqualALinearScan) {
  Docs docs = RandomDocs(1, 300);
  ChunkIndex index = BuildOrDie(docs);
  ExpectPostingsMatch(index, docs);
  EXPECT_EQ(index.num_documents(),
            std::count_if(docs.begin(), docs.end(), [](auto& d) { return !d.second.empty(); }));
}

TEST(ChunkIndexTest, LargeBucketsUseTheRadixPathAndStaySorted) {
  // 300 documents whose chunks all share the top 16 bits: one bucket of
  // thousands of postings, inserted in an order unrelated to the chunk order.
  Docs docs;
  for (uint32_t d = 0; d < 300; ++d) {
    std::set<uint32_t> chunks;
    for (uint32_t j = 0; j < 20; ++j) {
      chunks.insert(0x12340000u | static_cast<uint32_t>(internal::Mix64(d * 31 + j) & 0x1ff));
    }
    docs[299 - d] = {chunks.begin(), chunks.end()};
  }
  ExpectPostingsMatch(BuildOrDie(docs), docs);
}

TEST(ChunkIndexTest, RejectsBadInput) {
  std::vector<uint32_t> sorted = {1, 2, 3};
  std::vector<uint32_t> unsorted = {1, 3, 2};
  std::vector<uint32_t> repeated = {1, 1};
  std::vector<ChunkDocument> twice = {{4, sorted}, {4, sorted}};
  Result<ChunkIndex> a = ChunkIndex::Build(twice);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("document number 4 occurs twice"));
  std::vector<ChunkDocument> bad = {{0, unsorted}};
  EXPECT_THAT(ChunkIndex::Build(bad).status().message(), HasSubstr("not strictly ascending"));
  std::vector<ChunkDocument> dup = {{0, repeated}};
  EXPECT_FALSE(ChunkIndex::Build(dup).ok());
}

TEST(ChunkIndexTest, SearchEqualsBruteForceForEveryOption) {
  Docs docs = RandomDocs(2, 200);
  ChunkIndex index = BuildOrDie(docs);
  ContainmentSearcher searcher(index);
  for (uint32_t cap : {0u, 3u, 25u}) {
    for (size_t top_n : {size_t{1}, size_t{7}, size_t{1000}}) {
      for (double min : {0.0, 0.25, 1.0}) {
        ContainmentOptions options{cap, top_n, min};
        for (const auto& [doc, chunks] : docs) {
          ContainmentSearchStats stats;
          std::vector<ContainmentMatch> got = searcher.Search(chunks, options, doc, &stats);
          ASSERT_EQ(got, BruteForce(docs, chunks, options, doc))
              << "doc " << doc << " cap " << cap << " top " << top_n << " min " << min;
        }
      }
    }
  }
}

TEST(ChunkIndexTest, UncappedScoresAreExactContainment) {
  Docs docs = RandomDocs(3, 80);
  ChunkIndex index = BuildOrDie(docs);
  ContainmentSearcher searcher(index);
  for (const auto& [a, chunks_a] : docs) {
    for (const ContainmentMatch& m : searcher.Search(chunks_a, {0, 1000, 0.0}, a)) {
      const std::vector<uint32_t>& chunks_b = docs.at(m.doc);
      EXPECT_DOUBLE_EQ(m.a_in_b, Containment(chunks_a, chunks_b));
      EXPECT_DOUBLE_EQ(m.b_in_a, Containment(chunks_b, chunks_a));
    }
  }
}

TEST(ChunkIndexTest, CapCountsBoilerplateChunks) {
  Docs docs;
  for (uint32_t d = 0; d < 10; ++d) docs[d] = {1, 2, 100 + d};  // 1 and 2 in every document
  docs[10] = {1, 2, 100};
  ChunkIndex index = BuildOrDie(docs);
  EXPECT_EQ(index.CountKeysAbove(5), 2u);
  ContainmentSearcher searcher(index);
  ContainmentSearchStats stats;
  std::vector<ContainmentMatch> got = searcher.Search(docs[10], {5, 10, 0.0}, 10, &stats);
  EXPECT_EQ(stats.boilerplate_chunks, 2u);
  ASSERT_EQ(got.size(), 1u);  // only document 0 shares a non-boilerplate chunk
  EXPECT_EQ(got[0].doc, 0u);
  EXPECT_DOUBLE_EQ(got[0].a_in_b, 1.0 / 3);
}

TEST(ChunkIndexTest, MergeEqualsARebuild) {
  Docs base_docs = RandomDocs(4, 150);
  ChunkIndex base = BuildOrDie(base_docs);
  // Remove every third document, add new ones (odd numbers, interleaved with
  // the even numbers of the base) and a larger one past the end.
  std::vector<uint32_t> removed;
  Docs expected = base_docs;
  int i = 0;
  for (const auto& [doc, chunks] : base_docs) {
    if (i++ % 3 == 0) {
      removed.push_back(doc);
      expected.erase(doc);
    }
  }
  removed.push_back(99999);  // absent: ignored
  Docs added = RandomDocs(5, 60, 1);
  added[100000] = {5, 6, 7};
  for (const auto& [doc, chunks] : added) expected[doc] = chunks;
  Result<ChunkIndex> merged = ChunkIndex::Merge(base, removed, BuildOrDie(added));
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(merged->SameContents(BuildOrDie(expected)));
  ExpectPostingsMatch(*merged, expected);

  // Removing everything leaves an index equal to the empty one.
  std::vector<uint32_t> all;
  for (const auto& [doc, chunks] : expected) all.push_back(doc);
  Result<ChunkIndex> none = ChunkIndex::Merge(*merged, all, ChunkIndex());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->SameContents(ChunkIndex()));
  EXPECT_EQ(none->num_doc_slots(), 0u);
}

// The definition, by brute force: every document after the change that
// holds a changed chunk whose document frequency is on different sides of
// the cap before and after.
std::vector<uint32_t> CapCrossingOracle(const Docs& before, const Docs& after,
                                        const std::vector<std::vector<uint32_t>>& changed,
                                        uint32_t cap) {
  auto df = [](const Docs& docs, uint32_t chunk) {
    size_t n = 0;
    for (const auto& [doc, chunks] : docs)
      n += std::binary_search(chunks.begin(), chunks.end(), chunk);
    return n;
  };
  std::set<uint32_t> crossing;
  for (const std::vector<uint32_t>& chunks : changed) {
    for (uint32_t chunk : chunks) {
      if ((df(before, chunk) <= cap) == (df(after, chunk) <= cap)) continue;
      for (const auto& [doc, doc_chunks] : after) {
        if (std::binary_search(doc_chunks.begin(), doc_chunks.end(), chunk)) crossing.insert(doc);
      }
    }
  }
  return {crossing.begin(), crossing.end()};
}

TEST(ChunkIndexTest, CapCrossingDocumentsEqualsBruteForce) {
  const Docs before_docs = RandomDocs(8, 120);
  const ChunkIndex before = BuildOrDie(before_docs);
  Docs after_docs = before_docs;
  std::vector<std::vector<uint32_t>> changed;
  std::vector<uint32_t> removed;
  for (const auto& [doc, chunks] : before_docs) {
    if (doc % 5 == 0) {
      removed.push_back(doc);
      changed.push_back(chunks);
      after_docs.erase(doc);
    }
  }
  const Docs added = RandomDocs(9, 30, 1);
  for (const auto& [doc, chunks] : added) {
    after_docs[doc] = chunks;
    changed.push_back(chunks);
  }
  Result<ChunkIndex> after = ChunkIndex::Merge(before, removed, BuildOrDie(added));
  ASSERT_TRUE(after.ok());
  std::vector<std::span<const uint32_t>> spans(changed.begin(), changed.end());
  bool some_crossed = false;
  for (uint32_t cap : {0u, 3u, 10u, 25u, 60u}) {
    std::vector<uint32_t> got = CapCrossingDocuments(before, *after, spans, cap);
    // No cap counts every chunk: nothing crosses.
    const std::vector<uint32_t> want =
        cap == 0 ? std::vector<uint32_t>()
                 : CapCrossingOracle(before_docs, after_docs, changed, cap);
    EXPECT_EQ(got, want) << "cap " << cap;
    some_crossed = some_crossed || !got.empty();
  }
  EXPECT_TRUE(some_crossed);
}

TEST(ChunkIndexTest, MergeRejectsADocumentThatIsStillPresent) {
  Docs docs = {{3, {1, 2}}};
  Result<ChunkIndex> merged = ChunkIndex::Merge(BuildOrDie(docs), {}, BuildOrDie(docs));
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(), HasSubstr("document number 3"));
  // Modifying = removing then adding the same number is fine.
  std::vector<uint32_t> removed = {3};
  Docs changed = {{3, {2, 9}}};
  Result<ChunkIndex> ok = ChunkIndex::Merge(BuildOrDie(docs), removed, BuildOrDie(changed));
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->SameContents(BuildOrDie(changed)));
}

TEST_F(ChunkIndexFileTest, RoundTripIsIdentical) {
  Docs docs = RandomDocs(6, 120);
  ChunkIndex index = BuildOrDie(docs);
  ASSERT_TRUE(index.WriteFile(Path("a.idx")).ok());
  EXPECT_FALSE(std::filesystem::exists(Path("a.idx.tmp")));
  Result<ChunkIndex> opened = ChunkIndex::Open(Path("a.idx"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE(opened->SameContents(index));
  ExpectPostingsMatch(*opened, docs);
  ContainmentSearcher a(index), b(*opened);
  for (const auto& [doc, chunks] : docs) {
    EXPECT_EQ(a.Search(chunks, {4, 10, 0.1}, doc), b.Search(chunks, {4, 10, 0.1}, doc));
  }
  ASSERT_TRUE(ChunkIndex().WriteFile(Path("empty.idx")).ok());
  Result<ChunkIndex> empty = ChunkIndex::Open(Path("empty.idx"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->num_keys(), 0u);
}

TEST_F(ChunkIndexFileTest, DamagedFilesAreClearErrors) {
  ASSERT_TRUE(BuildOrDie(RandomDocs(7, 50)).WriteFile(Path("a.idx")).ok());
  const std::string good = ReadFileBytes(Path("a.idx"));

  EXPECT_EQ(ChunkIndex::Open(Path("missing.idx")).status().code(), StatusCode::kNotFound);

  WriteFileBytes(Path("t.idx"), good.substr(0, good.size() - 3));
  Result<ChunkIndex> truncated = ChunkIndex::Open(Path("t.idx"));
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(truncated.status().message(), HasSubstr("truncated"));

  WriteFileBytes(Path("h.idx"), good.substr(0, 60));
  EXPECT_EQ(ChunkIndex::Open(Path("h.idx")).status().code(), StatusCode::kDataLoss);

  std::string flipped = good;
  flipped[good.size() - 5] ^= 0x10;
  WriteFileBytes(Path("f.idx"), flipped);
  Result<ChunkIndex> corrupt = ChunkIndex::Open(Path("f.idx"));
  EXPECT_EQ(corrupt.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(corrupt.status().message(), HasSubstr("checksum"));
  // Unverified, the corrupt body opens and searching it stays in bounds.
  Result<ChunkIndex> unverified = ChunkIndex::Open(Path("f.idx"), {.verify_checksum = false});
  ASSERT_TRUE(unverified.ok()) << unverified.status();
  ContainmentSearcher searcher(*unverified);
  for (uint32_t key : unverified->keys()) {
    std::vector<uint32_t> query = {key};
    (void)searcher.Search(query, {});
  }

  std::string header = good;
  header[20] ^= 1;  // a count inside the checksummed header
  WriteFileBytes(Path("c.idx"), header);
  EXPECT_THAT(ChunkIndex::Open(Path("c.idx")).status().message(), HasSubstr("corrupt header"));

  WriteFileBytes(Path("m.idx"), "not an index at all, but long enough to hold a header......" +
                                    std::string(100, 'x'));
  EXPECT_THAT(ChunkIndex::Open(Path("m.idx")).status().message(), HasSubstr("bad magic"));
}

// Issue 12: Merge used offsets from an unverified file without bounds, so a
// flipped byte crashed `index add`. Every flip of the body now either fails
// Open's structural check or gives an index that Merge, lookups and the cap
// count use inside its arrays (the test runs under ASan in CI).
TEST_F(ChunkIndexFileTest, EveryBodyFlipIsRefusedOrStaysInBounds) {
  const ChunkIndex base = BuildOrDie(RandomDocs(12, 60));
  ASSERT_TRUE(base.WriteFile(Path("a.idx")).ok());
  const std::string good = ReadFileBytes(Path("a.idx"));
  const ChunkIndex added = BuildOrDie(RandomDocs(13, 10, 70));
  const std::vector<uint32_t> removed = {1, 5, 9, 1000000};
  neardup::internal::SplitMix64 rng(3);
  int refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string damaged = good;
    // Half the flips in the sections that hold structure (keys, offsets),
    // which are what the structural check is about.
    const size_t offset = trial % 2 == 0 ? 128 + rng.Next() % (good.size() - 128)
                                         : good.size() - 1 - rng.Next() % (good.size() / 4);
    damaged[offset] = static_cast<char>(damaged[offset] ^ (1 << (rng.Next() % 8)));
    WriteFileBytes(Path("d.idx"), damaged);
    Result<ChunkIndex> index = ChunkIndex::Open(Path("d.idx"), {.verify_checksum = false});
    if (!index.ok()) {
      EXPECT_EQ(index.status().code(), StatusCode::kDataLoss);
      ++refused;
      continue;
    }
    EXPECT_EQ(ChunkIndex::Open(Path("d.idx")).status().code(), StatusCode::kDataLoss);
    Result<ChunkIndex> merged = ChunkIndex::Merge(*index, removed, added);
    if (merged.ok()) {
      uint64_t total = 0;
      for (uint32_t key : merged->keys()) total += merged->Postings(key).size();
      EXPECT_EQ(total, merged->num_postings());
    }
    (void)index->CountKeysAbove(2);
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace neardup
