// Every value read from a collection's catalog is untrusted (issue 12, item
// 4): counters are range-checked, memory follows the live documents rather
// than the largest number ever issued, and file names are derived from
// numbers, so a catalog cannot point outside the collection (nor make
// compaction delete there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "store/sqlite_db.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CollectionCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Collection::Create(Dir(), *PresetRecipe("default"), {}).ok());
    auto c = OpenRw();
    ASSERT_TRUE(c.ok()) << c.status();
    const std::vector<uint32_t> chunks_a = {1, 2, 3}, chunks_b = {3, 4};
    std::vector<IncomingDocument> docs = {{"a", "a", "text a", chunks_a, 1},
                                          {"b", "b", "text b", chunks_b, 2}};
    ASSERT_TRUE((*c)->Commit(docs, {}).ok());
    const std::vector<IncomingDocument> more = {{"c", "c", "text c", chunks_b, 3}};
    ASSERT_TRUE((*c)->Commit(more, {}).ok());
  }

  std::string Dir() const { return temp_.Path("c"); }
  Result<std::unique_ptr<Collection>> OpenRw() {
    return Collection::Open(Dir(), {.mode = Collection::Mode::kReadWrite, .clock = {}});
  }
  void Sql(const std::string& sql) {
    auto db = internal::SqliteDb::Open(Dir() + "/catalog.db", false, false);
    ASSERT_TRUE(db.ok()) << db.status();
    Status status = (*db)->Exec(sql);
    ASSERT_TRUE(status.ok()) << status;
  }
  void ExpectDataLoss(const std::string& what) {
    for (Collection::Mode mode : {Collection::Mode::kReadOnly, Collection::Mode::kReadWrite}) {
      Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), {.mode = mode, .clock = {}});
      EXPECT_EQ(c.status().code(), StatusCode::kDataLoss) << c.status();
      EXPECT_THAT(c.status().message(), HasSubstr(what));
    }
  }

  test_support::TempDir temp_;
};

// The reproduction: next_doc = 4000000000 made every command allocate 32 GB.
TEST_F(CollectionCatalogTest, MemoryFollowsLiveDocumentsNotNextDoc) {
  Sql("UPDATE meta SET value = '4000000000' WHERE key = 'next_doc'");
  auto c = OpenRw();
  ASSERT_TRUE(c.ok()) << c.status();
  Result<CollectionStats> stats = (*c)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 3u);
  EXPECT_LT(stats->memory_bytes, 1u << 20);
  EXPECT_THAT((*c)->LiveDocuments(), ::testing::ElementsAre(0, 1, 2));
  // A commit does not size the index by that counter: new numbers follow
  // the ones in use, and the collection stays sound.
  const std::vector<uint32_t> chunks = {7};
  const std::vector<IncomingDocument> docs = {{"d", "d", "text d", chunks, 4}};
  ASSERT_TRUE((*c)->Commit(docs, {}).ok());
  Result<std::optional<DocumentInfo>> d = (*c)->FindDocument("d");
  ASSERT_TRUE(d.ok() && d->has_value());
  EXPECT_EQ((*d)->doc, 3u);
  EXPECT_EQ((*c)->index().num_doc_slots(), 4u);
  EXPECT_TRUE((*c)->Verify().ok());
  c->reset();
  c = Collection::Open(Dir(), {});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT((*c)->LiveDocuments(), ::testing::ElementsAre(0, 1, 2, 3));
}

TEST_F(CollectionCatalogTest, CountersOutOfRangeAreDataLoss) {
  Sql("UPDATE meta SET value = '99999999999' WHERE key = 'next_doc'");
  ExpectDataLoss("next_doc");
  Sql("UPDATE meta SET value = '1' WHERE key = 'next_doc'");  // below a live number
  ExpectDataLoss("catalog row for document 1");
  Sql("UPDATE meta SET value = '3' WHERE key = 'next_doc'");
  Sql("UPDATE meta SET value = '-5' WHERE key = 'next_segment'");
  ExpectDataLoss("next_segment");
  Sql("UPDATE meta SET value = '3' WHERE key = 'next_segment'");
  Sql("UPDATE meta SET value = '99999999999' WHERE key = 'max_document_frequency'");
  ExpectDataLoss("max_document_frequency");
  Sql("UPDATE meta SET value = '1000' WHERE key = 'max_document_frequency'");
  Sql("UPDATE meta SET value = '7' WHERE key = 'store_texts'");
  ExpectDataLoss("store_texts");
  Sql("UPDATE meta SET value = '1' WHERE key = 'store_texts'");
  Sql("UPDATE documents SET row = 1000000000000 WHERE doc = 0");
  ExpectDataLoss("out of range");
  Sql("UPDATE documents SET row = 0, segment = -1 WHERE doc = 0");
  ExpectDataLoss("out of range");
  Sql("UPDATE documents SET segment = 1 WHERE doc = 0");
  auto c = OpenRw();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE((*c)->Verify().ok());
}

TEST_F(CollectionCatalogTest, StoredSimilarityParametersAreParsedNotTrusted) {
  Sql("INSERT INTO meta(key, value) VALUES('similar_top_n', '12abc'), ('similar_min', '0.5')");
  auto c = Collection::Open(Dir(), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->StoredSimilarityParams().status().code(), StatusCode::kDataLoss);
  Sql("UPDATE meta SET value = '12' WHERE key = 'similar_top_n'");
  Sql("UPDATE meta SET value = 'nan' WHERE key = 'similar_min'");
  c = Collection::Open(Dir(), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->StoredSimilarityParams().status().code(), StatusCode::kDataLoss);
}

// The reproduction: segments.file = '../other/x.nds' opened a file outside
// the collection, and `index compact` deleted it.
TEST_F(CollectionCatalogTest, PathsStayInsideTheCollection) {
  const std::string outside = temp_.Path("other/x.nds");
  fs::create_directories(temp_.Path("other"));
  fs::copy_file(Dir() + "/data/seg-1.nds", outside);
  for (const char* file :
       {"../other/x.nds", "/etc/passwd", "data/../../other/x.nds", "data/seg-2.nds", ""}) {
    Sql(std::string("UPDATE segments SET file = '") + file + "' WHERE segment = 1");
    ExpectDataLoss("not data/seg-1.nds");
    auto c = OpenRw();
    ASSERT_FALSE(c.ok());  // so no compaction can run on it
  }
  EXPECT_TRUE(fs::exists(outside));
  Sql("UPDATE segments SET file = 'data/seg-1.nds' WHERE segment = 1");

  // Index tiers are generations (file names derived from them), no later
  // than the catalog's generation.
  Sql("INSERT INTO index_tiers(generation) VALUES(99)");
  ExpectDataLoss("index tier 99");
  Sql("UPDATE index_tiers SET generation = -1 WHERE generation = 99");
  ExpectDataLoss("index tier -1");
  Sql("DELETE FROM index_tiers WHERE generation = -1");
  Sql("UPDATE segments SET segment = 7 WHERE segment = 2");
  ExpectDataLoss("segment number 7");
  Sql("UPDATE segments SET segment = 2 WHERE segment = 7");

  // Compaction deletes only the collection's own segment files.
  auto c = OpenRw();
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Commit({}, std::vector<std::string>{"a"}).ok());
  ASSERT_TRUE((*c)->Compact().ok());
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_TRUE((*c)->Verify().ok());
}

}  // namespace
}  // namespace neardup
