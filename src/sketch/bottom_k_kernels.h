// Kernels of BottomKBuilder (neardup/minhash.h): the threshold filter that
// rejects most feature hashes with one compare, and the sort of the few
// that survive it.
//
// FilterInRange copies the values in [first, last], in order, without a
// branch on the data: the portable kernel stores every value and advances
// the output by the compare's result; AVX2 compares four values per
// instruction and packs the survivors with a permutation from a 16-entry
// table; AVX-512 compares eight and packs them with vpcompressq.
// SortAscending is a bucket sort on the top bits (linear for the uniform
// feature hashes); AVX-512 computes its bucket numbers 8 per instruction
// (subtract, shift, narrow) and its bucket offsets 16 (or 64 byte counts)
// per instruction. Unique drops repeats from sorted values: portable
// one value per step (flag arithmetic, no branch), AVX-512 eight (compare
// with the values shifted by one, compress). MergeUnique merges the held
// values with the sorted new ones, dropping repeats: portable one value per
// step without a branch (its chain is a load whose address depends on the
// last compare, ~5 cycles a value), AVX-512 eight per step (a bitonic merge
// of two vectors, then Unique's compress; one data-dependent branch per
// eight values).
// (A bitonic network on AVX-512 was measured no faster for 16-400 values:
// it is bound by its permutation latency.)
//
// Every kernel gives the same output (bottom_k_test.cc runs each one the CPU
// supports against the portable one and against std::sort).
// Cost: FilterInRange about 3 instructions per value portable, 1 per value
// AVX2, under 1 AVX-512. Thread safety: pure functions.
#ifndef NEARDUP_SKETCH_BOTTOM_K_KERNELS_H_
#define NEARDUP_SKETCH_BOTTOM_K_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace neardup::internal {

struct CpuFeatures;

// Writes the values[i] in [first, last] to out[0, r), in order, and returns
// r. REQUIRES: first <= last; out has room for count + kFilterSlack values
// (kernels may store whole vectors past the last kept value); out does not
// overlap values.
using BottomKFilterFn = size_t (*)(const uint64_t* values, size_t count, uint64_t first,
                                   uint64_t last, uint64_t* out);
inline constexpr size_t kFilterSlack = 8;

// Writes values[0, count) to out[0, count), ascending. REQUIRES: every value
// is in [first, last] (the bound sizes the buckets; uniform values over it
// sort in linear time); out has room for count values and overlaps neither
// values nor scratch; `scratch` has room for SortScratchSize(count) values.
using BottomKSortFn = void (*)(const uint64_t* values, size_t count, uint64_t first, uint64_t last,
                               uint64_t* out, uint64_t* scratch);

// Writes the distinct values of the ascending values[0, count) to out,
// ascending, until `room` are written, and returns their number (at most
// room). REQUIRES: room >= 1; out has room for room + kUniqueSlack values
// (kernels may store whole vectors past the last kept value) and does not
// overlap values.
using BottomKUniqueFn = size_t (*)(const uint64_t* values, size_t count, uint64_t* out,
                                   size_t room);
inline constexpr size_t kUniqueSlack = 8;

// Writes the distinct values of the merge of the ascending a[0, na) and
// b[0, nb) to out, ascending, until `room` are written, and returns their
// number (at most room). REQUIRES: room >= 1; out has room for room +
// kUniqueSlack values and overlaps neither input.
using BottomKMergeUniqueFn = size_t (*)(const uint64_t* a, size_t na, const uint64_t* b, size_t nb,
                                        uint64_t* out, size_t room);

struct BottomKKernel {
  std::string_view name;  // "portable", "avx2", "avx512"
  BottomKFilterFn filter_in_range;
  BottomKSortFn sort_ascending;
  BottomKUniqueFn unique;
  BottomKMergeUniqueFn merge_unique;
};

// The scratch values SortAscending needs for `count` values.
size_t SortScratchSize(size_t count);

// The kernels whose features `features` has, portable first.
std::vector<BottomKKernel> BottomKKernelsFor(const CpuFeatures& features);

// The kernels this CPU runs, portable first.
std::vector<BottomKKernel> SupportedBottomKKernels();

// The fastest kernel whose features `features` has; the kernel table of a
// CPU path (sketch/sketch_kernels.h) holds BottomKKernelFor(FeaturesAt(path)).
BottomKKernel BottomKKernelFor(const CpuFeatures& features);

}  // namespace neardup::internal

#endif  // NEARDUP_SKETCH_BOTTOM_K_KERNELS_H_
