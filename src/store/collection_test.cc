#include "neardup/collection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "neardup/containment.h"
#include "store/collection_impl.h"
#include "store/collection_test_util.h"
#include "store/sqlite_db.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

using internal::testing::ChunksOf;
using internal::testing::DataFiles;
using internal::testing::ExpectIndexEqualsRebuild;
using internal::testing::Incoming;
using internal::testing::Owned;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CollectionTest : public ::testing::Test {
 protected:
  std::string Dir() const { return (dir_ / "c").string(); }

  std::unique_ptr<Collection> CreateAndOpen(CollectionOptions options = {}) {
    Status created = Collection::Create(Dir(), *PresetRecipe("default"), options);
    EXPECT_TRUE(created.ok()) << created;
    return OpenRw();
  }
  std::unique_ptr<Collection> OpenRw() {
    Collection::OpenOptions options;
    options.mode = Collection::Mode::kReadWrite;
    options.clock = [this] { return now_; };
    options.background_index_merges = background_merges_;
    Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), options);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  CommitResult Commit(Collection* c, const std::vector<Owned>& docs,
                      std::vector<std::string> removals = {}) {
    Result<CommitResult> r = c->Commit(Incoming(docs), removals);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommitResult{};
  }

  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
  int64_t now_ = 1000;
  bool background_merges_ = true;  // OpenOptions::background_index_merges
};

TEST_F(CollectionTest, CreateOpenAndRecipeChecks) {
  auto c = CreateAndOpen({.max_document_frequency = 7, .store_texts = true});
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->max_document_frequency(), 7u);
  EXPECT_EQ(c->recipe().name, "default");
  EXPECT_TRUE(c->CheckRecipe(*PresetRecipe("default")).ok());
  Status other = c->CheckRecipe(*PresetRecipe("paper"));
  EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr(c->recipe_id()));
  EXPECT_THAT(other.message(), HasSubstr(RecipeId(*PresetRecipe("paper"))));

  EXPECT_EQ(Collection::Create(Dir(), *PresetRecipe("default"), {}).code(),
            StatusCode::kAlreadyExists);
  Result<std::unique_ptr<Collection>> missing = Collection::Open((dir_ / "nope").string(), {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("not a neardup collection"));
}

TEST_F(CollectionTest, DigestRecipesAreRefusedAtCreate) {
  Status created = Collection::Create(Dir(), *PresetRecipe("exlsh"), {});
  EXPECT_EQ(created.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(created.message(), ::testing::HasSubstr("computes SimHash only"));
}

TEST_F(CollectionTest, VersionOneRecipeReopensAsVersionOne) {
  // A collection made with version 1's default recipe (as a version 1 build
  // made it: the same canonical JSON) keeps saying so, and keeps version 1's
  // tokenizer, after recipe version 2.
  const std::string v1_json =
      "{\"format\":\"neardup-recipe\",\"version\":1,\"normalize\":{\"nfkc\":true,"
      "\"case_fold\":true,\"remove_punctuation\":false},\"tokenizer\":\"word\","
      "\"stopwords\":\"none\",\"hash\":\"xxh3\",\"seed\":0,\"simhash\":{\"bits\":64,"
      "\"shingle_width\":3},\"minhash\":{\"num_hashes\":128,\"shingle_width\":5},"
      "\"chunks\":{\"shingle_width\":5,\"sample_modulus\":1}}";
  ASSERT_TRUE(Collection::Create(Dir(), *PresetRecipe("default-v1"), {}).ok());
  std::ifstream file(dir_ / "c" / "recipe.json");
  std::string stored;
  std::getline(file, stored);
  EXPECT_EQ(stored, v1_json);
  auto c = OpenRw();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->recipe().version, 1);
  EXPECT_EQ(c->recipe().segment_scripts, ScriptSegmentation::kNone);
  EXPECT_EQ(c->recipe_id(), "1b6dd7a19890a092");
  EXPECT_TRUE(c->CheckRecipe(*PresetRecipe("default-v1")).ok());
  Status v2 = c->CheckRecipe(*PresetRecipe("default"));
  EXPECT_EQ(v2.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(v2.message(), HasSubstr("1b6dd7a19890a092"));
}

TEST_F(CollectionTest, OneWriterAtATimeAndReadOnlyCannotWrite) {
  auto writer = CreateAndOpen();
  Collection::OpenOptions rw;
  rw.mode = Collection::Mode::kReadWrite;
  Result<std::unique_ptr<Collection>> second = Collection::Open(Dir(), rw);
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("open for writing"));
  Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  Result<CommitResult> r = (*reader)->Commit(Incoming({{"a", "x y"}}), {});
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(CollectionTest, NewerFormatVersionIsRefused) {
  CreateAndOpen().reset();
  {
    auto db = internal::SqliteDb::Open((std::filesystem::path(Dir()) / "catalog.db").string(),
                                       false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(internal::WriteMeta(db->get(), "format_version", "99").ok());
  }
  Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), {});
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(c.status().message(), HasSubstr("format version 99"));
}

TEST_F(CollectionTest, AddModifyUnchangedRemove) {
  auto c = CreateAndOpen();
  CommitResult r = Commit(c.get(), {{"a", "one two three"}, {"b", "two three four"}});
  EXPECT_EQ(r.added, 2u);
  EXPECT_EQ(r.generation, 1u);
  now_ = 2000;
  r = Commit(c.get(), {{"a", "one two three"}, {"b", "two three five six"}, {"c", "seven"}});
  EXPECT_EQ(r.unchanged, 1u);
  EXPECT_EQ(r.modified, 1u);
  EXPECT_EQ(r.added, 1u);

  Result<std::optional<DocumentInfo>> b = c->FindDocument("b");
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->num_chunks, 4u);
  EXPECT_EQ((*b)->added_at, 1000);
  EXPECT_EQ((*b)->modified_at, 2000);
  EXPECT_EQ((*b)->name, "b.txt");
  EXPECT_EQ(*c->Text((*b)->doc), "two three five six");
  EXPECT_EQ(c->Chunks((*b)->doc)->size(), 4u);
  EXPECT_EQ(c->index().num_documents(), 3u);

  // A removal of an unknown id commits nothing.
  std::vector<std::string> unknown = {"a", "zz"};
  Result<CommitResult> bad = c->Commit({}, unknown);
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(bad.status().message(), HasSubstr("zz"));
  EXPECT_TRUE(c->FindDocument("a")->has_value());

  r = Commit(c.get(), {}, {"a"});
  EXPECT_EQ(r.removed, 1u);
  EXPECT_FALSE(c->FindDocument("a")->has_value());
  EXPECT_TRUE(c->Verify().ok()) << c->Verify();

  // Nothing to do: no new generation.
  EXPECT_EQ(Commit(c.get(), {{"c", "seven"}}).generation, r.generation);

  // The state survives reopening.
  c.reset();
  c = OpenRw();
  ASSERT_NE(c, nullptr);
  Result<std::vector<DocumentInfo>> docs = c->ListDocuments();
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0].id, "b");
  EXPECT_EQ((*docs)[1].id, "c");
  EXPECT_TRUE(c->Verify().ok()) << c->Verify();
  Result<CollectionStats> stats = c->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 2u);
  EXPECT_EQ(stats->dead_rows, 2u);  // old b and removed a
  EXPECT_EQ(stats->segments, 2u);
}

TEST_F(CollectionTest, BadInputIsRejected) {
  auto c = CreateAndOpen();
  std::vector<IncomingDocument> docs = Incoming({{"a", "x y z"}});
  std::swap(docs[0].chunks[0], docs[0].chunks[1]);
  EXPECT_EQ(c->Commit(docs, {}).status().code(), StatusCode::kInvalidArgument);
  Commit(c.get(), {{"a", "x"}});
  std::vector<std::string> removals = {"a"};
  Result<CommitResult> both = c->Commit(Incoming({{"a", "y"}}), removals);
  EXPECT_THAT(both.status().message(), HasSubstr("both added and removed"));
  // The last occurrence of an id in one commit counts.
  Commit(c.get(), {{"d", "first"}, {"d", "second version"}});
  EXPECT_EQ(*c->Text((*c->FindDocument("d"))->doc), "second version");
}

TEST_F(CollectionTest, CompactionDropsTombstonesAndKeepsEverything) {
  auto c = CreateAndOpen();
  for (int i = 0; i < 5; ++i) {
    Commit(c.get(), {{"doc" + std::to_string(i), "w" + std::to_string(i) + " common words"},
                     {"x", "version " + std::to_string(i)}});
  }
  Commit(c.get(), {}, {"doc1"});
  Result<std::vector<DocumentInfo>> before = c->ListDocuments();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(c->Compact().ok());
  Result<CollectionStats> stats = c->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->segments, 1u);
  EXPECT_EQ(stats->dead_rows, 0u);
  EXPECT_EQ(
      std::distance(std::filesystem::directory_iterator(std::filesystem::path(Dir()) / "data"),
                    std::filesystem::directory_iterator()),
      2);  // one segment, one index
  EXPECT_TRUE(c->Verify().ok()) << c->Verify();
  Result<std::vector<DocumentInfo>> after = c->ListDocuments();
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) EXPECT_EQ((*after)[i].doc, (*before)[i].doc);
  EXPECT_EQ(*c->Text((*c->FindDocument("x"))->doc), "version 4");
  c.reset();
  c = OpenRw();
  EXPECT_TRUE(c->Verify().ok());
  EXPECT_TRUE(c->Compact().ok());  // nothing to do
}

TEST_F(CollectionTest, WriterRemovesFilesOfUnfinishedCommits) {
  CreateAndOpen().reset();
  std::filesystem::path junk = std::filesystem::path(Dir()) / "data" / "seg-77.nds";
  std::ofstream(junk) << "half written";
  std::filesystem::path tmp = std::filesystem::path(Dir()) / "data" / "index-9.ndi.tmp";
  std::ofstream(tmp) << "half written";
  auto c = OpenRw();
  EXPECT_FALSE(std::filesystem::exists(junk));
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_TRUE(c->Verify().ok());
}

TEST_F(CollectionTest, SimilarityRowsAndDirtyTracking) {
  auto c = CreateAndOpen({.max_document_frequency = 0});
  Commit(c.get(), {{"a", "p q r s"}, {"b", "p q"}, {"c", "x y"}});
  EXPECT_FALSE(c->StoredSimilarityParams()->has_value());
  std::vector<SimilarityRow> rows = {{0, 1, 0.5, 1.0}, {1, 0, 1.0, 0.5}};
  std::vector<uint32_t> all = {0, 1, 2};
  ASSERT_TRUE(c->StoreSimilarities({10, 0.0}, true, all, rows).ok());
  EXPECT_EQ(*c->ReadSimilarities(), rows);
  EXPECT_EQ(**c->StoredSimilarityParams(), (SimilarityParams{10, 0.0}));

  EXPECT_EQ(*c->ReadSimilarities(std::vector<uint32_t>{1, 2}),
            (std::vector<SimilarityRow>{{1, 0, 1.0, 0.5}}));

  // Adding a document records it as added; without a cap no list needs a
  // recomputation (its scores are merged later).
  Commit(c.get(), {{"d", "x z"}});
  EXPECT_THAT(*c->DirtyDocuments(), ElementsAre());
  EXPECT_THAT(*c->AddedSinceSimilarities(), ElementsAre(3));
  // Removing a dirties b (it listed a) and drops every row naming a.
  Commit(c.get(), {}, {"a"});
  EXPECT_THAT(*c->DirtyDocuments(), ElementsAre(1));
  EXPECT_THAT(*c->AddedSinceSimilarities(), ElementsAre(3));
  EXPECT_TRUE(c->ReadSimilarities()->empty());
  EXPECT_EQ(c->Stats()->similarity_dirty, 1u);
  EXPECT_EQ(c->Stats()->similarity_added, 1u);
  // Storing clears both lists.
  ASSERT_TRUE(c->StoreSimilarities({10, 0.0}, false, std::vector<uint32_t>{1}, {}).ok());
  EXPECT_THAT(*c->DirtyDocuments(), ElementsAre());
  EXPECT_THAT(*c->AddedSinceSimilarities(), ElementsAre());
}

TEST_F(CollectionTest, DocumentsSharingAChunkThatCrossesTheCapAreDirty) {
  auto c = CreateAndOpen({.max_document_frequency = 2});
  Commit(c.get(), {{"a", "p q"}, {"b", "p r"}, {"c", "s t"}});
  ASSERT_TRUE(c->StoreSimilarities({10, 0.0}, true, std::vector<uint32_t>{0, 1, 2}, {}).ok());
  // A third document with "p" takes it above the cap: a and b lose a shared chunk.
  Commit(c.get(), {{"d", "p u"}});
  EXPECT_THAT(*c->DirtyDocuments(), ElementsAre(0, 1, 3));
  EXPECT_THAT(*c->AddedSinceSimilarities(), ElementsAre(3));
}

TEST_F(CollectionTest, Version1CatalogIsUpgradedWhenOpenedForWriting) {
  {
    auto c = CreateAndOpen();
    Commit(c.get(), {{"a", "p q"}});
  }
  {
    auto db = internal::SqliteDb::Open((std::filesystem::path(Dir()) / "catalog.db").string(),
                                       false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP INDEX similarities_by_b; DROP TABLE similarity_added; "
                           "ALTER TABLE documents DROP COLUMN format")
                    .ok());
    // Versions 1 and 2 name one index file (commit 1 wrote the one tier).
    ASSERT_TRUE((*db)->Exec("DROP TABLE index_tiers").ok());
    ASSERT_TRUE(internal::WriteMeta(db->get(), "index_file", "data/index-1.ndi").ok());
    ASSERT_TRUE(internal::WriteMeta(db->get(), "format_version", "1").ok());
  }
  {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_THAT(*(*reader)->AddedSinceSimilarities(), ElementsAre());
    EXPECT_TRUE((*reader)->Stats().ok());
  }
  auto c = OpenRw();
  ASSERT_TRUE(c->StoreSimilarities({10, 0.0}, true, std::vector<uint32_t>{0}, {}).ok());
  Commit(c.get(), {{"b", "p r"}});
  EXPECT_THAT(*c->AddedSinceSimilarities(), ElementsAre(1));
  c.reset();
  auto db =
      internal::SqliteDb::Open((std::filesystem::path(Dir()) / "catalog.db").string(), false, true);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*internal::ReadMeta(db->get(), "format_version"), "3");
  c = OpenRw();
  EXPECT_TRUE(c->Verify().ok());
  EXPECT_EQ(c->LiveDocuments().size(), 2u);
}

TEST_F(CollectionTest, SmallCommitsWriteSmallTiersSearchedTogether) {
  // Merges inside the commit, so that each commit's files are known when it
  // returns (collection_merge_test.cc runs them in the background).
  background_merges_ = false;
  auto c = CreateAndOpen({.max_document_frequency = 2});
  std::vector<Owned> base;
  for (int i = 0; i < 60; ++i) {
    base.push_back({"base" + std::to_string(i),
                    "w" + std::to_string(i) + " w" + std::to_string(i % 7) + " shared x" +
                        std::to_string(i % 13) + " y" + std::to_string(i * 3)});
  }
  Commit(c.get(), base);
  const uint64_t base_bytes = *&c->Stats()->index_bytes;
  size_t most_tiers = 0;
  for (int i = 0; i < 24; ++i) {
    const std::set<std::string> before = DataFiles(Dir());
    const std::string n = std::to_string(i);
    if (i % 6 == 5) {
      // A removal writes no index file: the catalog masks the document.
      Commit(c.get(), {}, {"base" + n});
      EXPECT_EQ(DataFiles(Dir()), before) << i;
    } else if (i % 6 == 4) {
      Commit(c.get(), {{"base" + std::to_string(i + 30), "modified w" + n + " x" + n}});
    } else {
      Commit(c.get(), {{"one" + n, "w" + n + " shared new" + n + " x" + std::to_string(i % 13)}});
      // The new tier holds the commit's postings, not the archive's.
      uint64_t newest = 0;
      for (const std::string& f : DataFiles(Dir())) {
        if (before.count(f) == 0 && f.starts_with("index-")) {
          newest = std::filesystem::file_size(Dir() + "/data/" + f);
        }
      }
      EXPECT_GT(newest, 0u) << i;
    }
    Result<CollectionStats> stats = c->Stats();
    ASSERT_TRUE(stats.ok());
    most_tiers = std::max<size_t>(most_tiers, stats->index_tiers);
    ASSERT_TRUE(c->Verify().ok()) << i << " " << c->Verify();
    ExpectIndexEqualsRebuild(*c);
  }
  EXPECT_GE(most_tiers, 3u);               // tiers were kept apart...
  EXPECT_LT(c->Stats()->index_tiers, 8u);  // ...and merged
  EXPECT_GT(c->Stats()->index_dead_postings, 0u);
  EXPECT_GT(base_bytes, 0u);

  // A reader sees the same tiers; Compact merges them into one.
  {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ((*reader)->index().num_tiers(), c->index().num_tiers());
    ExpectIndexEqualsRebuild(**reader);
  }
  ASSERT_TRUE(c->Compact().ok());
  EXPECT_EQ(c->Stats()->index_tiers, 1u);
  EXPECT_EQ(c->Stats()->index_dead_postings, 0u);
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
  size_t index_files = 0;
  for (const std::string& f : DataFiles(Dir())) index_files += f.starts_with("index-");
  EXPECT_EQ(index_files, 1u);  // the merged tiers' files are gone
  c.reset();
  c = OpenRw();
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
}

TEST_F(CollectionTest, RemovingEveryDocumentLeavesNoTier) {
  auto c = CreateAndOpen();
  Commit(c.get(), {{"a", "p q"}, {"b", "q r"}});
  Commit(c.get(), {{"c", "r s"}});
  Commit(c.get(), {}, {"a", "b", "c"});
  ASSERT_TRUE(c->Verify().ok());
  EXPECT_EQ(c->index().num_postings(), 0u);
  ASSERT_TRUE(c->Compact().ok());
  EXPECT_EQ(c->Stats()->index_tiers, 0u);
  ASSERT_TRUE(c->Verify().ok());
  Commit(c.get(), {{"d", "p s"}});
  ASSERT_TRUE(c->Verify().ok());
  ExpectIndexEqualsRebuild(*c);
}

TEST_F(CollectionTest, TierRatioBelowTwoIsRefused) {
  ASSERT_TRUE(Collection::Create(Dir(), *PresetRecipe("default"), {}).ok());
  Collection::OpenOptions options;
  options.mode = Collection::Mode::kReadWrite;
  options.index_tier_ratio = 1;
  Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), options);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("index_tier_ratio (1) must be at least 2"));
}

TEST_F(CollectionTest, OriginalFileNameAndFormatAreKept) {
  auto c = CreateAndOpen();
  const std::vector<uint32_t> chunks = ChunksOf("p q r");
  std::vector<IncomingDocument> docs = {
      {"http://example.org/a", "crawl.warc.gz", "p q r", chunks, 1, "warc"},
      {"b.pdf", "b.pdf", "p q r", chunks, 2, "pdf"},
      {"c", "c", "p q r", chunks, 3}};
  ASSERT_TRUE(c->Commit(docs, {}).ok());
  c.reset();
  // As a reader sees them (a fresh open reads the catalog).
  Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  Result<std::vector<DocumentInfo>> list = (*reader)->ListDocuments();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].name, "crawl.warc.gz");
  EXPECT_EQ((*list)[0].format, "warc");
  EXPECT_EQ((*list)[1].format, "pdf");
  EXPECT_EQ((*list)[2].name, "c");
  EXPECT_EQ((*list)[2].format, "");
  const std::vector<uint32_t> numbers = {2, 0, 7};
  Result<std::map<uint32_t, DocumentInfo>> found = (*reader)->FindDocuments(numbers);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 2u);  // 7 is not a document
  EXPECT_EQ(found->at(0).id, "http://example.org/a");
  EXPECT_EQ(found->at(0).name, "crawl.warc.gz");
  EXPECT_EQ(found->at(2).id, "c");
}

// A collection written before catalog version 3 (no format column: made
// here by the current code, then taken back to version 2's schema) is read
// as it is, and upgraded by a writer; its documents keep their names.
TEST_F(CollectionTest, Version2CatalogIsReadAndUpgradedWithItsNames) {
  {
    auto c = CreateAndOpen();
    Commit(c.get(), {{"a", "p q"}});
  }
  const std::string catalog = (std::filesystem::path(Dir()) / "catalog.db").string();
  {
    auto db = internal::SqliteDb::Open(catalog, false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE documents DROP COLUMN format").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE index_tiers").ok());
    ASSERT_TRUE(internal::WriteMeta(db->get(), "index_file", "data/index-1.ndi").ok());
    ASSERT_TRUE(internal::WriteMeta(db->get(), "format_version", "2").ok());
  }
  {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(Dir(), {});
    ASSERT_TRUE(reader.ok()) << reader.status();
    Result<std::optional<DocumentInfo>> a = (*reader)->FindDocument("a");
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(a->has_value());
    EXPECT_EQ((*a)->name, "a.txt");
    EXPECT_EQ((*a)->format, "");
    EXPECT_TRUE((*reader)->Verify().ok());
  }
  auto c = OpenRw();
  ASSERT_NE(c, nullptr);
  const std::vector<uint32_t> chunks = ChunksOf("x y");
  std::vector<IncomingDocument> docs = {{"b", "b.odt", "x y", chunks, 1, "odt"}};
  ASSERT_TRUE(c->Commit(docs, {}).ok());
  Result<std::vector<DocumentInfo>> list = c->ListDocuments();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "a.txt");
  EXPECT_EQ((*list)[0].format, "");
  EXPECT_EQ((*list)[1].name, "b.odt");
  EXPECT_EQ((*list)[1].format, "odt");
  c.reset();
  auto db = internal::SqliteDb::Open(catalog, false, true);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*internal::ReadMeta(db->get(), "format_version"), "3");
}

}  // namespace
}  // namespace neardup
