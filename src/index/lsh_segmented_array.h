// SegmentedArray: a dense array of trivially copyable values (LshIndex's
// document ids, slot -> id) stored in fixed-size segments, so that growing
// it never copies what it holds: element i lives at
// segments_[i >> kSegmentShift][i & kSegmentMask].
//
// Why (session 12): as one HugePageVector the id array doubled at a single
// insert, copying all of it (8 MB at 1M documents) and first-touching the
// new buffer while a stream's writer lock was held; with the id table's
// rehash at the same insert, the stream's worst add while a window first
// grew to 1M documents was 63-92 ms of CPU. Here the first segment grows
// like a vector up to a segment (so a small index stays small): its
// capacity is always a power of two up to kSegmentSize, also after a
// reserve, so it never overshoots a segment. Every later segment is
// allocated whole when the array first reaches it (nothing copied past the
// first segment; its pages are touched by the appends that fill it, a 2 MiB
// huge page at a time). The largest single copy is half a segment (2 MiB).
//
// Capacity keeps its high-water mark: pop_back frees nothing (as a vector
// keeps its capacity), so a window that turns over at a segment boundary
// does not allocate and free a segment back and forth.
//
// Cost: operator[] is one more dependent load than a vector's (the segment's
// data pointer; the segment table is small and stays in cache). Segments of
// 4 MiB are allocated in transparent huge pages (lsh_huge_page_allocator.h).
// Thread safety: const methods may run concurrently; mutations need a lock.
#ifndef NEARDUP_INDEX_LSH_SEGMENTED_ARRAY_H_
#define NEARDUP_INDEX_LSH_SEGMENTED_ARRAY_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "index/lsh_huge_page_allocator.h"
#include "neardup/check.h"

namespace neardup::internal {

template <typename T>
class SegmentedArray {
  static_assert(std::is_trivially_copyable_v<T>);
  // kSegmentShift below is exact only for power-of-two element sizes.
  static_assert(std::has_single_bit(sizeof(T)));

 public:
  // 4 MiB of T per segment (2^19 eight-byte ids): two huge pages.
  static constexpr int kSegmentShift = std::countr_zero((size_t{4} << 20) / sizeof(T));
  static constexpr size_t kSegmentSize = size_t{1} << kSegmentShift;
  static constexpr size_t kSegmentMask = kSegmentSize - 1;

  SegmentedArray() = default;
  SegmentedArray(const SegmentedArray&) = default;
  SegmentedArray& operator=(const SegmentedArray&) = default;
  // A moved-from array is empty (size 0, no storage).
  SegmentedArray(SegmentedArray&& other) noexcept
      : segments_(std::move(other.segments_)), size_(std::exchange(other.size_, 0)) {
    other.segments_.clear();
  }
  SegmentedArray& operator=(SegmentedArray&& other) noexcept {
    if (this != &other) {
      segments_ = std::move(other.segments_);
      other.segments_.clear();
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Elements allocated (the first segment's capacity plus kSegmentSize per
  // later segment).
  size_t capacity() const {
    size_t total = 0;
    for (const Segment& segment : segments_) total += segment.capacity();
    return total;
  }
  size_t MemoryBytes() const {
    size_t total = segments_.capacity() * sizeof(Segment);
    for (const Segment& segment : segments_) total += ReservedBytes(segment);
    return total;
  }

  const T& operator[](size_t i) const {
    NEARDUP_DCHECK(i < size_);
    return segments_[i >> kSegmentShift][i & kSegmentMask];
  }
  T& operator[](size_t i) {
    NEARDUP_DCHECK(i < size_);
    return segments_[i >> kSegmentShift][i & kSegmentMask];
  }

  void push_back(T value) {
    const size_t segment = size_ >> kSegmentShift;
    if (segment == segments_.size()) {
      // Later segments whole, so that filling them copies nothing. Reserved
      // before it joins segments_, so that a reserve that throws leaves no
      // empty segment behind (strong guarantee: a throw changes nothing).
      Segment fresh;
      if (segment != 0) fresh.reserve(kSegmentSize);
      segments_.push_back(std::move(fresh));
    }
    Segment& to = segments_[segment];
    // The first segment doubles itself (not by the library's growth factor),
    // so that its capacity stays a power of two and stops at kSegmentSize.
    if (segment == 0 && to.size() == to.capacity()) {
      to.reserve(std::min(std::max<size_t>(2 * to.capacity(), 1), kSegmentSize));
    }
    to.push_back(value);
    ++size_;
  }

  // REQUIRES: !empty().
  void pop_back() {
    NEARDUP_DCHECK(size_ > 0);
    --size_;
    segments_[size_ >> kSegmentShift].pop_back();
  }

  // Appends [first, last).
  template <typename It>
  void append(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }

  // Drops the elements from `n` on. REQUIRES: n <= size().
  void truncate(size_t n) {
    NEARDUP_DCHECK(n <= size_);
    while (size_ > n) pop_back();
  }

  // Makes room for `n` elements in total: appending up to n allocates and
  // copies nothing. The first segment's share is rounded up to a power of
  // two (at most kSegmentSize).
  void reserve(size_t n) {
    if (n == 0) return;
    const size_t last_segment = (n - 1) >> kSegmentShift;
    while (segments_.size() <= last_segment) segments_.emplace_back();
    segments_[0].reserve(last_segment == 0 ? std::bit_ceil(n) : kSegmentSize);
    for (size_t s = 1; s <= last_segment; ++s) segments_[s].reserve(kSegmentSize);
  }

 private:
  using Segment = HugePageVector<T>;
  // Invariant: segments_[s] holds elements [s * kSegmentSize, ...) and every
  // segment before the last non-empty one is full; empty segments past it
  // keep their capacity.
  std::vector<Segment> segments_;
  size_t size_ = 0;
};

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_SEGMENTED_ARRAY_H_
