// Verify blocks of candidates on all cores and append their pairs in block
// order (VerifyCandidates' MinHash path). In its own header so that a test
// can see which slot each block is verified into.
#ifndef NEARDUP_ENGINE_VERIFY_IN_ORDER_H_
#define NEARDUP_ENGINE_VERIFY_IN_ORDER_H_

#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "io/effective_threads.h"
#include "neardup/clustering.h"

namespace neardup::internal {

// Runs verify(block, out) for blocks 0..num_blocks-1 on all cores and
// appends each block's pairs to *pairs in block order (a pipeline: blocks
// verified in parallel, appended one by one in order, no barrier). At most
// 4 blocks a thread are in flight (EffectiveThreads, so a --threads limit
// counts, not only the host's cores), a run of consecutive blocks, so block
// b owns slot b % slots; a slot's list keeps its capacity. The pairs are
// written once into *pairs (reserved by the caller) rather than into a
// fresh list per block and then a fresh concatenation: on the 1M-document
// corpus that was ~0.7 GB of heap and ~0.7 GB of fresh mmapped pages a
// rank, both zeroed by the kernel (docs/DISTRIBUTED.md, "Fresh memory").
template <typename Verify>
void VerifyInOrder(size_t num_blocks, std::vector<SimilarPair>* pairs, const Verify& verify) {
  const size_t tokens = 4 * EffectiveThreads();
  std::vector<std::vector<SimilarPair>> slots(std::min(tokens, num_blocks));
  size_t next = 0;
  tbb::parallel_pipeline(
      tokens,
      tbb::make_filter<void, size_t>(tbb::filter_mode::serial_in_order,
                                     [&](tbb::flow_control& control) -> size_t {
                                       if (next == num_blocks) {
                                         control.stop();
                                         return 0;
                                       }
                                       return next++;
                                     }) &
          tbb::make_filter<size_t, size_t>(tbb::filter_mode::parallel,
                                           [&](size_t block) {
                                             std::vector<SimilarPair>& slot =
                                                 slots[block % slots.size()];
                                             slot.clear();
                                             verify(block, slot);
                                             return block;
                                           }) &
          tbb::make_filter<size_t, void>(tbb::filter_mode::serial_in_order, [&](size_t block) {
            const std::vector<SimilarPair>& slot = slots[block % slots.size()];
            pairs->insert(pairs->end(), slot.begin(), slot.end());
          }));
}

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_VERIFY_IN_ORDER_H_
