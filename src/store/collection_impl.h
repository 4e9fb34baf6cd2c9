// The private state of a Collection, shared by collection.cc (create, open,
// reads, stats, verify) and collection_commit.cc (commit, compact,
// similarities).
#ifndef NEARDUP_STORE_COLLECTION_IMPL_H_
#define NEARDUP_STORE_COLLECTION_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "store/segment_file.h"
#include "store/sqlite_db.h"

namespace neardup {

class Collection::Impl {
 public:
  struct Location {
    uint32_t doc = 0;
    uint32_t segment = 0;
    uint32_t row = 0;
  };

  ~Impl();

  std::unique_ptr<internal::SqliteDb> db;
  bool writable = false;
  int lock_fd = -1;
  std::function<int64_t()> clock;
  // Invariant: holds exactly the segments of the manifest.
  std::map<uint32_t, std::unique_ptr<internal::SegmentReader>> segments;
  // The live documents, by ascending number: memory in proportion to the
  // live documents, never to the numbers ever issued (next_doc comes from
  // the catalog and is not trusted to be small).
  std::vector<Location> locations;
  uint64_t generation = 0;
  uint64_t format_version = 0;  // of the catalog as opened
  std::string index_file;       // relative to dir, e.g. "data/index-3.ndi"
  uint64_t next_doc = 0;
  uint64_t next_segment = 1;

  const Location* Find(uint32_t doc) const {
    auto it = std::lower_bound(locations.begin(), locations.end(), doc,
                               [](const Location& l, uint32_t d) { return l.doc < d; });
    if (it == locations.end() || it->doc != doc) return nullptr;
    return &*it;
  }
};

namespace internal {

inline constexpr const char* kCatalogFile = "catalog.db";
inline constexpr const char* kDataDir = "data";

std::string SegmentFileName(uint64_t segment);   // "data/seg-<n>.nds"
std::string IndexFileName(uint64_t generation);  // "data/index-<g>.ndi"
std::string ContentHash(std::string_view text);  // 16 hex digits, XXH3-64

// The largest document number a collection issues (kNoDocument is reserved).
inline constexpr uint64_t kMaxDocumentNumber = 0xfffffffeull;

// The unsigned decimal `text`, at most `max`; DataLoss naming the catalog's
// meta key `what` otherwise (a catalog's values are never trusted).
Result<uint64_t> ParseCatalogCount(const std::string& text, const std::string& what,
                                   uint64_t max = UINT64_MAX);

// Meta table access.
Result<std::string> ReadMeta(SqliteDb* db, const std::string& key);
Status WriteMeta(SqliteDb* db, const std::string& key, const std::string& value);

}  // namespace internal
}  // namespace neardup

#endif  // NEARDUP_STORE_COLLECTION_IMPL_H_
