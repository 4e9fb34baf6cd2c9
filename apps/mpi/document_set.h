// A set of documents of the corpus with an O(1) rank (its place among the
// members), for the verifier's fetched documents (distributed_pairs.cc): a
// bit per document of the corpus and a 32-bit count per 64 documents, 1.5
// bits a document (190 KB for 1M documents), as the leader rule's flags
// hold a bit per earlier document.
//
// Until session 13 the verifier listed the other documents of its candidates
// (one entry per candidate across ranks: 12M on rank 0 of two on the 1M
// corpus, 96 MB and its radix sort's scratch), sorted and deduplicated them,
// and found each in the sorted list by a galloping search from the last
// one found; rank 0's second documents, spread over the later rank, each
// took ~30 steps there (0.35 CPU s, the larger part of its verify stage's
// excess over rank 1's). Pure, thread-compatible.
#ifndef NEARDUP_APPS_MPI_DOCUMENT_SET_H_
#define NEARDUP_APPS_MPI_DOCUMENT_SET_H_

#include <bit>
#include <cstdint>
#include <vector>

namespace neardup::mpi {

class DocumentSet {
 public:
  // An empty set of the documents [0, total).
  explicit DocumentSet(uint64_t total) : bits_((total + 63) / 64, 0), total_(total) {}

  // REQUIRES: doc < total; before Finish.
  void Add(uint64_t doc) { bits_[doc / 64] |= uint64_t{1} << (doc % 64); }

  // The members, ascending; from then on Rank works (and Add must not be
  // called).
  std::vector<uint64_t> Finish();

  // The number of members below `doc`: a member's index in Finish's list.
  // REQUIRES: Finish was called; doc < total.
  uint64_t Rank(uint64_t doc) const {
    const uint64_t word = doc / 64;
    const uint64_t below = bits_[word] & ((uint64_t{1} << (doc % 64)) - 1);
    return before_[word] + static_cast<uint64_t>(std::popcount(below));
  }
  bool Contains(uint64_t doc) const { return ((bits_[doc / 64] >> (doc % 64)) & 1) != 0; }
  uint64_t total() const { return total_; }

 private:
  std::vector<uint64_t> bits_;
  // Members in the words before each word.
  std::vector<uint64_t> before_;
  uint64_t total_;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_DOCUMENT_SET_H_
