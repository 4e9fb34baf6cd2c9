// TieredChunkIndex: lookups over tiers with dead documents masked, the
// k-way merge of tiers, and the size-tiered merge policy.
#include "neardup/tiered_chunk_index.h"

#include <algorithm>
#include <limits>

#include "index/chunk_index_storage.h"
#include "neardup/check.h"

namespace neardup {
namespace {

constexpr uint32_t kNoKey = std::numeric_limits<uint32_t>::max();

// Walks the keys of several tiers in ascending order (a k-way merge; tiers
// are few, so the smallest key is found by a scan).
class KeyWalk {
 public:
  explicit KeyWalk(std::span<const ChunkIndex> tiers) : tiers_(tiers), at_(tiers.size(), 0) {}

  // The next key, and in `postings` its postings in each tier (empty where
  // the tier lacks it). false at the end.
  bool Next(uint32_t* key, std::vector<std::span<const uint32_t>>* postings) {
    bool any = false;
    uint32_t smallest = kNoKey;
    for (size_t t = 0; t < tiers_.size(); ++t) {
      if (at_[t] < tiers_[t].num_keys() && (!any || tiers_[t].keys()[at_[t]] < smallest)) {
        smallest = tiers_[t].keys()[at_[t]];
        any = true;
      }
    }
    if (!any) return false;
    postings->assign(tiers_.size(), {});
    for (size_t t = 0; t < tiers_.size(); ++t) {
      const ChunkIndex& tier = tiers_[t];
      if (at_[t] < tier.num_keys() && tier.keys()[at_[t]] == smallest) {
        // Offsets are checked monotone and within the postings at Open.
        const uint64_t begin = tier.offsets()[at_[t]];
        const uint64_t end = tier.offsets()[at_[t] + 1];
        (*postings)[t] = tier.docs().subspan(begin, end - begin);
        ++at_[t];
      }
    }
    *key = smallest;
    return true;
  }

 private:
  std::span<const ChunkIndex> tiers_;
  std::vector<size_t> at_;
};

}  // namespace

TieredChunkIndex::TieredChunkIndex(ChunkIndex single) {
  num_doc_slots_ = single.num_doc_slots();
  num_documents_ = single.num_documents();
  num_postings_ = single.num_postings();
  tiers_.push_back(std::move(single));
  tier_dead_.resize(1);
}

Result<TieredChunkIndex> TieredChunkIndex::Create(std::vector<ChunkIndex> tiers,
                                                  std::span<const uint32_t> live_documents) {
  TieredChunkIndex index;
  size_t end_of_previous = 0;
  for (size_t t = 0; t < tiers.size(); ++t) {
    const ChunkIndex& tier = tiers[t];
    if (tier.num_doc_slots() == 0) continue;
    if (tier.first_doc() < end_of_previous) {
      return DataLossError("chunk index tier " + std::to_string(t) + " starts at document " +
                           std::to_string(tier.first_doc()) +
                           ", inside the documents of an older tier (which end at " +
                           std::to_string(end_of_previous) + ")");
    }
    end_of_previous = tier.num_doc_slots();
  }
  index.num_doc_slots_ = end_of_previous;
  index.tier_dead_.resize(tiers.size());
  std::vector<uint64_t> dead((end_of_previous + 63) / 64, 0);
  bool any_dead = false;
  size_t live_at = 0;  // cursor in live_documents, which ascends like the tiers' slots
  for (size_t t = 0; t < tiers.size(); ++t) {
    const ChunkIndex& tier = tiers[t];
    const std::span<const uint32_t> sizes = tier.doc_sizes();
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == 0) continue;
      const uint32_t doc = static_cast<uint32_t>(tier.first_doc() + i);
      while (live_at < live_documents.size() && live_documents[live_at] < doc) ++live_at;
      if (live_at < live_documents.size() && live_documents[live_at] == doc) {
        ++index.num_documents_;
        continue;
      }
      dead[doc / 64] |= uint64_t{1} << (doc % 64);
      any_dead = true;
      ++index.tier_dead_[t].documents;
      index.tier_dead_[t].postings += sizes[i];
    }
    index.num_postings_ += tier.num_postings() - index.tier_dead_[t].postings;
    index.num_dead_postings_ += index.tier_dead_[t].postings;
  }
  if (any_dead) index.dead_ = std::make_shared<const std::vector<uint64_t>>(std::move(dead));
  index.tiers_ = std::move(tiers);
  return index;
}

uint32_t TieredChunkIndex::DocumentSize(uint32_t doc) const {
  if (IsDead(doc)) return 0;
  for (const ChunkIndex& tier : tiers_) {
    const uint32_t size = tier.DocumentSize(doc);
    if (size != 0) return size;
  }
  return 0;
}

uint64_t TieredChunkIndex::DocumentFrequency(uint32_t chunk) const {
  uint64_t df = 0;
  for (size_t t = 0; t < tiers_.size(); ++t) {
    const std::span<const uint32_t> postings = tiers_[t].Postings(chunk);
    if (tier_dead_[t].documents == 0) {
      df += postings.size();
      continue;
    }
    for (uint32_t doc : postings) df += IsDead(doc) ? 0 : 1;
  }
  return df;
}

std::vector<uint32_t> TieredChunkIndex::Postings(uint32_t chunk) const {
  std::vector<uint32_t> docs;
  for (const ChunkIndex& tier : tiers_) {
    for (uint32_t doc : tier.Postings(chunk)) {
      if (!IsDead(doc)) docs.push_back(doc);
    }
  }
  return docs;
}

uint64_t TieredChunkIndex::CountKeys() const { return CountKeysAbove(0); }

uint64_t TieredChunkIndex::CountKeysAbove(uint32_t max_document_frequency) const {
  if (tiers_.size() == 1 && dead_ == nullptr) {
    return max_document_frequency == 0 ? tiers_[0].num_keys()
                                       : tiers_[0].CountKeysAbove(max_document_frequency);
  }
  uint64_t count = 0;
  KeyWalk walk(tiers_);
  uint32_t key = 0;
  std::vector<std::span<const uint32_t>> postings;
  while (walk.Next(&key, &postings)) {
    uint64_t df = 0;
    for (size_t t = 0; t < postings.size(); ++t) {
      if (tier_dead_[t].documents == 0) {
        df += postings[t].size();
      } else {
        for (uint32_t doc : postings[t]) df += IsDead(doc) ? 0 : 1;
      }
    }
    if (df > max_document_frequency) ++count;
  }
  return count;
}

uint64_t TieredChunkIndex::MemoryBytes() const {
  uint64_t bytes = dead_ == nullptr ? 0 : dead_->size() * sizeof(uint64_t);
  for (const ChunkIndex& tier : tiers_) bytes += tier.MemoryBytes();
  return bytes;
}

Result<ChunkIndex> TieredChunkIndex::Merged() const {
  if (tiers_.size() == 1 && dead_ == nullptr) return tiers_[0];
  return MergeTiers(0, tiers_.size());
}

Result<ChunkIndex> TieredChunkIndex::MergeTiers(size_t begin, size_t end) const {
  NEARDUP_CHECK(begin <= end && end <= tiers_.size()) << begin << " " << end;
  const std::span<const ChunkIndex> part =
      std::span<const ChunkIndex>(tiers_).subspan(begin, end - begin);
  internal::ChunkIndexArrays arrays;
  // Document slots: from the first live document to the last.
  size_t first = SIZE_MAX;
  size_t last = 0;
  uint64_t postings_total = 0;
  for (const ChunkIndex& tier : part) {
    const std::span<const uint32_t> sizes = tier.doc_sizes();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const size_t doc = tier.first_doc() + i;
      if (sizes[i] == 0 || IsDead(static_cast<uint32_t>(doc))) continue;
      if (first == SIZE_MAX) first = doc;
      if (doc < last) {
        return InvalidArgumentError("document number " + std::to_string(doc) +
                                    " is in two tiers of the chunk index, or tiers descend");
      }
      last = doc + 1;
      postings_total += sizes[i];
    }
  }
  if (first != SIZE_MAX) {
    arrays.first_doc = static_cast<uint32_t>(first);
    arrays.doc_sizes.assign(last - first, 0);
    for (const ChunkIndex& tier : part) {
      const std::span<const uint32_t> sizes = tier.doc_sizes();
      for (size_t i = 0; i < sizes.size(); ++i) {
        const size_t doc = tier.first_doc() + i;
        if (sizes[i] != 0 && !IsDead(static_cast<uint32_t>(doc))) {
          arrays.doc_sizes[doc - first] = sizes[i];
        }
      }
    }
  }
  arrays.docs.reserve(postings_total);
  KeyWalk walk(part);
  uint32_t key = 0;
  std::vector<std::span<const uint32_t>> postings;
  while (walk.Next(&key, &postings)) {
    const size_t start = arrays.docs.size();
    // Tiers ascend, so their postings, one after the other, ascend.
    for (std::span<const uint32_t> list : postings) {
      for (uint32_t doc : list) {
        if (!IsDead(doc)) arrays.docs.push_back(doc);
      }
    }
    if (arrays.docs.size() > start) {
      arrays.keys.push_back(key);
      arrays.offsets.push_back(start);
    }
  }
  if (arrays.docs.size() != postings_total) {
    // Postings of a document that its tier's doc_sizes disagree with: only
    // a damaged file gives this.
    return DataLossError("chunk index tiers hold " + std::to_string(arrays.docs.size()) +
                         " live postings, their document sizes say " +
                         std::to_string(postings_total));
  }
  arrays.offsets.push_back(arrays.docs.size());
  internal::BuildChunkDirectory(&arrays);
  arrays.num_documents = internal::CountDocuments(arrays.doc_sizes);
  return ChunkIndex(internal::MakeStorage(std::move(arrays)));
}

Status TieredChunkIndex::VerifyChecksum() const {
  for (const ChunkIndex& tier : tiers_) NEARDUP_RETURN_IF_ERROR(tier.VerifyChecksum());
  return Status::Ok();
}

size_t TierMergeStart(std::span<const TierSize> sizes, uint64_t size_ratio) {
  NEARDUP_CHECK(!sizes.empty() && size_ratio >= 2) << sizes.size() << " " << size_ratio;
  auto live = [&](size_t t) { return sizes[t].postings - sizes[t].dead_postings; };
  size_t start = sizes.size() - 1;
  uint64_t newer = live(start);
  while (start > 0 && live(start - 1) < size_ratio * newer) {
    --start;
    newer += live(start);
  }
  for (size_t t = 0; t < start; ++t) {
    if (sizes[t].dead_postings * 2 > sizes[t].postings) return t;
  }
  return start;
}

}  // namespace neardup
