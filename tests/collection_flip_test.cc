// Damage to a collection's files is reported, never silent (issue 12, item
// 3). A seeded fuzzer flips one random bit of one file at a time -- every
// segment, the index and recipe.json (the SQLite catalog is left out: its
// pages carry no checksum, and every value read from it is range-checked
// instead, see collection_catalog_test.cc) -- and runs each operation a user
// runs (query with passages, stats, similar, add, remove, compact, verify)
// on a fresh copy of the damaged collection. Each must either fail with a
// Status or give exactly the output it gives on the undamaged collection;
// Verify must report every flip in a data file; nothing may crash (the test
// runs under ASan/UBSan in CI).
//
// NEARDUP_FLIP_COUNT overrides the number of flips (default 200, a few
// seconds); NEARDUP_FLIP_SEED the seed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "support/temp_dir.h"
#include "util/mix.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;
using test_support::ReadFileBytes;
using test_support::WriteFileBytes;

std::string Words(internal::SplitMix64& rng, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += "w" + std::to_string(rng.Next() % 400) + " ";
  return text;
}

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

std::vector<IncomingDocument> Incoming(
    const Fingerprinter& fingerprinter,
    const std::vector<std::pair<std::string, std::string>>& docs) {
  std::vector<IncomingDocument> out;
  for (const auto& [id, text] : docs) {
    Fingerprint fp;
    EXPECT_TRUE(fingerprinter.Compute(text, &fp).ok());
    out.push_back({id, id, text, fp.chunks, fp.simhash});
  }
  return out;
}

// Merges in the commit, not on a background thread: a merge that a thread
// finished before the commit would bump the generation the operations
// report, and the outputs must not depend on timing.
Result<std::unique_ptr<Collection>> OpenRw(const std::string& dir) {
  return Collection::Open(dir, {.mode = Collection::Mode::kReadWrite,
                                .clock = [] { return 7; },
                                .background_index_merges = false});
}

std::string Describe(const QueryResult& r) {
  std::string out = std::to_string(r.num_chunks) + ":";
  for (const QueryMatch& m : r.matches) {
    out += m.id + "/" + std::to_string(m.shared) + "/" + std::to_string(m.a_in_b) + "/" +
           std::to_string(m.b_in_a) + "[";
    for (const Passage& p : m.passages) {
      out += std::to_string(p.query_begin) + "-" + std::to_string(p.query_end) + "~" +
             std::to_string(p.match_begin) + "-" + std::to_string(p.match_end) + ",";
    }
    out += "] ";
  }
  return out;
}

// Where the copies live: tmpfs when there is one (each writer operation
// fsyncs several times, which on a disk makes the run ten times longer).
fs::path ScratchRoot() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec)) return "/dev/shm";
  return fs::temp_directory_path();
}

class CollectionFlipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ScratchRoot() / ("neardup_flip_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    master_ = (root_ / "master").string();
    ASSERT_TRUE(Collection::Create(master_, *PresetRecipe("default"),
                                   {.max_document_frequency = 6, .store_texts = true})
                    .ok());
    auto c = OpenRw(master_);
    ASSERT_TRUE(c.ok()) << c.status();
    auto fingerprinter = CreateCollectionFingerprinter(**c);
    ASSERT_TRUE(fingerprinter.ok());
    fingerprinter_ = std::move(fingerprinter).value();
    internal::SplitMix64 rng(11);
    const std::string shared = Words(rng, 30);
    for (int batch = 0; batch < 3; ++batch) {
      std::vector<std::pair<std::string, std::string>> docs;
      for (int i = 0; i < 8; ++i) {
        std::string text = Words(rng, 30 + static_cast<int>(rng.Next() % 30));
        if (i % 2 == 0) text += shared;
        docs.push_back({"d" + std::to_string(batch * 8 + i), text});
        if (batch == 0 && i < 4) queries_.push_back(text.substr(text.size() / 3) + Words(rng, 10));
      }
      ASSERT_TRUE((*c)->Commit(Incoming(*fingerprinter_, docs), {}).ok());
    }
    const std::vector<std::string> removed = {"d3", "d12"};  // dead rows
    ASSERT_TRUE((*c)->Commit({}, removed).ok());
    ASSERT_TRUE(ComputeSimilarities(**c, {.top_n = 3, .min_similarity = 0.05}).ok());
    ASSERT_TRUE((*c)->Verify().ok());
  }

  // Each operation on a fresh copy: its output, or the error it gave.
  std::map<std::string, std::function<Result<std::string>(const std::string&)>> Operations() {
    std::map<std::string, std::function<Result<std::string>(const std::string&)>> ops;
    ops["query"] = [this](const std::string& dir) -> Result<std::string> {
      NEARDUP_ASSIGN_OR_RETURN(auto c, Collection::Open(dir, {}));
      std::string out;
      for (const std::string& q : queries_) {
        NEARDUP_ASSIGN_OR_RETURN(
            QueryResult r, QueryDocument(*c, *fingerprinter_, q,
                                         {.top_n = 5, .min_similarity = 0.05, .passages_top = 2}));
        out += Describe(r) + "\n";
      }
      return out;
    };
    ops["stats"] = [](const std::string& dir) -> Result<std::string> {
      NEARDUP_ASSIGN_OR_RETURN(auto c, Collection::Open(dir, {}));
      NEARDUP_ASSIGN_OR_RETURN(CollectionStats s, c->Stats());
      return std::to_string(s.documents) + " " + std::to_string(s.segments) + " " +
             std::to_string(s.segment_rows) + " " + std::to_string(s.index_keys) + " " +
             std::to_string(s.index_postings) + " " + std::to_string(s.boilerplate_keys) + " " +
             std::to_string(s.similarity_rows) + " " + std::to_string(s.generation);
    };
    ops["similar"] = [](const std::string& dir) -> Result<std::string> {
      NEARDUP_ASSIGN_OR_RETURN(auto c, OpenRw(dir));
      NEARDUP_RETURN_IF_ERROR(
          ComputeSimilarities(*c, {.top_n = 4, .min_similarity = 0.01, .force_full = true}));
      NEARDUP_ASSIGN_OR_RETURN(std::vector<SimilarityRow> rows, c->ReadSimilarities());
      std::string out;
      for (const SimilarityRow& r : rows) {
        out += std::to_string(r.a) + ">" + std::to_string(r.b) + ":" + std::to_string(r.a_in_b) +
               "," + std::to_string(r.b_in_a) + " ";
      }
      return out;
    };
    ops["add"] = [this](const std::string& dir) -> Result<std::string> {
      NEARDUP_ASSIGN_OR_RETURN(auto c, OpenRw(dir));
      // Named: the documents' texts are views into it.
      const std::vector<std::pair<std::string, std::string>> texts = {{"new", queries_[0]},
                                                                      {"d1", queries_[1]}};
      auto docs = Incoming(*fingerprinter_, texts);
      NEARDUP_ASSIGN_OR_RETURN(CommitResult r, c->Commit(docs, {}));
      return std::to_string(r.added) + " " + std::to_string(r.modified) + " " +
             std::to_string(r.generation);
    };
    ops["remove"] = [](const std::string& dir) -> Result<std::string> {
      NEARDUP_ASSIGN_OR_RETURN(auto c, OpenRw(dir));
      const std::vector<std::string> ids = {"d5", "d20"};
      NEARDUP_ASSIGN_OR_RETURN(CommitResult r, c->Commit({}, ids));
      return std::to_string(r.removed) + " " + std::to_string(r.generation);
    };
    ops["compact"] = [](const std::string& dir) -> Result<std::string> {
      NEARDUP_ASSIGN_OR_RETURN(auto c, OpenRw(dir));
      NEARDUP_RETURN_IF_ERROR(c->Compact());
      NEARDUP_ASSIGN_OR_RETURN(CollectionStats s, c->Stats());
      return std::to_string(s.segments) + " " + std::to_string(s.segment_rows);
    };
    return ops;
  }

  std::vector<std::string> DamageableFiles() const {
    std::vector<std::string> files = {"recipe.json"};
    for (const auto& entry : fs::directory_iterator(fs::path(master_) / "data")) {
      files.push_back("data/" + entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Copy(const std::string& name) {
    const std::string to = (root_ / name).string();
    fs::remove_all(to);
    fs::copy(master_, to, fs::copy_options::recursive);
    return to;
  }

  fs::path root_;
  std::string master_;
  std::unique_ptr<Fingerprinter> fingerprinter_;
  std::vector<std::string> queries_;
};

TEST_F(CollectionFlipTest, EveryFlipIsAnErrorOrChangesNothing) {
  auto ops = Operations();
  std::map<std::string, std::string> baseline;
  for (auto& [name, op] : ops) {
    Result<std::string> out = op(Copy("clean"));
    ASSERT_TRUE(out.ok()) << name << ": " << out.status();
    baseline[name] = *out;
  }
  ASSERT_NE(baseline["query"].find("d1/"), std::string::npos) << baseline["query"];
  ASSERT_NE(baseline["query"].find('~'), std::string::npos) << "no passages: " << baseline["query"];

  const std::vector<std::string> files = DamageableFiles();
  ASSERT_GE(files.size(), 5u);  // recipe, index, three segments
  internal::SplitMix64 rng(EnvOr("NEARDUP_FLIP_SEED", 2026));
  const uint64_t flips = EnvOr("NEARDUP_FLIP_COUNT", 200);
  std::map<std::string, int> detected;  // by operation
  for (uint64_t f = 0; f < flips; ++f) {
    const std::string file = files[rng.Next() % files.size()];
    const std::string bytes = ReadFileBytes(master_ + "/" + file);
    ASSERT_FALSE(bytes.empty()) << file;
    const size_t offset = rng.Next() % bytes.size();
    const int bit = static_cast<int>(rng.Next() % 8);
    std::string damaged = bytes;
    damaged[offset] = static_cast<char>(damaged[offset] ^ (1 << bit));
    const std::string where = file + " byte " + std::to_string(offset) + " bit " +
                              std::to_string(bit) + " (flip " + std::to_string(f) + ")";
    for (auto& [name, op] : ops) {
      const std::string dir = Copy("damaged");
      WriteFileBytes(dir + "/" + file, damaged);
      Result<std::string> out = op(dir);
      if (!out.ok()) {
        EXPECT_FALSE(out.status().message().empty()) << where;
        ++detected[name];
        continue;
      }
      EXPECT_EQ(*out, baseline[name])
          << name << " gave a different output, silently, after " << where;
    }
    // The full check finds every flip in a data file.
    const std::string dir = Copy("damaged");
    WriteFileBytes(dir + "/" + file, damaged);
    Status verified = [&]() -> Status {
      Collection::OpenOptions options;
      options.verify_index = false;  // Verify's own check must find index damage
      NEARDUP_ASSIGN_OR_RETURN(auto c, Collection::Open(dir, options));
      return c->Verify();
    }();
    if (file.rfind("data/", 0) == 0) {
      EXPECT_EQ(verified.code(), StatusCode::kDataLoss) << "Verify missed " << where;
      EXPECT_NE(verified.message().find(file.substr(5)), std::string::npos)
          << "the message does not name the file: " << verified.message();
    } else {
      EXPECT_TRUE(verified.ok()) << where << ": " << verified;
    }
  }
  // The fuzzer reached the writers' checks, not only Open's.
  EXPECT_GT(detected["compact"], 0);
  EXPECT_GT(detected["query"], 0);
}

}  // namespace
}  // namespace neardup
