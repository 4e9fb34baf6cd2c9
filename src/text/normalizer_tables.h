// The normalizer's tables (text/normalizer.h): utf8proc's flags for the
// options, and per (nfkc, case_fold) the context-free code points with their
// outputs, for the code point loop (normalizer.cc) and the block kernel
// (normalizer_block.h).
// Cost: built once per process and (nfkc, case_fold) on first use, a
// utf8proc property lookup per BMP code point and its calls for those that
// change (a few ms), under 1 MB. Thread safety: the tables are
// immutable once built (function-local statics).
#ifndef NEARDUP_TEXT_NORMALIZER_TABLES_H_
#define NEARDUP_TEXT_NORMALIZER_TABLES_H_

#include <utf8proc.h>

#include <cstdint>
#include <string>
#include <vector>

#include "neardup/recipe.h"
#include "text/normalizer_block.h"

namespace neardup::internal {

// utf8proc_map's flags for the options (normalizer.h).
utf8proc_option_t Utf8procOptions(const NormalizationOptions& options);

// Context-free code points. A BMP code point X is context-free for a choice
// of (nfkc, case_fold) when
//   - X has canonical combining class 0 and is not the second code point of
//     any canonical composition (utf8proc's comb_index marks those with bit
//     15; Hangul jamo, composed algorithmically, are excluded by range),
//   - the decomposition of X under the options (compatibility, case fold,
//     ignorables removed; not composed) is not empty and starts with such a
//     code point, and
//   - the whole normalization of X alone is at most 15 bytes.
// Then no reordering or composition crosses the start of X (as for an ASCII
// character), so the text splits exactly before X; and when the code point
// after X is context-free too (or ASCII), X alone is a unit whose output is
// the table's bytes. Everything else still goes through utf8proc, with the
// context-free code point before it as its base.
struct ContextFreeTable {
  // entries[cp]: kContextFree | punctuation bit | length << 26 | offset of
  // the output bytes in `bytes`; 0 = not context-free.
  std::vector<uint32_t> entries;
  std::string bytes;
  // The block tables (text/normalizer_block.h) of the context-free code
  // points whose output fits in their own bytes: [0] keeps punctuation, [1]
  // removes it (remove_punctuation).
  BlockTable block[2];
};
inline constexpr uint32_t kContextFree = uint32_t{1} << 31;
inline constexpr uint32_t kOutputHasPunctuation = uint32_t{1} << 30;
inline constexpr int kLengthShift = 26;
inline constexpr uint32_t kOffsetMask = (uint32_t{1} << kLengthShift) - 1;

// How BuildContextFreeTable asks utf8proc. kShortcut: code points whose
// properties show that utf8proc maps them to themselves take no utf8proc
// call beyond that lookup (the same table); kUtf8procEveryCodePoint: every
// code point through utf8proc's calls (the tests' reference). The shortcut
// reads utf8proc's property fields as utf8proc 2.x defines them (UINT16_MAX
// in decomp_seqindex / casefold_seqindex means "none"; `ignorable`) and
// assumes utf8proc_decompose_char's order (Hangul, ignorable, case folding,
// decomposition). Only NormalizerTablesTest.ShortcutBuildsTheSameTables,
// against the utf8proc linked at build time, guards this: run it when
// utf8proc changes.
enum class TableBuild { kShortcut, kUtf8procEveryCodePoint };

// The table for utf8proc's `flags` (Utf8procOptions), built as `build` says.
ContextFreeTable BuildContextFreeTable(utf8proc_option_t flags, TableBuild build);

// The table for the options' (nfkc, case_fold), built once per process on
// first use (a property lookup per BMP code point, utf8proc's calls for
// those that change).
const ContextFreeTable& ContextFreeTableFor(const NormalizationOptions& options);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_NORMALIZER_TABLES_H_
