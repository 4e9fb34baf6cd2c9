#include "text/normalizer_tables.h"

#include <cstring>

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/utf8.h"

namespace neardup::internal {
namespace {

// `property` is utf8proc_get_property(cp), looked up once by the caller.
bool MayComposeAsSecond(utf8proc_int32_t cp, const utf8proc_property_t* property) {
  // Hangul vowel and trailing jamo compose (algorithmically) with what is
  // before them; leading jamo only with what follows.
  if ((cp >= 0x1160 && cp <= 0x11FF) || (cp >= 0xD7B0 && cp <= 0xD7FF)) return true;
  return property->comb_index != UINT16_MAX && (property->comb_index & 0x8000) != 0;
}

bool IsStarterThatComposesWithNothingBefore(utf8proc_int32_t cp,
                                            const utf8proc_property_t* property) {
  return property->combining_class == 0 && !MayComposeAsSecond(cp, property);
}

bool IsStarterThatComposesWithNothingBefore(utf8proc_int32_t cp) {
  return IsStarterThatComposesWithNothingBefore(cp, utf8proc_get_property(cp));
}

// The flags the shortcut below knows what utf8proc_decompose_char does with.
constexpr int kShortcutFlags = UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE |
                               UTF8PROC_DECOMPOSE | UTF8PROC_IGNORE | UTF8PROC_CASEFOLD;

// Whether utf8proc maps `cp` to itself under `flags`, as its properties say
// without a call. utf8proc_decompose_char, after Hangul syllables, looks in
// this order at: ignorable (with IGNORE: removed), case folding (with
// CASEFOLD: casefold_seqindex != UINT16_MAX) and decomposition (with COMPOSE
// or DECOMPOSE: decomp_seqindex != UINT16_MAX, taken even without COMPAT, so
// the check is conservative); a code point with none of them is written
// alone, and utf8proc_normalize_utf32 of one code point composes nothing. A
// Hangul syllable, decomposed by rule and composed again, is itself either
// way, so it needs no exclusion. A code point this does not vouch for takes
// utf8proc's calls; the table is the same either way
// (NormalizerTablesTest.ShortcutBuildsTheSameTables, which is the gate when
// utf8proc changes). What it saves: docs/BENCHMARKS.md, "Session 15, scan
// and normalise".
bool MapsToItself(const utf8proc_property_t* property, utf8proc_option_t flags) {
  // Utf8procOptions sets no other flag; this guards other callers.
  if ((flags & ~kShortcutFlags) != 0) return false;
  if ((flags & UTF8PROC_IGNORE) != 0 && property->ignorable) return false;
  if ((flags & UTF8PROC_CASEFOLD) != 0 && property->casefold_seqindex != UINT16_MAX) return false;
  if ((flags & (UTF8PROC_COMPOSE | UTF8PROC_DECOMPOSE)) != 0 &&
      property->decomp_seqindex != UINT16_MAX) {
    return false;
  }
  return true;
}

// The entries of a context-free code point whose normalization is
// `code_points`, appended to `table` (no string per code point: this runs
// for most of the BMP).
void AddEntries(utf8proc_int32_t cp, const utf8proc_int32_t* code_points, utf8proc_ssize_t n,
                ContextFreeTable* table) {
  // The output, and without its punctuation (up to 32 code points of 4 bytes).
  char output[128];
  char kept[128];
  size_t output_size = 0;
  size_t kept_size = 0;
  bool punctuation = false;
  for (utf8proc_ssize_t i = 0; i < n; ++i) {
    const auto c = static_cast<char32_t>(code_points[i]);
    const size_t length = WriteUtf8(c, output + output_size);
    if (IsPunctuation(c)) {
      punctuation = true;
    } else {
      std::memcpy(kept + kept_size, output + output_size, length);
      kept_size += length;
    }
    output_size += length;
  }
  if (output_size > 15) return;
  table->entries[cp] = kContextFree | (punctuation ? kOutputHasPunctuation : 0) |
                       static_cast<uint32_t>(output_size) << kLengthShift |
                       static_cast<uint32_t>(table->bytes.size());
  table->bytes.append(output, output_size);
  const size_t sequence_length = cp < 0x800 ? 2 : 3;
  for (int drop = 0; drop < 2; ++drop) {
    const char* bytes = drop == 0 ? output : kept;
    const size_t size = drop == 0 ? output_size : kept_size;
    if (size > sequence_length) continue;
    uint32_t entry = cp < 0x800 ? kBlockValid2 : kBlockValid3;
    for (size_t i = 0; i < size; ++i) {
      entry |= uint32_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
      entry |= kBlockLength1 << i;
    }
    table->block[drop].entries[cp] = entry;
  }
}

}  // namespace

ContextFreeTable BuildContextFreeTable(utf8proc_option_t flags, TableBuild build) {
  ContextFreeTable table;
  table.entries.assign(0x10000, 0);
  table.block[0].entries.assign(0x10000, 0);
  table.block[1].entries.assign(0x10000, 0);
  // The outputs take 185,664-186,075 bytes for the three option sets
  // (62,256-62,397 entries, utf8proc 2.8.0): this fits with ~5 % to spare and
  // keeps the table (786,432 bytes of entries + these) under 1 MB.
  table.bytes.reserve(3 * 0x10000);
  // The decomposition normalization starts from (utf8proc decomposes only
  // with COMPOSE or DECOMPOSE set).
  const auto decompose_flags = static_cast<utf8proc_option_t>(
      (flags & UTF8PROC_COMPOSE) != 0 ? (flags & ~UTF8PROC_COMPOSE) | UTF8PROC_DECOMPOSE : flags);
  utf8proc_int32_t buffer[32];
  for (utf8proc_int32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const utf8proc_property_t* property = utf8proc_get_property(cp);
    if (!IsStarterThatComposesWithNothingBefore(cp, property)) continue;
    // The decomposition is the code point itself, a starter as just seen.
    if (build == TableBuild::kShortcut && MapsToItself(property, flags)) {
      AddEntries(cp, &cp, 1, &table);
      continue;
    }
    int boundclass = UTF8PROC_BOUNDCLASS_START;
    utf8proc_ssize_t n = utf8proc_decompose_char(cp, buffer, 32, decompose_flags, &boundclass);
    if (n < 1 || n > 32 || !IsStarterThatComposesWithNothingBefore(buffer[0])) continue;
    boundclass = UTF8PROC_BOUNDCLASS_START;
    n = utf8proc_decompose_char(cp, buffer, 32, flags, &boundclass);
    if (n < 1 || n > 32) continue;
    n = utf8proc_normalize_utf32(buffer, n, flags);
    if (n < 1) continue;
    AddEntries(cp, buffer, n, &table);
  }
  // An invalid subpart becomes U+FFFD: the code point loop takes it as a
  // split point (a starter that composes with nothing before it).
  NEARDUP_CHECK(table.entries[kReplacementCharacter] & kContextFree);
  FillIdentityBitmaps(&table.block[0]);
  FillIdentityBitmaps(&table.block[1]);
  return table;
}

utf8proc_option_t Utf8procOptions(const NormalizationOptions& options) {
  int flags = UTF8PROC_STABLE;
  if (options.nfkc) flags |= UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_IGNORE;
  if (options.case_fold) flags |= UTF8PROC_CASEFOLD;
  return static_cast<utf8proc_option_t>(flags);
}

// The table for the options' (nfkc, case_fold), built once per process on
// first use (a property lookup per BMP code point, utf8proc's calls for
// those that change).
const ContextFreeTable& ContextFreeTableFor(const NormalizationOptions& options) {
  // One static per branch: only the tables in use are built.
  if (options.nfkc && options.case_fold) {
    static const ContextFreeTable both =
        BuildContextFreeTable(Utf8procOptions({true, true}), TableBuild::kShortcut);
    return both;
  }
  if (options.nfkc) {
    static const ContextFreeTable nfkc =
        BuildContextFreeTable(Utf8procOptions({true, false}), TableBuild::kShortcut);
    return nfkc;
  }
  static const ContextFreeTable fold =
      BuildContextFreeTable(Utf8procOptions({false, true}), TableBuild::kShortcut);
  return fold;
}

}  // namespace neardup::internal
