// HugePageArray: a growable array of trivially copyable elements for the
// LSH index's per-band `keys` and `links` (lsh_index_state.h) whose growth
// past 2 MiB moves pages instead of copying bytes (session 16).
//
// Why: while a stream's window first grows, each band's arrays doubled by a
// copy (HugePageVector: std::vector with HugePageAllocator), 12 MB at 1M
// documents, the slowest single add 11-16 ms of CPU on the loaded VM. Here
// an allocation of kHugePageMinAllocation bytes or more is its own anonymous
// mapping, 2 MiB aligned, and growth asks Linux to extend it in place
// (mremap without MREMAP_MAYMOVE) or to move its page tables to a new
// aligned range (MREMAP_MAYMOVE | MREMAP_FIXED): O(page tables), not
// O(bytes); transparent huge pages move whole. Where mremap is unavailable
// (off Linux) or fails, growth allocates and copies, as a vector does.
//
// Layout and accounting are HugePageAllocator's (lsh_huge_page_allocator.h):
// below kHugePageMinAllocation a plain heap block; above, whole huge pages
// with the elements starting `offset_bytes` into the first (the bands'
// different offsets stagger their first-touch faults), ReservedBytes()
// counting the pages, slack included. Capacity grows as libstdc++'s vector's
// (push_back doubles, resize to max(2 * size, n), reserve to exactly n), so
// memory per document is the vector's.
//
// Errors: as the vector's: an allocation that fails throws std::bad_alloc,
// a size beyond max_size() std::length_error; the array is unchanged then.
// A growth whose page move fails after the kernel freed its target range
// (e.g. beyond the overcommit limit) may leave a PROT_NONE range mapped when
// another mapping took part of it meanwhile (ReleaseFailedTarget).
// Pointers from data() are invalidated by any growth, as a vector's.
// Cost: push_back O(1) amortised; a growth past 2 MiB a few system calls
// and the kernel's page-table moves (the new pages are faulted in on first
// touch, as before).
// Thread safety: as std::vector's (const access may be concurrent).
#ifndef NEARDUP_INDEX_LSH_HUGE_PAGE_ARRAY_H_
#define NEARDUP_INDEX_LSH_HUGE_PAGE_ARRAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "index/lsh_huge_page_allocator.h"
#include "neardup/check.h"

namespace neardup::internal {

// How a HugePageArray grows past kHugePageMinAllocation. kCopy is the
// fallback's path alone (for tests, and what non-Linux builds do).
enum class HugePageGrowth { kRemap, kCopy };

template <typename T>
class HugePageArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

 public:
  HugePageArray() = default;
  // REQUIRES: offset_bytes is a multiple of 64 below kHugePageBytes.
  explicit HugePageArray(size_t offset_bytes, HugePageGrowth growth = HugePageGrowth::kRemap)
      : offset_(offset_bytes), growth_(growth) {
    // A CHECK, not a DCHECK: a misaligned offset would misalign data_ (once
    // per array).
    NEARDUP_CHECK(offset_bytes % 64 == 0 && offset_bytes < kHugePageBytes) << offset_bytes;
  }
  HugePageArray(HugePageArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)),
        offset_(other.offset_),
        growth_(other.growth_),
        remapped_(std::exchange(other.remapped_, 0)) {}
  HugePageArray& operator=(HugePageArray&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
      offset_ = other.offset_;
      growth_ = other.growth_;
      remapped_ = std::exchange(other.remapped_, 0);
    }
    return *this;
  }
  HugePageArray(const HugePageArray&) = delete;
  HugePageArray& operator=(const HugePageArray&) = delete;
  ~HugePageArray() { Release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  size_t offset_bytes() const { return offset_; }
  static constexpr size_t max_size() { return (size_t{1} << 62) / sizeof(T); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

  // The bytes an allocation of `n` elements takes (HugePageAllocator's
  // rule): n * sizeof(T) below kHugePageMinAllocation, else whole huge pages
  // from the start of the first (the offset included) to the end of the last.
  // REQUIRES: n <= max_size().
  size_t ReservedBytes(size_t n) const { return HugePageAllocator<T>(offset_).ReservedBytes(n); }
  // What this array's allocation takes: what memory accounting counts.
  size_t ReservedBytes() const { return ReservedBytes(capacity_); }
  // How many growths moved or extended pages rather than copying (tests).
  size_t remapped_growths() const { return remapped_; }

  void reserve(size_t n) {
    if (n > capacity_) Reallocate(n);
  }
  // New elements are default-initialised (not zeroed), as HugePageVector's:
  // the index writes each before reading it.
  void resize(size_t n) {
    if (n > capacity_) Reallocate(GrownCapacity(n));
    size_ = n;
  }
  void push_back(const T& value) {
    if (size_ == capacity_) Reallocate(GrownCapacity(size_ + 1));
    data_[size_++] = value;
  }
  // Appends a default-initialised element.
  void emplace_back() {
    if (size_ == capacity_) Reallocate(GrownCapacity(size_ + 1));
    ++size_;
  }
  // REQUIRES: !empty(). Keeps the capacity.
  void pop_back() {
    NEARDUP_DCHECK(size_ > 0);
    --size_;
  }

 private:
  static bool IsHuge(size_t bytes) { return bytes >= kHugePageMinAllocation; }

  // libstdc++'s vector growth: at least double the size.
  size_t GrownCapacity(size_t needed) const {
    if (needed > max_size()) throw std::length_error("HugePageArray: size beyond max_size()");
    return std::min(max_size(), std::max(needed, 2 * size_));
  }

  // The start of the mapping (or heap block) that holds data_.
  char* Base() const { return reinterpret_cast<char*>(data_) - offset_; }
  // The start of the current block of `bytes` (ReservedBytes of the
  // capacity): a huge block starts offset_ before the elements.
  char* BlockOf(size_t bytes) const {
    return IsHuge(bytes) ? Base() : reinterpret_cast<char*>(data_);
  }

#if defined(__linux__)
  // A 2 MiB-aligned range of `bytes` (a multiple of kHugePageBytes) mapped
  // with `prot`, or nullptr. A trim that fails (a split at vm.max_map_count:
  // ENOMEM) unmaps the whole range rather than leave a head or tail that
  // Free would never unmap.
  static char* MapAligned(size_t bytes, int prot) {
    const size_t total = bytes + kHugePageBytes;
    void* p = mmap(nullptr, total, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    char* const raw = static_cast<char*>(p);
    const uintptr_t address = reinterpret_cast<uintptr_t>(raw);
    const size_t head = (kHugePageBytes - address % kHugePageBytes) % kHugePageBytes;
    char* const aligned = raw + head;
    if (head > 0 && munmap(raw, head) != 0) {
      munmap(raw, total);
      return nullptr;
    }
    const size_t tail = total - head - bytes;
    if (tail > 0 && munmap(aligned + bytes, tail) != 0) {
      munmap(aligned, total - head);
      return nullptr;
    }
    return aligned;
  }
  // Grows the mapping at `base` of `old_bytes` to `new_bytes` by page moves:
  // the new start, or nullptr (the mapping unchanged) if mremap fails.
  static char* Remap(char* base, size_t old_bytes, size_t new_bytes) {
    void* p = mremap(base, old_bytes, new_bytes, 0);  // in place, if the range after is free
    if (p != MAP_FAILED) return static_cast<char*>(p);
    char* const target = MapAligned(new_bytes, PROT_NONE);
    if (target == nullptr) return nullptr;
    p = mremap(base, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (p == MAP_FAILED) {
      ReleaseFailedTarget(target, new_bytes);
      return nullptr;
    }
    return static_cast<char*>(p);
  }
  // After a failed MREMAP_FIXED onto `target`: the kernel unmaps the target
  // range before its last checks (the overcommit charge: ENOMEM), so another
  // thread may have mapped into the hole since; never munmap it blindly.
  // Reclaims the range only if all of it is free, and unmaps it then; if any
  // of it is still mapped (our reservation intact, or partly someone else's),
  // leaves it: the one failure that may leak a PROT_NONE range (address
  // space only).
  static void ReleaseFailedTarget(char* target, size_t bytes) noexcept {
    void* const q =
        mmap(target, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (q != MAP_FAILED) munmap(q, bytes);  // q != target: < 4.17 took the flag as a hint
  }
#endif

  // A fresh allocation for `bytes` (ReservedBytes of the capacity).
  static char* Allocate(size_t bytes) {
    if (!IsHuge(bytes)) return static_cast<char*>(::operator new(bytes));
#if defined(__linux__)
    char* const p = MapAligned(bytes, PROT_READ | PROT_WRITE);
    if (p == nullptr) throw std::bad_alloc();
    AdviseHugePages(p, bytes);
    return p;
#else
    void* p = std::aligned_alloc(kHugePageBytes, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<char*>(p);
#endif
  }
  static void Free(char* base, size_t bytes) noexcept {
    if (!IsHuge(bytes)) {
      ::operator delete(base);
      return;
    }
#if defined(__linux__)
    munmap(base, bytes);
#else
    std::free(base);
#endif
  }

  void Reallocate(size_t new_capacity) {
    if (new_capacity > max_size()) throw std::length_error("HugePageArray: size beyond max_size()");
    const size_t old_bytes = ReservedBytes(capacity_);
    const size_t new_bytes = ReservedBytes(new_capacity);
    const size_t offset = IsHuge(new_bytes) ? offset_ : 0;
#if defined(__linux__)
    if (growth_ == HugePageGrowth::kRemap && data_ != nullptr && IsHuge(old_bytes)) {
      if (char* const moved = Remap(Base(), old_bytes, new_bytes); moved != nullptr) {
        AdviseHugePages(moved, new_bytes);
        data_ = reinterpret_cast<T*>(moved + offset);
        capacity_ = new_capacity;
        ++remapped_;
        return;
      }
    }
#endif
    char* const fresh = Allocate(new_bytes);  // throws, leaving *this unchanged
    if (size_ > 0) std::memcpy(fresh + offset, data_, size_ * sizeof(T));
    if (data_ != nullptr) Free(BlockOf(old_bytes), old_bytes);
    data_ = reinterpret_cast<T*>(fresh + offset);
    capacity_ = new_capacity;
  }

  void Release() noexcept {
    if (data_ == nullptr) return;
    const size_t bytes = ReservedBytes(capacity_);
    Free(BlockOf(bytes), bytes);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t offset_ = 0;
  HugePageGrowth growth_ = HugePageGrowth::kRemap;
  size_t remapped_ = 0;
};

// The bytes that `a`'s allocation takes, as ReservedBytes(HugePageVector).
template <typename T>
size_t ReservedBytes(const HugePageArray<T>& a) {
  return a.ReservedBytes();
}

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_LSH_HUGE_PAGE_ARRAY_H_
