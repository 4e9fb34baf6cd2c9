// A full disk through HTTP, for a collection and for a stream's batch: the
// request fails with 507 and a JSON error naming the file, nothing that was
// not made durable is acknowledged, the served state is unchanged (or holds
// exactly the documents before the failure, for a stream batch), and the
// same request succeeds once there is room again, also across a restart.
// The disk fills by a file size limit (RLIMIT_FSIZE with SIGXFSZ ignored:
// writes past it fail with EFBIG, which the library counts as full): no
// privileges, no special file system.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "server_test_util.h"
#include "support/file_size_limit.h"

namespace neardup::server {
namespace {

using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::ServerTest;
using test_util::TempDir;
using ::testing::HasSubstr;

// The largest file under `dir`, in bytes.
uint64_t LargestFile(const std::string& dir) {
  uint64_t largest = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) largest = std::max<uint64_t>(largest, entry.file_size());
  }
  return largest;
}

TEST_F(ServerTest, AFullDiskFailsACollectionAddWith507AndCommitsNothing) {
  TempDir archive;
  const std::string dir = archive.Path("archive");
  ASSERT_TRUE(Collection::Create(dir, *PresetRecipe("default"), {}).ok());
  ServiceOptions options;
  options.collections = {{"archive", dir}};
  StartServer(options);
  const std::vector<std::string> texts = PlantedTexts(6, 51);
  std::string first;
  for (size_t i = 0; i < 5; ++i) first += DocumentJson(PlantedId(i), texts[i], 0) + "\n";
  ASSERT_EQ(Call("POST", "/v1/collections/archive/documents", first, "application/x-ndjson").first,
            200);
  const std::string before = Call("GET", "/v1/collections/archive").second;
  // A document whose segment and index files must grow past every file the
  // collection holds now (the catalog's included) by more than the limit
  // leaves: its own files hit the limit, the catalog's small commit would not.
  std::mt19937_64 random(53);
  std::string large;
  while (large.size() < (1u << 20)) large += "w" + std::to_string(random() % 1000000) + " ";
  const std::string add = DocumentJson("large", large, 0);
  std::pair<int, std::string> full;
  {
    test_support::ScopedFileSizeLimit limit(LargestFile(dir) + (128u << 10));
    full = Call("POST", "/v1/collections/archive/documents", add);
  }
  EXPECT_EQ(full.first, 507) << full.second;
  EXPECT_THAT(full.second, HasSubstr("\"code\":\"resource_exhausted\""));
  EXPECT_THAT(full.second, HasSubstr(dir));  // names the file that could not grow
  // Nothing was committed: same generation and counts, the document unknown,
  // and queries answer as before.
  EXPECT_EQ(Call("GET", "/v1/collections/archive").second, before);
  EXPECT_EQ(Call("GET", "/v1/collections/archive/documents/large").first, 404);
  EXPECT_THAT(Call("POST", "/v1/collections/archive/query", DocumentJson("q", texts[2], 0)).second,
              HasSubstr("{\"b\":\"" + PlantedId(2) + "\",\"a_in_b\":1,"));
  // Room again: the same add commits, and a restarted server has it.
  auto [status, body] = Call("POST", "/v1/collections/archive/documents", add);
  EXPECT_EQ(status, 200) << body;
  EXPECT_THAT(body, HasSubstr("\"added\":1,"));
  StopServer();
  StartServer(options);
  EXPECT_EQ(Call("GET", "/v1/collections/archive/documents/large").first, 200);
  EXPECT_THAT(Call("GET", "/v1/collections/archive").second, HasSubstr("\"documents\":6,"));
}

// A JSON-lines batch that fills the disk part way: 507 naming the document,
// the documents before it stored (and durable: a restart keeps them), none
// after it; the retried batch answers as the documents posted one by one.
TEST_F(ServerTest, AFullDiskStopsAStreamBatchAtTheDocumentThatDidNotFit) {
  StartServer();
  ASSERT_EQ(Call("PUT", "/v1/streams/s", "{}").first, 201);
  ASSERT_EQ(Call("PUT", "/v1/streams/t", "{}").first, 201);
  const std::vector<std::string> texts = PlantedTexts(12, 52);
  std::string batch;
  for (size_t i = 0; i < texts.size(); ++i) batch += DocumentJson(PlantedId(i), texts[i], 1) + "\n";
  const std::string log = dir_.Path("streams/s/log-00000000000000000000");
  ASSERT_TRUE(std::filesystem::exists(log));
  std::pair<int, std::string> full;
  {
    // Room for a few records (each holds the sketches: 2-4 KB), not twelve.
    test_support::ScopedFileSizeLimit limit(std::filesystem::file_size(log) + 9000);
    full = Call("POST", "/v1/streams/s/documents", batch, "application/x-ndjson");
  }
  EXPECT_EQ(full.first, 507) << full.second;
  EXPECT_THAT(full.second, HasSubstr("\"code\":\"resource_exhausted\""));
  EXPECT_THAT(full.second, HasSubstr("document \\\"doc-"));
  size_t stored = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const int found = Call("GET", "/v1/streams/s/documents/" + PlantedId(i)).first;
    EXPECT_EQ(found, i < stored || (i == stored && found == 200) ? 200 : 404) << i;
    if (found == 200 && i == stored) ++stored;
  }
  EXPECT_GT(stored, 0u);
  EXPECT_LT(stored, texts.size());
  StopServer();
  StartServer();  // the stored prefix was durable
  EXPECT_EQ(Call("GET", "/v1/streams/s/documents/" + PlantedId(stored - 1)).first, 200);
  EXPECT_EQ(Call("GET", "/v1/streams/s/documents/" + PlantedId(stored)).first, 404);
  // Room again: the retried batch gives the answers of the documents posted
  // one by one to a stream that never filled up.
  auto [status, answers] = Call("POST", "/v1/streams/s/documents", batch, "application/x-ndjson");
  EXPECT_EQ(status, 200) << answers;
  std::string one_by_one;
  for (size_t i = 0; i < texts.size(); ++i) {
    one_by_one +=
        Call("POST", "/v1/streams/t/documents", DocumentJson(PlantedId(i), texts[i], 1)).second;
  }
  EXPECT_EQ(answers, one_by_one);
}

}  // namespace
}  // namespace neardup::server
