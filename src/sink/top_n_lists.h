// The top-N lists of UpdateTopN: rows grouped by document, each group with a
// 64-bit digest of its content, so that a run can tell which stored lists
// changed without reading the stored rows back.
// The digest is XXH3-64 (seed 0) over, per row in rank order, the stored
// text of b, a 0 byte, and the IEEE-754 bits of a_in_b and b_in_a (little
// endian). It is stored (neardup_similar_lists.digest); if it ever changed,
// the next run would only rewrite every list once, never keep a stale one.
// Cost: O(rows + bytes of ids); memory one entry per document.
// Thread safety: pure functions.
#ifndef NEARDUP_SINK_TOP_N_LISTS_H_
#define NEARDUP_SINK_TOP_N_LISTS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "neardup/result_sink.h"
#include "neardup/status.h"

namespace neardup::internal {

struct TopNList {
  std::string a;     // the document's id as stored (StorableText)
  size_t begin = 0;  // its rows are rows[begin, end)
  size_t end = 0;
  int64_t digest = 0;  // the digest's bits, as PostgreSQL's bigint holds them
};

// The lists of `rows`, in order of first appearance. InvalidArgument when
// the rows of one document are not consecutive or an id holds a NUL byte.
Result<std::vector<TopNList>> GroupTopNLists(std::span<const TopNRecord> rows);

}  // namespace neardup::internal

#endif  // NEARDUP_SINK_TOP_N_LISTS_H_
