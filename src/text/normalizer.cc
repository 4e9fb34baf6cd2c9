#include "text/normalizer.h"

#include <utf8proc.h>

#include <array>
#include <vector>

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

// Per-thread scratch, kept between calls so steady-state normalization does
// not allocate. Buffers grown past kMaxRetainedCodePoints by one huge document
// are released afterwards.
constexpr size_t kMaxRetainedCodePoints = size_t{1} << 22;

struct Scratch {
  std::string sanitized;
  std::vector<utf8proc_int32_t> code_points;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The ASCII path: `fold` maps A-Z to a-z, `drop_punctuation` deletes ASCII P*.
void NormalizeAscii(std::string_view text, bool fold, bool drop_punctuation, std::string* out) {
  if (!fold && !drop_punctuation) {
    out->assign(text);
    return;
  }
  out->resize(text.size());
  char* dst = out->data();
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (drop_punctuation && (kAsciiClass[c] & kAsciiPunctuationBit)) continue;
    *dst++ = (fold && c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : ch;
  }
  out->resize(static_cast<size_t>(dst - out->data()));
}

// Copies valid UTF-8 `text` to *out without its punctuation.
void DropPunctuation(std::string_view text, std::string* out) {
  out->clear();
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    DecodedCodePoint d = DecodeUtf8(p, end);
    if (!IsPunctuation(d.code_point)) out->append(p, d.length);
    p += d.length;
  }
}

utf8proc_option_t Utf8procOptions(const NormalizationOptions& options) {
  int flags = UTF8PROC_STABLE;
  if (options.nfkc) flags |= UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_IGNORE;
  if (options.case_fold) flags |= UTF8PROC_CASEFOLD;
  return static_cast<utf8proc_option_t>(flags);
}

}  // namespace

void Normalize(std::string_view text, const NormalizationOptions& options, std::string* out,
               NormalizeStats* stats) {
  if (IsAscii(text)) {
    NormalizeAscii(text, options.case_fold, options.remove_punctuation, out);
    return;
  }
  Scratch& scratch = ThreadScratch();
  std::string_view valid = text;
  if (!IsValidUtf8(text)) {
    uint64_t replaced = SanitizeUtf8(text, &scratch.sanitized);
    if (stats != nullptr) stats->invalid_utf8_sequences += replaced;
    valid = scratch.sanitized;
  }
  if (!options.nfkc && !options.case_fold) {
    if (options.remove_punctuation) {
      DropPunctuation(valid, out);
    } else {
      out->assign(valid);
    }
    return;
  }

  const utf8proc_option_t flags = Utf8procOptions(options);
  std::vector<utf8proc_int32_t>& buffer = scratch.code_points;
  // A first guess of one code point per byte; decompositions can expand
  // further (U+FDFA is 18 code points under NFKC), then we retry at the size
  // utf8proc asks for.
  if (buffer.size() < valid.size()) buffer.resize(valid.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(valid.data());
  const auto length = static_cast<utf8proc_ssize_t>(valid.size());
  utf8proc_ssize_t count;
  while (true) {
    count = utf8proc_decompose(bytes, length, buffer.data(),
                               static_cast<utf8proc_ssize_t>(buffer.size()), flags);
    // Invalid UTF-8 was repaired above and the flags are a fixed valid set.
    NEARDUP_CHECK(count >= 0) << "utf8proc_decompose: " << utf8proc_errmsg(count);
    if (static_cast<size_t>(count) <= buffer.size()) break;
    buffer.resize(static_cast<size_t>(count));
  }
  count = utf8proc_normalize_utf32(buffer.data(), count, flags);
  NEARDUP_CHECK(count >= 0) << "utf8proc_normalize_utf32: " << utf8proc_errmsg(count);

  out->resize(static_cast<size_t>(count) * 4);
  auto* dst = reinterpret_cast<utf8proc_uint8_t*>(out->data());
  for (utf8proc_ssize_t i = 0; i < count; ++i) {
    const utf8proc_int32_t cp = buffer[i];
    if (options.remove_punctuation && IsPunctuation(static_cast<char32_t>(cp))) continue;
    dst += utf8proc_encode_char(cp, dst);
  }
  out->resize(static_cast<size_t>(dst - reinterpret_cast<utf8proc_uint8_t*>(out->data())));

  if (buffer.size() > kMaxRetainedCodePoints) std::vector<utf8proc_int32_t>().swap(buffer);
  if (scratch.sanitized.capacity() > kMaxRetainedCodePoints) std::string().swap(scratch.sanitized);
}

}  // namespace neardup::internal
