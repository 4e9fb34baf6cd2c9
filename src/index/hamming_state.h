// The state behind HammingIndex (private): the layout, the sorted runs and the
// unsorted insert buffer, shared by the index, its file format and its
// self-join.
#ifndef NEARDUP_INDEX_HAMMING_STATE_H_
#define NEARDUP_INDEX_HAMMING_STATE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "index/hamming_layout.h"
#include "index/hamming_run.h"
#include "neardup/hamming_index.h"

namespace neardup::internal {

struct HammingIndexState {
  explicit HammingIndexState(const HammingIndexOptions& o) : options(o), layout(o) {}
  // An index of tables [held_begin, held_end) only (see HammingLayout).
  HammingIndexState(const HammingIndexOptions& o, int held_begin, int held_end)
      : options(o), layout(o, held_begin, held_end) {}

  HammingIndexOptions options;
  HammingLayout layout;
  // Invariant: runs are non-empty; no entry is live in two places (runs and
  // pending together form a set).
  std::vector<std::unique_ptr<HammingRun>> runs;
  // Recent single inserts, unsorted, scanned linearly by queries.
  std::vector<HammingEntry> pending;
  size_t num_live = 0;
};

// All live entries as one run without tombstones: the only run itself when
// it already is one (owned stays null), else a merged copy held by `owned`.
// Null when the index is empty.
const HammingRun* CleanRun(const HammingIndexState& state, std::unique_ptr<HammingRun>* owned);

// Appends the entries of `entries` within max_distance of `query`.
void ScanEntries(std::span<const HammingEntry> entries, uint64_t query, int max_distance,
                 std::vector<HammingMatch>* out);

// The self-join and clustering over a clean run (hamming_join.cc). The join
// covers the pairs whose canonical table is in [table_begin, table_end);
// pairs of equal fingerprints go with table 0.
std::vector<HammingPair> SelfJoinRun(const HammingLayout& layout, const HammingRun& run,
                                     uint64_t table_begin, uint64_t table_end);
HammingClusters ClustersOfRun(const HammingLayout& layout, const HammingRun& run,
                              size_t min_cluster_size);

// File format (hamming_file.cc).
Status SaveRun(const HammingLayout& layout, const HammingRun* run, const std::string& path);
Result<std::unique_ptr<HammingIndexState>> OpenState(const std::string& path,
                                                     const HammingOpenOptions& options);

// Bytes of the file header.
inline constexpr size_t kHammingHeaderBytes = 128;

// Recomputes, in a file image, the header checksum and (with `data_too`) the
// body checksum, so that a mutated image gets past the checksums to the
// structural checks behind them (for the fuzz target). No-op on an image
// shorter than the header.
void ResealHammingFile(std::span<uint8_t> image, bool data_too);

}  // namespace neardup::internal

#endif  // NEARDUP_INDEX_HAMMING_STATE_H_
