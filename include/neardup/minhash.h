// MinHash sketches: small summaries of a document's feature set from which
// the Jaccard similarity |A ∩ B| / |A ∪ B| of two documents is estimated
// (neardup/similarity.h). Both consume the 64-bit feature hashes of the
// document (one per shingle occurrence; repeats are harmless) and rely on
// them being uniformly distributed (xxh3 quality): the feature hash itself
// is the random permutation.
//
// BottomKSketch (Broder 1997, "On the resemblance and containment of
// documents"; Cohen & Kaplan 2007, "Summarizing data using bottom-k
// sketches"): one hash function, keep the k smallest distinct hashes. The
// best estimator for verifying a candidate pair; not suited to LSH banding.
//
// KValueSketch (one-permutation hashing, Li, Owen, Zhang 2012; optimal
// densification, Shrivastava 2017): k positions, position i holding the
// minimum hash of those falling in bin i; two documents agree at a position
// with probability J. The sketch for LSH banding (rows of aligned values).
//
// Frozen: both sketches are stored; for the same feature hashes (and seed)
// their values never change between releases or platforms.
//
// Cost: BottomKBuilder::Add is O(1) for the typical hash (one compare once k
// distinct hashes are held) and O(1) expected amortised for those that enter
// the sketch (a linear-time selection per 4k of them); AddMany makes the
// compare branch-free (8 hashes per instruction with AVX-512); memory O(k)
// (about 200k bytes). KValueBuilder::Add is O(1) (one
// multiply, one min); Finish is O(k) plus densification of empty bins,
// expected O(k * empty / filled) probes; memory O(k) (about 9k bytes).
// Thread safety: builders are not thread-safe, use one per thread; sketches
// are plain values.
#ifndef NEARDUP_MINHASH_H_
#define NEARDUP_MINHASH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace neardup {

// The k smallest distinct feature hashes of a document.
// Invariant: `values` is strictly ascending and values.size() == min(k,
// number of distinct feature hashes). Empty values == a document with no
// features.
struct BottomKSketch {
  uint32_t k = 0;
  std::vector<uint64_t> values;

  friend bool operator==(const BottomKSketch& a, const BottomKSketch& b) = default;
};

// Streams the feature hashes of one document into a BottomKSketch.
// Implementation: accepted hashes wait in a buffer of 4k entries; a full
// buffer and the held sketch are reduced to the k smallest distinct values
// (Flush), after which any hash greater than the k-th smallest held is
// rejected by a single compare. Flush relies on the hashes being uniform
// only for speed, never for its result: it keeps the values below a
// threshold that should leave a little more than k of them, bucket-sorts
// those, and while fewer than k distinct are found extends the range by the
// density seen (up to every value).
class BottomKBuilder {
 public:
  // REQUIRES: k >= 1.
  explicit BottomKBuilder(int k);

  void Add(uint64_t hash) {
    // Invariant: every hash > limit_ is greater than k distinct held hashes.
    if (hash > limit_) return;
    pending_[num_pending_] = hash;
    if (++num_pending_ == capacity_) Flush();
  }

  // Add() of each hash; the fast path for a document's features: the
  // compare against the limit runs without a branch per hash, with AVX2 or
  // AVX-512 where the CPU has them (src/sketch/bottom_k_kernels.h).
  void AddMany(std::span<const uint64_t> hashes);

  // The sketch of all hashes added since construction or Reset(). The
  // builder keeps its state: more Add() calls extend the same document.
  BottomKSketch Finish();

  // Finish() into *out, reusing the capacity of out->values (no allocation
  // once it has held k values).
  void Finish(BottomKSketch* out);

  // Finish()'s values (ascending, at most k), without a copy: valid until
  // the next call on the builder.
  std::span<const uint64_t> FinishView();

  // Starts a new document.
  void Reset();

 private:
  // Merges the pending hashes into held_.
  void Flush();

  uint32_t k_;
  // Invariant: held_[0, num_held_) is strictly ascending, num_held_ <= k_.
  // Flush writes the new held values to next_held_ and swaps the two (each
  // has a few values of slack past k_ for the kernels' whole-vector stores).
  std::vector<uint64_t> held_;
  std::vector<uint64_t> next_held_;
  size_t num_held_ = 0;
  // pending_[0, num_pending_) are hashes <= limit_ not yet merged;
  // num_pending_ < capacity_ between calls. pending_ has a few values of
  // slack past capacity_ for the kernels' whole-vector stores.
  std::vector<uint64_t> pending_;
  size_t capacity_;
  size_t num_pending_ = 0;
  // The largest held hash once k_ are held, else UINT64_MAX.
  uint64_t limit_ = UINT64_MAX;
  std::vector<uint64_t> work_;          // Flush's selected values
  std::vector<uint64_t> sorted_;        // the sort's output
  std::vector<uint64_t> sort_scratch_;  // the sort kernel's scratch
  // The kernels (src/sketch/bottom_k_kernels.h), chosen at construction
  // from the CPU's features; every choice gives the same sketch.
  size_t (*filter_in_range_)(const uint64_t* values, size_t count, uint64_t first, uint64_t last,
                             uint64_t* out);
  void (*sort_ascending_)(const uint64_t* values, size_t count, uint64_t first, uint64_t last,
                          uint64_t* out, uint64_t* scratch);
  size_t (*unique_)(const uint64_t* values, size_t count, uint64_t* out, size_t room);
  size_t (*merge_unique_)(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, uint64_t* out,
                          size_t room);
};

// k positions of one-permutation MinHash with optimal densification.
// `empty` is true iff the document had no features; then `values` (still k
// zeros) hold no meaning and must never be compared.
struct KValueSketch {
  std::vector<uint64_t> values;
  bool empty = true;

  friend bool operator==(const KValueSketch& a, const KValueSketch& b) = default;
};

// Streams the feature hashes of one document into a KValueSketch.
//
// Frozen definition. The bin of hash h is ((unsigned __int128)h * k) >> 64
// (its high bits, so bins are contiguous ranges of hash values); bin i
// keeps the minimum hash that fell in it. An empty bin i is then filled by
// probing, for attempt = 1, 2, ...,
//   j = Mix64(Mix64(seed + kGoldenGamma * (i + 1)) ^ attempt) % k
// (Mix64, kGoldenGamma from src/util/mix.h) and copying the value of the
// first bin j that was non-empty before densification. Every probe sequence
// depends only on (seed, i), never on the document, which is what makes two
// documents agree at position i with probability J (Shrivastava 2017). After
// 16k unsuccessful attempts (probability below e^-16 for any document) the
// probe falls back to bins i+1, i+2, ... (mod k), which always terminates.
class KValueBuilder {
 public:
  // REQUIRES: k >= 1.
  KValueBuilder(int k, uint64_t seed);

  void Add(uint64_t hash) { AddTo(hash, mins_.data(), filled_.data()); }

  // Add() of each hash in order: the same sketch. The loop a fingerprinter
  // runs per batch of features (session 12: the minimum is stored without
  // a branch; "is this hash below its bin's minimum" is true for about half
  // of a document's hashes, a branch mispredicted at that rate).
  void AddMany(std::span<const uint64_t> hashes) {
    uint64_t* mins = mins_.data();
    uint8_t* filled = filled_.data();
    for (const uint64_t hash : hashes) AddTo(hash, mins, filled);
  }

  // The sketch of all hashes added since construction or Reset(). The
  // builder keeps its state: more Add() calls extend the same document.
  KValueSketch Finish() const;

  // Finish() into `values` (k of them) with no allocation; returns `empty`
  // (then `values` are k zeros). REQUIRES: values.size() == k.
  bool FinishInto(std::span<uint64_t> values) const;

  // Starts a new document.
  void Reset();

 private:
  // Bin ((unsigned __int128)hash * k) >> 64 keeps min(its value, hash),
  // stored whatever the compare says (a conditional move).
  void AddTo(uint64_t hash, uint64_t* mins, uint8_t* filled) const {
    const auto bin = static_cast<size_t>((static_cast<unsigned __int128>(hash) * num_bins_) >> 64);
    const uint64_t held = mins[bin];
    mins[bin] = hash < held ? hash : held;
    filled[bin] = 1;
  }

  uint64_t num_bins_;
  uint64_t seed_;
  // mins_[i] is the smallest hash in bin i (UINT64_MAX if none); filled_[i]
  // says whether any hash fell in bin i (a hash of UINT64_MAX is valid).
  std::vector<uint64_t> mins_;
  std::vector<uint8_t> filled_;
};

}  // namespace neardup

#endif  // NEARDUP_MINHASH_H_
