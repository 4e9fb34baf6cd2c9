#include "text/token_offsets.h"

#include <limits>

#include "hash/feature_hash.h"
#include "text/char_class.h"
#include "text/normalizer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

// Appends `normalized` to *out, every byte mapped to [begin, end).
void AppendMapped(std::string_view normalized, uint32_t begin, uint32_t end, NormalizedText* out) {
  out->text.append(normalized);
  out->source_begin.insert(out->source_begin.end(), normalized.size(), begin);
  out->source_end.insert(out->source_end.end(), normalized.size(), end);
}

// Appends the normalization of the ASCII run text[begin, end), byte by byte
// (the ASCII path maps each byte to at most one byte: folding or deletion).
Status AppendAsciiRun(std::string_view text, size_t begin, size_t end,
                      const NormalizationOptions& options, std::string* scratch,
                      NormalizedText* out) {
  const std::string_view run = text.substr(begin, end - begin);
  Normalize(run, options, scratch, nullptr);
  size_t produced = 0;
  for (size_t i = begin; i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (options.remove_punctuation && (kAsciiClass[c] & kAsciiPunctuationBit)) continue;
    if (produced >= scratch->size()) break;
    out->text.push_back((*scratch)[produced++]);
    out->source_begin.push_back(static_cast<uint32_t>(i));
    out->source_end.push_back(static_cast<uint32_t>(i + 1));
  }
  if (produced != scratch->size()) {
    return InternalError("ASCII normalization at byte " + std::to_string(begin) +
                         " did not map byte for byte");
  }
  return Status::Ok();
}

// Appends the normalization of text[begin, end): an ASCII character (or
// none) followed by a run of non-ASCII bytes, the unit Normalize hands to
// utf8proc. Per code point when that gives the same bytes, else as a whole.
void AppendNonAsciiPiece(std::string_view text, size_t begin, size_t end,
                         const NormalizationOptions& options, std::string* whole, std::string* part,
                         std::string* joined, NormalizedText* out) {
  Normalize(text.substr(begin, end - begin), options, whole, nullptr);
  joined->clear();
  const size_t mark = out->text.size();
  const char* const limit = text.data() + end;
  for (size_t pos = begin; pos < end;) {
    const uint32_t length = DecodeUtf8(text.data() + pos, limit).length;
    Normalize(text.substr(pos, length), options, part, nullptr);
    joined->append(*part);
    AppendMapped(*part, static_cast<uint32_t>(pos), static_cast<uint32_t>(pos + length), out);
    pos += length;
  }
  if (*joined == *whole) return;
  out->text.resize(mark);
  out->source_begin.resize(mark);
  out->source_end.resize(mark);
  AppendMapped(*whole, static_cast<uint32_t>(begin), static_cast<uint32_t>(end), out);
}

}  // namespace

Status NormalizeWithOffsets(std::string_view text, const NormalizationOptions& options,
                            NormalizedText* out) {
  out->text.clear();
  out->source_begin.clear();
  out->source_end.clear();
  if (text.size() >= std::numeric_limits<uint32_t>::max()) {
    return InvalidArgumentError("text of " + std::to_string(text.size()) +
                                " bytes exceeds the 4 GiB - 1 limit of passage offsets");
  }
  std::string whole, part, joined;
  // The pieces Normalize splits at: ASCII runs, and each run of non-ASCII
  // bytes together with the ASCII character before it. Invalid UTF-8 never
  // spans an ASCII byte, so repairing per piece equals repairing the whole.
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t non_ascii = FindFirstNonAscii(text, pos);
    const size_t ascii_end =
        (non_ascii < text.size() && non_ascii > pos) ? non_ascii - 1 : non_ascii;
    if (ascii_end > pos) {
      NEARDUP_RETURN_IF_ERROR(AppendAsciiRun(text, pos, ascii_end, options, &whole, out));
    }
    if (non_ascii == text.size()) break;
    size_t next_ascii = non_ascii;
    while (next_ascii < text.size() && static_cast<unsigned char>(text[next_ascii]) >= 0x80) {
      ++next_ascii;
    }
    AppendNonAsciiPiece(text, ascii_end, next_ascii, options, &whole, &part, &joined, out);
    pos = next_ascii;
  }
  Normalize(text, options, &whole, nullptr);
  if (whole != out->text) {
    return InternalError("normalization by pieces differs from Normalize for a text of " +
                         std::to_string(text.size()) + " bytes");
  }
  return Status::Ok();
}

Result<TokenSpanner> TokenSpanner::Create(const Recipe& recipe) {
  NEARDUP_ASSIGN_OR_RETURN(TokenHasher hasher, TokenHasher::Create(recipe));
  return TokenSpanner(recipe, std::move(hasher));
}

Result<std::vector<SourceTokenSpan>> TokenSpanner::Tokens(std::string_view text) const {
  NormalizedText normalized;
  NEARDUP_RETURN_IF_ERROR(NormalizeWithOffsets(text, normalization_, &normalized));
  const StopwordSet* stopwords = hasher_.stopwords();
  std::vector<SourceTokenSpan> tokens;
  const char* const base = normalized.text.data();
  uint32_t previous_end = 0;
  ForEachToken(tokenizer_, segmentation_, normalized.text, [&](std::string_view token) {
    if (stopwords != nullptr && stopwords->Contains(token)) return;
    SourceTokenSpan span;
    span.hash = HashFeatureBytes(hash_, token, seed_);
    if (token.data() == kCharSpaceToken.data()) {
      span.begin = span.end = previous_end;
    } else {
      const auto first = static_cast<size_t>(token.data() - base);
      span.begin = normalized.source_begin[first];
      span.end = normalized.source_end[first + token.size() - 1];
    }
    previous_end = span.end;
    tokens.push_back(span);
  });
  return tokens;
}

}  // namespace neardup::internal
