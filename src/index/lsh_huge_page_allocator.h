// HugePageAllocator: a std::allocator replacement for the LSH index's large
// arrays (hash tables, per-band keys and links) that asks Linux for
// transparent huge pages on allocations of 2 MiB or more (4 MiB until
// session 12, when the tables were cut into shards of 2 MiB at 1M
// documents).
//
// Why: every insert and query touches one random entry in each band's table;
// with 4 KiB pages a 1M-document index misses the TLB on nearly all of them
// and page-faults once per 4 KiB while growing. 2 MiB pages remove most of
// both (measured in bench/lsh_bench.cc, docs/LSH.md). Where
// transparent_hugepage is "never", or off Linux, it is a plain aligned
// allocation.
// Cost of an offset: a huge-page allocation is rounded up to whole 2 MiB
// pages after adding the offset, so it can take one more huge page than
// without one, and the part of the first page below the offset is faulted in
// with it (a transparent huge page is faulted whole): up to one huge page
// (2 MiB) per array, ~64 MB resident for 16 bands' keys and links at 1M
// documents. ReservedBytes() says what an allocation takes, slack included:
// LshIndex::MemoryBytes() counts that (since session 13; it counted
// capacities, which left this slack out).
// Thread safety: immutable after construction; copies share the offset.
#ifndef NEARDUP_INDEX_LSH_HUGE_PAGE_ALLOCATOR_H_
#define NEARDUP_INDEX_LSH_HUGE_PAGE_ALLOCATOR_H_

#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "neardup/check.h"

namespace neardup::internal {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugePageMinAllocation = size_t{2} << 20;

// Asks for transparent huge pages on [p, p + bytes). Advice only: failure
// (e.g. THP disabled, or off Linux) leaves ordinary pages.
inline void AdviseHugePages([[maybe_unused]] void* p, [[maybe_unused]] size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
}

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  // The allocator is stateful only for its offset, which it keeps through
  // moves and swaps of the vectors that use it.
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  HugePageAllocator() = default;
  // Huge-page allocations start `offset_bytes` (a multiple of 64, below
  // kHugePageBytes) into their first huge page. Why (session 12): all of an
  // LshIndex's band arrays hold one entry per document, so without offsets
  // every band's keys (and links) array crossed into a new 2 MiB page at the
  // same insert, and that insert faulted in 16-32 huge pages (32-64 MB
  // zeroed: 50-100 ms of CPU on the loaded VM at 2^18 and 2^19 documents);
  // LshIndex gives each band's arrays a different offset.
  explicit HugePageAllocator(size_t offset_bytes) : offset_(offset_bytes) {
    NEARDUP_DCHECK(offset_bytes % 64 == 0 && offset_bytes < kHugePageBytes) << offset_bytes;
  }
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>& other)  // NOLINT: rebinding
      : offset_(other.offset_bytes()) {}

  size_t offset_bytes() const { return offset_; }

  // The bytes that an allocation of `n` elements takes: n * sizeof(T) below
  // kHugePageMinAllocation; else whole huge pages from the start of the
  // first one (the offset below the elements included) to the end of the
  // last (resident once touched, where the pages are transparent huge
  // pages). 0 for 0.
  size_t ReservedBytes(size_t n) const {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageMinAllocation) return bytes;
    return (bytes + offset_ + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  }

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageMinAllocation) {
      return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
    }
    const size_t rounded = ReservedBytes(n);
    void* p = std::aligned_alloc(kHugePageBytes, rounded);
    if (p == nullptr) throw std::bad_alloc();
    AdviseHugePages(p, rounded);
    return reinterpret_cast<T*>(static_cast<char*>(p) + offset_);
  }

  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugePageMinAllocation) {
      ::operator delete (p, std::align_val_t{alignof(T)});
    } else {
      std::free(reinterpret_cast<char*>(p) - offset_);
    }
  }

  // Default-initialises (no zero fill for the trivial element types here)
  // when resize() or emplace_back() adds elements without a value: the index
  // writes every such element before reading it, and InsertBulk's resize
  // would otherwise write each new key and link twice.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>& other) const {
    return offset_ == other.offset_bytes();
  }

 private:
  size_t offset_ = 0;
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// The bytes that `v`'s allocation takes (HugePageAllocator::ReservedBytes of
// its capacity): what memory accounting should count, not capacity *
// sizeof(T).
template <typename T>
size_t ReservedBytes(const HugePageVector<T>& v) {
  return v.get_allocator().ReservedBytes(v.capacity());
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_HUGE_PAGE_ALLOCATOR_H_
