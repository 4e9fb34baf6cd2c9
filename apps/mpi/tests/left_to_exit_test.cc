// left_to_exit.h: a value left to the process' exit is moved in, kept
// whole, and not destroyed, neither before the process ends nor by the
// exit itself (AbortsIfDestroyedWithContents runs to a real exit); under
// the sanitizer build LeakSanitizer checks at exit that it is not reported
// (it stays reachable).
#include "left_to_exit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace neardup::mpi {
namespace {

int destroyed_with_contents = 0;

// Counts the destructions of objects that still hold their contents (a
// moved-from one holds none).
struct Counted {
  std::vector<std::string> contents;
  Counted() = default;
  Counted(Counted&& other) noexcept : contents(std::move(other.contents)) {
    other.contents.clear();
  }
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (!contents.empty()) ++destroyed_with_contents;
  }
};

TEST(MpiLeftToExitTest, MovedInAndNeverDestroyed) {
  {
    Counted big;
    big.contents.assign(1000, std::string(100, 'x'));
    LeaveToExit(std::move(big));
    EXPECT_TRUE(big.contents.empty());
  }
  {
    Counted second;
    second.contents.assign(10, "y");
    LeaveToExit(std::move(second));
  }
  // Held for the process (the holder's vector may move its elements as it
  // grows: those are moved-from, not destroyed with contents).
  EXPECT_EQ(destroyed_with_contents, 0);
  // Containers as the ranks leave them.
  std::vector<std::string> ids(100, "document");
  LeaveToExit(std::move(ids));
  EXPECT_TRUE(ids.empty());  // NOLINT(bugprone-use-after-move): moved from
}

// Aborts when destroyed while it still holds its contents.
struct AbortsIfDestroyedWithContents {
  std::vector<std::string> contents;
  AbortsIfDestroyedWithContents() = default;
  AbortsIfDestroyedWithContents(AbortsIfDestroyedWithContents&& other) noexcept
      : contents(std::move(other.contents)) {
    other.contents.clear();
  }
  AbortsIfDestroyedWithContents& operator=(AbortsIfDestroyedWithContents&&) = delete;
  ~AbortsIfDestroyedWithContents() {
    if (!contents.empty()) std::abort();
  }
};

// std::exit runs the destructors of static objects: a holder that is one
// (a static std::vector, say) would destroy the value there and abort.
TEST(MpiLeftToExitTest, NotDestroyedByTheExit) {
  EXPECT_EXIT(
      {
        AbortsIfDestroyedWithContents value;
        value.contents.assign(10, "x");
        LeaveToExit(std::move(value));
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace neardup::mpi
