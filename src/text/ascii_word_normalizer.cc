#include "text/ascii_word_normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "text/utf8.h"

namespace neardup::internal {
namespace {

constexpr char32_t kCapitalIWithDotAbove = 0x0130;

bool IsAsciiWordChar(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char32_t AsciiLower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

// Appends the ASCII-word form of one lower-cased character.
void AppendFiltered(char32_t lower, std::string* out) {
  if (IsAsciiWordChar(lower)) {
    out->push_back(static_cast<char>(lower));
  } else if (out->empty() || out->back() != ' ') {
    out->push_back(' ');
  }
}

// Steps 3 and 4 over valid NFC UTF-8.
void LowerAndFilter(std::string_view nfc, std::string* out) {
  const char* p = nfc.data();
  const char* const end = p + nfc.size();
  while (p < end) {
    const DecodedCodePoint d = DecodeUtf8(p, end);
    p += d.length;
    const char32_t c = d.code_point;
    if (c < 0x80) {
      AppendFiltered(AsciiLower(c), out);
    } else if (c == kCapitalIWithDotAbove) {
      // The one unconditional multi-character lower case (SpecialCasing.txt)
      // that starts with an ASCII letter: "i" + U+0307 (not a word char).
      AppendFiltered('i', out);
      AppendFiltered(0x0307, out);
    } else {
      AppendFiltered(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))),
                     out);
    }
  }
}

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* p) const { std::free(p); }
};

}  // namespace

void NormalizeAsciiWord(std::string_view text, std::string* out, NormalizeStats* stats) {
  out->clear();
  if (IsAscii(text)) {  // ASCII is valid and NFC already
    out->reserve(text.size());
    for (const char c : text) AppendFiltered(AsciiLower(static_cast<unsigned char>(c)), out);
    return;
  }
  std::string repaired;
  const uint64_t invalid = SanitizeUtf8(text, &repaired);
  if (stats != nullptr) stats->invalid_utf8_sequences += invalid;
  utf8proc_uint8_t* nfc_bytes = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(repaired.data()),
                   static_cast<utf8proc_ssize_t>(repaired.size()), &nfc_bytes,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::unique_ptr<utf8proc_uint8_t, FreeDeleter> owner(nfc_bytes);
  // utf8proc fails only on invalid input or out of memory; the input was
  // repaired, so without memory the text is filtered as it is (each
  // character then still maps to a word character or a space).
  const std::string_view nfc =
      length >= 0
          ? std::string_view(reinterpret_cast<const char*>(nfc_bytes), static_cast<size_t>(length))
          : std::string_view(repaired);
  out->reserve(nfc.size());
  LowerAndFilter(nfc, out);
}

}  // namespace neardup::internal
