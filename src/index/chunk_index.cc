// ChunkIndex: build (bucket sort), merge, lookup and comparison. The file
// format is in chunk_index_file.cc.
#include "neardup/chunk_index.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "index/chunk_index_storage.h"

namespace neardup {
namespace {

using internal::ChunkIndexArrays;
using internal::kChunkDirectoryBuckets;

constexpr uint64_t kMaxPostings = uint64_t{1} << 40;

// Orders one bucket's postings (chunk << 32 | doc, scattered in ascending doc
// order) by chunk, keeping doc order within a chunk: a stable LSD radix sort
// on the two low bytes of the chunk (the bucket fixes the two high bytes).
void SortBucket(std::span<uint64_t> entries, std::vector<uint64_t>* scratch) {
  if (entries.size() < 64) {
    // Every (chunk, doc) pair is distinct, so a comparison sort gives the
    // same order as the stable radix sort.
    std::sort(entries.begin(), entries.end());
    return;
  }
  scratch->resize(entries.size());
  std::span<uint64_t> from = entries;
  std::span<uint64_t> to(*scratch);
  for (int shift = 32; shift <= 40; shift += 8) {
    size_t count[257] = {};
    for (uint64_t e : from) ++count[((e >> shift) & 0xff) + 1];
    for (int i = 0; i < 256; ++i) count[i + 1] += count[i];
    for (uint64_t e : from) to[count[(e >> shift) & 0xff]++] = e;
    std::swap(from, to);
  }
  // Two passes: the sorted data is back in `entries`.
}

}  // namespace

namespace internal {

void BuildChunkDirectory(ChunkIndexArrays* arrays) {
  const uint32_t bits = ChunkDirectoryBitsFor(arrays->keys.size());
  const size_t buckets = size_t{1} << bits;
  arrays->directory_bits = bits;
  arrays->directory.assign(buckets + 1, 0);
  size_t k = 0;
  for (size_t b = 0; b < buckets; ++b) {
    arrays->directory[b] = static_cast<uint32_t>(k);
    while (k < arrays->keys.size() && ChunkDirectoryBucket(arrays->keys[k], bits) == b) ++k;
  }
  arrays->directory[buckets] = static_cast<uint32_t>(k);
}

ChunkKeyFilter BuildChunkKeyFilter(std::span<const uint32_t> keys) {
  ChunkKeyFilter filter;
  if (keys.empty() || keys.size() > kMaxFilteredKeys) return filter;
  uint32_t bits = 6;  // one word at least
  while ((size_t{1} << bits) < 8 * keys.size()) ++bits;
  filter.shift = 32 - bits;
  filter.bits.assign((size_t{1} << bits) / 64, 0);
  for (uint32_t key : keys) {
    const uint32_t b = key >> filter.shift;
    filter.bits[b / 64] |= uint64_t{1} << (b % 64);
  }
  return filter;
}

uint64_t CountDocuments(const std::vector<uint32_t>& doc_sizes) {
  return static_cast<uint64_t>(
      std::count_if(doc_sizes.begin(), doc_sizes.end(), [](uint32_t s) { return s > 0; }));
}

Status CheckChunkIndexStructure(const ChunkIndexViews& v, const std::string& what) {
  auto corrupt = [&](const std::string& detail) {
    return DataLossError(what + " is corrupt (" + detail + ")");
  };
  if (v.directory_bits > kMaxChunkDirectoryBits) return corrupt("directory bits");
  const size_t buckets = size_t{1} << v.directory_bits;
  if (v.directory.size() != buckets + 1 || v.offsets.size() != v.keys.size() + 1) {
    return corrupt("array sizes");
  }
  if (v.directory[0] != 0 || v.directory[buckets] != v.keys.size()) {
    return corrupt("directory ends at " + std::to_string(v.directory[buckets]) +
                   ", not at the key count " + std::to_string(v.keys.size()));
  }
  for (size_t b = 0; b < buckets; ++b) {
    const uint32_t lo = v.directory[b];
    const uint32_t hi = v.directory[b + 1];
    if (hi < lo) return corrupt("directory decreases at bucket " + std::to_string(b));
    for (uint32_t k = lo; k < hi; ++k) {
      if (ChunkDirectoryBucket(v.keys[k], v.directory_bits) != b ||
          (k > lo && v.keys[k] <= v.keys[k - 1])) {
        return corrupt("key " + std::to_string(k) + " is out of order");
      }
    }
  }
  if (v.offsets[0] != 0 || v.offsets.back() != v.docs.size()) {
    return corrupt("offsets do not span the postings");
  }
  for (size_t k = 1; k < v.offsets.size(); ++k) {
    if (v.offsets[k] < v.offsets[k - 1]) {
      return corrupt("offsets decrease at key " + std::to_string(k));
    }
  }
  return Status::Ok();
}

}  // namespace internal

ChunkIndex::ChunkIndex() : ChunkIndex(internal::MakeStorage(ChunkIndexArrays::Empty())) {}

ChunkIndex::ChunkIndex(std::shared_ptr<const internal::ChunkIndexStorage> storage)
    : storage_(std::move(storage)) {
  const internal::ChunkIndexViews& v = storage_->views;
  first_doc_ = v.first_doc;
  doc_sizes_ = v.doc_sizes;
  directory_shift_ = 32 - v.directory_bits;
  directory_ = v.directory;
  filter_ = storage_->filter.bits;
  filter_shift_ = storage_->filter.shift;
  keys_ = v.keys;
  offsets_ = v.offsets;
  docs_ = v.docs;
  num_documents_ = v.num_documents;
}

Result<ChunkIndex> ChunkIndex::Build(std::span<const ChunkDocument> documents) {
  std::vector<uint32_t> order(documents.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return documents[a].doc < documents[b].doc; });
  uint64_t total = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const ChunkDocument& d = documents[order[i]];
    if (i > 0 && documents[order[i - 1]].doc == d.doc) {
      return InvalidArgumentError("document number " + std::to_string(d.doc) +
                                  " occurs twice in the chunk index input");
    }
    for (size_t j = 1; j < d.chunks.size(); ++j) {
      if (d.chunks[j - 1] >= d.chunks[j]) {
        return InvalidArgumentError("chunks of document " + std::to_string(d.doc) +
                                    " are not strictly ascending at position " + std::to_string(j));
      }
    }
    total += d.chunks.size();
  }
  if (total > kMaxPostings) {
    return OutOfRangeError("postings (" + std::to_string(total) + ") exceed the limit (" +
                           std::to_string(kMaxPostings) + ")");
  }

  ChunkIndexArrays arrays;
  if (!order.empty()) {
    arrays.first_doc = documents[order.front()].doc;
    arrays.doc_sizes.assign(size_t{documents[order.back()].doc} - arrays.first_doc + 1, 0);
  }
  std::vector<uint64_t> bucket_begin(kChunkDirectoryBuckets + 1, 0);
  for (const ChunkDocument& d : documents) {
    arrays.doc_sizes[d.doc - arrays.first_doc] = static_cast<uint32_t>(d.chunks.size());
    for (uint32_t c : d.chunks) ++bucket_begin[(c >> 16) + 1];
  }
  for (size_t b = 0; b < kChunkDirectoryBuckets; ++b) bucket_begin[b + 1] += bucket_begin[b];

  // Scatter in ascending document order, so each bucket is doc-ordered.
  std::vector<uint64_t> entries(total);
  {
    std::vector<uint64_t> cursor(bucket_begin.begin(), bucket_begin.end() - 1);
    for (uint32_t i : order) {
      const ChunkDocument& d = documents[i];
      for (uint32_t c : d.chunks) entries[cursor[c >> 16]++] = (uint64_t{c} << 32) | d.doc;
    }
  }

  // Sort each bucket and count its distinct keys.
  std::vector<uint32_t> bucket_keys(kChunkDirectoryBuckets + 1, 0);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, kChunkDirectoryBuckets, 256),
                    [&](const tbb::blocked_range<size_t>& range) {
                      std::vector<uint64_t> scratch;
                      for (size_t b = range.begin(); b != range.end(); ++b) {
                        std::span<uint64_t> bucket(entries.data() + bucket_begin[b],
                                                   bucket_begin[b + 1] - bucket_begin[b]);
                        SortBucket(bucket, &scratch);
                        uint32_t distinct = 0;
                        for (size_t i = 0; i < bucket.size(); ++i) {
                          if (i == 0 || (bucket[i] >> 32) != (bucket[i - 1] >> 32)) ++distinct;
                        }
                        bucket_keys[b + 1] = distinct;
                      }
                    });
  for (size_t b = 0; b < kChunkDirectoryBuckets; ++b) bucket_keys[b + 1] += bucket_keys[b];
  const size_t num_keys = bucket_keys[kChunkDirectoryBuckets];

  arrays.keys.resize(num_keys);
  arrays.offsets.resize(num_keys + 1);
  arrays.docs.resize(total);
  arrays.directory.assign(bucket_keys.begin(), bucket_keys.end());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, kChunkDirectoryBuckets, 256),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t b = range.begin(); b != range.end(); ++b) {
                        size_t k = bucket_keys[b];
                        for (uint64_t i = bucket_begin[b]; i < bucket_begin[b + 1]; ++i) {
                          uint32_t chunk = static_cast<uint32_t>(entries[i] >> 32);
                          if (i == bucket_begin[b] || chunk != (entries[i - 1] >> 32)) {
                            arrays.keys[k] = chunk;
                            arrays.offsets[k] = i;
                            ++k;
                          }
                          arrays.docs[i] = static_cast<uint32_t>(entries[i]);
                        }
                      }
                    });
  arrays.offsets[num_keys] = total;
  // The sort's buckets are the 16-bit directory; an index of few keys gets
  // a smaller one.
  if (internal::ChunkDirectoryBitsFor(num_keys) != internal::kMaxChunkDirectoryBits) {
    internal::BuildChunkDirectory(&arrays);
  }
  arrays.num_documents = internal::CountDocuments(arrays.doc_sizes);
  return ChunkIndex(internal::MakeStorage(std::move(arrays)));
}

Result<ChunkIndex> ChunkIndex::Merge(const ChunkIndex& base, std::span<const uint32_t> removed,
                                     const ChunkIndex& added) {
  std::vector<bool> gone(base.num_doc_slots(), false);
  for (uint32_t d : removed) {
    if (d < gone.size()) gone[d] = true;
  }
  // The merged slots span both inputs' ranges; empty slots at either end are
  // trimmed below.
  ChunkIndexArrays arrays;
  const size_t end = std::max(base.num_doc_slots(), added.num_doc_slots());
  size_t first = end;
  if (base.num_doc_slots() > 0) first = base.first_doc_;
  if (added.num_doc_slots() > 0) first = std::min<size_t>(first, added.first_doc_);
  std::vector<uint32_t> sizes(end - std::min(first, end), 0);
  for (size_t i = 0; i < base.doc_sizes_.size(); ++i) {
    const size_t d = base.first_doc_ + i;
    if (!gone[d]) sizes[d - first] = base.doc_sizes_[i];
  }
  for (size_t i = 0; i < added.doc_sizes_.size(); ++i) {
    const size_t d = added.first_doc_ + i;
    if (added.doc_sizes_[i] == 0) continue;
    if (sizes[d - first] != 0) {
      return InvalidArgumentError("document number " + std::to_string(d) +
                                  " is added to the chunk index but is already present");
    }
    sizes[d - first] = added.doc_sizes_[i];
  }
  // Empty slots at either end carry no information.
  size_t lo = 0;
  size_t hi = sizes.size();
  while (hi > lo && sizes[hi - 1] == 0) --hi;
  while (lo < hi && sizes[lo] == 0) ++lo;
  if (lo < hi) {
    arrays.first_doc = static_cast<uint32_t>(first + lo);
    arrays.doc_sizes.assign(sizes.begin() + static_cast<ptrdiff_t>(lo),
                            sizes.begin() + static_cast<ptrdiff_t>(hi));
  }

  arrays.keys.reserve(base.num_keys() + added.num_keys());
  arrays.offsets.reserve(base.num_keys() + added.num_keys() + 1);
  arrays.docs.reserve(base.num_postings() + added.num_postings());
  size_t i = 0;
  size_t j = 0;
  auto live = [&](uint32_t d) { return d >= gone.size() || !gone[d]; };
  while (i < base.num_keys() || j < added.num_keys()) {
    uint32_t key;
    std::span<const uint32_t> a, b;
    if (j == added.num_keys() || (i < base.num_keys() && base.keys_[i] < added.keys_[j])) {
      key = base.keys_[i];
      a = base.docs_.subspan(base.offsets_[i], base.offsets_[i + 1] - base.offsets_[i]);
      ++i;
    } else if (i == base.num_keys() || added.keys_[j] < base.keys_[i]) {
      key = added.keys_[j];
      b = added.docs_.subspan(added.offsets_[j], added.offsets_[j + 1] - added.offsets_[j]);
      ++j;
    } else {
      key = base.keys_[i];
      a = base.docs_.subspan(base.offsets_[i], base.offsets_[i + 1] - base.offsets_[i]);
      b = added.docs_.subspan(added.offsets_[j], added.offsets_[j + 1] - added.offsets_[j]);
      ++i;
      ++j;
    }
    const size_t start = arrays.docs.size();
    size_t x = 0;
    size_t y = 0;
    while (x < a.size() || y < b.size()) {
      if (y == b.size() || (x < a.size() && a[x] < b[y])) {
        if (live(a[x])) arrays.docs.push_back(a[x]);
        ++x;
      } else {
        arrays.docs.push_back(b[y]);
        ++y;
      }
    }
    if (arrays.docs.size() > start) {
      arrays.keys.push_back(key);
      arrays.offsets.push_back(start);
    }
  }
  arrays.offsets.push_back(arrays.docs.size());
  internal::BuildChunkDirectory(&arrays);
  arrays.num_documents = internal::CountDocuments(arrays.doc_sizes);
  return ChunkIndex(internal::MakeStorage(std::move(arrays)));
}

uint64_t ChunkIndex::MemoryBytes() const {
  return doc_sizes_.size_bytes() + directory_.size_bytes() + keys_.size_bytes() +
         offsets_.size_bytes() + docs_.size_bytes();
}

uint64_t ChunkIndex::CountKeysAbove(uint32_t max_document_frequency) const {
  uint64_t count = 0;
  for (size_t k = 0; k < keys_.size(); ++k) {
    if (offsets_[k + 1] - offsets_[k] > max_document_frequency) ++count;
  }
  return count;
}

bool ChunkIndex::SameContents(const ChunkIndex& other) const {
  // Empty slots at either end carry no information.
  auto trimmed = [](const ChunkIndex& index) {
    std::span<const uint32_t> s = index.doc_sizes_;
    uint64_t first = index.first_doc_;
    while (!s.empty() && s.back() == 0) s = s.first(s.size() - 1);
    while (!s.empty() && s.front() == 0) {
      s = s.subspan(1);
      ++first;
    }
    return std::make_pair(s.empty() ? 0 : first, s);
  };
  const auto [first_a, a] = trimmed(*this);
  const auto [first_b, b] = trimmed(other);
  return first_a == first_b && std::ranges::equal(a, b) && std::ranges::equal(keys_, other.keys_) &&
         std::ranges::equal(offsets_, other.offsets_) && std::ranges::equal(docs_, other.docs_);
}

}  // namespace neardup
