// The collection routes through the real server: answers equal the CLI's
// (`neardup query` run as a process on the same collection) and the
// library's full similarity computation; readers run while a writer
// commits and see every acknowledged add; the errors and limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ranges>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "neardup/format/wire_format.h"
#include "neardup/json_writer.h"
#include "served_collection.h"
#include "server_test_util.h"

namespace neardup::server {
namespace {

using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

class CollectionRoutesTest : public test_util::ServerTest {
 protected:
  // Creates an empty collection and serves it as "archive".
  void StartWithCollection(ServiceOptions options = {}) {
    collection_dir_ = archive_.Path("archive");
    ASSERT_TRUE(Collection::Create(collection_dir_, *PresetRecipe("default"), {}).ok());
    options.collections = {{"archive", collection_dir_}};
    StartServer(options);
  }

  // Stops the server and starts a new one (a new writer) serving the same
  // collection as "archive".
  void RestartServingTheCollection() {
    StopServer();
    ServiceOptions options;
    options.collections = {{"archive", collection_dir_}};
    StartServer(options);
  }

  // Serves an empty collection as "archive" whose writer merges its index
  // tiers after `idle` without writes.
  void StartWithIdleMerges(std::chrono::milliseconds idle) {
    ServiceOptions options;
    options.collection_idle_merge = idle;
    StartWithCollection(options);
  }

  // POSTs texts[first, first + count) to the archive in one request (JSON
  // lines); returns the HTTP status.
  int AddLines(const std::vector<std::string>& texts, size_t first, size_t count) {
    return Call("POST", "/v1/collections/archive/documents", Lines(texts, first, count),
                "application/x-ndjson")
        .first;
  }

  // JSON lines of `texts` with ids PlantedId(first + i).
  static std::string Lines(const std::vector<std::string>& texts, size_t first, size_t count) {
    std::string body;
    for (size_t i = first; i < first + count; ++i)
      body += DocumentJson(PlantedId(i), texts[i], 0) + "\n";
    return body;
  }

  // What `neardup <args>` prints on stdout.
  static std::string RunCli(const std::string& args) {
    const std::string command = std::string(NEARDUP_CLI) + " " + args + " 2>/dev/null";
    auto [status, out] = test_util::RunCommand(command);
    EXPECT_EQ(status, 0) << command;
    return out;
  }

  TempDir archive_;
  std::string collection_dir_;
};

TEST_F(CollectionRoutesTest, QueryAndSimilarEqualTheCliAndTheFullComputation) {
  StartWithCollection();
  const std::vector<std::string> texts = PlantedTexts(60, 41);
  auto [added, added_body] = Call("POST", "/v1/collections/archive/documents", Lines(texts, 0, 60),
                                  "application/x-ndjson");
  ASSERT_EQ(added, 200) << added_body;
  EXPECT_EQ(added_body, "{\"added\":60,\"modified\":0,\"unchanged\":0,\"generation\":1}\n");

  // Queries: stored documents, an unseen one, and one made of two stored
  // documents (two matches at about one half each, with passages).
  std::vector<std::pair<std::string, std::string>> queries = {
      {"q-stored", texts[4]},
      {"q-unseen", PlantedTexts(1, 99)[0]},
      {"q-two", texts[10] + " " + texts[11]},
  };
  std::string lines;
  for (const auto& [id, text] : queries) lines += DocumentJson(id, text, 0) + "\n";
  const std::string queries_file = archive_.Path("queries.jsonl");
  std::ofstream(queries_file) << lines;
  auto [status, answer] =
      Call("POST", "/v1/collections/archive/query?top=4&passages=2", lines, "application/x-ndjson");
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer,
            RunCli("query " + collection_dir_ + " " + queries_file + " --top 4 --passages 2"));
  EXPECT_THAT(answer, HasSubstr("\"passages\":[{\"query\":[0,"));
  // A single JSON body gets the same line.
  auto [single, single_answer] = Call("POST", "/v1/collections/archive/query?top=4&passages=2",
                                      DocumentJson("q-stored", texts[4], 0));
  EXPECT_EQ(single, 200);
  EXPECT_EQ(single_answer, answer.substr(0, answer.find('\n') + 1));

  // similar/{id}: each document's rows of the full computation.
  Result<std::unique_ptr<Collection>> reader = Collection::Open(collection_dir_, {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  SimilarOptions options;
  options.top_n = 3;
  options.min_similarity = 0.2;
  Result<std::vector<SimilarityRow>> rows = ComputeAllSimilarities(**reader, options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  Result<std::vector<DocumentInfo>> infos = (*reader)->ListDocuments();
  ASSERT_TRUE(infos.ok());
  std::map<uint32_t, std::string> ids;
  for (const DocumentInfo& info : *infos) ids[info.doc] = info.id;
  std::map<std::string, std::string> expected;
  for (const SimilarityRow& row : *rows) {
    format::AppendSimilarityLine(&expected[ids[row.a]], ids[row.a], ids[row.b], row.a_in_b,
                                 row.b_in_a);
  }
  size_t with_rows = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto [similar, similar_body] =
        Call("GET", "/v1/collections/archive/similar/" + PlantedId(i) + "?top=3&min=0.2");
    EXPECT_EQ(similar, 200);
    EXPECT_EQ(similar_body, expected[PlantedId(i)]) << i;
    with_rows += !similar_body.empty();
  }
  EXPECT_GT(with_rows, 10u);

  auto [info, info_body] = Call("GET", "/v1/collections/archive");
  EXPECT_EQ(info, 200);
  EXPECT_THAT(info_body, HasSubstr("\"documents\":60,\"generation\":1"));
  EXPECT_THAT(info_body, HasSubstr("\"recipe_id\":\"" + (*reader)->recipe_id() + "\""));
}

// Readers query without pause while adds commit: every read succeeds, and
// every add is visible to the requests that start after its answer.
// Each request here opens a connection of its own; under load 14 (session
// 8) a reader got 503 "too many open connections (16)": the server counted
// a connection until its pool thread had closed it, after the client had
// its answer and had opened the next. It now gives the place back before
// that last answer (HttpServerCapTest pins it down deterministically).
// Session 7 made failures print (the readers are joined on every exit).
TEST_F(CollectionRoutesTest, ReadersRunWhileAWriterCommitsAndSeeEveryAcknowledgedAdd) {
  StartWithCollection();
  const std::vector<std::string> texts = PlantedTexts(48, 42);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> failed_reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      auto client = NewClient();
      while (!done) {
        auto res = client->Post("/v1/collections/archive/query?passages=1",
                                DocumentJson("q", texts[0], 0), "application/json");
        ++reads;
        if (!res || res->status != 200) ++failed_reads;
      }
    });
  }
  // Whatever ends the test (an ASSERT returns early), the readers stop and
  // are joined: a std::thread destroyed unjoined terminates the process, and
  // the failure's message with it.
  struct StopReaders {
    std::atomic<bool>& done;
    std::vector<std::thread>& readers;
    ~StopReaders() {
      done = true;
      for (std::thread& reader : readers) {
        if (reader.joinable()) reader.join();
      }
    }
  } stop_readers{done, readers};
  // The readers are reading before the first commit (on a loaded machine a
  // reader thread could start only after the writer was done, and then
  // `reads` stayed 0 and nothing ran concurrently).
  for (int i = 0; i < 3000 && reads.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(reads.load(), 2) << "the readers did not start";
  for (size_t batch = 0; batch < 6; ++batch) {
    const size_t first = batch * 8;
    auto [status, body] = Call("POST", "/v1/collections/archive/documents", Lines(texts, first, 8),
                               "application/x-ndjson");
    ASSERT_EQ(status, 200) << body;
    for (size_t i = first; i < first + 8; ++i) {
      auto [query, answer] = Call("POST", "/v1/collections/archive/query?top=100&passages=0",
                                  DocumentJson("q", texts[i], 0));
      EXPECT_EQ(query, 200);
      if (texts[i].empty()) continue;  // no chunks: similar to nothing
      EXPECT_THAT(answer, HasSubstr("{\"b\":\"" + PlantedId(i) + "\",\"a_in_b\":1,")) << i;
      EXPECT_EQ(Call("GET", "/v1/collections/archive/similar/" + PlantedId(i)).first, 200);
    }
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(failed_reads.load(), 0);
  EXPECT_THAT(Call("GET", "/v1/collections/archive").second, HasSubstr("\"documents\":48,"));
  // The commits are durable: a restarted server (a new writer) has them.
  RestartServingTheCollection();
  EXPECT_THAT(Call("GET", "/v1/collections/archive").second, HasSubstr("\"documents\":48,"));
}

// Removals and compaction through HTTP: a removed document is gone from
// every answer (which still equal the CLI's on the same collection), a
// failed removal commits nothing, compaction drops the tombstones and
// changes no answer, and all of it survives a restart.
TEST_F(CollectionRoutesTest, RemoveAndCompactChangeAnswersLikeTheCli) {
  StartWithCollection();
  const std::vector<std::string> texts = PlantedTexts(30, 44);
  ASSERT_EQ(AddLines(texts, 0, 30), 200);
  // A modification leaves a tombstone too.
  ASSERT_EQ(Call("POST", "/v1/collections/archive/documents",
                 DocumentJson(PlantedId(3), texts[7] + " changed", 0))
                .first,
            200);
  auto [document, document_body] = Call("GET", "/v1/collections/archive/documents/" + PlantedId(6));
  EXPECT_EQ(document, 200);
  EXPECT_THAT(document_body, HasSubstr("{\"id\":\"doc-6\",\"name\":\"doc-6\",\"doc\":"));

  EXPECT_EQ(Call("DELETE", "/v1/collections/archive/documents/" + PlantedId(5)).first, 204);
  EXPECT_EQ(Call("DELETE", "/v1/collections/archive/documents/" + PlantedId(10)).first, 204);
  const std::string before_failure = Call("GET", "/v1/collections/archive").second;
  EXPECT_THAT(before_failure, HasSubstr("\"documents\":28,\"generation\":4,"));
  EXPECT_THAT(before_failure, HasSubstr("\"dead_rows\":3,"));
  // Removing it again, or an unknown id: 404, nothing committed.
  auto [again, again_body] = Call("DELETE", "/v1/collections/archive/documents/" + PlantedId(5));
  EXPECT_EQ(again, 404) << again_body;
  EXPECT_EQ(Call("DELETE", "/v1/collections/none/documents/x").first, 404);
  EXPECT_EQ(Call("GET", "/v1/collections/archive").second, before_failure);
  EXPECT_EQ(Call("GET", "/v1/collections/archive/documents/" + PlantedId(5)).first, 404);
  EXPECT_EQ(Call("GET", "/v1/collections/archive/similar/" + PlantedId(5)).first, 404);

  // The removed documents' own texts and a stored one, as queries: the
  // answers equal `neardup query` on the same collection and name no
  // removed document.
  std::string lines;
  for (size_t i : {5, 10, 6}) lines += DocumentJson("q" + std::to_string(i), texts[i], 0) + "\n";
  const std::string queries_file = archive_.Path("queries.jsonl");
  std::ofstream(queries_file) << lines;
  const std::string path = "/v1/collections/archive/query?top=5&passages=1";
  auto [status, answer] = Call("POST", path, lines, "application/x-ndjson");
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(answer,
            RunCli("query " + collection_dir_ + " " + queries_file + " --top 5 --passages 1"));
  EXPECT_THAT(answer, Not(HasSubstr("\"b\":\"doc-5\"")));
  EXPECT_THAT(answer, Not(HasSubstr("\"b\":\"doc-10\"")));
  EXPECT_THAT(answer, HasSubstr("\"b\":\"doc-6\",\"a_in_b\":1,"));

  auto [compacted, compacted_body] = Call("POST", "/v1/collections/archive/compact");
  ASSERT_EQ(compacted, 200) << compacted_body;
  EXPECT_THAT(compacted_body, HasSubstr("{\"documents\":28,\"segments\":1,\"dead_rows\":0,"));
  EXPECT_EQ(Call("POST", path, lines, "application/x-ndjson").second, answer);
  EXPECT_EQ(Call("GET", "/v1/collections/archive/compact").first, 405);
  {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(collection_dir_, {});
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_TRUE((*reader)->Verify().ok());
  }

  RestartServingTheCollection();
  EXPECT_THAT(Call("GET", "/v1/collections/archive").second,
              HasSubstr("\"documents\":28,\"generation\":"));
  EXPECT_EQ(Call("GET", "/v1/collections/archive/documents/" + PlantedId(10)).first, 404);
  EXPECT_EQ(Call("POST", path, lines, "application/x-ndjson").second, answer);
}

// A number in the collection's GET answer.
uint64_t InfoField(const std::string& body, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const size_t at = body.find(key);
  EXPECT_NE(at, std::string::npos) << name << " in " << body;
  return at == std::string::npos ? 0 : std::stoull(body.substr(at + key.size()));
}

// --index-merge-idle's seconds as an idle time: NaN and infinities are
// refused, a positive value below 1 ms is 1 ms (not 0, which means never).
TEST(IdleMergeDelayTest, FiniteSecondsOnlyAndPositiveIsAtLeastOneMillisecond) {
  using std::chrono::milliseconds;
  for (double bad : {std::nan(""), -std::nan(""), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(), -1.0, -1e-9}) {
    EXPECT_FALSE(IdleMergeDelay(bad).ok()) << bad;
  }
  const std::vector<std::pair<double, milliseconds>> cases = {
      {0.0, milliseconds(0)},
      {1e-9, milliseconds(1)},
      {0.0004, milliseconds(1)},
      {0.000999, milliseconds(1)},
      {0.001, milliseconds(1)},
      {0.0015, milliseconds(1)},
      {0.25, milliseconds(250)},
      {30.0, milliseconds(30000)},
      {86400.0 * 365, milliseconds(int64_t{31536000000})},
  };
  for (const auto& [seconds, expected] : cases) {
    Result<milliseconds> delay = IdleMergeDelay(seconds);
    ASSERT_TRUE(delay.ok()) << seconds;
    EXPECT_EQ(delay->count(), expected.count()) << seconds;
  }
}

// The idle merge: once no add has come for --index-merge-idle, the tiers of
// small adds are merged in the background, size-tiered: the oldest tier (60
// documents) holds more than 4 times the postings of the 6 newer ones, so
// those are merged into one and the oldest tier's file is not rewritten.
// Answers are the same. An add after it is merged with the newer tier at
// the next idle period (the oldest file stays again), and idle periods with
// nothing to merge install nothing.
TEST_F(CollectionRoutesTest, AnIdleWriterMergesTheNewerIndexTiersIntoOne) {
  StartWithIdleMerges(std::chrono::milliseconds(300));
  const std::vector<std::string> texts = PlantedTexts(70, 43);
  ASSERT_EQ(AddLines(texts, 0, 60), 200);
  for (size_t i = 60; i < 66; ++i) {
    ASSERT_EQ(AddLines(texts, i, 1), 200);
  }
  const std::string queries = Lines(texts, 0, 66);
  auto [status, before] = Call("POST", "/v1/collections/archive/query?top=4&passages=1", queries,
                               "application/x-ndjson");
  ASSERT_EQ(status, 200);
  auto [info_status, info] = Call("GET", "/v1/collections/archive");
  ASSERT_EQ(info_status, 200);
  // Several newer tiers unless the idle merge already ran (a slow machine).
  if (InfoField(info, "idle_index_merges") == 0) {
    EXPECT_GT(InfoField(info, "index_tiers"), 2u);
  }

  auto wait_for_merges = [&](uint64_t merges) {
    std::string body;
    for (int i = 0; i < 600; ++i) {  // at most 60 s
      body = Call("GET", "/v1/collections/archive").second;
      if (InfoField(body, "index_tiers") == 2 && InfoField(body, "idle_index_merges") >= merges) {
        return body;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "no idle merge to 2 tiers: " << body;
    return body;
  };
  // The oldest index file (the smallest generation), and the oldest tier's
  // postings, as a reader sees them.
  auto oldest_file = [&] {
    uint64_t oldest = UINT64_MAX;
    for (const auto& entry : std::filesystem::directory_iterator(collection_dir_ + "/data")) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with("index-") || name.starts_with("index-merge")) continue;
      oldest = std::min<uint64_t>(oldest, std::stoull(name.substr(6)));
    }
    return oldest;
  };
  auto oldest_postings = [&] {
    Result<std::unique_ptr<Collection>> reader = Collection::Open(collection_dir_, {});
    EXPECT_TRUE(reader.ok());
    EXPECT_TRUE((*reader)->Verify().ok());
    const TieredChunkIndex index = (*reader)->index();
    EXPECT_EQ(index.num_tiers(), 2u);
    EXPECT_GE(index.tiers()[0].num_postings(), 4 * index.tiers()[1].num_postings());
    return index.tiers()[0].num_postings();
  };
  const std::string merged = wait_for_merges(1);
  EXPECT_EQ(InfoField(merged, "documents"), 66u);
  const uint64_t large_file = oldest_file();
  const uint64_t large_postings = oldest_postings();
  auto [after_status, after] = Call("POST", "/v1/collections/archive/query?top=4&passages=1",
                                    queries, "application/x-ndjson");
  ASSERT_EQ(after_status, 200);
  EXPECT_EQ(after, before);
  EXPECT_EQ(after, RunCli("query " + collection_dir_ + " " + [&] {
              const std::string file = archive_.Path("idle-queries.jsonl");
              std::ofstream(file) << queries;
              return file;
            }() + " --top 4 --passages 1"));
  auto [metrics_status, metrics] = Call("GET", "/metrics");
  EXPECT_EQ(metrics_status, 200);
  EXPECT_THAT(metrics, HasSubstr("neardup_collection_index_tiers{collection=\"archive\"} 2\n"));

  // An add makes a third tier; the next idle period merges it with the
  // newer one, not with the oldest.
  ASSERT_EQ(AddLines(texts, 66, 1), 200);
  const uint64_t merges = InfoField(merged, "idle_index_merges");
  const std::string again = wait_for_merges(merges + 1);
  EXPECT_EQ(InfoField(again, "documents"), 67u);
  EXPECT_EQ(oldest_file(), large_file);
  EXPECT_EQ(oldest_postings(), large_postings);
  // Nothing left to merge: idle periods install nothing more.
  const uint64_t settled = InfoField(again, "idle_index_merges");
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // 4 idle periods
  const std::string quiet = Call("GET", "/v1/collections/archive").second;
  EXPECT_EQ(InfoField(quiet, "idle_index_merges"), settled);
  EXPECT_EQ(InfoField(quiet, "generation"), InfoField(again, "generation"));
}

// The idle clock restarts at every write: with an idle time of 2 s and an
// add every 200 ms for 3 s, no idle merge runs (a bug that merged after
// every add, or counted from the first write, would).
TEST_F(CollectionRoutesTest, EveryWriteRestartsTheIdleClock) {
  StartWithIdleMerges(std::chrono::milliseconds(2000));
  const std::vector<std::string> texts = PlantedTexts(16, 53);
  for (size_t i = 0; i < 16; ++i) {
    ASSERT_EQ(AddLines(texts, i, 1), 200);
    const std::string info = Call("GET", "/v1/collections/archive").second;
    EXPECT_EQ(InfoField(info, "idle_index_merges"), 0u) << i << " " << info;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Stopping the service while idle merges may be running (1 ms idle: one
// starts after almost every add): the close joins the idle thread and
// installs or drops the merge; the reopened collection is sound and holds
// every acknowledged add.
TEST_F(CollectionRoutesTest, StoppingDuringIdleMergesLeavesASoundCollection) {
  StartWithIdleMerges(std::chrono::milliseconds(1));
  const std::vector<std::string> texts = PlantedTexts(30, 59);
  ASSERT_EQ(AddLines(texts, 0, 20), 200);
  for (size_t i = 20; i < 30; ++i) {
    ASSERT_EQ(AddLines(texts, i, 1), 200);
  }
  StopServer();
  Result<std::unique_ptr<Collection>> reopened = Collection::Open(collection_dir_, {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_TRUE((*reopened)->Verify().ok());
  EXPECT_EQ((*reopened)->LiveDocuments().size(), 30u);
  for (const std::string& f :
       std::filesystem::directory_iterator(collection_dir_ + "/data") |
           std::views::transform([](const auto& e) { return e.path().filename().string(); })) {
    EXPECT_FALSE(f.starts_with("index-merge")) << f;
  }
}

// Adds racing idle merges: with an idle time of 1 ms the full merge starts
// between almost every two adds, and the adds commit while it runs (their
// tiers stay, the merge's installation waits for the writer mutex). Every
// acknowledged add is in the catalog (GET document) and, by the final
// Verify, in the index; the collection ends sound, with at most 2 tiers.
TEST_F(CollectionRoutesTest, AddsRacingIdleMergesAreAllKept) {
  StartWithIdleMerges(std::chrono::milliseconds(1));
  const std::vector<std::string> texts = PlantedTexts(100, 47);
  ASSERT_EQ(AddLines(texts, 0, 60), 200);
  for (size_t i = 60; i < 100; ++i) {
    ASSERT_EQ(AddLines(texts, i, 1), 200);
    if (i % 8 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto [found, body] = Call("GET", "/v1/collections/archive/documents/" + PlantedId(i));
    EXPECT_EQ(found, 200) << i << " " << body;
  }
  std::string body;
  for (int i = 0; i < 600; ++i) {  // at most 60 s
    body = Call("GET", "/v1/collections/archive").second;
    // One tier, or a large oldest tier and one newer (size-tiered).
    if (InfoField(body, "index_tiers") <= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LE(InfoField(body, "index_tiers"), 2u);
  EXPECT_EQ(InfoField(body, "documents"), 100u);
  EXPECT_GT(InfoField(body, "idle_index_merges"), 0u);
  Result<std::unique_ptr<Collection>> reader = Collection::Open(collection_dir_, {});
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->Verify().ok());
  EXPECT_EQ((*reader)->LiveDocuments().size(), 100u);
}

TEST_F(CollectionRoutesTest, ErrorsAndLimits) {
  ServiceOptions options;
  options.max_document_mb = 1;
  StartWithCollection(options);
  const std::string big(size_t{1} << 20 | 1, 'x');
  const std::vector<std::string> texts = PlantedTexts(2, 43);
  const std::vector<std::tuple<std::string, std::string, std::string, int, std::string>> cases = {
      {"GET", "/v1/collections/none", "", 404, "no collection \\\"none\\\""},
      {"GET", "/v1/collections/bad.name", "", 400, "collection name"},
      {"POST", "/v1/collections/archive/query", "{\"id\": \"q\"}", 400, "\\\"text\\\" is missing"},
      {"POST", "/v1/collections/archive/query", "[1]", 400, "must be a JSON object"},
      {"POST", "/v1/collections/archive/query?top=0", DocumentJson("q", "t", 0), 400,
       "parameter \\\"top\\\""},
      {"POST", "/v1/collections/archive/query?min=2", DocumentJson("q", "t", 0), 400,
       "parameter \\\"min\\\""},
      {"POST", "/v1/collections/archive/query?passages=x", DocumentJson("q", "t", 0), 400,
       "parameter \\\"passages\\\""},
      {"POST", "/v1/collections/archive/documents", "{\"text\": \"no id\"}", 400,
       "\\\"id\\\" is missing"},
      {"GET", "/v1/collections/archive/similar/unknown", "", 404, "no document"},
      {"DELETE", "/v1/collections/archive", "", 405, "not allowed"},
      {"GET", "/v1/collections/archive/query", "", 405, "not allowed"},
      // One document over --max-document-mb: 413 naming it, nothing stored.
      {"POST", "/v1/collections/archive/documents", DocumentJson("big", big, 0), 413,
       "document \\\"big\\\""},
      {"POST", "/v1/collections/archive/query", DocumentJson("big", big, 0), 413,
       "document_too_large"},
  };
  for (const auto& [method, path, body, expected_status, message] : cases) {
    auto [status, answer] = Call(method, path, body);
    EXPECT_EQ(status, expected_status) << method << " " << path << ": " << answer;
    EXPECT_THAT(answer, HasSubstr(message)) << method << " " << path;
  }
  // In a batch, the line of the large document is named and nothing of the
  // batch is stored.
  const std::string batch =
      DocumentJson("small", texts[0], 0) + "\n" + DocumentJson("big", big, 0) + "\n";
  auto [status, answer] =
      Call("POST", "/v1/collections/archive/documents", batch, "application/x-ndjson");
  EXPECT_EQ(status, 413);
  EXPECT_THAT(answer, HasSubstr("line 2: document \\\"big\\\""));
  EXPECT_EQ(Call("GET", "/v1/collections/archive/similar/small").first, 404);
  // The same limit for streams.
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  auto [stream_status, stream_answer] =
      Call("POST", "/v1/streams/s/documents", batch, "application/x-ndjson");
  EXPECT_EQ(stream_status, 413);
  EXPECT_THAT(stream_answer, HasSubstr("\"code\":\"document_too_large\""));
  EXPECT_EQ(Call("GET", "/v1/streams/s/documents/small").first, 404);
}

TEST(CollectionOpenTest, BindRefusesAMissingCollectionAndABadName) {
  TempDir dir;
  ServiceOptions options;
  options.data_dir = dir.path();
  options.port = 0;
  options.collections = {{"archive", dir.Path("no-such-collection")}};
  Result<int> missing = Service(options).Bind();
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("collection \"archive\""));
  options.collections = {{"bad/name", dir.path()}};
  Result<int> bad = Service(options).Bind();
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neardup::server
