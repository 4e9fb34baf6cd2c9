#include "sink/copy_encoder.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "neardup/check.h"
#include "text/utf8.h"

namespace neardup::internal {

Result<std::string_view> StorableText(std::string_view value, std::string_view what,
                                      std::string* scratch) {
  if (value.find('\0') != std::string_view::npos) {
    return InvalidArgumentError(std::string(what) +
                                " holds a NUL byte, which PostgreSQL text cannot store");
  }
  if (IsValidUtf8(value)) return value;
  SanitizeUtf8(value, scratch);
  return std::string_view(*scratch);
}

CopyEncoder::CopyEncoder(CopyFormat format) : format_(format) {
  if (format_ == CopyFormat::kBinary) {
    // Signature, then 32-bit flags (no OIDs) and header extension length.
    buffer_.append("PGCOPY\n\xff\r\n\0", 11);
    AppendBigEndian(0, 4);
    AppendBigEndian(0, 4);
  }
}

std::string CopyEncoder::CopyOptions(bool freeze) const {
  std::string options = format_ == CopyFormat::kBinary ? "(FORMAT binary" : "(FORMAT text";
  return options + (freeze ? ", FREEZE)" : ")");
}

void CopyEncoder::AppendBigEndian(uint64_t value, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
    buffer_.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void CopyEncoder::BeginRow(int num_fields) {
  NEARDUP_DCHECK(num_fields > 0 && num_fields < 1600);
  if (format_ == CopyFormat::kBinary) AppendBigEndian(static_cast<uint64_t>(num_fields), 2);
  first_field_ = true;
}

void CopyEncoder::Separate() {
  if (!first_field_) buffer_.push_back('\t');
  first_field_ = false;
}

void CopyEncoder::AddText(std::string_view value) {
  if (format_ == CopyFormat::kBinary) {
    NEARDUP_CHECK(value.size() < (uint64_t{1} << 31)) << "a COPY field is at most 2 GB";
    AppendBigEndian(value.size(), 4);
    buffer_.append(value);
    return;
  }
  Separate();
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    const char* escape = nullptr;
    switch (c) {
      case '\\':
        escape = "\\\\";
        break;
      case '\t':
        escape = "\\t";
        break;
      case '\n':
        escape = "\\n";
        break;
      case '\r':
        escape = "\\r";
        break;
      default:
        continue;
    }
    buffer_.append(value.substr(plain, i - plain));
    buffer_.append(escape);
    plain = i + 1;
  }
  buffer_.append(value.substr(plain));
}

void CopyEncoder::AddFloat8(double value) {
  if (format_ == CopyFormat::kBinary) {
    AppendBigEndian(8, 4);
    AppendBigEndian(std::bit_cast<uint64_t>(value), 8);
    return;
  }
  Separate();
  char text[32];
  int n = std::snprintf(text, sizeof(text), "%.17g", value);
  buffer_.append(text, static_cast<size_t>(n));
}

void CopyEncoder::AddInt4(int32_t value) {
  if (format_ == CopyFormat::kBinary) {
    AppendBigEndian(4, 4);
    AppendBigEndian(static_cast<uint32_t>(value), 4);
    return;
  }
  Separate();
  buffer_.append(std::to_string(value));
}

void CopyEncoder::AddInt8(int64_t value) {
  if (format_ == CopyFormat::kBinary) {
    AppendBigEndian(8, 4);
    AppendBigEndian(static_cast<uint64_t>(value), 8);
    return;
  }
  Separate();
  buffer_.append(std::to_string(value));
}

void CopyEncoder::AddNull() {
  if (format_ == CopyFormat::kBinary) {
    AppendBigEndian(0xffffffffu, 4);
    return;
  }
  Separate();
  buffer_.append("\\N");
}

void CopyEncoder::EndRow() {
  if (format_ == CopyFormat::kText) buffer_.push_back('\n');
}

void CopyEncoder::Finish() {
  if (format_ == CopyFormat::kBinary) AppendBigEndian(0xffff, 2);
}

}  // namespace neardup::internal
