#include "sketch/set_intersection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

#include "sketch/sketch_kernels.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

// A strictly ascending set of `size` values: `shared` of them from `common`
// (in order), the rest drawn below `range`.
std::vector<uint32_t> MakeSet(SplitMix64& rng, size_t size, const std::vector<uint32_t>& common,
                              size_t shared, uint32_t range) {
  std::set<uint32_t> values(common.begin(), common.begin() + std::min(shared, common.size()));
  while (values.size() < size) values.insert(static_cast<uint32_t>(rng.Next() % range));
  return std::vector<uint32_t>(values.begin(), values.end());
}

size_t Oracle(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<uint32_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both.size();
}

// Every kernel against std::set_intersection: sizes around the 16-value
// block (empty, tails, exact blocks), disjoint, equal, interleaved and
// near-duplicate sets, small and full 32-bit ranges (the top values test
// the unsigned compares).
TEST(SetIntersectionTest, EveryKernelEqualsTheOracle) {
  SplitMix64 rng(13);
  const std::vector<size_t> sizes = {0, 1, 7, 15, 16, 17, 31, 32, 33, 100, 1000, 2500};
  for (IntersectionSizeFn kernel : SupportedIntersectionSizes()) {
    for (uint32_t range : {uint32_t{64}, uint32_t{5000}, ~uint32_t{0}}) {
      for (size_t na : sizes) {
        for (size_t nb : sizes) {
          if (na > range / 2 || nb > range / 2) continue;
          const std::vector<uint32_t> common = MakeSet(rng, std::min(na, nb), {}, 0, range);
          const size_t shared = rng.Next() % (common.size() + 1);
          const std::vector<uint32_t> a = MakeSet(rng, na, common, shared, range);
          const std::vector<uint32_t> b = MakeSet(rng, nb, common, shared, range);
          ASSERT_EQ(kernel(a.data(), a.size(), b.data(), b.size()), Oracle(a, b))
              << "sizes " << na << ", " << nb << ", range " << range;
          ASSERT_EQ(kernel(b.data(), b.size(), a.data(), a.size()), Oracle(a, b));
          ASSERT_EQ(kernel(a.data(), a.size(), a.data(), a.size()), a.size());
        }
      }
    }
  }
}

TEST(SetIntersectionTest, TheActiveTableHoldsASupportedKernel) {
  const std::vector<IntersectionSizeFn> kernels = SupportedIntersectionSizes();
  EXPECT_NE(std::find(kernels.begin(), kernels.end(), ActiveSketchKernels().intersection_size),
            kernels.end());
}

TEST(SetIntersectionTest, TheAvx512KernelNeedsAvx512FAndPopcnt) {
  CpuFeatures features = CpuFeatures::All();
  EXPECT_NE(IntersectionSizeFor(features), &IntersectionSizeScalar);
  features.avx512f = false;
  EXPECT_EQ(IntersectionSizeFor(features), &IntersectionSizeScalar);
  features = CpuFeatures::All();
  features.popcnt = false;
  EXPECT_EQ(IntersectionSizeFor(features), &IntersectionSizeScalar);
  EXPECT_EQ(
      ChooseSketchKernels(CpuPath::kPortable, CpuFeatures::All().LimitedTo(CpuPath::kPortable))
          .intersection_size,
      &IntersectionSizeScalar);
}

}  // namespace
}  // namespace neardup::internal
