// A mapped file's pages leave the process when released (from any thread),
// and the bytes read the same after.
#include "io/mapped_input.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "io/io_test_util.h"

namespace neardup::internal {
namespace {

// The resident kilobytes of the mapping that starts at `begin`, from
// /proc/self/smaps; -1 when it is not listed.
long MappingRssKb(const void* begin) {
  std::ifstream smaps("/proc/self/smaps");
  char start[32];
  std::snprintf(start, sizeof start, "%lx-", reinterpret_cast<unsigned long>(begin));
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    if (line.rfind(start, 0) == 0) in_mapping = true;
    if (in_mapping && line.rfind("Rss:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      long kb = -1;
      fields >> kb;
      return kb;
    }
  }
  return -1;
}

TEST(MappedInputTest, QueuedReleasesDropThePagesFromAnyThread) {
  test_support::TempDir dir;
  const std::string contents = testing::RandomBytes(size_t{1} << 20, 5);
  std::shared_ptr<const MappedInput> file = MappedInput::Map(dir.Write("in.jsonl", contents));
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::string(file->data(), file->size()), contents);  // every page touched
  const long touched = MappingRssKb(file->data());
  if (touched < 0) GTEST_SKIP() << "no /proc/self/smaps";
  EXPECT_GE(touched, 1000);
  PageReleaseQueue releases;
  // Three chunks, cut off page boundaries; the last one keeps its end page.
  releases.Add(file, file->data(), 300000);
  releases.Add(file, file->data() + 300000, 400000);
  releases.Add(file, file->data() + 700000, 300000);
  EXPECT_GE(MappingRssKb(file->data()), 1000);  // added is not released
  std::thread([&] { releases.ReleaseAll(); }).join();
  EXPECT_LE(MappingRssKb(file->data()), 100);
  releases.ReleaseAll();  // nothing left: no-op
  EXPECT_EQ(std::string(file->data(), file->size()), contents);
}

}  // namespace
}  // namespace neardup::internal
