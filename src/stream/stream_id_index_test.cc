// StreamIdIndex's keyed hash (session 12): the answers do not depend on the
// key, and ids a client could pick to collide under a fixed hash do not
// collide under the process's key. StreamIdIndexTest.AgreesWithAn...
// (stream_test.cc) checks the table itself against std::unordered_map.
// Recovery under another key, another process's, is stream_crash_test's
// (the child process adds, this one reopens the stream).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hash/siphash.h"
#include "stream/stream_id_index.h"

namespace neardup::internal {
namespace {

// Two indexes under different keys, fed the same adds and erases, give the
// same answers for every id: the key places ids, it never decides them.
TEST(StreamIdIndexKeyTest, TwoKeysGiveTheSameAnswers) {
  StreamIdIndex first(SipKey{1, 2});
  StreamIdIndex second(RandomSipKey());
  StreamIdIndex process;  // ProcessSipKey()
  std::mt19937_64 random(12);
  auto id_of = [](uint64_t n) { return "tenant/" + std::to_string(n); };
  for (uint64_t seq = 0; seq < 20000; ++seq) {
    const std::string id = id_of(random() % 8000);
    if (random() % 4 == 0) {
      const bool erased = first.Erase(id);
      EXPECT_EQ(second.Erase(id), erased) << id;
      EXPECT_EQ(process.Erase(id), erased) << id;
    } else {
      const bool inserted = first.Insert(id, seq);
      EXPECT_EQ(second.Insert(id, seq), inserted) << id;
      EXPECT_EQ(process.Insert(id, seq), inserted) << id;
    }
  }
  ASSERT_EQ(second.size(), first.size());
  ASSERT_EQ(process.size(), first.size());
  for (uint64_t n = 0; n < 8000; ++n) {
    const std::string id = id_of(n);
    const uint64_t* found = first.Find(id);
    const uint64_t* found_second = second.Find(id);
    const uint64_t* found_process = process.Find(id);
    ASSERT_EQ(found_second != nullptr, found != nullptr) << id;
    ASSERT_EQ(found_process != nullptr, found != nullptr) << id;
    if (found != nullptr) {
      EXPECT_EQ(*found_second, *found) << id;
      EXPECT_EQ(*found_process, *found) << id;
    }
  }
}

// The flood a fixed hash allows: ids chosen (here by search, as an attacker
// with the hash function would) so that their hashes under one key agree in
// the bits the index uses: the top 6 bits pick one of the 64 tables, the
// low bits the home entry in it. Under that key they all share one home in
// one table, so they form one run that every lookup of them probes; under
// another key (the process's is unknown to whoever chose them) they spread
// over the tables like any ids. Measured by the index itself
// (LongestRunForTest): this fails if the index ignored its key.
TEST(StreamIdIndexKeyTest, IdsChosenToCollideUnderOneKeySpreadUnderAnother) {
  const SipKey known{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  // Hashes under `known` with the top 6 bits 0x2a and the low 8 bits 0x5c:
  // about 1 id in 2^14, so ~1M SipHashes for 64 ids.
  constexpr size_t kIds = 64;
  std::vector<std::string> chosen;
  for (uint64_t n = 0; chosen.size() < kIds; ++n) {
    std::string id = "x" + std::to_string(n);
    const uint64_t hash = SipHash13(known, id);
    if ((hash >> 58) == 0x2a && (hash & 0xff) == 0x5c) chosen.push_back(std::move(id));
  }
  StreamIdIndex under_known(known);
  StreamIdIndex under_other(SipKey{0x1111111111111111ULL, 0x2222222222222222ULL});
  StreamIdIndex under_process;  // ProcessSipKey()
  for (size_t i = 0; i < chosen.size(); ++i) {
    EXPECT_TRUE(under_known.Insert(chosen[i], i));
    EXPECT_TRUE(under_other.Insert(chosen[i], i));
    EXPECT_TRUE(under_process.Insert(chosen[i], i));
  }
  // Under `known`: one table of 128 entries (64 ids at most 3/4 full), every
  // id's home the same entry (the low 7 bits agree), so one run of all 64.
  EXPECT_GE(under_known.LongestRunForTest(), kIds);
  // Under another key: 64 ids over 64 tables, about one a table; a run of 16
  // is far below 1e-9 by chance.
  EXPECT_LT(under_other.LongestRunForTest(), 16u);
  EXPECT_LT(under_process.LongestRunForTest(), 16u);
  // And each index holds and finds them all.
  for (size_t i = 0; i < chosen.size(); ++i) {
    for (const StreamIdIndex* index : {&under_known, &under_other, &under_process}) {
      const uint64_t* found = index->Find(chosen[i]);
      ASSERT_NE(found, nullptr) << chosen[i];
      EXPECT_EQ(*found, i);
    }
  }
}

}  // namespace
}  // namespace neardup::internal
