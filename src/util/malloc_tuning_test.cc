#include "neardup/malloc_tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace neardup {
namespace {

// Sets GLIBC_TUNABLES (or removes it) for one test, restoring it after.
class ScopedTunables {
 public:
  explicit ScopedTunables(const char* value) {
    if (const char* before = std::getenv("GLIBC_TUNABLES")) before_ = before;
    if (value != nullptr) {
      setenv("GLIBC_TUNABLES", value, 1);
    } else {
      unsetenv("GLIBC_TUNABLES");
    }
  }
  ~ScopedTunables() {
    if (before_) {
      setenv("GLIBC_TUNABLES", before_->c_str(), 1);
    } else {
      unsetenv("GLIBC_TUNABLES");
    }
  }

 private:
  std::optional<std::string> before_;
};

#if defined(__GLIBC__)
constexpr bool kGlibc = true;
#else
constexpr bool kGlibc = false;
#endif

TEST(MallocTuningTest, AppliesWithoutMallocTunables) {
  {
    ScopedTunables none(nullptr);
    EXPECT_EQ(TuneMallocForServer(), kGlibc);
  }
  // Other tunables (neardup-mpi sets hugetlb; mmap_max is not one of the
  // settings) do not count.
  for (const char* value : {"glibc.malloc.hugetlb=1", "glibc.malloc.mmap_max=65536"}) {
    ScopedTunables other(value);
    EXPECT_EQ(TuneMallocForServer(), kGlibc) << value;
  }
}

TEST(MallocTuningTest, LeftAloneWhenTunablesNameASetting) {
  for (const char* value :
       {"glibc.malloc.trim_threshold=131072", "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=0",
        "glibc.malloc.top_pad=0", "glibc.malloc.mmap_threshold=131072"}) {
    ScopedTunables tunables(value);
    EXPECT_FALSE(TuneMallocForServer()) << value;
  }
}

TEST(MallocTuningTest, AllocationsStillWork) {
  ScopedTunables none(nullptr);
  (void)TuneMallocForServer();
  std::string big(64 << 20, 'x');
  EXPECT_EQ(big[big.size() - 1], 'x');
}

TEST(MallocTuningTest, HugePagesAddedWhereTheKernelWaitsToBeAsked) {
  const std::string_view madvise = "always [madvise] never\n";
  EXPECT_EQ(TunablesWithMallocHugePages(nullptr, madvise), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(TunablesWithMallocHugePages("", madvise), "glibc.malloc.hugetlb=1");
  // Other tunables are kept, before it.
  EXPECT_EQ(TunablesWithMallocHugePages("glibc.malloc.top_pad=0", madvise),
            "glibc.malloc.top_pad=0:glibc.malloc.hugetlb=1");
}

TEST(MallocTuningTest, HugePagesLeftAsTheyAre) {
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

// With the off variable set the call returns, the environment unchanged
// (without it the process would be replaced: not callable from a test).
TEST(MallocTuningTest, RestartTurnedOffByTheVariable) {
  ScopedTunables tunables("glibc.malloc.top_pad=0");
  setenv("NEARDUP_TEST_HUGEPAGES_OFF", "0", 1);
  char name[] = "malloc_tuning_test";
  char* argv[] = {name, nullptr};
  RestartWithMallocHugePages(argv, "NEARDUP_TEST_HUGEPAGES_OFF");
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.top_pad=0");
  EXPECT_STREQ(std::getenv("NEARDUP_TEST_HUGEPAGES_OFF"), "0");
  unsetenv("NEARDUP_TEST_HUGEPAGES_OFF");
}

}  // namespace
}  // namespace neardup
