// Normalize: the first stage of a recipe. Turns arbitrary bytes into valid,
// normalized UTF-8 so that texts a reader considers equal hash equally.
//
// Steps, in order:
// 1. Repair: each maximal invalid UTF-8 subpart becomes U+FFFD and is counted
//    (text/utf8.h). Never fails, never aborts.
// 2. Unicode, by the three options (every combination is supported), through
//    utf8proc (Unicode 13 in Debian 12's utf8proc 2.6):
//      nfkc:      NFKC (compatibility decomposition, canonical composition),
//                 and removal of Default_Ignorable_Code_Point characters (soft
//                 hyphen, zero-width space and joiners, variation selectors),
//                 as Unicode's NFKC_Casefold does: they are invisible, and
//                 left in they would split or alter words ("co\u00ADoperate").
//      case_fold: Unicode full case folding (CaseFolding.txt, C + F):
//                 "Straße" -> "strasse", final sigma -> sigma.
//      both:      utf8proc_map(STABLE | COMPAT | COMPOSE | CASEFOLD | IGNORE),
//                 i.e. utf8proc_NFKC_Casefold.
// 3. remove_punctuation: deletes every code point of general category P*
//    (after step 2, so compatibility forms such as U+FF01 are caught).
//
// ASCII fast path: ASCII is never passed to utf8proc (NFKC leaves ASCII
// unchanged and no ASCII character is default-ignorable); folding and
// punctuation use a byte table. In mixed text only the non-ASCII runs (each
// with the ASCII character before it, a possible base for a combining mark) go
// through utf8proc; normalizer.cc explains why splitting there is exact.
// normalizer_test.cc proves both equal to utf8proc on the whole text: random
// ASCII and random multi-script text under every option combination.
//
// Text with bytes >= 0x80 is validated (and repaired) as it is decoded,
// never in a separate pass. Under nfkc or case_fold it splits into units
// (normalizer.cc): each ASCII character, each context-free code point
// (a table per (nfkc, case_fold), built on first use) and each invalid
// subpart (U+FFFD) starts one; a unit of one such character is copied from
// its table, anything longer goes through utf8proc. With path kAvx512 on a
// CPU with AVX-512 VBMI2, the block kernel (text/normalizer_block.h) does
// this 64 bytes at a time for ASCII and 2- and 3-byte sequences whose output
// is no longer than they are, and hands the rest to the code point loop.
// Without nfkc and case_fold, each maximal run of bytes >= 0x80 is
// validated and copied on its own. (The reference path, CpuPath::kReference,
// validates the whole text first, as the first version did; normalizer.cc
// explains why both are exact.)
//
// The ASCII runs are copied by a branch-free byte loop, or with path kAvx512
// on a CPU with AVX-512 VBMI2, 64 bytes at a time (fold with a masked add,
// punctuation by a 128-entry byte permute, deletion by vpcompressb; the
// first lines of the text are prefetched at once); without VBMI and VBMI2
// (AVX-512 BW only: Skylake-SP, Cascade Lake) the same one-pass copy folds
// and classifies by compares, finds punctuation by two byte shuffles and
// deletes it by vpcompressd of bytes widened to 32 bits; every path gives the same
// bytes (normalizer_test.cc runs each path against utf8proc on the whole
// text, and normalizer_fuzz compares every path with the reference).
//
// Frozen with kRecipeFormatVersion (and with utf8proc's Unicode version).
// Cost: O(bytes). ASCII: one pass, no allocation once *out has capacity.
// Block kernel: about 4 GB/s on translated man pages (19% of bytes >= 0x80).
// Units that need utf8proc: a decomposition into a per-thread buffer of 4
// bytes per code point (much slower per byte than ASCII). The first text
// with a byte >= 0x80 builds the tables of its (nfkc, case_fold): a few ms,
// under 1 MB.
// Thread safety: safe to call concurrently (the scratch buffer is
// thread_local).
#ifndef NEARDUP_TEXT_NORMALIZER_H_
#define NEARDUP_TEXT_NORMALIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hash/cpu_path.h"
#include "neardup/recipe.h"

namespace neardup::internal {

struct NormalizeStats {
  // Maximal invalid UTF-8 subparts replaced by U+FFFD (added to, not reset).
  uint64_t invalid_utf8_sequences = 0;
};

// Replaces *out with the normalized form of `text` (valid UTF-8), reusing
// *out's capacity. `stats` may be null. `path` picks the ASCII copy loop
// (kAvx512 uses AVX-512 VBMI2 only where the CPU has it; any other value the
// portable loop); the output does not depend on it.
void Normalize(std::string_view text, const NormalizationOptions& options, std::string* out,
               NormalizeStats* stats, CpuPath path = CpuPath::kReference);

// The same form, for a caller that reuses *out as scratch: returns its size
// n; the form is (*out)[0, n), followed by a zero byte, and *out may hold
// bytes left over from earlier texts after that. On the AVX-512 path an
// all-ASCII form leaves *out at its size, so that the next text's room is
// not zero-filled again by std::string::resize (~1 % of a one-thread
// `fingerprint` run: docs/FINGERPRINT_SPEED.md).
size_t NormalizeKeepingRoom(std::string_view text, const NormalizationOptions& options,
                            std::string* out, NormalizeStats* stats,
                            CpuPath path = CpuPath::kReference);

// The token bits of a normalized form for TokenScanner (text/token_scan.h),
// computed in the normalizer's pass so that the scanner need not read and
// classify the form again: bit i of words[j] is set when byte 64j + i of the
// form is a token byte of `kind` (kWord: an ASCII letter or digit;
// kWhitespace: any byte but \t..\r and space), bits past the form are zero.
// Only the AVX-512 path's ASCII copies (VBMI's or BW's) compute them, only without
// remove_punctuation (then the form's 64-byte blocks are the text's; with
// bytes removed, packing the bits cost the normalizer what the scanner
// saved) and only for a text whose bytes are all ASCII: `valid` says
// whether words[] holds them (then it holds at least form size / 64 + 1
// words); otherwise the caller classifies the form itself.
struct FormTokenBits {
  TokenizerKind kind = TokenizerKind::kWord;  // kWord or kWhitespace
  std::vector<uint64_t> words;                // room reused across texts
  bool valid = false;
};

// NormalizeKeepingRoom that also sets *bits (above) unless `bits` is null
// (then it is the overload above). The form is the same.
// REQUIRES: bits is null or bits->kind is kWord or kWhitespace.
size_t NormalizeKeepingRoom(std::string_view text, const NormalizationOptions& options,
                            std::string* out, NormalizeStats* stats, CpuPath path,
                            FormTokenBits* bits);

struct TextKernels;  // text/text_kernels.h

// NormalizeKeepingRoom (no stats) with the kernels of `kernels` instead of
// TextKernelsFor(kernels.path)'s, for tests: e.g. the AVX-512 BW ASCII copy
// (ascii_copy_avx512bw) on a CPU that also has VBMI, whose own table never
// picks it. REQUIRES: CpuSupports(kernels.path) and the CPU has the
// features of every kernel `kernels` names.
size_t NormalizeKeepingRoomForTesting(std::string_view text, const NormalizationOptions& options,
                                      std::string* out, const TextKernels& kernels,
                                      FormTokenBits* bits);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_NORMALIZER_H_
