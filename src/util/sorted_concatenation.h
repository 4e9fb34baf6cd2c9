// SortedConcatenation: the elements of several lists in one sorted list,
// by a bucket pass and small sorts on all cores.
//
// Why: the candidate lists of a corpus are tens of millions of 16-byte
// pairs; joining them and then sorting the whole (tbb::parallel_sort, a
// quicksort) spent ~12% of a one-thread `dedup` on the 1M-document corpus
// (23.5M pairs, ~25 levels of passes over memory). Here two read passes
// over the lists (the largest key, then each list's count per bucket) size
// the buckets of the key's high bits, each element goes straight from its
// list to its bucket (the pass that replaces the concatenation's copy), and
// every bucket, a few thousand elements that fit in a core's cache, is
// sorted on its own. On the 1M corpus the candidates stage's CPU fell 8-10%
// (two loaded pairs, session 21).
//
// key_of(x) must be monotone in the element order (`less`, operator< by
// default): less(x, y) implies key_of(x) <= key_of(y) (for pairs ordered by
// their first member, then their second: the first member), so that sorted
// buckets in key order are the sorted list. Elements equivalent under
// `less` come out in an unspecified but deterministic order (the lists'
// order and std::sort's). A skewed key (most
// elements in one bucket) is still correct; such a bucket is sorted by
// tbb::parallel_sort.
//
// Memory: the result (its pages faulted in on all cores, fresh_pages.h)
// plus 8 bytes per list and bucket. The result is allocated before any list
// is freed, so the peak is about twice the total at the start (as joining
// and sorting in place was); with a span of non-const lists each list is
// freed as soon as its elements are placed.
// Thread safety: the lists must not change during the call.
#ifndef NEARDUP_UTIL_SORTED_CONCATENATION_H_
#define NEARDUP_UTIL_SORTED_CONCATENATION_H_

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include "util/fresh_pages.h"

namespace neardup::internal {

// Elements per bucket aimed at: 8K elements of 16 bytes (candidate pairs)
// are 128 KiB, of 32 (SimilarPair) 256 KiB, inside a core's L2 while sorted.
inline constexpr size_t kSortBucketElements = size_t{1} << 13;
// At most this many buckets: each list writes to up to this many places at
// once in the bucket pass, and each list keeps a count per bucket.
inline constexpr size_t kMaxSortBuckets = size_t{1} << 12;

template <typename List, typename KeyOf, typename Less = std::less<>>
std::vector<std::remove_const_t<typename List::value_type>> SortedConcatenation(
    std::span<List> lists, const KeyOf& key_of, const Less& less = Less()) {
  using T = std::remove_const_t<typename List::value_type>;
  size_t total = 0;
  for (const auto& list : lists) total += list.size();
  std::vector<T> all;
  if (total == 0) return all;

  // Buckets: a power of two, about total / kSortBucketElements, fewer when
  // there are many lists (their counts stay under ~total / 2 entries); the
  // bucket of x is key_of(x) >> shift, shift making the largest key's
  // bucket the last.
  const uint64_t max_key = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, lists.size()), uint64_t{0},
      [&](const tbb::blocked_range<size_t>& range, uint64_t found) {
        for (size_t i = range.begin(); i != range.end(); ++i) {
          for (const T& x : lists[i]) found = std::max<uint64_t>(found, key_of(x));
        }
        return found;
      },
      [](uint64_t x, uint64_t y) { return std::max(x, y); });
  size_t buckets = std::bit_ceil(std::max<size_t>(1, total / kSortBucketElements));
  buckets = std::min(buckets, kMaxSortBuckets);
  while (buckets > 1 && buckets * lists.size() > total / 2 + 1) buckets /= 2;
  const int key_bits = std::bit_width(max_key);
  const int bucket_bits = std::countr_zero(buckets);
  // One bucket: every element in bucket 0 (a shift by key_bits could be a
  // shift by 64, undefined, for keys of 2^63 and above).
  const int shift = std::max(0, key_bits - bucket_bits);
  const auto bucket_of = [&](const T& x) {
    return buckets == 1 ? size_t{0} : static_cast<size_t>(key_of(x) >> shift);
  };

  // where[list * buckets + bucket]: first the list's count in the bucket,
  // then (prefix sums, bucket by bucket, list by list) where its next
  // element in that bucket goes.
  std::vector<size_t> where(lists.size() * buckets, 0);
  tbb::parallel_for(size_t{0}, lists.size(), [&](size_t i) {
    size_t* count = where.data() + i * buckets;
    for (const T& x : lists[i]) ++count[bucket_of(x)];
  });
  std::vector<size_t> bucket_start(buckets + 1, 0);
  size_t at = 0;
  for (size_t b = 0; b < buckets; ++b) {
    bucket_start[b] = at;
    for (size_t i = 0; i < lists.size(); ++i) {
      size_t& slot = where[i * buckets + b];
      const size_t count = slot;
      slot = at;
      at += count;
    }
  }
  bucket_start[buckets] = at;

  GrowFaultingInParallel(&all, total);
  tbb::parallel_for(size_t{0}, lists.size(), [&](size_t i) {
    size_t* next = where.data() + i * buckets;
    for (const T& x : lists[i]) all[next[bucket_of(x)]++] = x;
    if constexpr (!std::is_const_v<List>) std::remove_const_t<List>().swap(lists[i]);
  });
  // A bucket larger than an eighth of the whole (a skewed key) is sorted on
  // all cores itself; the rest one task each.
  tbb::parallel_for(size_t{0}, buckets, [&](size_t b) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(bucket_start[b]);
    const auto last = all.begin() + static_cast<std::ptrdiff_t>(bucket_start[b + 1]);
    if (bucket_start[b + 1] - bucket_start[b] > total / 8 + kSortBucketElements) {
      tbb::parallel_sort(first, last, less);
    } else {
      std::sort(first, last, less);
    }
  });
  return all;
}

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_SORTED_CONCATENATION_H_
