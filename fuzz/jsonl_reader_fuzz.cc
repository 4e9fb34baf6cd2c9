// Fuzzes DocumentReader over outside bytes: as JSONL (with the gzip/zstd
// detection every stream goes through), also served in small pieces so line
// and block boundaries fall everywhere, and as gzip members wrapped around
// the input so the decompressor sees it too. Reads to the end or the first
// error; must never crash, hang or read out of bounds. The compressed
// streams are also decoded twice, split into members or frames (a file)
// and by the streaming decoders (a source without an end): the bytes and
// the error must be the same. Also decodes the
// input as a JSON string body with UnescapeJsonString (every path) and with
// simdjson's unescaper, which must agree byte for byte, and parses its
// first line, and a line with the input as its text, by the flat-line
// shortcut and by simdjson, which must give the same record or error.
#include <simdjson.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/byte_stream.h"
#include "io/decompressing_stream.h"
#include "io/json_unescape.h"
#include "io/jsonl_flat_record.h"
#include "io/jsonl_record_parser.h"
#include "io/line_reader.h"
#include "io/text_arena.h"
#include "neardup/check.h"
#include "neardup/document_reader.h"

namespace {

// Serves its bytes in pieces of `piece` bytes.
class PiecewiseStream : public neardup::ByteStream {
 public:
  PiecewiseStream(std::string data, size_t piece) : data_(std::move(data)), piece_(piece) {}
  neardup::Result<size_t> Read(char* buffer, size_t size) override {
    size_t n = std::min({size, piece_, data_.size() - pos_});
    std::memcpy(buffer, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::optional<uint64_t> RemainingSizeHint() const override { return data_.size() - pos_; }

 private:
  std::string data_;
  size_t piece_;
  size_t pos_ = 0;
};

void ReadToEnd(std::unique_ptr<neardup::ByteStream> stream, neardup::InputFormat format,
               uint64_t max_document_bytes) {
  neardup::InputOptions options;
  options.max_document_bytes = max_document_bytes;
  uint64_t reported = 0;
  options.on_skip = [&](const neardup::SkippedRecord& r) {
    NEARDUP_CHECK(!r.reason.empty());
    ++reported;
  };
  std::unique_ptr<neardup::DocumentReader> reader = neardup::DocumentReader::FromStream(
      std::move(stream), "fuzz.jsonl", format, std::move(options));
  neardup::Document doc;
  while (true) {
    neardup::Result<bool> next = reader->Next(&doc);
    if (!next.ok() || !*next) break;
    NEARDUP_CHECK(doc.text.size() <= max_document_bytes);
  }
  NEARDUP_CHECK(reported == reader->records_skipped());
}

// `data` as one gzip member (fast level: the point is the decoder).
std::string GzipMember(const uint8_t* data, size_t size) {
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  // Small window and memory level: cheap to set up thousands of times.
  if (deflateInit2(&z, 1, Z_DEFLATED, 16 + 9, 1, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  std::string out(deflateBound(&z, size) + 32, '\0');
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(rc == Z_STREAM_END ? z.total_out : 0);
  deflateEnd(&z);
  return out;
}

// `data` made a string body as simdjson's first stage would delimit one
// (unescaped quotes become 'q', an escape left open at the end is dropped),
// decoded by each path of UnescapeJsonString and by simdjson.
void CompareUnescapers(const uint8_t* data, size_t size) {
  static simdjson::ondemand::parser* const parser = [] {
    auto* p = new simdjson::ondemand::parser;
    NEARDUP_CHECK(p->allocate(1 << 16) == simdjson::SUCCESS);
    return p;
  }();
  std::string body;
  bool open_escape = false;
  for (size_t i = 0; i < size; ++i) {
    char c = static_cast<char>(data[i]);
    if (!open_escape && c == '"') c = 'q';
    open_escape = !open_escape && c == '\\';
    body.push_back(c);
  }
  if (open_escape) body.pop_back();
  std::string quoted = "\"" + body + "\"" + std::string(simdjson::SIMDJSON_PADDING, '\0');
  std::string expected(body.size() + simdjson::SIMDJSON_PADDING, '\0');
  uint8_t* dst = reinterpret_cast<uint8_t*>(expected.data());
  std::string_view value;
  const bool refused = parser
                           ->unescape(simdjson::ondemand::raw_json_string(
                                          reinterpret_cast<const uint8_t*>(quoted.data()) + 1),
                                      dst)
                           .get(value) != simdjson::SUCCESS;
  const std::string_view line(quoted.data() + 1, body.size());  // closing quote and padding follow
  std::string out(body.size() + neardup::internal::kUnescapeSlackBytes, '\0');
  auto check = [&](std::optional<size_t> decoded) {
    NEARDUP_CHECK(decoded.has_value() == !refused);
    if (decoded.has_value()) NEARDUP_CHECK(std::string_view(out.data(), *decoded) == value);
  };
  check(neardup::internal::UnescapeJsonStringPortable(line, out.data()));
  if (neardup::internal::JsonUnescapeAvx512Supported()) {
    check(neardup::internal::UnescapeJsonStringAvx512(line, out.data()));
  }
  if (neardup::internal::JsonUnescapeAvx512BwSupported()) {
    check(neardup::internal::UnescapeJsonStringAvx512Bw(line, out.data()));
  }
}

// One line parsed by a JsonlRecordParser: status, id, text, repair flag.
std::string ParseLineBy(neardup::internal::JsonlRecordParser* parser, std::string_view line) {
  neardup::internal::TextArena arena;
  neardup::internal::JsonlRecord record;
  const neardup::Status status = parser->ParseRecord(line, &arena, &record);
  std::string result = status.ToString() + '\x01' + (record.has_id ? "id:" : "no id");
  if (record.has_id) result += neardup::internal::FieldView(line, arena, record.id);
  if (status.ok())
    result += '\x01' + std::string(neardup::internal::FieldView(line, arena, record.text));
  return result + (record.replaced_utf8 ? "\x01repaired" : "");
}

// The flat-line shortcut (io/jsonl_flat_record.h) against simdjson's route,
// on the input's first line and on a line whose text is the input (new
// lines dropped): the same record or the same error; and its AVX-512 and
// byte-loop scanners agree on whether they take the line.
void CompareFlatRoutes(const uint8_t* data, size_t size) {
  using neardup::internal::JsonlRecordParser;
  static JsonlRecordParser* const shortcut = new JsonlRecordParser("text", "id");
  static JsonlRecordParser* const plain = [] {
    auto* parser = new JsonlRecordParser("text", "id");
    parser->SetFlatShortcutForTest(false);
    return parser;
  }();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string body;
  for (const char c : input) {
    if (c != '\n') body.push_back(c);
  }
  const std::string lines[] = {std::string(input.substr(0, input.find('\n'))),
                               "{\"id\": \"f\", \"text\": \"" + body + "\"}"};
  for (const std::string& line : lines) {
    std::vector<char> buffer(line.size() + neardup::internal::kLinePaddingBytes, '\0');
    std::memcpy(buffer.data(), line.data(), line.size());
    const std::string_view view(buffer.data(), line.size());
    NEARDUP_CHECK(ParseLineBy(shortcut, view) == ParseLineBy(plain, view));
    neardup::internal::TextArena fast_arena, portable_arena;
    neardup::internal::JsonlRecord fast, portable;
    const bool took = neardup::internal::TryParseFlatRecord(view, "text", "id", &fast_arena, &fast);
    NEARDUP_CHECK(took == neardup::internal::TryParseFlatRecordPortable(
                              view, "text", "id", &portable_arena, &portable));
    if (took) {
      NEARDUP_CHECK(neardup::internal::FieldView(view, fast_arena, fast.text) ==
                    neardup::internal::FieldView(view, portable_arena, portable.text));
    }
    if (neardup::internal::JsonUnescapeAvx512BwSupported()) {
      // The one-pass route of CPUs without VBMI/VBMI2.
      neardup::internal::TextArena bw_arena;
      neardup::internal::JsonlRecord bw;
      NEARDUP_CHECK(took == neardup::internal::TryParseFlatRecordAvx512Bw(view, "text", "id",
                                                                          &bw_arena, &bw));
      if (took) {
        NEARDUP_CHECK(neardup::internal::FieldView(view, bw_arena, bw.text) ==
                      neardup::internal::FieldView(view, portable_arena, portable.text));
      }
    }
  }
}

}  // namespace

// A stream read as a pipe: no known end, so it is decoded by streaming.
class NoEndStream final : public neardup::ByteStream {
 public:
  explicit NoEndStream(std::unique_ptr<neardup::ByteStream> inner) : inner_(std::move(inner)) {}
  neardup::Result<size_t> Read(char* buffer, size_t size) override {
    return inner_->Read(buffer, size);
  }
  bool HasEnd() const override { return false; }

 private:
  std::unique_ptr<neardup::ByteStream> inner_;
};

std::string DecodeAll(std::unique_ptr<neardup::ByteStream> raw, std::string* error) {
  neardup::Result<std::unique_ptr<neardup::ByteStream>> stream =
      neardup::internal::OpenDecompressed(std::move(raw), "fuzz");
  if (!stream.ok()) {
    *error = stream.status().ToString();
    return "";
  }
  std::string out;
  char buffer[4096];
  while (true) {
    neardup::Result<size_t> n = (*stream)->Read(buffer, sizeof buffer);
    if (!n.ok()) {
      *error = n.status().ToString();
      return out;
    }
    if (*n == 0) return out;
    out.append(buffer, *n);
  }
}

// An error message without the number after "compressed byte ".
std::string WithoutOffset(std::string message) {
  const std::string marker = "compressed byte ";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return message;
  size_t end = at + marker.size();
  while (end < message.size() && message[end] >= '0' && message[end] <= '9') ++end;
  return message.erase(at + marker.size(), end - at - marker.size());
}

void CompareDecoders(const std::string& compressed) {
  std::string split_error, streamed_error;
  const std::string split =
      DecodeAll(neardup::internal::MakeStringStream(compressed), &split_error);
  const std::string streamed =
      DecodeAll(std::make_unique<NoEndStream>(neardup::internal::MakeStringStream(compressed)),
                &streamed_error);
  NEARDUP_CHECK(split == streamed);
  NEARDUP_CHECK(WithoutOffset(split_error) == WithoutOffset(streamed_error));
  // zlib consumes input exactly up to the damage, so a gzip error's offset
  // is the same however the bytes were read; libzstd's is the start of the
  // read buffer it failed in, which the split path reads differently.
  if (compressed.size() < 2 || compressed[0] != '\x1f' || compressed[1] != '\x8b') return;
  NEARDUP_CHECK(split_error == streamed_error);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CompareUnescapers(data, size);
  CompareFlatRoutes(data, size);
  std::string bytes(reinterpret_cast<const char*>(data), size);
  // Raw bytes: JSONL unless they start with a compression magic.
  ReadToEnd(neardup::internal::MakeStringStream(bytes), neardup::InputFormat::kJsonl, 1ull << 31);
  CompareDecoders(bytes);
  // Same bytes in odd pieces with a small size cap: over-long lines.
  size_t piece = 1 + (size > 0 ? data[0] % 13 : 0);
  ReadToEnd(std::make_unique<PiecewiseStream>(bytes, piece), neardup::InputFormat::kJsonl, 64);
  // As text: one document.
  ReadToEnd(neardup::internal::MakeStringStream(bytes), neardup::InputFormat::kText, 1ull << 31);
  // Wrapped in gzip, then cut at a point chosen by the input: complete and
  // truncated members, plus the input's own bytes as a second "member".
  std::string gz = GzipMember(data, size);
  if (!gz.empty()) {
    size_t cut = size > 1 ? gz.size() - data[1] % (gz.size() / 2 + 1) : gz.size();
    ReadToEnd(neardup::internal::MakeStringStream(gz.substr(0, cut)), neardup::InputFormat::kJsonl,
              1ull << 31);
    ReadToEnd(neardup::internal::MakeStringStream(gz + bytes), neardup::InputFormat::kJsonl,
              1ull << 31);
    CompareDecoders(gz.substr(0, cut));
    CompareDecoders(gz + bytes);
    CompareDecoders(gz + gz);
  }
  return 0;
}
