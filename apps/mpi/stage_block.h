// StageBlock: one block of memory a rank hands from one stage of its job to
// the next, instead of each stage freeing its list and taking a fresh one.
// In a band-key round (band_groups.cc) it holds the sorted records, then
// the candidate sort's key lists, then the candidates received from the
// peers: lists of ~100-200 MB a rank at 2 ranks on the 1M corpus, live one
// after another. A fresh block is pages the kernel zeroes on first touch
// (page zeroing was 20-33% of a rank's samples); a handed-on one is
// resident already. Nothing in it is initialised: Take() gives the previous
// stage's bytes or never-written memory, for the caller to overwrite before
// it reads (no value-initialisation either: std::vector::resize wrote
// zeros over each list first).
// Cost: the block stays at its largest size (resident as far as written)
// until Release() or destruction; a smaller later stage gives nothing back.
// Thread safety: one owner; a span taken may be written from several
// threads, as any array.
#ifndef NEARDUP_APPS_MPI_STAGE_BLOCK_H_
#define NEARDUP_APPS_MPI_STAGE_BLOCK_H_

#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

namespace neardup::mpi {

class StageBlock {
 public:
  StageBlock() = default;
  // Not movable: a defaulted move would leave the source's capacity with no
  // memory behind it, and a later Take() would write through null.
  StageBlock(const StageBlock&) = delete;
  StageBlock& operator=(const StageBlock&) = delete;

  // `count` T at the block's start, their values unspecified. Where the
  // capacity is short the block is freed, then a fresh one taken with a
  // quarter more room (its contents are not kept; room never written is
  // never faulted in). Invalidates every span taken before.
  // REQUIRES: T is an implicit-lifetime type (scalars, aggregates such as
  // CandidatePair): its objects exist in the bytes without a constructor.
  template <typename T>
  std::span<T> Take(size_t count) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    if (count == 0) return {};
    const size_t bytes = count * sizeof(T);
    if (bytes > capacity_) {
      bytes_.reset();  // the old block goes first: never two at once
      capacity_ = bytes + bytes / 4;
      bytes_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
    }
    // A byte array's lifetime begun anew over the bytes (no code: nothing
    // is initialised) creates the T objects implicitly, whatever type the
    // previous stage took (C++20 [intro.object]/13).
    std::byte* start = ::new (static_cast<void*>(bytes_.get())) std::byte[bytes];
    return {std::launder(reinterpret_cast<T*>(start)), count};
  }

  // Bytes the block holds (0 before the first Take).
  size_t capacity() const { return capacity_; }
  // Frees the block; every span taken is invalid.
  void Release() {
    bytes_.reset();
    capacity_ = 0;
  }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  size_t capacity_ = 0;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_STAGE_BLOCK_H_
