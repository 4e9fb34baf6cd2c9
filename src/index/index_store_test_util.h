// The concurrency check shared by the index store tests: reader threads
// query continuously while the test's thread writes; afterwards each answer
// is compared with a brute-force answer on the state of the version its
// view pinned.
#ifndef NEARDUP_INDEX_INDEX_STORE_TEST_UTIL_H_
#define NEARDUP_INDEX_INDEX_STORE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "util/mix.h"

namespace neardup::internal::testing {

// Runs `num_readers` threads calling `read(&rng)` (which returns a Seen with
// a `version` member) while `write()` runs on this thread. Returns, by
// version, a uniform sample (reservoir sampling: bounded memory however long
// the writer takes) of at most `max_seen` answers per reader, plus each
// reader's first answer, read before `write()` starts, and its last, read
// after it returned. Those two make "the readers saw several states" hold
// on any schedule: without them a loaded machine could run the whole write
// before a reader's first read (every answer of one version), or before any
// read at all (no answer), and the check failed though nothing was wrong.
template <typename Seen, typename Read, typename Write>
std::vector<Seen> ReadWhileWriting(int num_readers, size_t max_seen, Read read, Write write) {
  std::vector<std::vector<Seen>> seen(num_readers);
  std::atomic<int> started{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < num_readers; ++r) {
    readers.emplace_back([&, r] {
      SplitMix64 rng(100 + r);
      seen[r].push_back(read(&rng));  // before the writer starts: kept
      started.fetch_add(1, std::memory_order_release);
      size_t count = 0;
      while (true) {
        const bool last = done.load(std::memory_order_acquire);
        Seen observed = read(&rng);
        if (last) {
          seen[r].push_back(std::move(observed));  // after the writer ended: kept
          break;
        }
        ++count;
        if (seen[r].size() < max_seen + 1) {
          seen[r].push_back(std::move(observed));
        } else if (const size_t slot = rng.Next() % count; slot < max_seen) {
          seen[r][1 + slot] = std::move(observed);
        }
      }
    });
  }
  while (started.load(std::memory_order_acquire) < num_readers) std::this_thread::yield();
  write();
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  std::vector<Seen> all;
  for (auto& s : seen) all.insert(all.end(), s.begin(), s.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const Seen& a, const Seen& b) { return a.version < b.version; });
  return all;
}

// Walks `all` (sorted by version): before checking an answer of version v,
// `apply(i)` brings the test's model to the state after change i, for every
// i < v not applied yet; then `check(answer)`.
template <typename Seen, typename Apply, typename Check>
void CheckInVersionOrder(const std::vector<Seen>& all, Apply apply, Check check) {
  ASSERT_FALSE(all.empty());
  // The readers ran while the writer did: they saw several states.
  EXPECT_GT(all.back().version, all.front().version);
  uint64_t applied = 0;
  for (const Seen& s : all) {
    for (; applied < s.version; ++applied) apply(applied);
    check(s);
  }
}

}  // namespace neardup::internal::testing

#endif  // NEARDUP_INDEX_INDEX_STORE_TEST_UTIL_H_
