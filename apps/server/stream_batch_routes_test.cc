// A JSON-lines batch POST against the same documents posted one by one: the
// answers must be identical, byte for byte (the batch is fingerprinted in
// parallel and decided in order: NearDuplicateStream::AddBatch).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "server_test_util.h"

namespace neardup::server {
namespace {

using test_util::DocumentJson;
using test_util::PlantedId;
using test_util::PlantedTexts;
using test_util::ServerTest;

// The answer lines of one POST of `lines` (JSON lines) to `path`.
std::string PostLines(httplib::Client& client, const std::string& path,
                      const std::vector<std::string>& lines, size_t begin, size_t end) {
  std::string body;
  for (size_t i = begin; i < end; ++i) body += lines[i] + "\n";
  auto res = client.Post(path, body, "application/x-ndjson");
  EXPECT_TRUE(res);
  if (!res) return "";
  EXPECT_EQ(res->status, 200) << res->body;
  return res->body;
}

TEST_F(ServerTest, ABatchPostAnswersLikeTheSameDocumentsPostedOneByOne) {
  ServiceOptions options;
  options.sync = false;  // the answers are the same; 360 fsyncs would only be slow
  StartServer(options);
  // A window and a cap, so documents leave in the middle of a batch too.
  const std::string config = R"({"window_seconds": 2000, "max_documents": 150})";
  ASSERT_EQ(Call("PUT", "/v1/streams/one", config).first, 201);
  ASSERT_EQ(Call("PUT", "/v1/streams/many", config).first, 201);
  // Planted near-duplicates (also within one batch), ids posted again with
  // another text (within a batch and across batches), times going back and
  // forth.
  const std::vector<std::string> texts = PlantedTexts(360, 41);
  std::mt19937_64 random(41);
  std::vector<std::string> lines;
  std::vector<std::string> ids;
  for (size_t i = 0; i < texts.size(); ++i) {
    const bool repeat = i > 0 && random() % 8 == 0;
    ids.push_back(repeat ? ids[random() % i] : PlantedId(i));
    const int64_t time = static_cast<int64_t>(i * 10) - static_cast<int64_t>(random() % 30);
    lines.push_back(DocumentJson(ids.back(), texts[i], time));
  }
  auto client = NewClient();
  std::string one_by_one;
  for (size_t i = 0; i < lines.size(); ++i) {
    one_by_one += PostLines(*client, "/v1/streams/one/documents", lines, i, i + 1);
  }
  std::string batched;
  // Sizes 1, 45 and 200 (over kStreamBatchGroup: several groups per POST).
  const size_t sizes[] = {1, 45, 200, 45, 69};
  size_t begin = 0;
  for (size_t size : sizes) {
    batched += PostLines(*client, "/v1/streams/many/documents", lines, begin, begin + size);
    begin += size;
  }
  ASSERT_EQ(begin, lines.size());
  EXPECT_EQ(batched, one_by_one);
  EXPECT_EQ(std::count(batched.begin(), batched.end(), '\n'), 360);
  // The corpus has what the comparison needs: near-duplicates (of documents
  // of the same batch too) and repeated ids.
  size_t duplicates = 0;
  for (size_t at = 0; (at = batched.find("\"near_duplicate\"", at)) != std::string::npos; ++at) {
    ++duplicates;
  }
  EXPECT_GT(duplicates, 20u);
  // Stored answers and counts agree too.
  for (const std::string& id : {ids[7], ids[180], ids[359]}) {
    EXPECT_EQ(Call("GET", "/v1/streams/many/documents/" + id),
              Call("GET", "/v1/streams/one/documents/" + id));
  }
  auto counts = [&](const std::string& name) {
    std::string body = Call("GET", "/v1/streams/" + name).second;
    return body.substr(body.find("\"documents\""));
  };
  EXPECT_EQ(counts("many"), counts("one"));
  // A batch /check answers each line against the stream as it is, storing
  // nothing; its lines equal single /check POSTs now.
  std::string checked;
  std::string batch_checked = PostLines(*client, "/v1/streams/one/check", lines, 0, 60);
  for (size_t i = 0; i < 60; ++i) {
    checked += PostLines(*client, "/v1/streams/one/check", lines, i, i + 1);
  }
  EXPECT_EQ(batch_checked, checked);
  EXPECT_EQ(counts("one"), counts("many"));
}

}  // namespace
}  // namespace neardup::server
