// huge_pages.h: the pure parts, and the restart's ways out. A restart that
// should not happen re-executes this binary into a test that fails
// (HugePagesSentinel), so a broken check fails rather than passing or
// looping; the one restart that should happen re-executes it into a test
// that checks the new process's environment.
#include "huge_pages.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace neardup::cli {
namespace {

constexpr const char* kOff = "NEARDUP_TEST_HUGEPAGES";
constexpr const char* kMarker = "NEARDUP_TEST_HUGEPAGES_RESTARTED";

// Sets an environment variable (or removes it) for one test, restoring it
// after.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* before = std::getenv(name)) before_ = before;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (before_) {
      setenv(name_, before_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> before_;
};

// A file holding `text`, in place of the kernel's THP setting.
class ThpFile {
 public:
  explicit ThpFile(std::string_view text)
      : path_(testing::TempDir() + "thp_enabled_" +
              testing::UnitTest::GetInstance()->current_test_info()->name()) {
    std::FILE* file = std::fopen(path_.c_str(), "w");
    EXPECT_NE(file, nullptr) << path_;
    if (file == nullptr) return;
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
  }
  ~ThpFile() { std::remove(path_.c_str()); }
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

// This binary again, running only the (disabled) tests of `suite`.
struct Argv {
  explicit Argv(const char* suite) : filter(std::string("--gtest_filter=") + suite + ".*") {}
  char** get() {
    argv[0] = name.data();
    argv[1] = filter.data();
    argv[2] = also_disabled.data();
    argv[3] = nullptr;
    return argv;
  }
  std::string name = "frontend_test";
  std::string filter;
  std::string also_disabled = "--gtest_also_run_disabled_tests";
  char* argv[4];
};

bool GlibcWithHugePages() {
#if defined(__GLIBC__)
  return GlibcReadsMallocHugePages(gnu_get_libc_version());
#else
  return false;
#endif
}

TEST(HugePagesTest, TunableAddedWhereTheKernelWaitsToBeAsked) {
  const std::string_view madvise = "always [madvise] never\n";
  EXPECT_EQ(TunablesWithMallocHugePages(nullptr, madvise), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(TunablesWithMallocHugePages("", madvise), "glibc.malloc.hugetlb=1");
  // Other tunables are kept, before it.
  EXPECT_EQ(TunablesWithMallocHugePages("glibc.malloc.top_pad=0", madvise),
            "glibc.malloc.top_pad=0:glibc.malloc.hugetlb=1");
}

TEST(HugePagesTest, TunablesLeftAsTheyAre) {
  // The kernel gives them without asking, or never.
  for (const std::string_view enabled :
       {"[always] madvise never\n", "always madvise [never]\n", "", "madvise"}) {
    EXPECT_EQ(TunablesWithMallocHugePages(nullptr, enabled), std::nullopt) << enabled;
  }
  // The tunable named already, whatever its value.
  for (const char* value : {"glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=1",
                            "glibc.malloc.top_pad=0:glibc.malloc.hugetlb=2"}) {
    EXPECT_EQ(TunablesWithMallocHugePages(value, "always [madvise] never"), std::nullopt) << value;
  }
}

TEST(HugePagesTest, GlibcVersions) {
  for (const char* version : {"2.35", "2.36", "2.40", "3.0", "2.35.1"}) {
    EXPECT_TRUE(GlibcReadsMallocHugePages(version)) << version;
  }
  for (const char* version : {"2.34", "2.31", "2.9", "1.99", "", "2", "x.35", "2."}) {
    EXPECT_FALSE(GlibcReadsMallocHugePages(version)) << version;
  }
}

// Reached only through a restart that should not have happened.
TEST(HugePagesSentinel, DISABLED_NotRestarted) {
  FAIL() << "RestartWithMallocHugePages restarted where it should have returned";
}

// Each way out returns, the environment as it was (a restart would run
// HugePagesSentinel instead).
TEST(HugePagesTest, RestartTurnedOffByZero) {
  ThpFile madvise("always [madvise] never\n");
  ScopedVariable tunables("GLIBC_TUNABLES", "glibc.malloc.top_pad=0");
  ScopedVariable off(kOff, "0");
  ScopedVariable marker(kMarker, nullptr);
  Argv argv("HugePagesSentinel");
  RestartWithMallocHugePages(argv.get(), kOff, kMarker, madvise.path());
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.top_pad=0");
  EXPECT_STREQ(std::getenv(kOff), "0");
  EXPECT_EQ(std::getenv(kMarker), nullptr);
}

TEST(HugePagesTest, NoRestartWhereTheKernelGivesNoneOrWithoutAsking) {
  ScopedVariable tunables("GLIBC_TUNABLES", nullptr);
  ScopedVariable off(kOff, nullptr);
  ScopedVariable marker(kMarker, nullptr);
  for (const char* text : {"always madvise [never]\n", "[always] madvise never\n"}) {
    ThpFile file(text);
    Argv argv("HugePagesSentinel");
    RestartWithMallocHugePages(argv.get(), kOff, kMarker, file.path());
    EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr) << text;
    EXPECT_EQ(std::getenv(kMarker), nullptr) << text;
  }
  Argv argv("HugePagesSentinel");
  RestartWithMallocHugePages(argv.get(), kOff, kMarker, "/nonexistent/thp_enabled");
  EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
}

// The restarted process: the marker is removed, nothing else done.
TEST(HugePagesTest, TheRestartedProcessGoesOn) {
  ThpFile madvise("always [madvise] never\n");
  ScopedVariable tunables("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1");
  ScopedVariable off(kOff, nullptr);
  ScopedVariable marker(kMarker, "1");
  Argv argv("HugePagesSentinel");
  RestartWithMallocHugePages(argv.get(), kOff, kMarker, madvise.path());
  EXPECT_EQ(std::getenv(kMarker), nullptr);
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1");
}

// Reached through the restart below: the tunable and the marker set; the
// call there goes on, the marker removed.
TEST(HugePagesRestarted, DISABLED_WithTheTunable) {
  // The file the test below wrote (its destructor did not run).
  const std::string madvise =
      testing::TempDir() + "thp_enabled_RestartsWhereTheKernelWaitsToBeAsked";
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1");
  EXPECT_STREQ(std::getenv(kMarker), "1");
  Argv argv("HugePagesSentinel");
  RestartWithMallocHugePages(argv.get(), kOff, kMarker, madvise.c_str());
  EXPECT_EQ(std::getenv(kMarker), nullptr);
  std::remove(madvise.c_str());
}

// Any value but "0" leaves it on: this process is replaced by this binary
// running HugePagesRestarted, whose result is this test's.
TEST(HugePagesTest, RestartsWhereTheKernelWaitsToBeAsked) {
  if (!GlibcWithHugePages()) GTEST_SKIP() << "glibc before 2.35 ignores the tunable";
  ThpFile madvise("always [madvise] never\n");
  setenv(kOff, "1", 1);
  unsetenv(kMarker);
  unsetenv("GLIBC_TUNABLES");
  Argv argv("HugePagesRestarted");
  RestartWithMallocHugePages(argv.get(), kOff, kMarker, madvise.path());
  // Still here: started through the dynamic loader (no restart then), or
  // the exec failed.
  unsetenv(kOff);
  FAIL() << "not restarted";
}

}  // namespace
}  // namespace neardup::cli
