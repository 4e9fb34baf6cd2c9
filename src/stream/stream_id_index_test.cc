// StreamIdIndex's keyed hash (session 12): the answers do not depend on the
// key, and ids a client could pick to collide under a fixed hash do not
// collide under the process's key. StreamIdIndexTest.AgreesWithAn...
// (stream_test.cc) checks the table itself against std::unordered_map.
// Recovery under another key, another process's, is stream_crash_test's
// (the child process adds, this one reopens the stream).
#include <gtest/gtest.h>

#include <algorithm>
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
// the bits that pick the table and the home slot. Under that key they form
// one run; under the process's key (unknown to whoever chose them) they
// spread over the tables like any ids. Measured through lookups: the ids
// all land in one of 64 tables under the chosen key, and not under another.
TEST(StreamIdIndexKeyTest, IdsChosenToCollideUnderOneKeySpreadUnderAnother) {
  const SipKey known{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  // Ids whose hash under `known` has the same top 10 bits (one table of 64,
  // and the same high-order probe bits): about 1 in 1024 ids.
  std::vector<std::string> chosen;
  for (uint64_t n = 0; chosen.size() < 200; ++n) {
    std::string id = "x" + std::to_string(n);
    if ((SipHash13(known, id) >> 54) == 0x2a5) chosen.push_back(std::move(id));
  }
  const SipKey other = RandomSipKey();
  std::vector<int> tables(64, 0);
  for (const std::string& id : chosen) ++tables[SipHash13(other, id) >> 58];
  int fullest = 0;
  for (int count : tables) fullest = std::max(fullest, count);
  // 200 ids over 64 tables: about 3 a table; 20 in one is ~1e-12 by chance.
  EXPECT_LT(fullest, 20);
  // And the index holds and finds them all either way.
  StreamIdIndex under_known(known);
  StreamIdIndex under_other(other);
  for (size_t i = 0; i < chosen.size(); ++i) {
    EXPECT_TRUE(under_known.Insert(chosen[i], i));
    EXPECT_TRUE(under_other.Insert(chosen[i], i));
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    ASSERT_NE(under_known.Find(chosen[i]), nullptr);
    EXPECT_EQ(*under_known.Find(chosen[i]), i);
    ASSERT_NE(under_other.Find(chosen[i]), nullptr);
    EXPECT_EQ(*under_other.Find(chosen[i]), i);
  }
}

}  // namespace
}  // namespace neardup::internal
