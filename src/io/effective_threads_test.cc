// The public EffectiveThreads (include/neardup/effective_threads.h) follows
// both limits that the library's pipelines follow: a global_control's and
// the task arena's, whichever is lower.
#include "neardup/effective_threads.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstddef>

#include "io/effective_threads.h"

namespace neardup {
namespace {

TEST(EffectiveThreadsTest, FollowsTheGlobalControlAndTheArena) {
  EXPECT_EQ(EffectiveThreads(), internal::EffectiveThreads());
  EXPECT_GE(EffectiveThreads(), 1u);
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    EXPECT_EQ(EffectiveThreads(), 1u);
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 3);
    EXPECT_EQ(EffectiveThreads(),
              std::min<size_t>(3, static_cast<size_t>(tbb::this_task_arena::max_concurrency())));
    // An arena of 2 inside it: the arena's figure, which is lower.
    tbb::task_arena arena(2);
    arena.execute([] { EXPECT_EQ(EffectiveThreads(), 2u); });
  }
  tbb::task_arena one(1);
  one.execute([] { EXPECT_EQ(EffectiveThreads(), 1u); });
}

}  // namespace
}  // namespace neardup
