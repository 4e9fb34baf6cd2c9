#include "stream/stream_record.h"

#include <bit>
#include <cstring>
#include <vector>

#include "neardup/check.h"
#include "neardup/write_ahead_log.h"

namespace neardup::internal {
namespace {

// Writes a record's fields at a cursor into memory sized beforehand (every
// encoder computes its record's size first, then writes it once: session
// 13, EncodeAdd grew its string a push_back at a time, ~9 reallocations and
// copies for a 3 KB record, 11% of a batch's CPU with the snapshot's
// encodes). The one writer of the frozen layout's primitives.
class Writer {
 public:
  explicit Writer(char* out) : out_(out) {}
  void U8(uint8_t v) { *out_++ = static_cast<char>(v); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    out_ += 4;
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    out_ += 8;
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    if (!s.empty()) std::memcpy(out_, s.data(), s.size());
    out_ += s.size();
  }
  template <typename T>
  void Vec(const std::vector<T>& values) {
    U32(static_cast<uint32_t>(values.size()));
    if constexpr (std::endian::native == std::endian::little) {
      // The record is little-endian: the array's bytes as they are (one
      // copy; a record of a kept MinHash document holds a few KB of them).
      const size_t bytes = values.size() * sizeof(T);
      if (bytes > 0) std::memcpy(out_, values.data(), bytes);
      out_ += bytes;
      return;
    }
    for (T v : values) {
      if constexpr (sizeof(T) == 4) {
        U32(v);
      } else {
        U64(v);
      }
    }
  }
  // Always on (a pointer compare): the size computed first and the fields
  // written must agree, or the write ran past the memory sized for it.
  void CheckEnd(const char* end) const { NEARDUP_CHECK(out_ == end); }

 private:
  char* out_;
};

// Every read checks the bytes left; the first failure sticks.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool AtEnd() const { return pos_ == in_.size(); }
  uint64_t Bytes(int n) {
    if (!ok_ || in_.size() - pos_ < static_cast<size_t>(n)) {
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    pos_ += static_cast<size_t>(n);
    return v;
  }
  uint8_t U8() { return static_cast<uint8_t>(Bytes(1)); }
  uint32_t U32() { return static_cast<uint32_t>(Bytes(4)); }
  uint64_t U64() { return Bytes(8); }
  int64_t I64() { return static_cast<int64_t>(Bytes(8)); }
  double F64() { return std::bit_cast<double>(Bytes(8)); }
  std::string Str() {
    const uint32_t n = U32();
    if (!ok_ || in_.size() - pos_ < n) {
      ok_ = false;
      return {};
    }
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  template <typename T>
  std::vector<T> Vec() {
    const uint32_t n = U32();
    if (!ok_ || (in_.size() - pos_) / sizeof(T) < n) {
      ok_ = false;
      return {};
    }
    std::vector<T> values(n);
    if constexpr (std::endian::native == std::endian::little) {
      // Little-endian on disk and in memory: one copy (as Writer::Vec).
      if (n > 0) std::memcpy(values.data(), in_.data() + pos_, n * sizeof(T));
      pos_ += n * sizeof(T);
      return values;
    }
    for (T& v : values) v = static_cast<T>(Bytes(sizeof(T)));
    return values;
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

Status Malformed(std::string_view what) {
  return DataLossError(std::string("malformed stream ") + std::string(what) + " record");
}

}  // namespace

size_t EncodedAddBytes(const StreamDoc& doc) {
  size_t bytes = 1 + 8 + 8 + (4 + doc.id.size()) + 1 + (4 + doc.of.size()) + 8 + 1;
  if (doc.kept) {
    const Fingerprint& fp = doc.fingerprint;
    bytes += 8 + 8 + 4 + (4 + fp.minhash.values.size() * sizeof(uint64_t)) + 1 +
             (4 + fp.kvalue_minhash.values.size() * sizeof(uint64_t)) +
             (4 + fp.chunks.size() * sizeof(uint32_t));
  }
  if (!doc.text.empty()) bytes += 4 + doc.text.size();
  return bytes;
}

void EncodeAddTo(const StreamDoc& doc, char* out, size_t bytes) {
  Writer w(out);
  w.U8(static_cast<uint8_t>(StreamRecordType::kAdd));
  w.U64(doc.seq);
  w.I64(doc.time);
  w.Str(doc.id);
  w.U8(doc.status == StreamStatus::kNearDuplicate ? 1 : 0);
  w.Str(doc.of);
  w.F64(doc.similarity);
  w.U8(doc.kept ? 1 : 0);
  if (doc.kept) {
    const Fingerprint& fp = doc.fingerprint;
    w.U64(fp.num_tokens);
    w.U64(fp.simhash);
    w.U32(fp.minhash.k);
    w.Vec(fp.minhash.values);
    w.U8(fp.kvalue_minhash.empty ? 1 : 0);
    w.Vec(fp.kvalue_minhash.values);
    w.Vec(fp.chunks);
  }
  if (!doc.text.empty()) w.Str(doc.text);
  w.CheckEnd(out + bytes);
}

std::string EncodeAdd(const StreamDoc& doc) {
  const size_t bytes = EncodedAddBytes(doc);
  std::string record(bytes, '\0');
  EncodeAddTo(doc, record.data(), bytes);
  return record;
}

void AppendFramedAdd(const StreamDoc& doc, size_t bytes, std::string* out) {
  const size_t at = out->size();
  out->resize(at + kLogRecordHeaderBytes + bytes);
  char* record = out->data() + at;
  EncodeAddTo(doc, record + kLogRecordHeaderBytes, bytes);
  FrameLogRecordInPlace(record, bytes);
}

size_t AppendFramedAdd(const StreamDoc& doc, std::string* out) {
  const size_t bytes = EncodedAddBytes(doc);
  AppendFramedAdd(doc, bytes, out);
  return bytes;
}

std::string EncodeRemove(std::string_view id) {
  const size_t bytes = 1 + (4 + id.size());
  std::string record(bytes, '\0');
  Writer w(record.data());
  w.U8(static_cast<uint8_t>(StreamRecordType::kRemove));
  w.Str(id);
  w.CheckEnd(record.data() + bytes);
  return record;
}

std::string EncodeHeader(const StreamHeader& header) {
  const StreamConfig& c = header.config;
  const size_t bytes =
      1 + 4 + (1 + 8 + 8 + (4 + c.preset.size()) + 8 + 8 + 1) + 8 + 1 + 8 + 8 + 8 + 8;
  std::string record(bytes, '\0');
  Writer w(record.data());
  w.U8(static_cast<uint8_t>(StreamRecordType::kHeader));
  w.U32(kStreamFormatVersion);
  w.U8(c.method == NearDuplicateMethod::kSimHash ? 1 : 0);
  w.F64(c.threshold);
  w.I64(c.max_distance);
  w.Str(c.preset);
  w.I64(c.window_seconds);
  w.U64(c.max_documents);
  w.U8(c.keep_texts ? 1 : 0);
  w.U64(header.next_seq);
  w.U8(header.newest_time.has_value() ? 1 : 0);
  w.I64(header.newest_time.value_or(0));
  w.U64(header.added);
  w.U64(header.evicted);
  w.U64(header.removed);
  w.CheckEnd(record.data() + bytes);
  return record;
}

Result<StreamRecordType> RecordType(std::string_view record) {
  if (record.empty()) return DataLossError("empty stream record");
  const uint8_t type = static_cast<uint8_t>(record[0]);
  if (type < 1 || type > 3) {
    return DataLossError("unknown stream record type " + std::to_string(type));
  }
  return static_cast<StreamRecordType>(type);
}

Result<StreamDoc> DecodeAdd(std::string_view record) {
  Reader r(record);
  if (r.U8() != static_cast<uint8_t>(StreamRecordType::kAdd)) return Malformed("add");
  StreamDoc doc;
  doc.seq = r.U64();
  doc.time = r.I64();
  doc.id = r.Str();
  const uint8_t status = r.U8();
  doc.status = status == 1 ? StreamStatus::kNearDuplicate : StreamStatus::kNew;
  doc.of = r.Str();
  doc.similarity = r.F64();
  const uint8_t kept = r.U8();
  doc.kept = kept == 1;
  if (doc.kept) {
    Fingerprint& fp = doc.fingerprint;
    fp.num_tokens = r.U64();
    fp.simhash = r.U64();
    fp.minhash.k = r.U32();
    fp.minhash.values = r.Vec<uint64_t>();
    fp.kvalue_minhash.empty = r.U8() == 1;
    fp.kvalue_minhash.values = r.Vec<uint64_t>();
    fp.chunks = r.Vec<uint32_t>();
  }
  if (r.ok() && !r.AtEnd()) {
    doc.text = r.Str();
    if (doc.text.empty()) return Malformed("add");  // an empty text is never written
  }
  if (!r.ok() || !r.AtEnd() || status > 1 || kept > 1 || doc.id.empty() ||
      doc.kept != (doc.status == StreamStatus::kNew)) {
    return Malformed("add");
  }
  return doc;
}

Result<std::string> DecodeRemove(std::string_view record) {
  Reader r(record);
  if (r.U8() != static_cast<uint8_t>(StreamRecordType::kRemove)) return Malformed("remove");
  std::string id = r.Str();
  if (!r.ok() || !r.AtEnd() || id.empty()) return Malformed("remove");
  return id;
}

Result<StreamHeader> DecodeHeader(std::string_view record) {
  Reader r(record);
  if (r.U8() != static_cast<uint8_t>(StreamRecordType::kHeader)) return Malformed("header");
  const uint32_t version = r.U32();
  if (r.ok() && version != kStreamFormatVersion && version != 1) {
    return DataLossError("stream format version " + std::to_string(version) +
                         " is not supported (this build reads " +
                         std::to_string(kStreamFormatVersion) + ")");
  }
  StreamHeader header;
  StreamConfig& c = header.config;
  c.method = r.U8() == 1 ? NearDuplicateMethod::kSimHash : NearDuplicateMethod::kMinHash;
  c.threshold = r.F64();
  c.max_distance = static_cast<int>(r.I64());
  c.preset = r.Str();
  c.window_seconds = r.I64();
  c.max_documents = r.U64();
  uint8_t keep_texts = 0;
  if (version >= 2) keep_texts = r.U8();
  if (keep_texts > 1) return Malformed("header");
  c.keep_texts = keep_texts == 1;
  header.next_seq = r.U64();
  const bool has_newest = r.U8() == 1;
  const int64_t newest = r.I64();
  if (has_newest) header.newest_time = newest;
  header.added = r.U64();
  header.evicted = r.U64();
  header.removed = r.U64();
  if (!r.ok() || !r.AtEnd()) return Malformed("header");
  return header;
}

}  // namespace neardup::internal
