#include "engine/containment_passages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "neardup/containment_engine.h"
#include "neardup/passages.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

internal::ChunkSpan Span(uint32_t id, uint32_t first_token, uint32_t last_token, uint32_t begin,
                         uint32_t end) {
  return {id, first_token, last_token, begin, end};
}

bool All(uint32_t) { return true; }

TEST(ChainPassagesTest, OverlappingWindowsMergeIntoOneRun) {
  // Width-2 windows: query tokens 0..3 at bytes 10*t, match tokens 5..8.
  std::vector<internal::ChunkSpan> query = {Span(1, 0, 1, 0, 15), Span(2, 1, 2, 10, 25),
                                            Span(3, 2, 3, 20, 35), Span(9, 3, 4, 30, 45)};
  std::vector<internal::ChunkSpan> match = {Span(7, 4, 5, 40, 55), Span(1, 5, 6, 50, 65),
                                            Span(2, 6, 7, 60, 75), Span(3, 7, 8, 70, 85)};
  EXPECT_THAT(internal::ChainPassages(query, match, All, 0),
              ElementsAre(Passage{0, 35, 50, 85, 3}));
}

TEST(ChainPassagesTest, GapsAndOrderSplitRuns) {
  // Query chunks 1, 2 are adjacent; 3 is far; in the match 2 comes BEFORE 1.
  std::vector<internal::ChunkSpan> query = {Span(1, 0, 1, 0, 9), Span(2, 1, 2, 5, 14),
                                            Span(3, 10, 11, 50, 59)};
  std::vector<internal::ChunkSpan> match = {Span(2, 0, 1, 0, 9), Span(1, 5, 6, 30, 39),
                                            Span(3, 7, 8, 40, 49)};
  EXPECT_THAT(
      internal::ChainPassages(query, match, All, 0),
      ElementsAre(Passage{0, 9, 30, 39, 1}, Passage{5, 14, 0, 9, 1}, Passage{50, 59, 40, 49, 1}));
  // A gap allowance of 8 tokens joins chunk 3 to the run of chunk 1 (query
  // gap 10 - 2 = 8 tokens, match gap 7 - 7 = 0).
  EXPECT_THAT(internal::ChainPassages(query, match, All, 8),
              ElementsAre(Passage{0, 59, 30, 49, 2}, Passage{5, 14, 0, 9, 1}));
}

TEST(ChainPassagesTest, UncountedChunksAndRepeatsInTheMatch) {
  std::vector<internal::ChunkSpan> query = {Span(1, 0, 1, 0, 9), Span(2, 1, 2, 5, 14),
                                            Span(3, 2, 3, 10, 19)};
  // Chunk 1 occurs twice in the match; only the second occurrence continues.
  std::vector<internal::ChunkSpan> match = {Span(1, 0, 1, 0, 9), Span(1, 20, 21, 100, 109),
                                            Span(2, 21, 22, 105, 114), Span(3, 22, 23, 110, 119)};
  auto not_two = [](uint32_t id) { return id != 2; };
  // Without chunk 2, chunks 1 and 3 are two tokens apart: two runs.
  EXPECT_THAT(internal::ChainPassages(query, match, not_two, 0),
              ElementsAre(Passage{0, 9, 0, 9, 1}, Passage{10, 19, 110, 119, 1}));
  // With it, the first occurrence of 1 starts a run that 2 cannot extend, so
  // 2 starts the run that 3 extends.
  EXPECT_THAT(internal::ChainPassages(query, match, All, 0),
              ElementsAre(Passage{0, 9, 0, 9, 1}, Passage{5, 19, 105, 119, 2}));
  EXPECT_THAT(internal::ChainPassages(query, {}, All, 0), IsEmpty());
  EXPECT_THAT(internal::ChainPassages({}, match, All, 0), IsEmpty());
}

class MatchingPassagesTest : public ::testing::Test {
 protected:
  std::unique_ptr<Collection> CreateWith(const std::vector<Document>& docs, bool store_texts,
                                         uint32_t max_document_frequency = 1000) {
    const std::string path = (dir_ / "c").string();
    EXPECT_TRUE(Collection::Create(
                    path, *PresetRecipe("default"),
                    {.max_document_frequency = max_document_frequency, .store_texts = store_texts})
                    .ok());
    Result<std::unique_ptr<Collection>> c =
        Collection::Open(path, {.mode = Collection::Mode::kReadWrite, .clock = {}});
    EXPECT_TRUE(c.ok()) << c.status();
    Result<std::unique_ptr<Fingerprinter>> fingerprinter = CreateCollectionFingerprinter(**c);
    EXPECT_TRUE(fingerprinter.ok());
    std::vector<IncomingDocument> incoming;
    for (const Document& d : docs) {
      Fingerprint f;
      EXPECT_TRUE((*fingerprinter)->Compute(d.text, &f).ok());
      incoming.push_back({d.id, d.id, d.text, f.chunks, f.simhash});
    }
    EXPECT_TRUE((*c)->Commit(incoming, {}).ok());
    return std::move(c).value();
  }

  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
};

// The archived document's paragraphs 1 and 3 are pasted into a new text
// (with other case and punctuation around them); the passages are exactly
// those paragraphs, in both texts.
TEST_F(MatchingPassagesTest, PastedParagraphsAreFound) {
  const std::string p1 =
      "Die Stra\xC3\x9F"
      "e nach G\xC3\xB6ttingen war im Winter oft gesperrt und "
      "die Reisenden warteten tagelang";
  const std::string p2 = "An unrelated middle paragraph about harbour cranes and tides";
  const std::string p3 =
      "Measurements of the glacier retreat were repeated every spring by the same two "
      "surveyors using theodolites";
  const std::string archived = "Preface words here.\n\n" + p1 + ".\n\n" + p2 + ".\n\n" + p3 + ".";
  const std::string other = "Completely different content about baking bread with rye flour";
  std::unique_ptr<Collection> c =
      CreateWith({{"thesis", archived}, {"other", other}}, /*store_texts=*/true);

  const std::string query = "MY OWN INTRODUCTION, which nobody wrote before! " + p1 +
                            " ... and then, suddenly: " + p3 + "; my conclusion follows.";
  Result<std::unique_ptr<Fingerprinter>> fingerprinter = CreateCollectionFingerprinter(*c);
  ASSERT_TRUE(fingerprinter.ok());
  QueryOptions options;
  options.passages_top = 1;
  Result<QueryResult> result = QueryDocument(*c, **fingerprinter, query, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->matches.size(), 1u);
  const QueryMatch& m = result->matches[0];
  EXPECT_EQ(m.id, "thesis");
  ASSERT_EQ(m.passages.size(), 2u);
  auto slice = [](const std::string& text, uint32_t begin, uint32_t end) {
    return text.substr(begin, end - begin);
  };
  EXPECT_EQ(slice(query, m.passages[0].query_begin, m.passages[0].query_end), p1);
  EXPECT_EQ(slice(archived, m.passages[0].match_begin, m.passages[0].match_end), p1);
  EXPECT_EQ(slice(query, m.passages[1].query_begin, m.passages[1].query_end), p3);
  EXPECT_EQ(slice(archived, m.passages[1].match_begin, m.passages[1].match_end), p3);
  // Every shared chunk is in a passage.
  uint32_t chunks = 0;
  for (const Passage& p : m.passages) chunks += p.chunks;
  EXPECT_EQ(chunks, m.shared);

  Result<std::vector<Passage>> direct = MatchingPassages(*c, query, m.doc);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(*direct, m.passages);
  // Two texts and the recipe, no collection: the same passages (no chunk is
  // over this collection's cap).
  Result<std::vector<Passage>> texts = MatchingPassages(c->recipe(), query, archived);
  ASSERT_TRUE(texts.ok()) << texts.status();
  EXPECT_EQ(*texts, m.passages);
}

// The two-text form counts every chunk; a collection leaves out those over
// its cap. A chunk shared by every document of a collection capped at one
// document is boilerplate there, but still a passage between the two texts.
TEST_F(MatchingPassagesTest, TwoTextsCountEveryChunkWhereACollectionAppliesItsCap) {
  const std::string shared =
      "Quarterly boilerplate sentence printed atop every letter inside this archive";
  const std::string own = "Unique tale about lighthouse keepers during long northern winters";
  const std::string archived = shared + ". " + own;
  const std::string query = own + "; and then " + shared;
  std::unique_ptr<Collection> c =
      CreateWith({{"a", archived}, {"b", shared + ". something else entirely, about rivers"}},
                 /*store_texts=*/true, /*max_document_frequency=*/1);
  Result<std::vector<Passage>> two = MatchingPassages(c->recipe(), query, archived);
  ASSERT_TRUE(two.ok()) << two.status();
  auto slice = [](const std::string& text, uint32_t begin, uint32_t end) {
    return text.substr(begin, end - begin);
  };
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ(slice(query, (*two)[0].query_begin, (*two)[0].query_end), own);
  EXPECT_EQ(slice(archived, (*two)[0].match_begin, (*two)[0].match_end), own);
  EXPECT_EQ(slice(query, (*two)[1].query_begin, (*two)[1].query_end), shared);
  EXPECT_EQ(slice(archived, (*two)[1].match_begin, (*two)[1].match_end), shared);
  Result<std::optional<DocumentInfo>> info = c->FindDocument("a");
  ASSERT_TRUE(info.ok() && info->has_value());
  Result<std::vector<Passage>> capped = MatchingPassages(*c, query, (*info)->doc);
  ASSERT_TRUE(capped.ok()) << capped.status();
  ASSERT_EQ(capped->size(), 1u);
  EXPECT_EQ((*capped)[0], (*two)[0]);
}

TEST(TwoTextPassagesTest, BadRecipeAndNoSharedChunks) {
  Recipe recipe = *PresetRecipe("default");
  Result<std::vector<Passage>> none =
      MatchingPassages(recipe, "alpha beta gamma delta epsilon", "one two three four five six");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(*none, IsEmpty());
  EXPECT_THAT(*MatchingPassages(recipe, "", "one two three"), IsEmpty());
  recipe.chunks.shingle_width = 0;
  EXPECT_EQ(MatchingPassages(recipe, "a b", "a b").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(MatchingPassagesTest, WithoutStoredTextsPassagesAreRefused) {
  std::unique_ptr<Collection> c =
      CreateWith({{"a", "one two three four five six seven"}}, /*store_texts=*/false);
  Result<std::unique_ptr<Fingerprinter>> fingerprinter = CreateCollectionFingerprinter(*c);
  ASSERT_TRUE(fingerprinter.ok());
  QueryOptions options;
  options.passages_top = 3;
  Result<QueryResult> result =
      QueryDocument(*c, **fingerprinter, "one two three four five six seven", options);
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), ::testing::HasSubstr("does not store texts"));
  options.passages_top = 0;
  EXPECT_TRUE(QueryDocument(*c, **fingerprinter, "one two three four five six", options).ok());
  EXPECT_EQ(MatchingPassages(*c, "x", 12345).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(MatchingPassagesTest, UnknownDocumentIsNotFound) {
  std::unique_ptr<Collection> c =
      CreateWith({{"a", "one two three four five six seven"}}, /*store_texts=*/true);
  EXPECT_EQ(MatchingPassages(*c, "one two three", 12345).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace neardup
