#include "document_set.h"

namespace neardup::mpi {

std::vector<uint64_t> DocumentSet::Finish() {
  NEARDUP_DCHECK(!finished_);
  finished_ = true;
  std::vector<uint64_t> members;
  before_.resize(bits_.size());
  uint64_t count = 0;
  for (size_t word = 0; word < bits_.size(); ++word) {
    before_[word] = count;
    count += static_cast<uint64_t>(std::popcount(bits_[word]));
  }
  members.reserve(count);
  for (size_t word = 0; word < bits_.size(); ++word) {
    for (uint64_t bits = bits_[word]; bits != 0; bits &= bits - 1) {
      members.push_back(word * 64 + static_cast<uint64_t>(std::countr_zero(bits)));
    }
  }
  return members;
}

}  // namespace neardup::mpi
