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

#include "support/temp_dir.h"

namespace neardup::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CliTestBase : public ::testing::Test {
 protected:
  // Runs `neardup <args>` through the shell (args are trusted test strings).
  // With timeout_seconds, a run that would hang is killed (exit code 137)
  // rather than hanging the test.
  CommandResult Neardup(const std::string& args, int timeout_seconds = 0) {
    return NeardupWithEnv("", args, timeout_seconds);
  }

  // The same with `environment` ("NAME=value ...", trusted) set for the
  // neardup process only (not for the shell or `timeout` that start it).
  CommandResult NeardupWithEnv(const std::string& environment, const std::string& args,
                               int timeout_seconds = 0) {
    std::string err_path = (dir_ / "stderr.txt").string();
    std::string command =
        (timeout_seconds > 0 ? "timeout -s KILL " + std::to_string(timeout_seconds) + " " : "") +
        (environment.empty() ? "" : "env " + environment + " ") + std::string(NEARDUP_CLI) + " " +
        args + " 2>" + err_path;
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
  // The example's lines repeated until they reach `bytes` (whole copies):
  // an input large enough to be read in several chunks and mappings.
  static std::string ExampleRepeatedTo(size_t bytes) {
    const std::string example = Read(Example());
    std::string repeated;
    while (repeated.size() < bytes) repeated += example;
    return repeated;
  }

  neardup::test_support::TempDir temp_;  // removed after each test
  std::filesystem::path dir_ = temp_.dir();
};

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_CLI_TEST_UTIL_H_
