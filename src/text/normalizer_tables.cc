#include "text/normalizer_tables.h"

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

bool MayComposeAsSecond(utf8proc_int32_t cp) {
  // Hangul vowel and trailing jamo compose (algorithmically) with what is
  // before them; leading jamo only with what follows.
  if ((cp >= 0x1160 && cp <= 0x11FF) || (cp >= 0xD7B0 && cp <= 0xD7FF)) return true;
  const utf8proc_property_t* property = utf8proc_get_property(cp);
  return property->comb_index != UINT16_MAX && (property->comb_index & 0x8000) != 0;
}

bool IsStarterThatComposesWithNothingBefore(utf8proc_int32_t cp) {
  return utf8proc_get_property(cp)->combining_class == 0 && !MayComposeAsSecond(cp);
}

ContextFreeTable BuildContextFreeTable(utf8proc_option_t flags) {
  ContextFreeTable table;
  table.entries.assign(0x10000, 0);
  table.block[0].entries.assign(0x10000, 0);
  table.block[1].entries.assign(0x10000, 0);
  // The decomposition normalization starts from (utf8proc decomposes only
  // with COMPOSE or DECOMPOSE set).
  const auto decompose_flags = static_cast<utf8proc_option_t>(
      (flags & UTF8PROC_COMPOSE) != 0 ? (flags & ~UTF8PROC_COMPOSE) | UTF8PROC_DECOMPOSE : flags);
  utf8proc_int32_t buffer[32];
  std::string output;
  for (utf8proc_int32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (!IsStarterThatComposesWithNothingBefore(cp)) continue;
    int boundclass = UTF8PROC_BOUNDCLASS_START;
    utf8proc_ssize_t n = utf8proc_decompose_char(cp, buffer, 32, decompose_flags, &boundclass);
    if (n < 1 || n > 32 || !IsStarterThatComposesWithNothingBefore(buffer[0])) continue;
    boundclass = UTF8PROC_BOUNDCLASS_START;
    n = utf8proc_decompose_char(cp, buffer, 32, flags, &boundclass);
    if (n < 1 || n > 32) continue;
    n = utf8proc_normalize_utf32(buffer, n, flags);
    if (n < 1) continue;
    output.clear();
    bool punctuation = false;
    for (utf8proc_ssize_t i = 0; i < n; ++i) {
      AppendUtf8(static_cast<char32_t>(buffer[i]), &output);
      punctuation |= IsPunctuation(static_cast<char32_t>(buffer[i]));
    }
    if (output.size() > 15) continue;
    table.entries[cp] = kContextFree | (punctuation ? kOutputHasPunctuation : 0) |
                        static_cast<uint32_t>(output.size()) << kLengthShift |
                        static_cast<uint32_t>(table.bytes.size());
    table.bytes += output;
    for (int drop = 0; drop < 2; ++drop) {
      std::string kept;
      for (utf8proc_ssize_t i = 0; i < n; ++i) {
        if (drop == 0 || !IsPunctuation(static_cast<char32_t>(buffer[i]))) {
          AppendUtf8(static_cast<char32_t>(buffer[i]), &kept);
        }
      }
      const size_t sequence_length = cp < 0x800 ? 2 : 3;
      if (kept.size() > sequence_length) continue;
      uint32_t entry = cp < 0x800 ? kBlockValid2 : kBlockValid3;
      for (size_t i = 0; i < kept.size(); ++i) {
        entry |= uint32_t{static_cast<unsigned char>(kept[i])} << (8 * i);
        entry |= kBlockLength1 << i;
      }
      table.block[drop].entries[cp] = entry;
    }
  }
  // An invalid subpart becomes U+FFFD: the code point loop takes it as a
  // split point (a starter that composes with nothing before it).
  NEARDUP_CHECK(table.entries[kReplacementCharacter] & kContextFree);
  FillIdentityBitmaps(&table.block[0]);
  FillIdentityBitmaps(&table.block[1]);
  return table;
}

}  // namespace

utf8proc_option_t Utf8procOptions(const NormalizationOptions& options) {
  int flags = UTF8PROC_STABLE;
  if (options.nfkc) flags |= UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_IGNORE;
  if (options.case_fold) flags |= UTF8PROC_CASEFOLD;
  return static_cast<utf8proc_option_t>(flags);
}

// The table for the options' (nfkc, case_fold), built once per process on
// first use (about 64K utf8proc lookups).
const ContextFreeTable& ContextFreeTableFor(const NormalizationOptions& options) {
  // One static per branch: only the tables in use are built.
  if (options.nfkc && options.case_fold) {
    static const ContextFreeTable both = BuildContextFreeTable(Utf8procOptions({true, true}));
    return both;
  }
  if (options.nfkc) {
    static const ContextFreeTable nfkc = BuildContextFreeTable(Utf8procOptions({true, false}));
    return nfkc;
  }
  static const ContextFreeTable fold = BuildContextFreeTable(Utf8procOptions({false, true}));
  return fold;
}

}  // namespace neardup::internal
