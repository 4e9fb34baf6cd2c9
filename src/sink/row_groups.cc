#include "sink/row_groups.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <numeric>
#include <tuple>
#include <unordered_set>

#include "sink/copy_encoder.h"

namespace neardup::internal {
namespace {

struct StateDeleter {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};

// The digest of one group (the header's definition).
class GroupDigest {
 public:
  GroupDigest() : state_(XXH3_createState()) {}
  bool ok() const { return state_ != nullptr; }
  void Reset() { XXH3_64bits_reset(state_.get()); }
  void AddId(std::string_view stored) {
    XXH3_64bits_update(state_.get(), stored.data(), stored.size());
    XXH3_64bits_update(state_.get(), "", 1);
  }
  void AddDouble(double value) { AddLittleEndian(std::bit_cast<uint64_t>(value), 8); }
  void AddInt32(int32_t value) { AddLittleEndian(static_cast<uint32_t>(value), 4); }
  int64_t Value() const { return static_cast<int64_t>(XXH3_64bits_digest(state_.get())); }

 private:
  void AddLittleEndian(uint64_t bits, int bytes) {
    unsigned char out[8];
    for (int i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(bits >> (8 * i));
    XXH3_64bits_update(state_.get(), out, static_cast<size_t>(bytes));
  }
  std::unique_ptr<XXH3_state_t, StateDeleter> state_;
};

// Two groups that store under the same key would interleave their rows: an
// error naming the key, `why` saying how it happened.
Status CheckUniqueKeys(const std::vector<RowGroup>& groups, std::string_view what,
                       std::string_view why) {
  std::unordered_set<std::string_view> seen;  // views of groups[i].key
  seen.reserve(groups.size());
  for (const RowGroup& group : groups) {
    if (!seen.insert(group.key).second) {
      return InvalidArgumentError("the " + std::string(what) + " of \"" + group.key + "\" " +
                                  std::string(why));
    }
  }
  return Status::Ok();
}

Status HashStateError() { return ResourceExhaustedError("cannot allocate a hash state"); }

}  // namespace

Result<RowGroups> GroupTopNLists(std::span<const TopNRecord> rows) {
  RowGroups out;
  GroupDigest digest;
  if (!digest.ok()) return HashStateError();
  std::string scratch;
  size_t i = 0;
  while (i < rows.size()) {
    RowGroup list;
    NEARDUP_ASSIGN_OR_RETURN(std::string_view a,
                             StorableText(rows[i].a, "a document id", &scratch));
    list.key = std::string(a);
    list.begin = i;
    digest.Reset();
    while (i < rows.size() && rows[i].a == rows[list.begin].a) {
      NEARDUP_ASSIGN_OR_RETURN(std::string_view b,
                               StorableText(rows[i].b, "a document id", &scratch));
      digest.AddId(b);
      digest.AddDouble(rows[i].a_in_b);
      digest.AddDouble(rows[i].b_in_a);
      ++i;
    }
    list.end = i;
    list.digest = digest.Value();
    out.groups.push_back(std::move(list));
  }
  // Includes ids that differ only in invalid bytes.
  NEARDUP_RETURN_IF_ERROR(CheckUniqueKeys(out.groups, "top-N rows", "are not consecutive"));
  return out;
}

Result<RowGroups> GroupPairs(std::span<const PairRecord> pairs) {
  RowGroups out;
  GroupDigest digest;
  if (!digest.ok()) return HashStateError();
  out.order.resize(pairs.size());
  std::iota(out.order.begin(), out.order.end(), size_t{0});
  auto fields = [&](size_t i) {
    return std::tie(pairs[i].a, pairs[i].b, pairs[i].similarity, pairs[i].distance);
  };
  std::sort(out.order.begin(), out.order.end(),
            [&](size_t x, size_t y) { return fields(x) < fields(y); });
  std::string scratch;
  size_t position = 0;
  while (position < pairs.size()) {
    RowGroup group;
    const std::string_view raw_a = pairs[out.order[position]].a;
    NEARDUP_ASSIGN_OR_RETURN(std::string_view a, StorableText(raw_a, "a document id", &scratch));
    group.key = std::string(a);
    group.begin = position;
    digest.Reset();
    for (; position < pairs.size() && pairs[out.order[position]].a == raw_a; ++position) {
      const PairRecord& pair = pairs[out.order[position]];
      NEARDUP_ASSIGN_OR_RETURN(std::string_view b, StorableText(pair.b, "a document id", &scratch));
      digest.AddId(b);
      digest.AddDouble(pair.similarity);
      digest.AddInt32(pair.distance);
    }
    group.end = position;
    group.digest = digest.Value();
    out.groups.push_back(std::move(group));
  }
  NEARDUP_RETURN_IF_ERROR(CheckUniqueKeys(
      out.groups, "pairs", "come from two ids that store as the same text (invalid UTF-8)"));
  return out;
}

Result<RowGroups> GroupClusters(std::span<const ClusterRecord> members) {
  RowGroups out;
  GroupDigest digest;
  if (!digest.ok()) return HashStateError();
  std::unordered_set<uint64_t> numbers;
  std::unordered_set<std::string> ids;
  std::string scratch;
  size_t i = 0;
  while (i < members.size()) {
    RowGroup group;
    const uint64_t number = members[i].cluster;
    if (!numbers.insert(number).second) {
      return InvalidArgumentError("the members of cluster " + std::to_string(number) +
                                  " are not consecutive");
    }
    group.begin = i;
    digest.Reset();
    for (; i < members.size() && members[i].cluster == number; ++i) {
      NEARDUP_ASSIGN_OR_RETURN(std::string_view id,
                               StorableText(members[i].id, "a document id", &scratch));
      if (!ids.emplace(id).second) {
        return InvalidArgumentError("document \"" + std::string(id) + "\" is in two clusters");
      }
      if (i == group.begin) group.key = std::string(id);
      digest.AddId(id);
    }
    group.end = i;
    group.digest = digest.Value();
    out.groups.push_back(std::move(group));
  }
  return out;
}

}  // namespace neardup::internal
