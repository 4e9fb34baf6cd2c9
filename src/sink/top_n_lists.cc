#include "sink/top_n_lists.h"

#include <xxhash.h>

#include <bit>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "sink/copy_encoder.h"

namespace neardup::internal {
namespace {

struct StateDeleter {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};

void UpdateLittleEndian(XXH3_state_t* state, double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(bits >> (8 * i));
  XXH3_64bits_update(state, bytes, sizeof(bytes));
}

}  // namespace

Result<std::vector<TopNList>> GroupTopNLists(std::span<const TopNRecord> rows) {
  std::vector<TopNList> lists;
  std::unordered_set<std::string_view> seen;  // views of lists[i].a, stable once built
  std::unique_ptr<XXH3_state_t, StateDeleter> state(XXH3_createState());
  if (state == nullptr) return ResourceExhaustedError("cannot allocate a hash state");
  std::string scratch;
  size_t i = 0;
  while (i < rows.size()) {
    TopNList list;
    NEARDUP_ASSIGN_OR_RETURN(std::string_view a,
                             StorableText(rows[i].a, "a document id", &scratch));
    list.a = std::string(a);
    list.begin = i;
    XXH3_64bits_reset(state.get());
    while (i < rows.size() && rows[i].a == rows[list.begin].a) {
      NEARDUP_ASSIGN_OR_RETURN(std::string_view b,
                               StorableText(rows[i].b, "a document id", &scratch));
      XXH3_64bits_update(state.get(), b.data(), b.size());
      XXH3_64bits_update(state.get(), "", 1);
      UpdateLittleEndian(state.get(), rows[i].a_in_b);
      UpdateLittleEndian(state.get(), rows[i].b_in_a);
      ++i;
    }
    list.end = i;
    list.digest = static_cast<int64_t>(XXH3_64bits_digest(state.get()));
    lists.push_back(std::move(list));
  }
  // Two groups that store as the same id (including ids that differ only in
  // invalid bytes) would interleave one document's ranks.
  seen.reserve(lists.size());
  for (const TopNList& list : lists) {
    if (!seen.insert(list.a).second) {
      return InvalidArgumentError("the top-N rows of document \"" + list.a +
                                  "\" are not consecutive");
    }
  }
  return lists;
}

}  // namespace neardup::internal
