// A set of documents of the corpus with an O(1) rank (its place among the
// members), for the verifier's fetched documents (distributed_pairs.cc).
// Cost: a bit per document of the corpus and a 64-bit count per 64
// documents, 2 bits a document (250 KB for 1M documents), whatever the
// number of members; Finish and the zeroing are O(total / 64). Pure,
// thread-compatible.
#ifndef NEARDUP_APPS_MPI_DOCUMENT_SET_H_
#define NEARDUP_APPS_MPI_DOCUMENT_SET_H_

#include <bit>
#include <cstdint>
#include <vector>

#include "neardup/check.h"

namespace neardup::mpi {

class DocumentSet {
 public:
  // An empty set of the documents [0, total).
  explicit DocumentSet(uint64_t total) : bits_((total + 63) / 64, 0), total_(total) {}

  // REQUIRES: doc < total; before Finish.
  void Add(uint64_t doc) {
    NEARDUP_DCHECK(doc < total_) << doc << " of " << total_;
    NEARDUP_DCHECK(!finished_);
    bits_[doc / 64] |= uint64_t{1} << (doc % 64);
  }

  // The members, ascending; from then on Rank works (and Add must not be
  // called).
  std::vector<uint64_t> Finish();

  // The number of members below `doc`: a member's index in Finish's list.
  // REQUIRES: Finish was called; doc < total.
  uint64_t Rank(uint64_t doc) const {
    NEARDUP_DCHECK(doc < total_) << doc << " of " << total_;
    NEARDUP_DCHECK(finished_);
    const uint64_t word = doc / 64;
    const uint64_t below = bits_[word] & ((uint64_t{1} << (doc % 64)) - 1);
    return before_[word] + static_cast<uint64_t>(std::popcount(below));
  }
  // REQUIRES: doc < total.
  bool Contains(uint64_t doc) const {
    NEARDUP_DCHECK(doc < total_) << doc << " of " << total_;
    return ((bits_[doc / 64] >> (doc % 64)) & 1) != 0;
  }

 private:
  std::vector<uint64_t> bits_;
  // Members in the words before each word.
  std::vector<uint64_t> before_;
  uint64_t total_;
  bool finished_ = false;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_DOCUMENT_SET_H_
