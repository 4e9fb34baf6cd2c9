#include "io/input_files.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/io_test_util.h"

namespace neardup::internal {
namespace {

using test_support::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(IsJsonlNameTest, ByNameWithCompressionSuffixRemoved) {
  for (const char* name : {"a.jsonl", "dir/a.ndjson", "A.JSONL", "x.jsonl.gz", "x.ndjson.zst",
                           "x.JsonL.GZ", ".jsonl"}) {
    EXPECT_TRUE(IsJsonlName(name)) << name;
  }
  for (const char* name : {"a.json", "a.txt", "a.jsonl.txt", "a.gz", "jsonl", "a.jsonl.gz.gz",
                           "a.jsonl.bz2", "-", ""}) {
    EXPECT_FALSE(IsJsonlName(name)) << name;
  }
}

std::vector<std::string> Names(const std::vector<DirectoryEntry>& entries) {
  std::vector<std::string> names;
  for (const DirectoryEntry& e : entries) names.push_back(e.name);
  return names;
}

TEST(ListDirectoryTest, SortsRelativePathsByteWise) {
  TempDir dir;
  for (const char* name :
       {"b.txt", "a/z.txt", "a.txt", "a/b/c.txt", "B.txt", "\xc3\xa9.txt", "a-b.txt"}) {
    dir.Write(std::string("root/") + name, name);
  }
  std::filesystem::create_directories(dir.Path("root/empty/deeper"));
  Result<std::vector<DirectoryEntry>> entries = ListDirectory(dir.Path("root"));
  ASSERT_TRUE(entries.ok()) << entries.status();
  // '-' (0x2d) < '.' (0x2e) < '/' (0x2f) < 'B' < 'a' < 0xc3: a whole-path
  // sort, not a per-directory walk.
  EXPECT_THAT(Names(*entries), ElementsAre("B.txt", "a-b.txt", "a.txt", "a/b/c.txt", "a/z.txt",
                                           "b.txt", "\xc3\xa9.txt"));
  EXPECT_EQ((*entries)[3].path, dir.Path("root") + "/a/b/c.txt");
  // A trailing slash on the directory changes nothing but the openable path.
  Result<std::vector<DirectoryEntry>> slash = ListDirectory(dir.Path("root") + "/");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(Names(*slash), Names(*entries));
}

TEST(ListDirectoryTest, FollowsFileLinksNotDirectoryLinks) {
  TempDir dir;
  dir.Write("outside/f.txt", "outside");
  dir.Write("root/real.txt", "real");
  namespace fs = std::filesystem;
  fs::create_symlink(dir.Path("outside/f.txt"), dir.Path("root/link.txt"));
  fs::create_directory_symlink(dir.Path("outside"), dir.Path("root/linkdir"));
  fs::create_symlink(dir.Path("nowhere"), dir.Path("root/dangling"));
  Result<std::vector<DirectoryEntry>> entries = ListDirectory(dir.Path("root"));
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_THAT(Names(*entries), ElementsAre("dangling", "link.txt", "linkdir", "real.txt"));
  EXPECT_EQ((*entries)[0].skip_reason, "dangling symbolic link");
  EXPECT_EQ((*entries)[1].skip_reason, "");
  EXPECT_EQ((*entries)[2].skip_reason, "symbolic link to a directory (not followed)");
  EXPECT_EQ((*entries)[3].skip_reason, "");
}

TEST(ListDirectoryTest, MissingDirectoryIsAnError) {
  TempDir dir;
  Result<std::vector<DirectoryEntry>> entries = ListDirectory(dir.Path("absent"));
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), StatusCode::kIoError);
  EXPECT_THAT(entries.status().message(), HasSubstr("absent"));
}

}  // namespace
}  // namespace neardup::internal
