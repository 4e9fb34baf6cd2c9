// Test support shared by the tests of every module and front end: a per-test
// temporary directory and whole-file reads and writes (for tests that damage
// files). Standard library and GoogleTest only.
#ifndef NEARDUP_TESTS_SUPPORT_TEMP_DIR_H_
#define NEARDUP_TESTS_SUPPORT_TEMP_DIR_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace neardup::test_support {

// A fresh directory under the system temp directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string leaf = std::string("neardup_test_") + info->test_suite_name() + "_" + info->name() +
                       "_" + std::to_string(std::random_device{}());
    std::replace(leaf.begin(), leaf.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() / leaf;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `contents` to `relative` (parents created) and returns its path.
  std::string Write(const std::string& relative, const std::string& contents) const {
    std::filesystem::path p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    EXPECT_TRUE(out.good()) << p;
    return p.string();
  }
  std::string Path(const std::string& relative) const { return (path_ / relative).string(); }
  std::string path() const { return path_.string(); }
  const std::filesystem::path& dir() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The whole of a file ("" when it cannot be read).
inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Replaces the file at `path` with `bytes`.
inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << path;
}

}  // namespace neardup::test_support

#endif  // NEARDUP_TESTS_SUPPORT_TEMP_DIR_H_
