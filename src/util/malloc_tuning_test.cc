#include "neardup/malloc_tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

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

}  // namespace
}  // namespace neardup
