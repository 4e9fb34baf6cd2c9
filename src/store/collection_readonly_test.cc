// Readers of a collection need no write access (issue 12, item 5): a
// read-only open creates, changes and locks nothing, and works for a user
// with read permission only, with or without SQLite's -wal/-shm files.
//
// Permissions do not bind root, which runs these tests in CI: the
// permission tests run their reader in a child that drops to user nobody
// (skipped, saying so, where that is not possible).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "support/temp_dir.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;

class CollectionReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Collection::Create(Dir(), *PresetRecipe("default"), {}).ok());
    auto c = Collection::Open(Dir(), {.mode = Collection::Mode::kReadWrite, .clock = {}});
    ASSERT_TRUE(c.ok()) << c.status();
    const std::vector<uint32_t> a = {1, 2, 3}, b = {3, 4}, d = {9};
    std::vector<IncomingDocument> docs = {{"a", "a", "text a", a, 1}, {"b", "b", "text b", b, 2}};
    ASSERT_TRUE((*c)->Commit(docs, {}).ok());
    std::vector<IncomingDocument> more = {{"d", "d", "text d", d, 3}};
    ASSERT_TRUE((*c)->Commit(more, {}).ok());
    const SimilarityRow row{0, 1, 0.5, 0.25};
    ASSERT_TRUE((*c)->StoreSimilarities({3, 0.1}, true, {}, {&row, 1}).ok());
  }
  void TearDown() override {
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(temp_.dir(), ec)) {
      fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add, ec);
    }
  }

  std::string Dir() const { return temp_.Path("c"); }

  // Everything a reader does, on a read-only open: "" or the first failure.
  static std::string ReadEverything(const std::string& dir) {
    Result<std::unique_ptr<Collection>> c = Collection::Open(dir, {});
    if (!c.ok()) return "open: " + c.status().ToString();
    Result<CollectionStats> stats = (*c)->Stats();
    if (!stats.ok()) return "stats: " + stats.status().ToString();
    if (stats->documents != 3 || stats->similarity_rows != 1) return "stats: wrong counts";
    Result<std::vector<DocumentInfo>> docs = (*c)->ListDocuments();
    if (!docs.ok() || docs->size() != 3) return "list";
    Result<std::string> text = (*c)->Text(1);
    if (!text.ok() || *text != "text b") return "text";
    Result<std::span<const uint32_t>> chunks = (*c)->Chunks(0);
    if (!chunks.ok() || chunks->size() != 3) return "chunks";
    if ((*c)->index().Postings(3).size() != 2) return "postings";
    Result<std::vector<SimilarityRow>> rows = (*c)->ReadSimilarities();
    if (!rows.ok() || rows->size() != 1) return "similarities";
    Result<std::map<uint32_t, std::string>> ids = (*c)->ExternalIds(std::vector<uint32_t>{2});
    if (!ids.ok() || ids->at(2) != "d") return "ids";
    return "";
  }

  // Runs ReadEverything in a child process as user nobody (when root) after
  // `chmod -R a-w`; "" when it succeeded, else its failure. Sets *skipped
  // when the child cannot drop its privileges.
  std::string ReadAsUnprivileged(bool* skipped) {
    for (const auto& entry : fs::recursive_directory_iterator(Dir())) {
      fs::permissions(entry.path(),
                      fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                      fs::perm_options::remove);
    }
    fs::permissions(Dir(),
                    fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                    fs::perm_options::remove);
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      std::string result;
      if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
        result = "SKIP";
      } else {
        result = ReadEverything(Dir());
        // The check that permissions bind: this user cannot write here.
        if (result.empty() && ::access(Dir().c_str(), W_OK) == 0) result = "SKIP";
      }
      (void)!::write(fds[1], result.data(), result.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buffer[512];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, n);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    *skipped = out == "SKIP";
    return *skipped ? "" : out;
  }

  test_support::TempDir temp_;
};

struct FileState {
  uintmax_t size;
  int64_t mtime_ns;
  std::string bytes;
  friend bool operator==(const FileState&, const FileState&) = default;
};

std::map<std::string, FileState> Snapshot(const std::string& dir) {
  std::map<std::string, FileState> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = fs::relative(entry.path(), dir).string();
    struct stat st;
    EXPECT_EQ(::stat(entry.path().c_str(), &st), 0);
    FileState state{entry.file_size(), int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
                    test_support::ReadFileBytes(entry.path().string())};
    // SQLite's -shm is the shared-memory index of the log, which every
    // reader updates by design (it holds no data); it must exist, and stay.
    if (name == "catalog.db-shm") state = {0, 0, ""};
    files[name] = state;
  }
  return files;
}

TEST_F(CollectionReadOnlyTest, ReadersCreateAndChangeNothing) {
  const auto before = Snapshot(Dir());
  ASSERT_TRUE(before.count("catalog.db-wal")) << "the writer must leave its log for readers";
  ASSERT_TRUE(before.count("catalog.db-shm"));
  EXPECT_EQ(ReadEverything(Dir()), "");
  Result<std::unique_ptr<Collection>> c = Collection::Open(Dir(), {});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)->Verify().ok());
  c->reset();
  EXPECT_EQ(Snapshot(Dir()), before);
}

// A reader needs no writer lock: it reads while a writer holds it.
TEST_F(CollectionReadOnlyTest, ReadersIgnoreTheWriterLock) {
  auto writer = Collection::Open(Dir(), {.mode = Collection::Mode::kReadWrite, .clock = {}});
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ(ReadEverything(Dir()), "");
}

TEST_F(CollectionReadOnlyTest, ReadPermissionOnlyIsEnough) {
  bool skipped = false;
  EXPECT_EQ(ReadAsUnprivileged(&skipped), "");
  if (skipped) GTEST_SKIP() << "cannot drop to an unprivileged user here; permissions not tested";
}

// A collection whose -wal/-shm are gone (copied without them, or written
// before they were kept) on a read-only directory: the catalog file alone
// is read (immutable), as long as the log holds nothing.
TEST_F(CollectionReadOnlyTest, ReadOnlyDirectoryWithoutTheLogFiles) {
  fs::remove(Dir() + "/catalog.db-wal");
  fs::remove(Dir() + "/catalog.db-shm");
  bool skipped = false;
  EXPECT_EQ(ReadAsUnprivileged(&skipped), "");
  if (skipped) GTEST_SKIP() << "cannot drop to an unprivileged user here; permissions not tested";
  EXPECT_FALSE(fs::exists(Dir() + "/catalog.db-shm"));
}

}  // namespace
}  // namespace neardup
