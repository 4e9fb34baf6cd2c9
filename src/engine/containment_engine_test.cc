#include "neardup/containment_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "neardup/similarity.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

using ::testing::HasSubstr;

std::string Words(internal::SplitMix64& rng, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += "w" + std::to_string(rng.Next() % 3000) + " ";
  return text;
}

// A corpus with reuse: documents paste passages of earlier ones, a
// boilerplate paragraph appears in every third document, and a "template"
// paragraph in every seventh (6 of 40: at a cap of 6, adds and removals move
// its chunks across the cap).
std::vector<Document> Corpus(uint64_t seed, int count, const std::string& prefix) {
  internal::SplitMix64 rng(seed);
  internal::SplitMix64 fixed(7);
  const std::string boilerplate = Words(fixed, 25);
  const std::string template_text = Words(fixed, 25);
  std::vector<Document> docs;
  for (int i = 0; i < count; ++i) {
    std::string text = Words(rng, 40 + static_cast<int>(rng.Next() % 60));
    if (i > 0 && rng.Next() % 2 == 0) {
      const std::string& source = docs[rng.Next() % docs.size()].text;
      size_t start = source.size() / 3;
      text += source.substr(start, std::min<size_t>(250, source.size() - start));
      text += " ";
    }
    if (i % 3 == 0) text += boilerplate;
    if (i % 7 == 1) text += template_text;
    docs.push_back({prefix + std::to_string(i), text});
  }
  return docs;
}

class ContainmentEngineTest : public ::testing::Test {
 protected:
  std::unique_ptr<Collection> Create(uint32_t cap) {
    std::string path = (dir_ / "c").string();
    EXPECT_TRUE(Collection::Create(path, *PresetRecipe("default"),
                                   {.max_document_frequency = cap, .store_texts = true})
                    .ok());
    Result<std::unique_ptr<Collection>> c =
        Collection::Open(path, {.mode = Collection::Mode::kReadWrite, .clock = {}});
    EXPECT_TRUE(c.ok()) << c.status();
    return std::move(c).value();
  }

  void Add(Collection* c, const std::vector<Document>& docs, size_t commit_documents = 7) {
    std::string jsonl;
    for (const Document& d : docs) {
      jsonl += "{\"id\":\"" + d.id + "\",\"text\":\"" + d.text + "\"}\n";
    }
    std::string path = (dir_ / ("in" + std::to_string(inputs_++) + ".jsonl")).string();
    std::ofstream(path) << jsonl;
    Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, {});
    ASSERT_TRUE(reader.ok());
    AddDocumentsOptions options;
    options.commit_documents = commit_documents;
    options.commit_growth = 0;  // small fixed commits: many commits to check
    AddDocumentsStats stats;
    Status status = AddDocuments(**reader, *c, options, &stats);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(stats.fingerprint.documents, docs.size());
  }

  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
  int inputs_ = 0;
};

TEST_F(ContainmentEngineTest, CommitsGrowWithTheCollection) {
  auto c = Create(0);
  std::vector<Document> docs = Corpus(21, 400, "d");
  std::string path = (dir_ / "bulk.jsonl").string();
  {
    std::ofstream out(path);
    for (const Document& d : docs)
      out << "{\"id\":\"" << d.id << "\",\"text\":\"" << d.text << "\"}\n";
  }
  auto add = [&](double growth) {
    // Closed first: an open writer's background merge may still be writing
    // into the directory.
    c.reset();
    std::filesystem::remove_all(dir_ / "c");
    c = Create(0);
    Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, {});
    EXPECT_TRUE(reader.ok());
    AddDocumentsOptions options;
    options.commit_documents = 10;
    options.commit_growth = growth;
    std::vector<uint64_t> sizes;
    options.on_commit = [&](const CommitResult& r) { sizes.push_back(r.added); };
    AddDocumentsStats stats;
    EXPECT_TRUE(AddDocuments(**reader, *c, options, &stats).ok());
    EXPECT_EQ(stats.added, 400u);
    EXPECT_EQ(c->LiveDocuments().size(), 400u);
    return sizes;
  };
  // Fixed: 40 commits of 10.
  EXPECT_EQ(add(0).size(), 40u);
  // Growth 0.5: each commit is at least half the collection so far (after
  // the first commits of the minimum size), so the count is logarithmic.
  std::vector<uint64_t> sizes = add(0.5);
  EXPECT_LE(sizes.size(), 12u);
  uint64_t before = 0;
  for (uint64_t size : sizes) {
    if (before + size < 400) {
      EXPECT_GE(size, std::max<uint64_t>(10, before / 2)) << before;
    }
    before += size;
  }
}

TEST_F(ContainmentEngineTest, UncappedScoresAreExactContainmentOfFingerprints) {
  auto c = Create(0);
  std::vector<Document> docs = Corpus(1, 30, "d");
  Add(c.get(), docs);
  auto fingerprinter = CreateCollectionFingerprinter(*c);
  ASSERT_TRUE(fingerprinter.ok());
  std::map<uint32_t, std::vector<uint32_t>> chunks;
  for (const Document& d : docs) {
    Fingerprint f;
    ASSERT_TRUE((*fingerprinter)->Compute(d.text, &f).ok());
    chunks[(*c->FindDocument(d.id))->doc] = f.chunks;
  }
  Result<std::vector<SimilarityRow>> rows = ComputeAllSimilarities(*c, {1000, 0.0, false});
  ASSERT_TRUE(rows.ok());
  size_t pairs = 0;
  for (const auto& [a, ca] : chunks) {
    for (const auto& [b, cb] : chunks) {
      if (a != b && IntersectionSize(ca, cb) > 0) ++pairs;
    }
  }
  EXPECT_EQ(rows->size(), pairs);
  for (const SimilarityRow& row : *rows) {
    EXPECT_DOUBLE_EQ(row.a_in_b, Containment(chunks[row.a], chunks[row.b]));
    EXPECT_DOUBLE_EQ(row.b_in_a, Containment(chunks[row.b], chunks[row.a]));
  }
}

TEST_F(ContainmentEngineTest, IncrementalUpdatesEqualAFullRecomputation) {
  // A low cap, so adds and removals move chunks across it.
  auto c = Create(6);
  std::vector<Document> docs = Corpus(2, 40, "d");
  Add(c.get(), docs);
  const SimilarOptions options{5, 0.05, false};
  SimilarStats stats;
  ASSERT_TRUE(ComputeSimilarities(*c, options, &stats).ok());
  EXPECT_TRUE(stats.full);
  EXPECT_GT(stats.rows, 0u);

  bool saw_partial = false;
  auto check = [&](const std::string& what) {
    SimilarStats incremental;
    ASSERT_TRUE(ComputeSimilarities(*c, options, &incremental).ok()) << what;
    EXPECT_FALSE(incremental.full) << what;
    if (incremental.recomputed < c->LiveDocuments().size()) saw_partial = true;
    Result<std::vector<SimilarityRow>> full = ComputeAllSimilarities(*c, options);
    ASSERT_TRUE(full.ok());
    EXPECT_EQ(*c->ReadSimilarities(), *full) << what;
  };

  Add(c.get(), Corpus(3, 10, "new"));
  check("after adding");
  std::vector<Document> modified;
  for (int i = 0; i < 40; i += 8) modified.push_back({docs[i].id, docs[i + 1].text + " edited"});
  Add(c.get(), modified);
  check("after modifying");
  std::vector<std::string> removals = {"d3", "d10", "new4", "d0", "d15", "d22", "new1"};
  ASSERT_TRUE(c->Commit({}, removals).ok());
  check("after removing");
  ASSERT_TRUE(c->Compact().ok());
  check("after compacting");
  Add(c.get(), {{"single", docs[5].text}});  // an exact copy of d5
  check("after adding a copy");
  EXPECT_TRUE(saw_partial);

  // The copy finds its original with both containments 1.
  Result<std::vector<SimilarityRow>> rows = c->ReadSimilarities();
  uint32_t single = (*c->FindDocument("single"))->doc;
  uint32_t d5 = (*c->FindDocument("d5"))->doc;
  bool found = false;
  for (const SimilarityRow& row : *rows) {
    if (row.a == single && row.b == d5) {
      found = true;
      EXPECT_EQ(row.a_in_b, 1.0);
      EXPECT_EQ(row.b_in_a, 1.0);
    }
  }
  EXPECT_TRUE(found);

  // New parameters force a full recomputation.
  SimilarStats other;
  ASSERT_TRUE(ComputeSimilarities(*c, {3, 0.05, false}, &other).ok());
  EXPECT_TRUE(other.full);
  EXPECT_FALSE(ComputeSimilarities(*c, {0, 0.1, false}).ok());
  EXPECT_FALSE(ComputeSimilarities(*c, {3, 1.5, false}).ok());
}

// Random rounds of adds, modifications (texts of other documents, so scores
// tie and lists reorder) and removals, one to three commits between updates,
// with and without a cap and with short lists (so new scores both enter and
// miss lists): after every update the table equals a full recomputation.
TEST_F(ContainmentEngineTest, RandomIncrementalRoundsEqualAFullRecomputation) {
  for (uint32_t cap : {0u, 5u}) {
    SCOPED_TRACE("cap " + std::to_string(cap));
    std::filesystem::remove_all(dir_ / "c");
    auto c = Create(cap);
    std::vector<Document> docs = Corpus(11, 30, "d");
    Add(c.get(), docs);
    const SimilarOptions options{3, 0.02, false};
    ASSERT_TRUE(ComputeSimilarities(*c, options).ok());
    internal::SplitMix64 rng(cap + 1);
    std::vector<std::string> live;
    for (const Document& d : docs) live.push_back(d.id);
    uint64_t merged = 0;
    uint64_t recomputed = 0;
    uint64_t live_total = 0;
    for (int round = 0; round < 12; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      const int commits = 1 + static_cast<int>(rng.Next() % 3);
      for (int k = 0; k < commits; ++k) {
        std::vector<Document> upserts;
        std::vector<Document> fresh =
            Corpus(100 + static_cast<uint64_t>(round * 3 + k), 4,
                   "r" + std::to_string(round) + "_" + std::to_string(k) + "_");
        for (const Document& d : fresh) {
          if (rng.Next() % 2 == 0) {
            upserts.push_back(d);
            live.push_back(d.id);
          }
        }
        if (rng.Next() % 2 == 0 && !live.empty()) {  // a modification
          const std::string& id = live[rng.Next() % live.size()];
          upserts.push_back(
              {id, docs[rng.Next() % docs.size()].text + " m" + std::to_string(round)});
        }
        Add(c.get(), upserts);
        if (rng.Next() % 3 == 0 && live.size() > 5) {  // a removal
          const size_t i = rng.Next() % live.size();
          std::vector<std::string> removal = {live[i]};
          std::erase(live, live[i]);
          ASSERT_TRUE(c->Commit({}, removal).ok());
        }
      }
      SimilarStats stats;
      ASSERT_TRUE(ComputeSimilarities(*c, options, &stats).ok());
      EXPECT_FALSE(stats.full);
      merged += stats.merged;
      recomputed += stats.recomputed;
      live_total += c->LiveDocuments().size();
      Result<std::vector<SimilarityRow>> full = ComputeAllSimilarities(*c, options);
      ASSERT_TRUE(full.ok());
      ASSERT_EQ(*c->ReadSimilarities(), *full);
    }
    EXPECT_GT(merged, 0u);
    EXPECT_LT(recomputed * 2, live_total);  // far less than recomputing everything

    // More added documents than one search block (512): the new scores are
    // pruned per list between blocks.
    Add(c.get(), Corpus(999, 1100, "bulk"), 2000);
    SimilarStats stats;
    ASSERT_TRUE(ComputeSimilarities(*c, options, &stats).ok());
    EXPECT_FALSE(stats.full);
    // With the cap, 1100 documents push nearly every shared chunk across it,
    // so every old list is recomputed; without, the shared boilerplate
    // gives each list that holds it ~370 new scores over three blocks.
    if (cap == 0) {
      EXPECT_GT(stats.merged, 0u);
    }
    Result<std::vector<SimilarityRow>> full = ComputeAllSimilarities(*c, options);
    ASSERT_TRUE(full.ok());
    ASSERT_EQ(*c->ReadSimilarities(), *full);
  }
}

TEST_F(ContainmentEngineTest, QueryFindsPastedPassagesWithoutAddingThem) {
  auto c = Create(1000);
  std::vector<Document> docs = Corpus(4, 20, "d");
  Add(c.get(), docs);
  auto fingerprinter = CreateCollectionFingerprinter(*c);
  ASSERT_TRUE(fingerprinter.ok());
  internal::SplitMix64 rng(99);
  std::string query = Words(rng, 100) + docs[7].text;
  Result<QueryResult> result = QueryDocument(*c, **fingerprinter, query, {3, 0.1});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->matches.empty());
  EXPECT_EQ(result->matches[0].id, "d7");
  EXPECT_EQ(result->matches[0].b_in_a, 1.0);  // all of d7 is in the query
  EXPECT_LT(result->matches[0].a_in_b, 0.7);
  EXPECT_EQ(c->LiveDocuments().size(), 20u);

  Result<std::unique_ptr<Fingerprinter>> paper = CreateCpuFingerprinter(
      *PresetRecipe("paper"),
      SketchSelection{.simhash = false, .minhash = false, .kvalue_minhash = false, .chunks = true});
  ASSERT_TRUE(paper.ok());
  Result<QueryResult> wrong = QueryDocument(*c, **paper, query, {});
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(wrong.status().message(), HasSubstr("is not the recipe of collection"));
}

}  // namespace
}  // namespace neardup
