// A GoogleTest fixture for end-to-end tests of the `neardup` binary: a
// per-test temporary directory, a runner that captures stdout, stderr and the
// exit code, and small file helpers.
#ifndef NEARDUP_TESTS_CLI_TEST_UTIL_H_
#define NEARDUP_TESTS_CLI_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace neardup::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CliTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("neardup_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `neardup <args>` through the shell (args are trusted test strings).
  CommandResult Neardup(const std::string& args) {
    std::string err_path = (dir_ / "stderr.txt").string();
    std::string command = std::string(NEARDUP_CLI) + " " + args + " 2>" + err_path;
    CommandResult run;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) {
      ADD_FAILURE() << "popen failed for " << command;
      return run;
    }
    char buffer[65536];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
    int status = pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.err = Read(err_path);
    return run;
  }

  // Writes `content` to `name` under the test directory (creating parent
  // directories) and returns its path.
  std::string Write(const std::string& name, const std::string& content) {
    std::filesystem::path path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  static std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
  }

  static std::string Example() { return std::string(NEARDUP_SOURCE_DIR) + "/examples/news.jsonl"; }

  std::filesystem::path dir_;
};

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_CLI_TEST_UTIL_H_
