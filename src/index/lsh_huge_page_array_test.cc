#include "index/lsh_huge_page_array.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace neardup::internal {
namespace {

struct Pair {
  uint32_t next;
  uint32_t prev;
};

// Elements of 2 MiB and more: the size at which growth becomes page moves.
template <typename T>
constexpr size_t kHugeElements = kHugePageMinAllocation / sizeof(T);

uint32_t ValueAt(size_t i) { return static_cast<uint32_t>(i * 2654435761u + 7); }

template <typename T>
T ElementAt(size_t i) {
  if constexpr (std::is_same_v<T, Pair>) {
    return Pair{ValueAt(i), static_cast<uint32_t>(i)};
  } else {
    return ValueAt(i);
  }
}

template <typename T>
bool Holds(const T& element, size_t i) {
  if constexpr (std::is_same_v<T, Pair>) {
    return element.next == ValueAt(i) && element.prev == static_cast<uint32_t>(i);
  } else {
    return element == ValueAt(i);
  }
}

// Pushes up to `n` elements and checks every one after each growth; returns
// how many growths there were.
template <typename T>
size_t FillAndCheck(HugePageArray<T>& array, size_t n) {
  size_t growths = 0;
  for (size_t i = array.size(); i < n; ++i) {
    const size_t capacity = array.capacity();
    array.push_back(ElementAt<T>(i));
    if (array.capacity() != capacity) {
      ++growths;
      for (size_t j = 0; j <= i; ++j) {
        if (!Holds(array[j], j)) {
          ADD_FAILURE() << "element " << j << " changed at growth to " << array.capacity();
          return growths;
        }
      }
    }
  }
  return growths;
}

bool OffsetInFirstPage(const void* data, size_t offset) {
  return reinterpret_cast<uintptr_t>(data) % kHugePageBytes == offset;
}

TEST(HugePageArrayTest, EmptyHoldsNothing) {
  HugePageArray<uint32_t> array(128);
  EXPECT_TRUE(array.empty());
  EXPECT_EQ(array.size(), 0u);
  EXPECT_EQ(array.capacity(), 0u);
  EXPECT_EQ(array.data(), nullptr);
  EXPECT_EQ(array.ReservedBytes(), 0u);
  EXPECT_EQ(ReservedBytes(array), 0u);
  array.reserve(0);
  array.resize(0);
  EXPECT_EQ(array.capacity(), 0u);
  HugePageArray<uint32_t> moved(std::move(array));
  EXPECT_EQ(moved.data(), nullptr);
}

// Growth through push_back from one element to 3 huge pages keeps every
// element, at vector capacities (doubling), and past 2 MiB by page moves,
// each allocation starting at the offset into its first huge page.
TEST(HugePageArrayTest, GrowthKeepsContentsAndOffsets) {
  for (const HugePageGrowth growth : {HugePageGrowth::kRemap, HugePageGrowth::kCopy}) {
    const size_t offset = 64 * 1000;
    HugePageArray<uint32_t> array(offset, growth);
    std::vector<uint32_t, HugePageAllocator<uint32_t>> vector{HugePageAllocator<uint32_t>(offset)};
    const size_t n = 3 * kHugeElements<uint32_t> + 17;
    for (size_t i = 0; i < n; ++i) {
      array.push_back(ValueAt(i));
      vector.push_back(ValueAt(i));
      ASSERT_EQ(array.capacity(), vector.capacity()) << i;
      if (array.capacity() * sizeof(uint32_t) >= kHugePageMinAllocation) {
        ASSERT_TRUE(OffsetInFirstPage(array.data(), offset)) << i;
      }
    }
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(array[i], ValueAt(i)) << i;
    EXPECT_EQ(array.ReservedBytes(), ReservedBytes(vector));
    // 2 MiB -> 4 -> 8 MiB: two growths past the threshold.
    if (growth == HugePageGrowth::kRemap) {
#if defined(__linux__)
      EXPECT_EQ(array.remapped_growths(), 2u);
#endif
    } else {
      EXPECT_EQ(array.remapped_growths(), 0u);
    }
  }
}

template <typename T>
void CheckEveryGrowthKeepsEveryElement() {
  for (const HugePageGrowth growth : {HugePageGrowth::kRemap, HugePageGrowth::kCopy}) {
    for (const size_t offset : {size_t{0}, size_t{64}, kHugePageBytes - 64}) {
      HugePageArray<T> array(offset, growth);
      EXPECT_GT(FillAndCheck(array, 2 * kHugeElements<T> + 1), 15u) << sizeof(T);
      EXPECT_TRUE(OffsetInFirstPage(array.data(), offset)) << sizeof(T);
    }
  }
}

// Every element kept at each growth, checked whole, for 4- and 8-byte
// elements and several offsets, both paths.
TEST(HugePageArrayTest, EveryGrowthKeepsEveryElement) {
  CheckEveryGrowthKeepsEveryElement<uint32_t>();
  CheckEveryGrowthKeepsEveryElement<Pair>();
}

// Two arrays growing in turn, as a band's keys and links do, keep their
// contents; their growths past 2 MiB go by mremap, in place or moved, as the
// address space allows (GrowthMovesPagesWhenItCannotExtend forces a move).
TEST(HugePageArrayTest, InterleavedGrowthsKeepContents) {
  HugePageArray<Pair> links(640);
  HugePageArray<uint32_t> keys(320);
  const size_t n = kHugeElements<Pair>;
  for (size_t i = 0; i < 4 * n; ++i) {
    links.push_back(Pair{ValueAt(i), static_cast<uint32_t>(i)});
    keys.push_back(ValueAt(i) ^ 1);
  }
  for (size_t i = 0; i < 4 * n; ++i) {
    ASSERT_EQ(links[i].next, ValueAt(i)) << i;
    ASSERT_EQ(links[i].prev, i) << i;
    ASSERT_EQ(keys[i], ValueAt(i) ^ 1) << i;
  }
  EXPECT_TRUE(OffsetInFirstPage(links.data(), 640));
  EXPECT_TRUE(OffsetInFirstPage(keys.data(), 320));
#if defined(__linux__)
  // links: 2 -> 4 -> 8 MiB (4 * n elements of 8 bytes), keys: 2 -> 4 MiB.
  EXPECT_EQ(links.remapped_growths(), 2u);
  EXPECT_EQ(keys.remapped_growths(), 1u);
#endif
}

#if defined(__linux__)
// With the range after its mapping taken, growth moves the pages to a new
// aligned range (MREMAP_FIXED): a new address, the same contents, no copy.
TEST(HugePageArrayTest, GrowthMovesPagesWhenItCannotExtend) {
  const size_t offset = 64 * 77;
  HugePageArray<uint32_t> array(offset);
  FillAndCheck(array, kHugeElements<uint32_t> + 1);
  const size_t reserved = array.ReservedBytes();
  char* const end = reinterpret_cast<char*>(array.data()) - offset + reserved;
  void* const blocker = mmap(end, 4096, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  // EEXIST: something is mapped there already, which blocks it as well.
  if (blocker == MAP_FAILED) {
    ASSERT_EQ(errno, EEXIST);
  } else if (blocker != static_cast<void*>(end)) {
    munmap(blocker, 4096);
    GTEST_SKIP() << "MAP_FIXED_NOREPLACE taken as a hint (Linux before 4.17)";
  }
  const uint32_t* before = array.data();
  const size_t remapped = array.remapped_growths();
  array.reserve(4 * array.capacity());
  EXPECT_NE(array.data(), before);
  EXPECT_EQ(array.remapped_growths(), remapped + 1);
  EXPECT_TRUE(OffsetInFirstPage(array.data(), offset));
  for (size_t i = 0; i < array.size(); ++i) ASSERT_TRUE(Holds(array[i], i)) << i;
  FillAndCheck(array, array.capacity());
  if (blocker != MAP_FAILED) munmap(blocker, 4096);
}

// The bytes of address space mapped: the sum of /proc/self/maps' ranges.
size_t MappedBytes() {
  std::ifstream maps("/proc/self/maps");
  size_t bytes = 0;
  for (std::string line; std::getline(maps, line);) {
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash == std::string::npos || space == std::string::npos || space < dash) continue;
    bytes += std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16) -
             std::stoull(line.substr(0, dash), nullptr, 16);
  }
  return bytes;
}

// A growth past the overcommit limit (4 TiB: above RAM + swap, below the
// address space) fails in the page move after the kernel unmapped its
// PROT_NONE target: it throws bad_alloc, keeps the contents, leaves the
// array usable, and reclaims and unmaps the target (no range left mapped).
TEST(HugePageArrayTest, FailedPageMoveThrowsAndKeepsTheArray) {
  std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
  int mode = -1;
  overcommit >> mode;
  if (mode == 1) GTEST_SKIP() << "vm.overcommit_memory=1: a 4 TiB growth may succeed";
  HugePageArray<uint32_t> array(64 * 5);
  FillAndCheck(array, kHugeElements<uint32_t> + 1);
  const uint32_t* const data = array.data();
  const size_t size = array.size();
  const size_t capacity = array.capacity();
  const size_t remapped = array.remapped_growths();
  const size_t mapped = MappedBytes();
  EXPECT_THROW(array.reserve((size_t{4} << 40) / sizeof(uint32_t)), std::bad_alloc);
  // No 4 TiB reservation left behind. Not the line count, which the throw
  // itself may change under ASan (its allocator maps 64 KiB size-class
  // regions).
  EXPECT_LT(MappedBytes(), mapped + (size_t{1} << 30));
  EXPECT_EQ(array.data(), data);
  EXPECT_EQ(array.size(), size);
  EXPECT_EQ(array.capacity(), capacity);
  EXPECT_EQ(array.remapped_growths(), remapped);
  for (size_t i = 0; i < array.size(); ++i) ASSERT_TRUE(Holds(array[i], i)) << i;
  FillAndCheck(array, 3 * kHugeElements<uint32_t>);  // still grows
  EXPECT_GT(array.remapped_growths(), remapped);
  for (size_t i = 0; i < array.size(); ++i) ASSERT_TRUE(Holds(array[i], i)) << i;
}
#endif

// resize grows as a vector's (to max(2 * size, n)), reserve to exactly n;
// pop_back keeps the capacity; the accounting is HugePageAllocator's.
TEST(HugePageArrayTest, ResizeReserveAndPopBackAsVector) {
  HugePageArray<uint32_t> array(4096);
  std::vector<uint32_t, HugePageAllocator<uint32_t>> vector{HugePageAllocator<uint32_t>(4096)};
  for (const size_t n : {size_t{10}, size_t{11}, size_t{1000}, kHugeElements<uint32_t> - 1,
                         kHugeElements<uint32_t> + 5, 5 * kHugeElements<uint32_t>}) {
    array.resize(n);
    vector.resize(n);
    EXPECT_EQ(array.size(), n);
    EXPECT_EQ(array.capacity(), vector.capacity()) << n;
    EXPECT_EQ(array.ReservedBytes(), ReservedBytes(vector)) << n;
  }
  array.reserve(11 * kHugeElements<uint32_t> + 3);
  vector.reserve(11 * kHugeElements<uint32_t> + 3);
  EXPECT_EQ(array.capacity(), vector.capacity());
  EXPECT_EQ(array.ReservedBytes(), ReservedBytes(vector));
  EXPECT_TRUE(OffsetInFirstPage(array.data(), 4096));
  const size_t capacity = array.capacity();
  array[array.size() - 1] = 99;
  array.pop_back();
  array.emplace_back();
  EXPECT_EQ(array[array.size() - 1], 99u);  // default-initialised: not zeroed
  array.pop_back();
  EXPECT_EQ(array.capacity(), capacity);
  array.reserve(capacity - 1);  // never shrinks
  EXPECT_EQ(array.capacity(), capacity);
}

// Moving an array hands over its allocation; the moved-from one is empty and
// reusable.
TEST(HugePageArrayTest, MoveHandsOverTheAllocation) {
  HugePageArray<uint32_t> a(192);
  FillAndCheck(a, kHugeElements<uint32_t> + 1);
  const uint32_t* data = a.data();
  HugePageArray<uint32_t> b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.offset_bytes(), 192u);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.capacity(), 0u);
  a.push_back(5);
  EXPECT_EQ(a[0], 5u);
  a = std::move(b);
  EXPECT_EQ(a.data(), data);
  EXPECT_EQ(a[kHugeElements<uint32_t>], ValueAt(kHugeElements<uint32_t>));
}

// Huge sizes: beyond max_size() throws std::length_error (as the vector),
// a size that cannot be mapped std::bad_alloc; the array is unchanged.
TEST(HugePageArrayTest, ImpossibleSizesThrowAndKeepTheArray) {
  HugePageArray<Pair> array(64);
  FillAndCheck(array, 1000);
  const Pair* data = array.data();
  EXPECT_THROW(array.reserve(array.max_size() + 1), std::length_error);
  EXPECT_THROW(array.resize(static_cast<size_t>(-1)), std::length_error);
  EXPECT_THROW(array.reserve(array.max_size()), std::bad_alloc);  // 4 EiB of address space
  EXPECT_EQ(array.data(), data);
  EXPECT_EQ(array.size(), 1000u);
  for (size_t i = 0; i < 1000; ++i) ASSERT_TRUE(Holds(array[i], i)) << i;
  // And from a huge allocation (the remap path fails, then the copy).
  FillAndCheck(array, kHugeElements<Pair> + 1);
  data = array.data();
  EXPECT_THROW(array.reserve(array.max_size()), std::bad_alloc);
  EXPECT_EQ(array.data(), data);
  for (size_t i = 0; i < array.size(); ++i) ASSERT_TRUE(Holds(array[i], i)) << i;
}

}  // namespace
}  // namespace neardup::internal
