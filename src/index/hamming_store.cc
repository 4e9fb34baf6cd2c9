#include "neardup/hamming_store.h"

#include <filesystem>
#include <new>
#include <utility>

#include "index/chunk_index_io.h"
#include "index/index_journal.h"
#include "util/status_fallback.h"

namespace neardup {
namespace {

constexpr char kInsert = 'I';
constexpr char kRemove = 'R';
constexpr size_t kRecordBytes = 17;  // op, fingerprint, id

std::string BasePath(const std::string& dir) { return dir + "/hamming.base"; }
std::string JournalPath(const std::string& dir) { return dir + "/hamming.journal"; }

// The journal header's parameters: a kind tag, then the options.
std::string Params(const HammingIndexOptions& options) {
  std::string params = "neardup hamming store 1";
  internal::PutU32(static_cast<uint32_t>(options.num_blocks), &params);
  internal::PutU32(static_cast<uint32_t>(options.max_distance), &params);
  return params;
}

std::string Record(char op, HammingEntry entry) {
  std::string record(1, op);
  internal::PutU64(entry.fingerprint, &record);
  internal::PutU64(entry.id, &record);
  return record;
}

// Applies one journal record to `index` (a no-op for an insert of a present
// entry or a remove of an absent one: see the header on checkpoints).
Status Replay(const std::string& record, const std::string& path, uint64_t number,
              HammingIndex* index) {
  HammingEntry entry;
  size_t pos = 1;
  if (record.size() != kRecordBytes || (record[0] != kInsert && record[0] != kRemove) ||
      !internal::GetU64(record, &pos, &entry.fingerprint) ||
      !internal::GetU64(record, &pos, &entry.id)) {
    return DataLossError("hamming store journal " + path + ": record " + std::to_string(number) +
                         " is malformed");
  }
  if (record[0] == kRemove) {
    index->Remove(entry);
    return Status::Ok();
  }
  return index->Insert(entry).status();
}

}  // namespace

HammingStore::HammingStore(std::string dir, IndexStoreOptions store_options, HammingIndex index)
    : dir_(std::move(dir)), store_options_(store_options), index_(std::move(index)) {}

HammingStore::~HammingStore() = default;

Result<std::unique_ptr<HammingStore>> HammingStore::Open(const std::string& dir,
                                                         const HammingIndexOptions& options,
                                                         const IndexStoreOptions& store_options) {
  NEARDUP_RETURN_IF_ERROR(ValidateHammingIndexOptions(options));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create directory " + dir + ": " + ec.message());
  std::optional<HammingIndex> index;
  if (std::filesystem::exists(BasePath(dir), ec)) {
    NEARDUP_ASSIGN_OR_RETURN(HammingIndex base, HammingIndex::Open(BasePath(dir)));
    if (base.options().num_blocks != options.num_blocks ||
        base.options().max_distance != options.max_distance) {
      return FailedPreconditionError("hamming store " + dir + " holds an index of num_blocks " +
                                     std::to_string(base.options().num_blocks) +
                                     " and max_distance " +
                                     std::to_string(base.options().max_distance));
    }
    index.emplace(std::move(base));
  } else {
    NEARDUP_ASSIGN_OR_RETURN(HammingIndex empty, HammingIndex::Create(options));
    index.emplace(std::move(empty));
  }
  std::vector<std::string> records;
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<internal::IndexJournal> journal,
                           internal::IndexJournal::Open(JournalPath(dir), Params(options),
                                                        store_options.sync, &records));
  for (size_t i = 0; i < records.size(); ++i) {
    NEARDUP_RETURN_IF_ERROR(Replay(records[i], JournalPath(dir), i, &*index));
  }
  std::unique_ptr<HammingStore> store(new HammingStore(dir, store_options, std::move(*index)));
  store->version_ = journal->base_version() + records.size();
  store->tail_error_ = journal->tail_error();
  store->journal_ = std::move(journal);
  return store;
}

HammingStore::ReadView HammingStore::Read() const {
  std::shared_lock<std::shared_mutex> lock = index_lock_.LockShared();
  const uint64_t version = version_;
  return ReadView(std::move(lock), &index_, version);
}

std::vector<HammingMatch> HammingStore::FindAll(uint64_t query) const {
  return Read().index().FindAll(query);
}

std::optional<HammingMatch> HammingStore::FindFirst(uint64_t query) const {
  return Read().index().FindFirst(query);
}

Result<bool> HammingStore::Insert(HammingEntry entry) { return Change(kInsert, entry); }

Result<bool> HammingStore::Remove(HammingEntry entry) { return Change(kRemove, entry); }

Result<bool> HammingStore::Change(char op, HammingEntry entry) {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  if (!failed_.ok()) return failed_;
  // Only this thread changes the index, so it may read it without the
  // shared lock.
  const bool present = index_.Contains(entry);
  if (present == (op == kInsert)) return false;  // nothing changes, nothing journaled
  if (op == kInsert && index_.size() >= kMaxHammingEntries) {
    return ResourceExhaustedError("hamming store " + dir_ + " is full (" +
                                  std::to_string(kMaxHammingEntries) + " entries)");
  }
  NEARDUP_RETURN_IF_ERROR(journal_->Append(Record(op, entry)));
  {
    std::unique_lock<std::shared_mutex> lock = index_lock_.LockExclusive();
    if (op == kInsert) {
      // Only memory can fail it now (ResourceExhausted, the index
      // unchanged): the size was checked above and nothing else writes.
      Result<bool> inserted = index_.Insert(entry);
      if (!inserted.ok()) {
        failed_ = internal::JournalDivergedError("hamming", inserted.status());
        return failed_;
      }
    } else {
      // Allocates only on the first remove from a run of the checkpoint
      // (its tombstone bits), and then throws with the index unchanged.
      try {
        index_.Remove(entry);
      } catch (const std::bad_alloc&) {
        failed_ = internal::JournalDivergedError("hamming", internal::OutOfMemoryStatus());
        return failed_;
      }
    }
    ++version_;
  }
  if (store_options_.checkpoint_after_records != 0 &&
      journal_->num_records() >= store_options_.checkpoint_after_records) {
    // The change is durable already; a failed checkpoint leaves the journal.
    (void)CheckpointLocked();
  }
  return true;
}

Status HammingStore::Checkpoint() {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  if (!failed_.ok()) return failed_;
  return CheckpointLocked();
}

Status HammingStore::CheckpointLocked() {
  // Readers go on; the writer lock keeps the index as it is.
  std::shared_lock<std::shared_mutex> lock = index_lock_.LockShared();
  NEARDUP_RETURN_IF_ERROR(index_.Save(BasePath(dir_)));
  NEARDUP_RETURN_IF_ERROR(internal::FsyncDirectory(dir_));
  // A crash here leaves the new base and the old journal: replaying it
  // gives the same set (see the header).
  NEARDUP_RETURN_IF_ERROR(journal_->Rewrite({}, version_));
  return Status::Ok();
}

uint64_t HammingStore::version() const {
  std::shared_lock<std::shared_mutex> lock = index_lock_.LockShared();
  return version_;
}

uint64_t HammingStore::journal_records() const {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  return journal_->num_records();
}

}  // namespace neardup
