#ifndef NEARDUP_ENGINE_FIRST_COPIES_CHECK_H_
#define NEARDUP_ENGINE_FIRST_COPIES_CHECK_H_

#include <cstdint>
#include <span>
#include <string>

#include "neardup/status.h"

namespace neardup::internal {

// Checks a caller's `first_copy_of` (NearDuplicateGroups' groups of copies):
// each entry names its group's first member, at or before the document, and
// that member names itself. Returns whether any document is a later copy
// (false: every group has one member). Shared by ExpandNearDuplicateGroups
// and ClusterDocumentGroups, which take the array from callers.
inline Result<bool> CheckFirstCopies(std::span<const uint64_t> first_copy_of) {
  bool copies = false;
  for (uint64_t doc = 0; doc < first_copy_of.size(); ++doc) {
    const uint64_t first = first_copy_of[doc];
    if (first > doc || first_copy_of[first] != first) {
      return InvalidArgumentError("first_copy_of[" + std::to_string(doc) + "] (" +
                                  std::to_string(first) +
                                  ") must name its group's first member, at or before it");
    }
    copies = copies || first != doc;
  }
  return copies;
}

}  // namespace neardup::internal

#endif  // NEARDUP_ENGINE_FIRST_COPIES_CHECK_H_
