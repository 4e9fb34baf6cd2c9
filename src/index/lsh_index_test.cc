#include "neardup/lsh_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "index/lsh_band_key.h"
#include "index/lsh_huge_page_allocator.h"
#include "util/mix.h"

namespace neardup {
namespace {

using internal::SplitMix64;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Pair = std::pair<uint64_t, uint64_t>;
using Sketch = std::vector<uint64_t>;
using Stored = std::map<uint64_t, Sketch>;

// Random sketch; `alphabet` > 0 draws values from {0..alphabet-1} so that
// unrelated sketches share bands by chance too.
Sketch RandomSketch(SplitMix64& rng, int num_hashes, uint64_t alphabet) {
  Sketch sketch(num_hashes);
  for (uint64_t& v : sketch) v = alphabet ? rng.Next() % alphabet : rng.Next();
  return sketch;
}

// A near-duplicate: `base` with about `fraction` of its values replaced.
Sketch NearDuplicate(SplitMix64& rng, const Sketch& base, double fraction) {
  Sketch copy = base;
  for (uint64_t& v : copy) {
    if (static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 < fraction) v = rng.Next();
  }
  return copy;
}

// A corpus where about half of the sketches are near-duplicates (0..30% of
// values changed, sometimes exact copies) of earlier ones.
Stored MakeCorpus(uint64_t seed, int count, int num_hashes, uint64_t alphabet,
                  uint64_t first_id = 1000) {
  SplitMix64 rng(seed);
  Stored stored;
  std::vector<Sketch> made;
  for (int i = 0; i < count; ++i) {
    Sketch sketch;
    if (!made.empty() && rng.Next() % 2 == 0) {
      const double fraction = static_cast<double>(rng.Next() % 7) * 0.05;
      sketch = NearDuplicate(rng, made[rng.Next() % made.size()], fraction);
    } else {
      sketch = RandomSketch(rng, num_hashes, alphabet);
    }
    made.push_back(sketch);
    // Ids are spread out and unordered relative to insertion.
    stored[first_id + internal::Mix64(i) % (uint64_t{1} << 40)] = sketch;
  }
  return stored;
}

bool SharesBand(const LshParams& p, const Sketch& a, const Sketch& b) {
  for (int band = 0; band < p.num_bands; ++band) {
    const int first = band * p.rows_per_band;
    if (std::equal(a.begin() + first, a.begin() + first + p.rows_per_band, b.begin() + first)) {
      return true;
    }
  }
  return false;
}

std::vector<uint64_t> BruteQuery(const LshParams& p, const Stored& stored, const Sketch& q) {
  std::vector<uint64_t> out;
  for (const auto& [id, sketch] : stored) {
    if (SharesBand(p, sketch, q)) out.push_back(id);
  }
  return out;  // map order: ascending
}

std::vector<Pair> BrutePairs(const LshParams& p, const Stored& stored) {
  std::vector<Pair> out;
  for (auto a = stored.begin(); a != stored.end(); ++a) {
    for (auto b = std::next(a); b != stored.end(); ++b) {
      if (SharesBand(p, a->second, b->second)) out.emplace_back(a->first, b->first);
    }
  }
  return out;  // ascending
}

// An independent oracle for larger corpora: group documents by (band, the
// band's values) in a std::map.
std::vector<Pair> GroupingPairs(const LshParams& p, const Stored& stored) {
  std::map<std::pair<int, Sketch>, std::vector<uint64_t>> groups;
  for (const auto& [id, sketch] : stored) {
    for (int band = 0; band < p.num_bands; ++band) {
      const auto first = sketch.begin() + band * p.rows_per_band;
      groups[{band, Sketch(first, first + p.rows_per_band)}].push_back(id);
    }
  }
  std::vector<Pair> out;
  for (const auto& [key, ids] : groups) {
    for (size_t i = 0; i < ids.size(); ++i) {
      for (size_t j = i + 1; j < ids.size(); ++j) out.emplace_back(ids[i], ids[j]);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

LshIndex MakeIndex(LshParams params, int num_hashes) {
  Result<LshIndex> index = LshIndex::Create(params, num_hashes);
  NEARDUP_CHECK(index.ok()) << index.status();
  return std::move(index).value();
}

void ExpectMatchesBruteForce(const LshIndex& index, const Stored& stored, SplitMix64& rng,
                             uint64_t alphabet) {
  const LshParams& p = index.params();
  ASSERT_EQ(index.size(), stored.size());
  for (const auto& [id, sketch] : stored) {
    EXPECT_TRUE(index.Contains(id));
    ASSERT_EQ(*index.Query(sketch), BruteQuery(p, stored, sketch)) << "stored doc " << id;
  }
  for (int i = 0; i < 20; ++i) {
    const Sketch fresh = RandomSketch(rng, index.num_hashes(), alphabet);
    ASSERT_EQ(*index.Query(fresh), BruteQuery(p, stored, fresh));
    if (!stored.empty()) {
      auto it = stored.begin();
      std::advance(it, rng.Next() % stored.size());
      const Sketch near = NearDuplicate(rng, it->second, 0.1);
      ASSERT_EQ(*index.Query(near), BruteQuery(p, stored, near));
    }
  }
  const std::vector<Pair> expected = BrutePairs(p, stored);
  for (int per_pass : {1, 3, p.num_bands, p.num_bands + 7}) {
    ASSERT_EQ(index.AllPairCandidates(per_pass), expected) << "bands_per_pass " << per_pass;
  }
}

struct Shape {
  int num_bands;
  int rows_per_band;
  int num_hashes;
};

constexpr Shape kShapes[] = {{1, 1, 1},   {16, 8, 128}, {5, 3, 16},  {2, 10, 20},
                             {20, 1, 20}, {4, 4, 17},   {9, 13, 128}};

TEST(LshIndexTest, QueryAndAllPairsMatchBruteForce) {
  for (const Shape& shape : kShapes) {
    for (uint64_t alphabet : {uint64_t{0}, uint64_t{3}}) {
      SCOPED_TRACE(::testing::Message() << "b=" << shape.num_bands << " r=" << shape.rows_per_band
                                        << " k=" << shape.num_hashes << " alphabet=" << alphabet);
      LshIndex index = MakeIndex({shape.num_bands, shape.rows_per_band}, shape.num_hashes);
      const Stored stored =
          MakeCorpus(shape.num_bands * 31 + alphabet, 150, shape.num_hashes, alphabet);
      for (const auto& [id, sketch] : stored) ASSERT_TRUE(index.Insert(id, sketch).ok());
      SplitMix64 rng(7);
      ExpectMatchesBruteForce(index, stored, rng, alphabet);
    }
  }
}

TEST(LshIndexTest, MixedInsertAndRemoveMatchBruteForce) {
  for (const Shape& shape : {Shape{5, 3, 16}, Shape{16, 8, 128}, Shape{3, 2, 6}}) {
    SCOPED_TRACE(::testing::Message() << "b=" << shape.num_bands << " r=" << shape.rows_per_band);
    const uint64_t alphabet = shape.num_hashes == 6 ? 2 : 0;
    LshIndex index = MakeIndex({shape.num_bands, shape.rows_per_band}, shape.num_hashes);
    SplitMix64 rng(shape.num_bands);
    Stored stored;
    std::vector<Sketch> pool;
    for (int step = 1; step <= 1500; ++step) {
      const uint64_t op = rng.Next() % 10;
      if (op < 6 || stored.empty()) {
        const uint64_t id = rng.Next() % 400;  // small id space: removed ids come back
        Sketch sketch = (!pool.empty() && rng.Next() % 2)
                            ? NearDuplicate(rng, pool[rng.Next() % pool.size()], 0.15)
                            : RandomSketch(rng, shape.num_hashes, alphabet);
        const Status status = index.Insert(id, sketch);
        if (stored.contains(id)) {
          EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
        } else {
          ASSERT_TRUE(status.ok()) << status;
          stored[id] = sketch;
          pool.push_back(sketch);
        }
      } else {
        // Remove a stored id (any slot: first, middle, last) or an absent one.
        uint64_t id = rng.Next() % 400;
        if (op < 9) {
          auto it = stored.begin();
          std::advance(it, rng.Next() % stored.size());
          id = it->first;
        }
        EXPECT_EQ(index.Remove(id), stored.erase(id) == 1) << "id " << id;
      }
      if (step % 250 == 0) ExpectMatchesBruteForce(index, stored, rng, alphabet);
    }
    // Drain completely, then refill.
    while (!stored.empty()) {
      ASSERT_TRUE(index.Remove(stored.begin()->first));
      stored.erase(stored.begin());
    }
    EXPECT_EQ(index.size(), 0u);
    EXPECT_TRUE(index.AllPairCandidates().empty());
    const Stored refill = MakeCorpus(5, 60, shape.num_hashes, alphabet);
    for (const auto& [id, sketch] : refill) ASSERT_TRUE(index.Insert(id, sketch).ok());
    ExpectMatchesBruteForce(index, refill, rng, alphabet);
  }
}

// Flattens a corpus for InsertBulk.
void Flatten(const Stored& stored, std::vector<uint64_t>& ids, std::vector<uint64_t>& sketches) {
  for (const auto& [id, sketch] : stored) {
    ids.push_back(id);
    sketches.insert(sketches.end(), sketch.begin(), sketch.end());
  }
}

TEST(LshIndexTest, InsertBulkMatchesInsertAndOracle) {
  const LshParams params{8, 4};
  const int num_hashes = 33;
  // 6000 documents take the parallel path; 100 the serial one.
  for (int count : {100, 6000}) {
    SCOPED_TRACE(count);
    const Stored first = MakeCorpus(11, count, num_hashes, 0, 1);
    const Stored second = MakeCorpus(12, count / 2, num_hashes, 0, uint64_t{1} << 50);
    LshIndex bulk = MakeIndex(params, num_hashes);
    LshIndex single = MakeIndex(params, num_hashes);
    Stored all;
    for (const Stored* part : {&first, &second}) {
      std::vector<uint64_t> ids, sketches;
      Flatten(*part, ids, sketches);
      // Insertion order must not matter: reverse the ids for the bulk.
      ASSERT_TRUE(bulk.InsertBulk(ids, sketches).ok());
      for (auto it = part->rbegin(); it != part->rend(); ++it) {
        ASSERT_TRUE(single.Insert(it->first, it->second).ok());
      }
      all.insert(part->begin(), part->end());
    }
    ASSERT_EQ(bulk.size(), all.size());
    const std::vector<Pair> expected = GroupingPairs(params, all);
    EXPECT_FALSE(expected.empty());
    for (int per_pass : {1, 3, 8}) {
      EXPECT_EQ(bulk.AllPairCandidates(per_pass), expected);
      EXPECT_EQ(single.AllPairCandidates(per_pass), expected);
    }
    SplitMix64 rng(3);
    for (int i = 0; i < 50; ++i) {
      auto it = all.begin();
      std::advance(it, rng.Next() % all.size());
      const Sketch near = NearDuplicate(rng, it->second, 0.2);
      const std::vector<uint64_t> want = BruteQuery(params, all, near);
      EXPECT_EQ(*bulk.Query(near), want);
      EXPECT_EQ(*single.Query(near), want);
    }
    // Removing from a bulk-built index keeps it consistent.
    std::vector<uint64_t> removed;
    for (const auto& [id, sketch] : first) {
      if (rng.Next() % 3 == 0) removed.push_back(id);
    }
    for (uint64_t id : removed) {
      ASSERT_TRUE(bulk.Remove(id));
      all.erase(id);
    }
    EXPECT_EQ(bulk.AllPairCandidates(2), GroupingPairs(params, all));
  }
}

// More documents than one grouping task's slot range (2^15), removals that
// leave chains with holes, and several thread counts: the candidates are the
// oracle's whatever the split of the work.
TEST(LshIndexTest, AllPairCandidatesAreTheSameForEveryThreadCount) {
  const LshParams params{3, 2};
  const int k = 6;
  // 60^2 keys per band: about 10 documents share each key.
  Stored all = MakeCorpus(91, 40000, k, 60);
  Result<LshIndex> index = LshIndex::Create(params, k);
  ASSERT_TRUE(index.ok());
  std::vector<uint64_t> ids;
  std::vector<uint64_t> sketches;
  Flatten(all, ids, sketches);
  ASSERT_TRUE(index->InsertBulk(ids, sketches).ok());
  for (uint64_t i = 0; i < ids.size(); i += 7) {
    ASSERT_TRUE(index->Remove(ids[i]));
    all.erase(ids[i]);
  }
  const std::vector<Pair> want = GroupingPairs(params, all);
  for (int threads : {1, 2, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    for (int per_pass : {1, 3}) {
      EXPECT_EQ(index->AllPairCandidates(per_pass), want)
          << threads << " threads, bands_per_pass " << per_pass;
    }
  }
}

// InsertBulkSpans reads each sketch where it lies (here: one std::vector per
// document in a std::map) and must build the same index as InsertBulk from
// one row-major array, on the serial path and on the parallel one, at every
// thread count. At 64 bands a chunk of the parallel path is 8,192
// documents (a 4 MiB key buffer), so 8,600 documents take two; 9 x 13 is a
// shape with its own hashing loop.
TEST(LshIndexTest, InsertBulkSpansMatchesInsertBulkAtEveryThreadCount) {
  for (const auto& [shape, count] :
       {std::pair{Shape{64, 2, 128}, 8600}, std::pair{Shape{9, 13, 128}, 5000}}) {
    SCOPED_TRACE(shape.num_bands);
    const LshParams params{shape.num_bands, shape.rows_per_band};
    const Stored first = MakeCorpus(21, 300, shape.num_hashes, 0, 1);
    const Stored second = MakeCorpus(22, count, shape.num_hashes, 0, uint64_t{1} << 50);
    Stored all = first;
    all.insert(second.begin(), second.end());
    // The oracle: one Insert at a time (no chunks; itself checked against
    // GroupingPairs above), and for the cheap shape the grouping too.
    LshIndex single = MakeIndex(params, shape.num_hashes);
    for (const auto& [id, sketch] : all) ASSERT_TRUE(single.Insert(id, sketch).ok());
    const std::vector<Pair> want = single.AllPairCandidates();
    if (shape.num_bands < 16) {
      EXPECT_EQ(want, GroupingPairs(params, all));
    }
    EXPECT_GT(want.size(), all.size() / 4);
    LshIndex rows = MakeIndex(params, shape.num_hashes);
    for (const Stored* part : {&first, &second}) {
      std::vector<uint64_t> ids, sketches;
      Flatten(*part, ids, sketches);
      ASSERT_TRUE(rows.InsertBulk(ids, sketches).ok());
    }
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(threads);
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      LshIndex spans = MakeIndex(params, shape.num_hashes);
      if (threads == 2) {
        ASSERT_TRUE(spans.Reserve(all.size()).ok());
      }
      for (const Stored* part : {&first, &second}) {
        std::vector<uint64_t> ids;
        std::vector<std::span<const uint64_t>> sketches;
        for (const auto& [id, sketch] : *part) {
          ids.push_back(id);
          sketches.emplace_back(sketch);
        }
        ASSERT_TRUE(spans.InsertBulkSpans(ids, sketches).ok());
      }
      ASSERT_EQ(spans.size(), all.size());
      EXPECT_EQ(spans.AllPairCandidates(), want);
      EXPECT_EQ(rows.AllPairCandidates(2), want);
      SplitMix64 rng(threads);
      for (int i = 0; i < 20; ++i) {
        auto it = all.begin();
        std::advance(it, rng.Next() % all.size());
        EXPECT_EQ(*spans.Query(it->second), *rows.Query(it->second));
      }
    }
  }
}

// InsertBulkBandKeys with the keys of each sketch (index/lsh_band_key.h's
// BandKey: what a fingerprint stage computes ahead) builds the index that
// InsertBulkSpans builds from the sketches, for the whole scheme and for a
// range of its bands, on the serial and the parallel path; bad rows are
// refused before anything is inserted.
TEST(LshIndexTest, InsertBulkBandKeysMatchesInsertBulkSpans) {
  const Shape shape{16, 8, 128};
  const LshParams params{shape.num_bands, shape.rows_per_band};
  for (int count : {300, 9000}) {
    SCOPED_TRACE(count);
    const Stored all = MakeCorpus(31, count, shape.num_hashes, 0, 1);
    for (const auto& [first_band, num_bands] : {std::pair{0, 16}, std::pair{5, 7}}) {
      SCOPED_TRACE(first_band);
      std::vector<uint64_t> ids;
      std::vector<std::span<const uint64_t>> sketches;
      std::vector<std::vector<uint64_t>> key_rows;
      for (const auto& [id, sketch] : all) {
        ids.push_back(id);
        sketches.emplace_back(sketch);
        std::vector<uint64_t>& row = key_rows.emplace_back(num_bands);
        for (int b = 0; b < num_bands; ++b) {
          row[b] = internal::BandKey(sketch.data(), shape.rows_per_band, first_band + b);
        }
      }
      std::vector<std::span<const uint64_t>> keys(key_rows.begin(), key_rows.end());
      LshIndex from_sketches =
          *LshIndex::CreateForBands(params, shape.num_hashes, first_band, num_bands);
      ASSERT_TRUE(from_sketches.InsertBulkSpans(ids, sketches).ok());
      const std::vector<Pair> want = from_sketches.AllPairCandidates();
      EXPECT_GT(want.size(), all.size() / 8);
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(threads);
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        LshIndex from_keys =
            *LshIndex::CreateForBands(params, shape.num_hashes, first_band, num_bands);
        ASSERT_TRUE(from_keys.Reserve(ids.size()).ok());
        ASSERT_TRUE(from_keys.InsertBulkBandKeys(ids, keys).ok());
        EXPECT_EQ(from_keys.AllPairCandidates(), want);
        auto it = all.begin();
        std::advance(it, threads * 7);
        EXPECT_EQ(*from_keys.Query(it->second), *from_sketches.Query(it->second));
      }
      LshIndex refused = *LshIndex::CreateForBands(params, shape.num_hashes, first_band, num_bands);
      Status status = refused.InsertBulkBandKeys(std::span(ids).first(ids.size() - 1), keys);
      EXPECT_THAT(status.message(), HasSubstr("must be as many as doc_ids"));
      keys.back() = keys.back().first(num_bands - 1);
      status = refused.InsertBulkBandKeys(ids, keys);
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(status.message(),
                  HasSubstr("key row " + std::to_string(ids.size() - 1) + " has " +
                            std::to_string(num_bands - 1) + " keys; the index holds " +
                            std::to_string(num_bands) + " bands"));
      EXPECT_EQ(refused.size(), 0u);
    }
  }
}

// A sketch's keys hashed once (BandKeysOf) serve a query and an insert:
// QueryBandKeys and InsertBandKeys answer and store as Query and Insert, for
// the whole scheme and for a band range; a wrong count of keys is refused.
TEST(LshIndexTest, BandKeysOfServeQueryAndInsertAsTheSketch) {
  const Shape shape{9, 13, 128};
  const LshParams params{shape.num_bands, shape.rows_per_band};
  const Stored all = MakeCorpus(37, 2000, shape.num_hashes, 0, 1);
  for (const auto& [first_band, num_bands] : {std::pair{0, 9}, std::pair{2, 5}}) {
    SCOPED_TRACE(first_band);
    LshIndex by_sketch = *LshIndex::CreateForBands(params, shape.num_hashes, first_band, num_bands);
    LshIndex by_keys = *LshIndex::CreateForBands(params, shape.num_hashes, first_band, num_bands);
    std::vector<uint64_t> keys;
    for (const auto& [id, sketch] : all) {
      ASSERT_TRUE(by_keys.BandKeysOf(sketch, &keys).ok());
      ASSERT_EQ(keys.size(), static_cast<size_t>(num_bands));
      EXPECT_EQ(keys[num_bands - 1],
                internal::BandKey(sketch.data(), shape.rows_per_band, first_band + num_bands - 1));
      ASSERT_EQ(*by_keys.QueryBandKeys(keys), *by_sketch.Query(sketch));
      ASSERT_TRUE(by_sketch.Insert(id, sketch).ok());
      ASSERT_TRUE(by_keys.InsertBandKeys(id, keys).ok());
    }
    EXPECT_EQ(by_keys.AllPairCandidates(), by_sketch.AllPairCandidates());
    EXPECT_GT(by_keys.AllPairCandidates().size(), all.size() / 8);
    const Sketch& first = all.begin()->second;
    ASSERT_TRUE(by_keys.BandKeysOf(first, &keys).ok());
    EXPECT_EQ(by_keys.InsertBandKeys(all.begin()->first, keys).code(),
              StatusCode::kInvalidArgument);  // present
    keys.pop_back();
    EXPECT_EQ(by_keys.QueryBandKeys(keys).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(by_keys.InsertBandKeys(uint64_t{1} << 60, keys).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(by_keys.BandKeysOf(std::span(first).first(10), &keys).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(by_keys.size(), all.size());
  }
}

TEST(LshIndexTest, InsertBulkSpansRejectsBadInputAndStaysUnchanged) {
  for (int count : {10, 5000}) {  // the serial and the parallel path
    SCOPED_TRACE(count);
    LshIndex index = MakeIndex({2, 2}, 4);
    ASSERT_TRUE(index.Insert(3, Sketch{1, 1, 1, 1}).ok());
    const Sketch good{1, 1, 1, 1};
    const Sketch bad{1, 1, 1};
    std::vector<uint64_t> ids(count);
    std::vector<std::span<const uint64_t>> sketches(count, std::span<const uint64_t>(good));
    for (int i = 0; i < count; ++i) ids[i] = 100 + i;

    Status status = index.InsertBulkSpans(std::span(ids).first(count - 1), sketches);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                HasSubstr("sketches (" + std::to_string(count) + ") must be as many as doc_ids"));
    sketches[count - 1] = bad;
    status = index.InsertBulkSpans(ids, sketches);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("sketch " + std::to_string(count - 1) +
                                            " has 3 values; num_hashes is 4"));
    sketches[count - 1] = good;
    std::vector<uint64_t> present = ids;
    present[count / 3] = 3;
    status = index.InsertBulkSpans(present, sketches);
    EXPECT_THAT(status.message(), HasSubstr("doc_id (3) is already in the LSH index"));

    EXPECT_EQ(index.size(), 1u);
    for (uint64_t id : ids) EXPECT_FALSE(index.Contains(id));
    ASSERT_TRUE(index.InsertBulkSpans(ids, sketches).ok());
    EXPECT_EQ(index.Query(good)->size(), static_cast<size_t>(count) + 1);
  }
}

TEST(LshIndexTest, BandRangesSplitTheCandidates) {
  const LshParams params{6, 3};
  const int k = 20;
  std::vector<std::vector<uint64_t>> sketches;
  internal::SplitMix64 rng(11);
  for (int d = 0; d < 300; ++d) {
    std::vector<uint64_t> sketch(k);
    for (uint64_t& v : sketch) v = rng.Next() % 3;  // few values: many shared bands
    sketches.push_back(std::move(sketch));
  }
  LshIndex whole = *LshIndex::Create(params, k);
  for (size_t d = 0; d < sketches.size(); ++d) ASSERT_TRUE(whole.Insert(d, sketches[d]).ok());
  const auto want = whole.AllPairCandidates();
  std::vector<std::pair<uint64_t, uint64_t>> united;
  for (auto [first, count] : {std::pair{0, 2}, {2, 1}, {3, 3}}) {
    LshIndex part = *LshIndex::CreateForBands(params, k, first, count);
    EXPECT_EQ(part.params().num_bands, count);
    for (size_t d = 0; d < sketches.size(); ++d) ASSERT_TRUE(part.Insert(d, sketches[d]).ok());
    const auto found = part.AllPairCandidates();
    EXPECT_LT(found.size(), want.size());
    united.insert(united.end(), found.begin(), found.end());
  }
  std::sort(united.begin(), united.end());
  united.erase(std::unique(united.begin(), united.end()), united.end());
  EXPECT_EQ(united, want);

  EXPECT_FALSE(LshIndex::CreateForBands(params, k, 5, 2).ok());
  EXPECT_FALSE(LshIndex::CreateForBands(params, k, -1, 2).ok());
  EXPECT_FALSE(LshIndex::CreateForBands(params, k, 0, 0).ok());
}

TEST(LshIndexTest, OnlyTheBandedValuesCount) {
  // b * r = 6 of 10 values are banded; the last 4 never matter.
  LshIndex index = MakeIndex({2, 3}, 10);
  const Sketch a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Sketch b = {9, 9, 9, 4, 5, 6, 0, 0, 0, 0};   // shares band 1
  const Sketch c = {4, 5, 6, 1, 2, 3, 7, 8, 9, 10};  // same values, other bands
  const Sketch d = {1, 2, 9, 9, 5, 6, 7, 8, 9, 10};  // one row differs in each band
  ASSERT_TRUE(index.Insert(10, a).ok());
  ASSERT_TRUE(index.Insert(20, b).ok());
  ASSERT_TRUE(index.Insert(30, c).ok());
  ASSERT_TRUE(index.Insert(40, d).ok());
  EXPECT_THAT(*index.Query(a), ElementsAre(10, 20));
  EXPECT_THAT(*index.Query(c), ElementsAre(30));
  EXPECT_THAT(*index.Query(d), ElementsAre(40));
  EXPECT_THAT(index.AllPairCandidates(), ElementsAre(Pair{10, 20}));
}

TEST(LshIndexTest, ExactDuplicatesFormOneGroup) {
  LshIndex index = MakeIndex({4, 2}, 8);
  const Sketch same = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<Pair> expected;
  for (uint64_t id = 0; id < 40; ++id) {
    ASSERT_TRUE(index.Insert(id * 7, same).ok());
    for (uint64_t other = 0; other < id; ++other) expected.emplace_back(other * 7, id * 7);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(index.AllPairCandidates(1), expected);
  EXPECT_EQ(index.Query(same)->size(), 40u);
  // Remove from the middle, the head (last inserted) and the tail of the chain.
  for (uint64_t id : {20 * 7, 39 * 7, 0}) ASSERT_TRUE(index.Remove(id));
  EXPECT_EQ(index.Query(same)->size(), 37u);
  EXPECT_EQ(index.AllPairCandidates(3).size(), 37u * 36 / 2);
}

TEST(LshIndexTest, EmptyIndex) {
  LshIndex index = MakeIndex({16, 8}, 128);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.Query(Sketch(128, 5))->empty());
  EXPECT_TRUE(index.AllPairCandidates().empty());
  EXPECT_FALSE(index.Remove(1));
  EXPECT_FALSE(index.Contains(1));
  EXPECT_GT(index.MemoryBytes(), 0u);
  EXPECT_TRUE(index.InsertBulk({}, {}).ok());
  EXPECT_EQ(index.size(), 0u);
}

TEST(LshIndexTest, RemoveReportsPresence) {
  LshIndex index = MakeIndex({2, 2}, 4);
  ASSERT_TRUE(index.Insert(5, Sketch{1, 2, 3, 4}).ok());
  EXPECT_FALSE(index.Remove(6));
  EXPECT_TRUE(index.Remove(5));
  EXPECT_FALSE(index.Remove(5));
  EXPECT_TRUE(index.Query(Sketch{1, 2, 3, 4})->empty());
  // Every 64-bit value is a valid id.
  ASSERT_TRUE(index.Insert(~uint64_t{0}, Sketch{1, 2, 3, 4}).ok());
  ASSERT_TRUE(index.Insert(0, Sketch{1, 2, 0, 0}).ok());
  EXPECT_THAT(*index.Query(Sketch{1, 2, 9, 9}), ElementsAre(0, ~uint64_t{0}));
  EXPECT_THAT(index.AllPairCandidates(), ElementsAre(Pair{0, ~uint64_t{0}}));
}

TEST(LshIndexTest, MemoryGrowsWithDocuments) {
  LshIndex index = MakeIndex({16, 8}, 128);
  const size_t empty = index.MemoryBytes();
  const Stored stored = MakeCorpus(1, 2000, 128, 0);
  for (const auto& [id, sketch] : stored) ASSERT_TRUE(index.Insert(id, sketch).ok());
  const size_t full = index.MemoryBytes();
  // At least the band keys, links and table entries: 16 bands * 24 bytes.
  EXPECT_GE(full - empty, 2000u * 16 * 24);
  EXPECT_LE(full - empty, 2000u * 2000);
}

// The huge-page allocator's bytes: an allocation of 2 MiB or more takes
// whole huge pages, the offset below its elements included.
TEST(LshIndexTest, HugePageAllocationsTakeWholePagesWithTheirOffset) {
  using internal::kHugePageBytes;
  const internal::HugePageAllocator<uint32_t> at_zero(0);
  const internal::HugePageAllocator<uint32_t> offset(64 * 1024);
  EXPECT_EQ(offset.ReservedBytes(0), 0u);
  EXPECT_EQ(offset.ReservedBytes(1000), 4000u);  // below 2 MiB: the bytes
  EXPECT_EQ(at_zero.ReservedBytes(kHugePageBytes / 4), kHugePageBytes);
  EXPECT_EQ(offset.ReservedBytes(kHugePageBytes / 4), 2 * kHugePageBytes);
  EXPECT_EQ(offset.ReservedBytes(kHugePageBytes / 4 + 1), 2 * kHugePageBytes);
  internal::HugePageVector<uint32_t> keys(offset);
  keys.reserve(kHugePageBytes / 2);  // 4 MiB at 64 KiB into its first page
  EXPECT_EQ(internal::ReservedBytes(keys), 3 * kHugePageBytes);
}

// MemoryBytes() counts what the band arrays take in huge pages, not their
// capacities: each array but band 0's keys starts at an offset into its
// first page (the stagger), so one of 2 or 4 MiB takes one more 2 MiB page
// (session 13; ~64 MB at 1M documents and 16 bands went uncounted).
TEST(LshIndexTest, MemoryCountsTheHugePagesOfTheBandArrays) {
  LshIndex index = MakeIndex({16, 1}, 16);
  // One band key per band for every document (the band tables stay at their
  // minimum), 2^18 - 1 documents: by then Insert's growth ahead has doubled
  // every band's keys and links to 2^19 entries (2 and 4 MiB; band b at
  // 2^17 (1 + b / 16) documents), and none to 2^20 yet.
  const Sketch sketch(16, 7);
  const size_t documents = (size_t{1} << 18) - 1;
  for (uint64_t id = 0; id < documents; ++id) ASSERT_TRUE(index.Insert(id, sketch).ok());
  constexpr size_t kMiB = size_t{1} << 20;
  // The arrays alone: 16 x (2 + 4) MiB, and a page for each of the 31 that
  // start at an offset. Capacities (the count before session 13) stayed
  // below this, the ids and the tables included.
  EXPECT_GE(index.MemoryBytes(), 16 * 6 * kMiB + 31 * internal::kHugePageBytes);
  EXPECT_LE(index.MemoryBytes(), 16 * 6 * kMiB + 31 * internal::kHugePageBytes + 32 * kMiB);
}

// Growth of the band arrays past 2 MiB (2^19 keys, 2^18 links), which moves
// their pages (lsh_huge_page_array.h), keeps every chain: one insert at a
// time (Insert's growth ahead) and in bulk (InsertBulk's resize), then
// removals, which move the last slot into the freed one.
TEST(LshIndexTest, GrowthPastHugePagesKeepsEveryChain) {
  constexpr uint64_t kDocuments = (uint64_t{1} << 20) + 5;
  // Band 0 groups the documents by four, band 1 is unique to each.
  const auto sketch_of = [](uint64_t id) { return Sketch{id / 4, id + (uint64_t{1} << 40)}; };
  const auto group_of = [](uint64_t id) {
    std::vector<uint64_t> group;
    for (uint64_t g = id / 4 * 4; g < id / 4 * 4 + 4 && g < kDocuments; ++g) group.push_back(g);
    return group;
  };
  LshIndex one_by_one = MakeIndex({2, 1}, 2);
  for (uint64_t id = 0; id < kDocuments; ++id) {
    ASSERT_TRUE(one_by_one.Insert(id, sketch_of(id)).ok());
  }
  LshIndex bulk = MakeIndex({2, 1}, 2);
  std::vector<uint64_t> ids;
  std::vector<uint64_t> values;
  for (uint64_t first = 0; first < kDocuments; first += 300000) {
    ids.clear();
    values.clear();
    for (uint64_t id = first; id < std::min(kDocuments, first + 300000); ++id) {
      ids.push_back(id);
      const Sketch sketch = sketch_of(id);
      values.insert(values.end(), sketch.begin(), sketch.end());
    }
    ASSERT_TRUE(bulk.InsertBulk(ids, values).ok());
  }
  for (LshIndex* index : {&one_by_one, &bulk}) {
    ASSERT_EQ(index->size(), kDocuments);
    // The arrays alone: 2 x (4 + 8) MiB at least (2^20 entries a band; the
    // capacities are 2^21 one by one, ~1.2M from InsertBulk's resize).
    EXPECT_GE(index->MemoryBytes(), size_t{24} << 20);
    for (uint64_t id = 0; id < kDocuments; id += 997) {
      ASSERT_EQ(*index->Query(sketch_of(id)), group_of(id)) << id;
    }
    for (uint64_t id = 0; id < kDocuments; id += 3) ASSERT_TRUE(index->Remove(id));
    for (uint64_t id = 1; id < kDocuments; id += 991) {
      std::vector<uint64_t> expected;
      for (uint64_t g : group_of(id)) {
        if (g % 3 != 0) expected.push_back(g);
      }
      const Result<std::vector<uint64_t>> got = index->Query(sketch_of(id));
      ASSERT_TRUE(got.ok());
      std::vector<uint64_t> sorted = *got;
      std::sort(sorted.begin(), sorted.end());
      ASSERT_EQ(sorted, expected) << id;
    }
  }
}

// Reserve makes room up front: inserting up to the reserved count changes
// no capacity (MemoryBytes stays put), the index answers as the oracle, and
// a Reserve below the current room, or on a non-empty index, is harmless.
TEST(LshIndexTest, ReserveAvoidsGrowthAndKeepsResults) {
  for (const Shape& shape : {Shape{16, 8, 128}, Shape{5, 3, 16}}) {
    SCOPED_TRACE(::testing::Message() << "b=" << shape.num_bands << " r=" << shape.rows_per_band);
    const Stored stored = MakeCorpus(shape.num_bands + 5, 600, shape.num_hashes, 0);
    LshIndex index = MakeIndex({shape.num_bands, shape.rows_per_band}, shape.num_hashes);
    ASSERT_TRUE(index.Reserve(stored.size()).ok());
    const size_t reserved = index.MemoryBytes();
    size_t inserted = 0;
    for (const auto& [id, sketch] : stored) {
      ASSERT_TRUE(index.Insert(id, sketch).ok());
      ASSERT_EQ(index.MemoryBytes(), reserved) << "after " << ++inserted << " inserts";
      if (inserted == 300) {
        ASSERT_TRUE(index.Reserve(10).ok());  // below the room: no-op
      }
    }
    SplitMix64 rng(3);
    ExpectMatchesBruteForce(index, stored, rng, 0);
    // Growing a filled index keeps its contents.
    ASSERT_TRUE(index.Reserve(5000).ok());
    EXPECT_GT(index.MemoryBytes(), reserved);
    ExpectMatchesBruteForce(index, stored, rng, 0);
  }
}

TEST(LshIndexTest, ReserveRejectsMoreThanTheMaximum) {
  LshIndex index = MakeIndex({4, 4}, 16);
  const Status status = index.Reserve((size_t{1} << 31) + 1);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("2147483649"));
  EXPECT_EQ(index.MemoryBytes(), MakeIndex({4, 4}, 16).MemoryBytes());
}

TEST(LshIndexTest, MovedIndexKeepsItsContents) {
  LshIndex index = MakeIndex({2, 2}, 4);
  ASSERT_TRUE(index.Insert(1, Sketch{1, 2, 3, 4}).ok());
  ASSERT_TRUE(index.Insert(2, Sketch{1, 2, 5, 6}).ok());
  LshIndex moved = std::move(index);
  EXPECT_THAT(moved.AllPairCandidates(), ElementsAre(Pair{1, 2}));
  LshIndex other = MakeIndex({1, 1}, 1);
  other = std::move(moved);
  EXPECT_EQ(other.size(), 2u);
  EXPECT_EQ(other.num_hashes(), 4);
}

TEST(LshIndexTest, CreateRejectsBadParams) {
  const auto expect_invalid = [](LshParams params, int num_hashes, const char* words) {
    Result<LshIndex> index = LshIndex::Create(params, num_hashes);
    ASSERT_FALSE(index.ok());
    EXPECT_EQ(index.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(index.status().message(), HasSubstr(words));
  };
  expect_invalid({0, 4}, 128, "num_bands (0) must be at least 1");
  expect_invalid({-1, 4}, 128, "num_bands (-1)");
  expect_invalid({4, 0}, 128, "rows_per_band (0) must be at least 1");
  expect_invalid({1, 1}, 0, "num_hashes (0) must be at least 1");
  expect_invalid({17, 8}, 128,
                 "num_bands * rows_per_band (17 * 8 = 136) must be at most "
                 "num_hashes (128)");
  // The product is computed without overflow.
  expect_invalid({1 << 20, 1 << 20}, 128, "1099511627776");
  EXPECT_TRUE(LshIndex::Create({16, 8}, 128).ok());
  EXPECT_TRUE(LshIndex::Create({1, 1}, 1).ok());
}

// Insert with more than 2^17 bands (8 num_bands > 2^20 shard steps): valid
// input, which an earlier version's DCHECK in GrowForOneMoreStaggered
// aborted on in builds with DCHECKs on.
TEST(LshIndexTest, InsertWithMoreThanTwoToTheSeventeenBands) {
  constexpr int kBands = (1 << 17) + 1;
  LshIndex index = MakeIndex({kBands, 1}, kBands);
  Sketch first(kBands);
  for (int i = 0; i < kBands; ++i) first[i] = static_cast<uint64_t>(i);
  Sketch second(kBands, ~uint64_t{0});
  second[kBands - 1] = kBands - 1;  // shares only the last band with `first`
  ASSERT_TRUE(index.Insert(1, first).ok());
  ASSERT_TRUE(index.Insert(2, second).ok());
  EXPECT_THAT(*index.Query(second), ElementsAre(1, 2));
  EXPECT_THAT(index.AllPairCandidates(), ElementsAre(Pair{1, 2}));
  EXPECT_TRUE(index.Remove(1));
  EXPECT_THAT(*index.Query(first), ElementsAre(2));
}

TEST(LshIndexTest, InsertRejectsBadInputAndStaysUnchanged) {
  LshIndex index = MakeIndex({4, 2}, 8);
  const Sketch good = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(index.Insert(1, good).ok());
  for (size_t size : {0, 7, 9}) {
    const Status status = index.Insert(2, Sketch(size, 1));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                HasSubstr("sketch size (" + std::to_string(size) + ") must equal num_hashes (8)"));
  }
  const Status duplicate = index.Insert(1, good);
  EXPECT_EQ(duplicate.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(duplicate.message(), HasSubstr("doc_id (1) is already in the LSH index"));
  EXPECT_EQ(index.size(), 1u);
  EXPECT_THAT(*index.Query(good), ElementsAre(1));
}

TEST(LshIndexTest, InsertBulkRejectsBadInputAndStaysUnchanged) {
  for (int count : {10, 5000}) {  // the serial and the parallel validation
    SCOPED_TRACE(count);
    const int k = 4;
    LshIndex index = MakeIndex({2, 2}, k);
    ASSERT_TRUE(index.Insert(3, Sketch{1, 1, 1, 1}).ok());
    std::vector<uint64_t> ids(count), sketches(static_cast<size_t>(count) * k, 1);
    for (int i = 0; i < count; ++i) ids[i] = 100 + i;

    Status status = index.InsertBulk(ids, std::span(sketches).first(sketches.size() - 1));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("must equal the number of doc_ids (" +
                                            std::to_string(count) + ") times num_hashes (4)"));
    status = index.InsertBulk(std::span(ids).first(count - 1), sketches);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);

    std::vector<uint64_t> repeated = ids;
    repeated[count - 1] = repeated[count / 2];
    status = index.InsertBulk(repeated, sketches);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                HasSubstr("doc_id (" + std::to_string(ids[count / 2]) + ") more than once"));

    std::vector<uint64_t> present = ids;
    present[count / 3] = 3;
    status = index.InsertBulk(present, sketches);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("doc_id (3) is already in the LSH index"));

    EXPECT_EQ(index.size(), 1u);
    // The serial path inserts ids before it finds the bad one: all undone.
    for (uint64_t id : ids) EXPECT_FALSE(index.Contains(id));
    EXPECT_TRUE(index.Contains(3));
    EXPECT_TRUE(index.AllPairCandidates().empty());
    EXPECT_THAT(*index.Query(Sketch{1, 1, 1, 1}), ElementsAre(3));
    // The valid batch then goes in whole.
    ASSERT_TRUE(index.InsertBulk(ids, sketches).ok());
    EXPECT_EQ(index.size(), static_cast<size_t>(count) + 1);
    EXPECT_EQ(index.Query(Sketch{1, 1, 1, 1})->size(), static_cast<size_t>(count) + 1);
  }
}

TEST(LshIndexTest, QueryWithWrongSketchSizeIsAnError) {
  LshIndex index = MakeIndex({2, 2}, 4);
  ASSERT_TRUE(index.Insert(1, Sketch{1, 2, 3, 4}).ok());
  ASSERT_TRUE(index.Insert(2, Sketch{1, 2, 3, 4}).ok());
  Result<std::vector<uint64_t>> short_sketch = index.Query(Sketch{1, 2, 3});
  ASSERT_FALSE(short_sketch.ok());
  EXPECT_EQ(short_sketch.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(short_sketch.status().message(), testing::HasSubstr("num_hashes (4)"));
  EXPECT_FALSE(index.Query(Sketch{1, 2, 3, 4, 5}).ok());
  // bands_per_pass below 1 means one band per pass.
  EXPECT_EQ(index.AllPairCandidates(0), index.AllPairCandidates(1));
  EXPECT_EQ(index.AllPairCandidates(-3).size(), 1u);
}

// The specialised loops (rows 8 and 13) give the generic BandKey's keys.
TEST(LshBandKeyTest, SpecialisedShapesGiveTheGenericKeys) {
  SplitMix64 rng(5);
  std::vector<uint64_t> sketch(256);
  for (uint64_t& v : sketch) v = rng.Next();
  for (int rows = 1; rows <= 16; ++rows) {
    const int bands = 256 / rows;
    std::vector<uint64_t> keys(bands);
    internal::ComputeBandKeys({bands, rows}, sketch.data(), keys.data());
    for (int band = 0; band < bands; ++band) {
      ASSERT_EQ(keys[band], internal::BandKey(sketch.data(), rows, band))
          << "rows " << rows << " band " << band;
    }
  }
}

TEST(LshBandKeyTest, FrozenValues) {
  // Frozen: band keys are XXH3-64 of little-endian values seeded with the band
  // index. These vectors change only with a deliberate format change.
  const uint64_t values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint64_t keys[4];
  internal::ComputeBandKeys({4, 2}, values, keys);
  EXPECT_THAT(keys, ElementsAre(571542372673154031u, 11645869314983633522u, 17529667314224397992u,
                                1026732178276892045u));
  // The same values in different bands give different keys.
  const uint64_t same[4] = {9, 9, 9, 9};
  uint64_t same_keys[2];
  internal::ComputeBandKeys({2, 2}, same, same_keys);
  EXPECT_NE(same_keys[0], same_keys[1]);
}

}  // namespace
}  // namespace neardup
