// The payloads of a stream's log and snapshot records (framed by
// neardup/write_ahead_log.h). Little-endian, frozen at format version 2
// (version 1 is still read: it lacks the fields marked v2):
//   header (first record of a snapshot):
//     u8 type = 3, u32 version, config (u8 method, f64 threshold,
//     i64 max_distance, str preset, i64 window_seconds, u64 max_documents,
//     v2: u8 keep_texts), u64 next_seq, u8 has_newest, i64 newest_time,
//     u64 added, u64 evicted, u64 removed
//   add: u8 type = 1, u64 seq, i64 time, str id, u8 status, str of,
//     f64 similarity, u8 kept; if kept: u64 num_tokens, u64 simhash,
//     u32 minhash.k, vec64 minhash, u8 kvalue.empty, vec64 kvalue, vec32 chunks;
//     v2, only when the stream keeps texts and the text is not empty: str text
//   remove: u8 type = 2, str id
// where str is u32 length + bytes and vecN is u32 count + N-bit values.
// Decode never trusts a length: every read is bounds-checked.
#ifndef NEARDUP_STREAM_STREAM_RECORD_H_
#define NEARDUP_STREAM_STREAM_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "neardup/fingerprinter.h"
#include "neardup/status.h"
#include "neardup/stream.h"

namespace neardup::internal {

inline constexpr uint32_t kStreamFormatVersion = 2;

enum class StreamRecordType : uint8_t { kAdd = 1, kRemove = 2, kHeader = 3 };

// One stored document. `fingerprint` is meaningful only when kept.
struct StreamDoc {
  uint64_t seq = 0;  // arrival number: the leader rule's order
  int64_t time = 0;
  std::string id;
  StreamStatus status = StreamStatus::kNew;
  std::string of;
  double similarity = 0;
  bool kept = false;  // status == kNew: its sketches are held
  Fingerprint fingerprint;
  std::string text;  // only when the stream keeps texts
};

struct StreamHeader {
  StreamConfig config;
  uint64_t next_seq = 0;
  std::optional<int64_t> newest_time;
  uint64_t added = 0;
  uint64_t evicted = 0;
  uint64_t removed = 0;
};

std::string EncodeAdd(const StreamDoc& doc);
// The add record's payload, written in place: `bytes` bytes at `out` (what
// EncodeAdd returns, without its allocation). Aborts (always, not only in
// debug builds) if the fields written do not end at out + bytes.
// REQUIRES: bytes == EncodedAddBytes(doc).
size_t EncodedAddBytes(const StreamDoc& doc);
void EncodeAddTo(const StreamDoc& doc, char* out, size_t bytes);
// Appends the add record framed as a log record (header + payload, as
// AppendLogRecord(EncodeAdd(doc), out) would) with no intermediate string.
// REQUIRES: bytes == EncodedAddBytes(doc) (a caller that sized it already).
void AppendFramedAdd(const StreamDoc& doc, size_t bytes, std::string* out);
// The same, sizing it; returns the payload's size.
size_t AppendFramedAdd(const StreamDoc& doc, std::string* out);
std::string EncodeRemove(std::string_view id);
std::string EncodeHeader(const StreamHeader& header);

// The type of a record (DataLoss for an empty or unknown one).
Result<StreamRecordType> RecordType(std::string_view record);
Result<StreamDoc> DecodeAdd(std::string_view record);
Result<std::string> DecodeRemove(std::string_view record);
Result<StreamHeader> DecodeHeader(std::string_view record);

}  // namespace neardup::internal

#endif  // NEARDUP_STREAM_STREAM_RECORD_H_
