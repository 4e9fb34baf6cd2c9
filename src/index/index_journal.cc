#include "index/index_journal.h"

#include <cstring>
#include <filesystem>
#include <new>

#include "index/chunk_index_io.h"
#include "util/status_fallback.h"

namespace neardup::internal {

Result<std::unique_ptr<IndexJournal>> IndexJournal::Open(const std::string& path,
                                                         std::string params, bool sync,
                                                         std::vector<std::string>* records) {
  records->clear();
  std::unique_ptr<IndexJournal> journal(new IndexJournal(path, std::move(params), sync));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    NEARDUP_RETURN_IF_ERROR(journal->Rewrite({}, 0));
    return journal;
  }
  NEARDUP_ASSIGN_OR_RETURN(LogContents contents, ReadLogFile(path));
  if (contents.records.empty()) {
    // Only a torn first append can leave a journal without its header, and
    // the header is written by Rewrite, atomically: this file is not one.
    return DataLossError("index journal " + path + " has no valid header record" +
                         (contents.tail_error.empty() ? "" : ": " + contents.tail_error));
  }
  const std::string& header = contents.records[0];
  const std::string& expected = journal->params_;
  size_t pos = expected.size();
  if (header.size() != expected.size() + 8 || header.compare(0, expected.size(), expected) != 0) {
    return FailedPreconditionError("index journal " + path +
                                   " belongs to another index kind or other parameters");
  }
  GetU64(header, &pos, &journal->base_version_);
  journal->tail_error_ = contents.tail_error;
  records->assign(std::make_move_iterator(contents.records.begin() + 1),
                  std::make_move_iterator(contents.records.end()));
  journal->num_records_ = records->size();
  WriteAheadLogOptions options;
  options.sync = sync;
  NEARDUP_ASSIGN_OR_RETURN(journal->log_, WriteAheadLog::Open(path, contents.valid_bytes, options));
  return journal;
}

Status IndexJournal::Append(std::string_view record) {
  if (log_ == nullptr) return IoError("index journal " + path_ + " could not be reopened");
  NEARDUP_ASSIGN_OR_RETURN(const uint64_t lsn, log_->Append(record));
  ++num_records_;
  if (sync_) NEARDUP_RETURN_IF_ERROR(log_->SyncTo(lsn));
  return Status::Ok();
}

Status IndexJournal::Rewrite(std::span<const std::string> records, uint64_t base_version) {
  std::string header = params_;
  PutU64(base_version, &header);
  std::string framed;
  AppendLogRecord(header, &framed);
  {
    NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> writer,
                             AtomicFileWriter::Create(path_));
    for (const std::string& record : records) {
      AppendLogRecord(record, &framed);
      if (framed.size() >= (1u << 20)) {
        NEARDUP_RETURN_IF_ERROR(writer->Append(framed));
        framed.clear();
      }
    }
    NEARDUP_RETURN_IF_ERROR(writer->Append(framed));
    const uint64_t size = writer->size();
    NEARDUP_RETURN_IF_ERROR(writer->Commit());
    // The old file is replaced: nothing is appended to it again.
    log_.reset();
    WriteAheadLogOptions options;
    options.sync = sync_;
    NEARDUP_ASSIGN_OR_RETURN(log_, WriteAheadLog::Open(path_, size, options));
  }
  num_records_ = records.size();
  base_version_ = base_version;
  return Status::Ok();
}

Result<std::vector<std::string>> IndexJournal::ReadRecords() const {
  NEARDUP_ASSIGN_OR_RETURN(LogContents contents, ReadLogFile(path_));
  if (contents.records.empty()) {
    return DataLossError("index journal " + path_ + " has lost its header record");
  }
  contents.records.erase(contents.records.begin());
  return std::move(contents.records);
}

uint64_t IndexJournal::bytes() const { return log_ == nullptr ? 0 : log_->size(); }

void PutU32(uint32_t value, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

void PutU64(uint64_t value, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

bool GetU32(std::string_view payload, size_t* pos, uint32_t* value) {
  if (*pos > payload.size() || payload.size() - *pos < 4) return false;
  *value = 0;
  for (int i = 0; i < 4; ++i) {
    *value |= uint32_t{static_cast<unsigned char>(payload[*pos + i])} << (8 * i);
  }
  *pos += 4;
  return true;
}

bool GetU64(std::string_view payload, size_t* pos, uint64_t* value) {
  if (*pos > payload.size() || payload.size() - *pos < 8) return false;
  *value = 0;
  for (int i = 0; i < 8; ++i) {
    *value |= uint64_t{static_cast<unsigned char>(payload[*pos + i])} << (8 * i);
  }
  *pos += 8;
  return true;
}

Status JournalDivergedError(const char* store_name, const Status& cause) {
  return StatusOrShort(cause.code(), "store diverged", [&] {
    return Status(cause.code(),
                  std::string(store_name) +
                      " store diverged from its journal (reopen it): " + cause.message());
  });
}

}  // namespace neardup::internal
