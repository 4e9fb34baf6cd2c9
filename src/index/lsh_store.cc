#include "neardup/lsh_store.h"

#include <filesystem>
#include <unordered_map>
#include <utility>

#include "index/index_journal.h"

namespace neardup {
namespace {

constexpr char kLshInsert = 'I';
constexpr char kLshRemove = 'R';

std::string LshJournalPath(const std::string& dir) { return dir + "/lsh.journal"; }

std::string Params(LshParams params, int num_hashes) {
  std::string out = "neardup lsh store 1";
  internal::PutU32(static_cast<uint32_t>(params.num_bands), &out);
  internal::PutU32(static_cast<uint32_t>(params.rows_per_band), &out);
  internal::PutU32(static_cast<uint32_t>(num_hashes), &out);
  return out;
}

std::string InsertRecord(uint64_t doc_id, std::span<const uint64_t> sketch) {
  std::string record(1, kLshInsert);
  internal::PutU64(doc_id, &record);
  internal::PutU32(static_cast<uint32_t>(sketch.size()), &record);
  for (uint64_t value : sketch) internal::PutU64(value, &record);
  return record;
}

std::string RemoveRecord(uint64_t doc_id) {
  std::string record(1, kLshRemove);
  internal::PutU64(doc_id, &record);
  return record;
}

// A parsed record: op, id and (inserts) the sketch.
struct Change {
  char op = 0;
  uint64_t doc_id = 0;
  std::vector<uint64_t> sketch;
};

bool Parse(const std::string& record, bool with_sketch, Change* change) {
  size_t pos = 1;
  if (record.empty() || !internal::GetU64(record, &pos, &change->doc_id)) return false;
  change->op = record[0];
  if (change->op == kLshRemove) return pos == record.size();
  uint32_t n = 0;
  if (change->op != kLshInsert || !internal::GetU32(record, &pos, &n) ||
      record.size() - pos != uint64_t{n} * 8) {
    return false;
  }
  if (!with_sketch) return true;
  change->sketch.resize(n);
  for (uint32_t i = 0; i < n; ++i) internal::GetU64(record, &pos, &change->sketch[i]);
  return true;
}

}  // namespace

LshStore::LshStore(std::string dir, IndexStoreOptions store_options, LshIndex index)
    : dir_(std::move(dir)), store_options_(store_options), index_(std::move(index)) {}

LshStore::~LshStore() = default;

Result<std::unique_ptr<LshStore>> LshStore::Open(const std::string& dir, LshParams params,
                                                 int num_hashes,
                                                 const IndexStoreOptions& store_options) {
  NEARDUP_ASSIGN_OR_RETURN(LshIndex index, LshIndex::Create(params, num_hashes));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create directory " + dir + ": " + ec.message());
  std::vector<std::string> records;
  NEARDUP_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::IndexJournal> journal,
      internal::IndexJournal::Open(LshJournalPath(dir), Params(params, num_hashes),
                                   store_options.sync, &records));
  std::unique_ptr<LshStore> store(new LshStore(dir, store_options, std::move(index)));
  for (size_t i = 0; i < records.size(); ++i) {
    Status applied = store->Apply(records[i]);
    if (!applied.ok()) {
      return DataLossError("lsh store journal " + LshJournalPath(dir) + ": record " +
                           std::to_string(i) + ": " + applied.message());
    }
  }
  store->version_ = journal->base_version() + records.size();
  store->tail_error_ = journal->tail_error();
  store->journal_ = std::move(journal);
  return store;
}

Status LshStore::Apply(const std::string& record) {
  Change change;
  if (!Parse(record, /*with_sketch=*/true, &change)) {
    return DataLossError("malformed record");
  }
  if (change.op == kLshRemove) {
    if (!index_.Remove(change.doc_id)) {
      return DataLossError("removes document " + std::to_string(change.doc_id) +
                           ", which is not stored");
    }
    return Status::Ok();
  }
  return index_.Insert(change.doc_id, change.sketch);
}

LshStore::ReadView LshStore::Read() const {
  std::shared_lock<std::shared_mutex> lock = index_lock_.LockShared();
  const uint64_t version = version_;
  return ReadView(std::move(lock), &index_, version);
}

Result<std::vector<uint64_t>> LshStore::Query(std::span<const uint64_t> sketch) const {
  return Read().index().Query(sketch);
}

Status LshStore::Insert(uint64_t doc_id, std::span<const uint64_t> sketch) {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  if (!failed_.ok()) return failed_;
  // The checks of LshIndex::Insert, before anything is journaled (only this
  // thread changes the index, so it may read it without the shared lock).
  if (sketch.size() != static_cast<size_t>(index_.num_hashes())) {
    return InvalidArgumentError("sketch has " + std::to_string(sketch.size()) +
                                " values, the store expects num_hashes " +
                                std::to_string(index_.num_hashes()));
  }
  if (index_.Contains(doc_id)) {
    return InvalidArgumentError("document " + std::to_string(doc_id) + " is already stored");
  }
  if (index_.size() >= (size_t{1} << 31)) {
    return ResourceExhaustedError("lsh store " + dir_ + " is full (2^31 documents)");
  }
  const std::string record = InsertRecord(doc_id, sketch);
  NEARDUP_RETURN_IF_ERROR(journal_->Append(record));
  {
    std::unique_lock<std::shared_mutex> lock = index_lock_.LockExclusive();
    // Only memory can fail it now (ResourceExhausted, the index unchanged),
    // with the insert journaled already.
    Status inserted = index_.Insert(doc_id, sketch);
    if (!inserted.ok()) {
      failed_ = internal::JournalDivergedError("lsh", inserted);
      return failed_;
    }
    ++version_;
  }
  return Status::Ok();
}

Result<bool> LshStore::Remove(uint64_t doc_id) {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  if (!failed_.ok()) return failed_;
  if (!index_.Contains(doc_id)) return false;
  NEARDUP_RETURN_IF_ERROR(journal_->Append(RemoveRecord(doc_id)));
  {
    std::unique_lock<std::shared_mutex> lock = index_lock_.LockExclusive();
    index_.Remove(doc_id);
    ++version_;
  }
  // Each remove leaves two dead records (the insert and itself).
  if (store_options_.checkpoint_after_records != 0 &&
      journal_->num_records() - index_.size() > store_options_.checkpoint_after_records) {
    (void)CheckpointLocked();  // the change is durable already; a failure keeps the journal
  }
  return true;
}

Status LshStore::Checkpoint() {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  if (!failed_.ok()) return failed_;
  return CheckpointLocked();
}

Status LshStore::CheckpointLocked() {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<std::string> records, journal_->ReadRecords());
  // The last insert record of every live document, in journal order.
  std::unordered_map<uint64_t, size_t> live;
  for (size_t i = 0; i < records.size(); ++i) {
    Change change;
    if (!Parse(records[i], /*with_sketch=*/false, &change)) {
      return DataLossError("lsh store journal " + LshJournalPath(dir_) + ": record " +
                           std::to_string(i) + " is malformed");
    }
    if (change.op == kLshInsert) {
      live[change.doc_id] = i;
    } else {
      live.erase(change.doc_id);
    }
  }
  std::vector<std::string> kept;
  kept.reserve(live.size());
  for (size_t i = 0; i < records.size(); ++i) {
    Change change;
    Parse(records[i], /*with_sketch=*/false, &change);
    auto it = live.find(change.doc_id);
    if (change.op == kLshInsert && it != live.end() && it->second == i) {
      kept.push_back(std::move(records[i]));
    }
  }
  if (kept.size() != index_.size()) {
    return DataLossError("lsh store journal " + LshJournalPath(dir_) + " holds " +
                         std::to_string(kept.size()) + " live documents, the index " +
                         std::to_string(index_.size()));
  }
  const uint64_t current = version();
  return journal_->Rewrite(kept, current - kept.size());
}

uint64_t LshStore::version() const {
  std::shared_lock<std::shared_mutex> lock = index_lock_.LockShared();
  return version_;
}

uint64_t LshStore::journal_records() const {
  std::lock_guard<std::mutex> writer(writer_mutex_);
  return journal_->num_records();
}

size_t LshStore::size() const { return Read().index().size(); }

}  // namespace neardup
