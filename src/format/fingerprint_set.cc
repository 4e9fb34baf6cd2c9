#include "neardup/format/fingerprint_set.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "neardup/format/checksummed_file.h"

namespace neardup::format {
namespace {

constexpr std::string_view kKind = "fingerprint-set";

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void Put(uint64_t value, int bytes = 8) {
    for (int i = 0; i < bytes; ++i) out_->push_back(static_cast<char>(value >> (8 * i)));
  }
  void PutBytes(std::string_view bytes) {
    Put(bytes.size());
    out_->append(bytes);
  }
  template <typename T>
  void PutVector(const std::vector<T>& values) {
    Put(values.size());
    for (T value : values) Put(value, sizeof(T));
  }

 private:
  std::string* out_;
};

// Reads what Writer wrote; every length is checked against the bytes left,
// so a damaged count fails instead of allocating.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool done() const { return pos_ == bytes_.size(); }
  size_t left() const { return bytes_.size() - pos_; }

  uint64_t Get(int bytes = 8) {
    if (!ok_ || left() < static_cast<size_t>(bytes)) return Fail();
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i) {
      value = (value << 8) | static_cast<uint8_t>(bytes_[pos_ + static_cast<size_t>(i)]);
    }
    pos_ += static_cast<size_t>(bytes);
    return value;
  }
  void GetBytes(std::string* out) {
    const uint64_t size = Get();
    if (!ok_ || size > left()) {
      Fail();
      return;
    }
    out->assign(bytes_.substr(pos_, size));
    pos_ += size;
  }
  template <typename T>
  void GetVector(std::vector<T>* out) {
    const uint64_t size = Get();
    if (!ok_ || size > left() / sizeof(T)) {
      Fail();
      return;
    }
    out->resize(size);
    for (T& value : *out) value = static_cast<T>(Get(sizeof(T)));
  }
  bool GetFlag() {
    const uint64_t flag = Get(1);
    if (flag > 1) Fail();
    return flag == 1;
  }
  uint64_t Fail() {
    ok_ = false;
    return 0;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The fewest bytes a document takes: empty id, vectors and raw record.
constexpr uint64_t kMinDocumentBytes =
    8 + 8 + 1 + 8 * 3 + 4 + 8 * 4 + 8 + 4 + 8 + 1 + 8 + 8 + 8 + 8;

void PutFingerprint(const Fingerprint& f, Writer* w) {
  w->Put(f.simhash);
  w->Put(f.simhash128.high);
  w->Put(f.simhash128.low);
  w->Put(static_cast<uint32_t>(f.simhash_wide.bits), 4);
  for (uint64_t word : f.simhash_wide.words) w->Put(word);
  w->Put(f.num_shingles);
  w->Put(f.minhash.k, 4);
  w->PutVector(f.minhash.values);
  w->Put(f.kvalue_minhash.empty ? 1 : 0, 1);
  w->PutVector(f.kvalue_minhash.values);
  w->PutVector(f.chunks);
  w->Put(f.num_tokens);
  w->Put(f.invalid_utf8_sequences);
}

void GetFingerprint(Reader* r, Fingerprint* f) {
  f->simhash = r->Get();
  f->simhash128.high = r->Get();
  f->simhash128.low = r->Get();
  const uint64_t bits = r->Get(4);
  f->simhash_wide.bits = bits <= 256 ? static_cast<int>(bits) : 0;
  if (bits > 256) r->Fail();
  for (uint64_t& word : f->simhash_wide.words) word = r->Get();
  f->num_shingles = r->Get();
  f->minhash.k = static_cast<uint32_t>(r->Get(4));
  r->GetVector(&f->minhash.values);
  f->kvalue_minhash.empty = r->GetFlag();
  r->GetVector(&f->kvalue_minhash.values);
  r->GetVector(&f->chunks);
  f->num_tokens = r->Get();
  f->invalid_utf8_sequences = r->Get();
}

// InvalidArgument unless the corpus' vectors have one entry per document.
Status CheckShape(const FingerprintedCorpus& corpus) {
  const size_t n = corpus.ids.size();
  const bool raw = !corpus.raw_records.empty();
  if (corpus.lengths.size() != n || corpus.fingerprints.size() != n ||
      corpus.is_jsonl.size() != n || (raw && corpus.raw_records.size() != n)) {
    return InvalidArgumentError("fingerprint set: " + std::to_string(n) + " ids but " +
                                std::to_string(corpus.lengths.size()) + " lengths, " +
                                std::to_string(corpus.fingerprints.size()) + " fingerprints, " +
                                std::to_string(corpus.is_jsonl.size()) + " JSONL flags and " +
                                std::to_string(corpus.raw_records.size()) + " raw records");
  }
  return Status::Ok();
}

// Encodes the set, handing `flush` the bytes whenever about `chunk` have
// gathered in *buffer (and the rest at the end).
Status EncodeInPieces(const FingerprintedCorpus& corpus, std::string* buffer, size_t chunk,
                      const std::function<Status(std::string*)>& flush) {
  NEARDUP_RETURN_IF_ERROR(CheckShape(corpus));
  const size_t n = corpus.ids.size();
  const bool raw = !corpus.raw_records.empty();
  Writer w(buffer);
  w.Put(n);
  w.Put(raw ? 1 : 0, 1);
  for (size_t i = 0; i < n; ++i) {
    w.PutBytes(corpus.ids[i]);
    w.Put(corpus.lengths[i]);
    w.Put(corpus.is_jsonl[i] ? 1 : 0, 1);
    if (raw) w.PutBytes(corpus.raw_records[i]);
    PutFingerprint(corpus.fingerprints[i], &w);
    if (buffer->size() >= chunk) NEARDUP_RETURN_IF_ERROR(flush(buffer));
  }
  return flush(buffer);
}

}  // namespace

Status EncodeFingerprintSet(const FingerprintedCorpus& corpus, std::string* out) {
  return EncodeInPieces(corpus, out, std::numeric_limits<size_t>::max(),
                        [](std::string*) { return Status::Ok(); });
}

Status DecodeFingerprintSet(std::string_view bytes, FingerprintedCorpus* corpus) {
  *corpus = FingerprintedCorpus{};
  Reader r(bytes);
  const uint64_t n = r.Get();
  const bool raw = r.GetFlag();
  if (!r.ok() || n > r.left() / kMinDocumentBytes) {
    return DataLossError("fingerprint set: bad header (" + std::to_string(n) + " documents in " +
                         std::to_string(bytes.size()) + " bytes)");
  }
  corpus->ids.resize(n);
  corpus->lengths.resize(n);
  corpus->is_jsonl.resize(n);
  corpus->fingerprints.resize(n);
  if (raw) corpus->raw_records.resize(n);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    r.GetBytes(&corpus->ids[i]);
    corpus->lengths[i] = r.Get();
    corpus->is_jsonl[i] = r.GetFlag();
    if (raw) r.GetBytes(&corpus->raw_records[i]);
    GetFingerprint(&r, &corpus->fingerprints[i]);
    if (!r.ok()) {
      *corpus = FingerprintedCorpus{};
      return DataLossError("fingerprint set: document " + std::to_string(i) + " of " +
                           std::to_string(n) + " is malformed or cut short");
    }
  }
  if (!r.done()) {
    const size_t left = r.left();
    *corpus = FingerprintedCorpus{};
    return DataLossError("fingerprint set: " + std::to_string(left) +
                         " bytes after the last document");
  }
  return Status::Ok();
}

Status WriteFingerprintSetFile(const std::string& path, const FingerprintedCorpus& corpus,
                               std::string_view metadata) {
  NEARDUP_RETURN_IF_ERROR(CheckShape(corpus));
  NEARDUP_ASSIGN_OR_RETURN(std::unique_ptr<ChecksummedFileWriter> out,
                           ChecksummedFileWriter::Create(path, kKind));
  std::string buffer;
  Writer(&buffer).PutBytes(metadata);
  // In pieces of about 1 MiB: the encoding is never held whole.
  NEARDUP_RETURN_IF_ERROR(EncodeInPieces(corpus, &buffer, size_t{1} << 20, [&](std::string* bytes) {
    Status status = out->Append(*bytes);
    bytes->clear();
    return status;
  }));
  return out->Commit();
}

Status ReadFingerprintSetFile(const std::string& path, FingerprintedCorpus* corpus,
                              std::string* metadata) {
  // Decoded from the mapping: the payload is not copied first.
  return VisitChecksummedFile(path, kKind, [&](std::string_view payload) -> Status {
    Reader r(payload);
    r.GetBytes(metadata);
    if (!r.ok()) return DataLossError(path + ": fingerprint set: bad metadata length");
    Status decoded = DecodeFingerprintSet(payload.substr(payload.size() - r.left()), corpus);
    if (!decoded.ok()) return DataLossError(path + ": " + decoded.message());
    return Status::Ok();
  });
}

}  // namespace neardup::format
