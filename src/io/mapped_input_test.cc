// A mapped file's pages leave the process when released (from any thread),
// and the bytes read the same after. A file truncated under its mapping
// reads zeros where its lost bytes were, instead of killing the process
// with SIGBUS, and CheckRead says which ranges were read intact.
#include "io/mapped_input.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

size_t TestPageSize() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

// The file shrinks to 1.5 pages under a mapping of 5: its bytes before the
// cut read as before, the rest as zeros; the vanished pages are found (not
// the partial one), and CheckRead passes exactly the ranges that end
// before the cut.
TEST(MappedInputTest, ATruncatedFileReadsZerosAndTheLossIsReported) {
  test_support::TempDir dir;
  const size_t page = TestPageSize();
  const std::string contents = testing::RandomBytes(5 * page, 9);
  const std::string path = dir.Write("in.jsonl", contents);
  std::shared_ptr<const MappedInput> file = MappedInput::Map(path);
  ASSERT_NE(file, nullptr);
  const size_t cut = page + page / 2;
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
  EXPECT_FALSE(file->damaged());
  EXPECT_TRUE(file->CheckRead(cut).ok());              // nothing past the cut read yet
  const std::string read(file->data(), file->size());  // faults on pages 2-4
  EXPECT_EQ(read.substr(0, cut), contents.substr(0, cut));
  EXPECT_EQ(read.substr(cut), std::string(contents.size() - cut, '\0'));
  EXPECT_TRUE(file->damaged());
  EXPECT_TRUE(file->CheckRead(page).ok());
  EXPECT_TRUE(file->CheckRead(1).ok());
  EXPECT_TRUE(file->CheckRead(cut).ok());  // its last page was cut after it
  const std::string shrank = "input " + path + " shrank while it was read (" +
                             std::to_string(5 * page) + " -> " + std::to_string(cut) + " bytes)";
  for (size_t end : {cut + 1, 2 * page, 2 * page + 1, 5 * page}) {
    const Status status = file->CheckRead(end);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << end;
    EXPECT_EQ(status.message(), shrank) << end;
  }
}

// The bytes of the last page past a new end read as zeros with no fault:
// only the file's size shows the loss.
TEST(MappedInputTest, ALossInsideTheLastPageIsFoundByTheFileSize) {
  test_support::TempDir dir;
  const std::string contents = testing::RandomBytes(3000, 10);
  const std::string path = dir.Write("in.jsonl", contents);
  std::shared_ptr<const MappedInput> file = MappedInput::Map(path);
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(::truncate(path.c_str(), 1000), 0);
  EXPECT_EQ(std::string(file->data() + 1000, 2000), std::string(2000, '\0'));
  EXPECT_FALSE(file->damaged());
  EXPECT_TRUE(file->CheckRead(1000).ok());
  EXPECT_EQ(file->CheckRead(1001).message(),
            "input " + path + " shrank while it was read (3000 -> 1000 bytes)");
  // Truncated to nothing, then grown back: the bytes read were not the
  // file's, whatever its size now.
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  const std::string big = testing::RandomBytes(3 * TestPageSize(), 11);
  std::shared_ptr<const MappedInput> large = MappedInput::Map(dir.Write("big.jsonl", big));
  ASSERT_NE(large, nullptr);
  ASSERT_EQ(::truncate(large->path().c_str(), 0), 0);
  EXPECT_EQ(large->data()[big.size() - 1], '\0');
  ASSERT_EQ(::truncate(large->path().c_str(), static_cast<off_t>(2 * big.size())), 0);
  EXPECT_EQ(large->CheckRead(big.size()).message(),
            "input " + large->path() + " changed while it was read (part of its " +
                std::to_string(big.size()) + " bytes vanished; the path now holds " +
                std::to_string(2 * big.size()) + " bytes)");
}

// Written in place at the same size, grown, replaced or removed after the
// mapping: the mapping reads the new bytes where they were written (a mix of
// two versions), and the last range's check, or CheckUnchanged, says so.
TEST(MappedInputTest, AFileChangedUnderItsMappingIsFoundAtItsLastRange) {
  test_support::TempDir dir;
  const size_t page = TestPageSize();
  const std::string contents = testing::RandomBytes(3 * page + 100, 12);
  const std::string size = std::to_string(contents.size());
  const std::string path = dir.Write("in.jsonl", contents);
  std::shared_ptr<const MappedInput> file = MappedInput::Map(path);
  ASSERT_NE(file, nullptr);
  EXPECT_TRUE(file->CheckRead(contents.size()).ok());
  EXPECT_TRUE(file->CheckUnchanged().ok());

  const std::string changed = "input " + path + " changed while it was read (";
  testing::RewriteInPlace(path, page + 5, "rewritten");
  EXPECT_EQ(std::string(file->data() + page + 5, 9), "rewritten");
  EXPECT_TRUE(file->CheckRead(2 * page).ok()) << "not the last range: its bytes are all there";
  const std::string same_size =
      changed + "written or its status changed at the same size, " + size + " bytes)";
  EXPECT_EQ(file->CheckRead(contents.size()).message(), same_size);
  EXPECT_EQ(file->CheckUnchanged().code(), StatusCode::kDataLoss);
  EXPECT_EQ(file->CheckUnchanged().message(), same_size);
  // Written back as it was, with its old modification time: the status
  // change time still moved. The wait outlasts the coarse clock's tick
  // (1-10 ms) that stamps ctime on kernels before 6.13, so the move shows.
  ::usleep(30000);
  testing::RewriteInPlace(path, page + 5, contents.substr(page + 5, 9), 0);
  const struct timespec times[2] = {
      {0, UTIME_OMIT},
      {static_cast<time_t>(file->modified_ns() / 1000000000), file->modified_ns() % 1000000000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(TimeNanoseconds(st.st_mtim), file->modified_ns());
  ASSERT_NE(TimeNanoseconds(st.st_ctim), file->changed_ns());
  EXPECT_EQ(file->CheckUnchanged().message(), same_size);

  // An append is a change: appended or rewritten longer, it cannot tell.
  std::shared_ptr<const MappedInput> appended = MappedInput::Map(dir.Write("log.jsonl", contents));
  ASSERT_NE(appended, nullptr);
  std::ofstream(appended->path(), std::ios::app) << "more\n";
  EXPECT_EQ(appended->CheckRead(contents.size()).message(),
            "input " + appended->path() + " changed while it was read (it grew from " + size +
                " to " + std::to_string(contents.size() + 5) + " bytes: appended to or rewritten)");

  // Another file at the path (an editor's or rsync's rename over it), or
  // none at all.
  std::shared_ptr<const MappedInput> replaced = MappedInput::Map(dir.Write("r.jsonl", contents));
  ASSERT_NE(replaced, nullptr);
  ASSERT_EQ(std::rename(dir.Write("new.jsonl", contents).c_str(), replaced->path().c_str()), 0);
  EXPECT_EQ(replaced->CheckRead(contents.size()).message(),
            "input " + replaced->path() +
                " changed while it was read (the path names another "
                "file now)");
  ASSERT_EQ(std::remove(replaced->path().c_str()), 0);
  EXPECT_EQ(
      replaced->CheckUnchanged().message(),
      "input " + replaced->path() + " changed while it was read (now: No such file or directory)");
  EXPECT_EQ(std::string(replaced->data(), contents.size()), contents);
}

// Faults of many threads on one mapping, and of mappings made and dropped
// meanwhile (the registry's slots are reused), all come back as zeros.
TEST(MappedInputTest, ConcurrentFaultsOnManyMappingsAreAllCaught) {
  test_support::TempDir dir;
  const size_t page = TestPageSize();
  const std::string contents = testing::RandomBytes(64 * page, 12);
  std::vector<std::shared_ptr<const MappedInput>> files;
  for (int i = 0; i < 70; ++i) {  // more than one block of slots
    files.push_back(MappedInput::Map(dir.Write("f" + std::to_string(i), contents)));
    ASSERT_NE(files.back(), nullptr);
    ASSERT_EQ(::truncate(files.back()->path().c_str(), 0), 0);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t f = t; f < files.size(); f += 2) {
        size_t sum = 0;
        for (size_t at = 0; at < contents.size(); at += page) sum += files[f]->data()[at];
        EXPECT_EQ(sum, 0u);
        // A mapping made and dropped while the others fault.
        EXPECT_NE(MappedInput::Map(dir.Write("t" + std::to_string(t), contents)), nullptr);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& file : files) EXPECT_EQ(file->CheckRead(1).code(), StatusCode::kDataLoss);
}

// What the guard hands on goes where it went before the guard. Everything
// runs inside the child, so the previous action is set before the guard is
// installed there (its first mapping installs it).
void FaultOutsideEveryMapping(const std::string& path, size_t page) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) std::abort();
  void* raw = ::mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE, ::fileno(f), 0);
  if (raw == MAP_FAILED) std::abort();
  if (::truncate(path.c_str(), 0) != 0) std::abort();
  std::printf("%d\n", static_cast<const volatile char*>(raw)[page]);
}

// SIGBUS's action: a plain handler, or one with SA_SIGINFO.
void SetSigbusAction(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}
void SetSigbusAction(void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction action {};
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

void ExitWith42(int) { _exit(42); }
void ExitWith43(int, siginfo_t* info, void*) { _exit(info->si_code > 0 ? 43 : 44); }

TEST(MappedInputDeathTest, AForeignFaultGoesWhereItWentBeforeTheGuard) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test_support::TempDir dir;
  const size_t page = TestPageSize();
  const std::string guarded = dir.Write("guarded", std::string(2 * page, 'g'));
  const std::string other = dir.Write("other", std::string(2 * page, 'x'));
  // The default action (set here, not a sanitizer's handler, which would
  // exit instead): the process dies of the signal. A failed mmap (a
  // segfault) or an abort fails the check.
  EXPECT_EXIT(
      {
        SetSigbusAction(SIG_DFL);
        if (MappedInput::Map(guarded) == nullptr) std::abort();
        FaultOutsideEveryMapping(other, page);
      },
      ::testing::KilledBySignal(SIGBUS), "");
  EXPECT_EXIT(
      {
        SetSigbusAction(ExitWith42);
        if (MappedInput::Map(guarded) == nullptr) std::abort();
        FaultOutsideEveryMapping(other, page);
      },
      ::testing::ExitedWithCode(42), "");
  EXPECT_EXIT(
      {
        SetSigbusAction(ExitWith43);
        if (MappedInput::Map(guarded) == nullptr) std::abort();
        FaultOutsideEveryMapping(other, page);
      },
      ::testing::ExitedWithCode(43), "");
}

// A SIGBUS sent by another process has no fault address: the guard does
// not look it up, and it acts as it did before the guard (the default:
// the process ends; ignored: it goes on).
TEST(MappedInputDeathTest, ASentSigbusActsAsBeforeTheGuard) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test_support::TempDir dir;
  const std::string guarded = dir.Write("guarded", std::string(2 * TestPageSize(), 'g'));
  EXPECT_EXIT(
      {
        SetSigbusAction(SIG_DFL);
        if (MappedInput::Map(guarded) == nullptr) std::abort();
        ::kill(::getpid(), SIGBUS);
        _exit(0);
      },
      ::testing::KilledBySignal(SIGBUS), "");
  EXPECT_EXIT(
      {
        SetSigbusAction(SIG_IGN);
        if (MappedInput::Map(guarded) == nullptr) std::abort();
        ::kill(::getpid(), SIGBUS);
        _exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace neardup::internal
