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

// Appends the ASCII path's form of ASCII `text`: `fold` maps A-Z to a-z,
// `drop_punctuation` deletes ASCII P*.
void AppendAscii(std::string_view text, bool fold, bool drop_punctuation, std::string* out) {
  if (!fold && !drop_punctuation) {
    out->append(text);
    return;
  }
  const size_t old_size = out->size();
  out->resize(old_size + text.size());
  char* const begin = out->data() + old_size;
  char* dst = begin;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (drop_punctuation && (kAsciiClass[c] & kAsciiPunctuationBit)) continue;
    *dst++ = (fold && c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : ch;
  }
  out->resize(old_size + static_cast<size_t>(dst - begin));
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

// Appends utf8proc's normalization of valid UTF-8 `text`.
void AppendUtf8proc(std::string_view text, utf8proc_option_t flags, bool drop_punctuation,
                    std::vector<utf8proc_int32_t>* buffer, std::string* out) {
  // A first guess of one code point per byte; decompositions can expand
  // further (U+FDFA is 18 code points under NFKC), then we retry at the size
  // utf8proc asks for.
  if (buffer->size() < text.size()) buffer->resize(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto length = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t count;
  while (true) {
    count = utf8proc_decompose(bytes, length, buffer->data(),
                               static_cast<utf8proc_ssize_t>(buffer->size()), flags);
    // Invalid UTF-8 was repaired before and the flags are a fixed valid set.
    NEARDUP_CHECK(count >= 0) << "utf8proc_decompose: " << utf8proc_errmsg(count);
    if (static_cast<size_t>(count) <= buffer->size()) break;
    buffer->resize(static_cast<size_t>(count));
  }
  count = utf8proc_normalize_utf32(buffer->data(), count, flags);
  NEARDUP_CHECK(count >= 0) << "utf8proc_normalize_utf32: " << utf8proc_errmsg(count);

  const size_t old_size = out->size();
  out->resize(old_size + static_cast<size_t>(count) * 4);
  auto* const begin = reinterpret_cast<utf8proc_uint8_t*>(out->data() + old_size);
  auto* dst = begin;
  for (utf8proc_ssize_t i = 0; i < count; ++i) {
    const utf8proc_int32_t cp = (*buffer)[i];
    if (drop_punctuation && IsPunctuation(static_cast<char32_t>(cp))) continue;
    dst += utf8proc_encode_char(cp, dst);
  }
  out->resize(old_size + static_cast<size_t>(dst - begin));
}

}  // namespace

void Normalize(std::string_view text, const NormalizationOptions& options, std::string* out,
               NormalizeStats* stats) {
  out->clear();
  if (IsAscii(text)) {
    AppendAscii(text, options.case_fold, options.remove_punctuation, out);
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

  // Mostly-ASCII text: only the non-ASCII runs go through utf8proc, each with
  // the ASCII character before it (a base that a combining mark may compose
  // with). Splitting there is exact: every step is per code point except
  // canonical reordering and composition, which never cross the start of an
  // ASCII character (ASCII characters are starters that compose with nothing
  // before them), nor an ASCII character with an ASCII character before it.
  const utf8proc_option_t flags = Utf8procOptions(options);
  size_t pos = 0;
  while (pos < valid.size()) {
    const size_t non_ascii = FindFirstNonAscii(valid, pos);
    const size_t ascii_end =
        (non_ascii < valid.size() && non_ascii > pos) ? non_ascii - 1 : non_ascii;
    AppendAscii(valid.substr(pos, ascii_end - pos), options.case_fold, options.remove_punctuation,
                out);
    if (non_ascii == valid.size()) break;
    size_t next_ascii = non_ascii;
    while (next_ascii < valid.size() && static_cast<unsigned char>(valid[next_ascii]) >= 0x80) {
      ++next_ascii;
    }
    AppendUtf8proc(valid.substr(ascii_end, next_ascii - ascii_end), flags,
                   options.remove_punctuation, &scratch.code_points, out);
    pos = next_ascii;
  }

  if (scratch.code_points.size() > kMaxRetainedCodePoints) {
    std::vector<utf8proc_int32_t>().swap(scratch.code_points);
  }
  if (scratch.sanitized.capacity() > kMaxRetainedCodePoints) std::string().swap(scratch.sanitized);
}

}  // namespace neardup::internal
