// TextKernels: the kernel table of one CPU path for the text module: which
// normalizer, token-emission and token-hash kernels run. The sketch module
// has the same kind of table (sketch/sketch_kernels.h); both are filled from
// the one feature probe (hash/cpu_features.h) cut down to the path's level,
// so a kernel that needs an extension runs only on a path whose level
// includes it and on a CPU that has it (a CPU with AVX-512 VBMI2 but not
// VBMI gets none of the kernels that need both).
//
// Each field names the requirement of its kernel in one place; the files of
// the kernels say what they compute. The block tokenizer's byte classifier
// (token_scan.cc) follows the path alone: each level's classifier uses only
// that level's baseline.
// Cost: the tables of the four paths are built once, on first use.
// Thread safety: the tables are immutable after construction.
#ifndef NEARDUP_TEXT_TEXT_KERNELS_H_
#define NEARDUP_TEXT_TEXT_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hash/cpu_features.h"
#include "hash/cpu_path.h"
#include "text/token_scan.h"

namespace neardup::internal {

class StopwordSet;

// text/token_hash_avx2.h, text/token_hash_avx512.h.
using Xxh3SpansFn = void (*)(std::string_view text, const TokenSpan* spans, size_t num_spans,
                             uint64_t seed, uint64_t* out);
// text/sdbm_avx512.h.
using SdbmSpansFn = size_t (*)(std::string_view text, const TokenSpan* spans, size_t num_spans,
                               uint64_t seed, const StopwordSet* stopwords, uint64_t* out);

struct TextKernels {
  CpuPath path = CpuPath::kPortable;
  // The one-pass ASCII copy of normalizer.cc (AVX-512 F, BW, VBMI, VBMI2).
  bool ascii_normalizer_avx512 = false;
  // The one-pass ASCII copy for CPUs with AVX-512 F, BW and DQ but not the
  // VBMI pair (normalizer.cc: compares and byte shuffles instead of byte
  // permutes, vpcompressd instead of vpcompressb; it also gives
  // FormTokenBits). Never set with ascii_normalizer_avx512.
  bool ascii_copy_avx512bw = false;
  // normalizer_block.h, for text past the first non-ASCII byte (AVX-512 F,
  // BW, VL, VBMI, VBMI2, BMI2, POPCNT); used only with the VBMI ASCII copy
  // (ascii_normalizer_avx512).
  bool block_normalizer = false;
  // Token spans by vpcompress (token_scan.cc; AVX-512 VBMI, VBMI2 on the
  // AVX-512 path), else one count-trailing-zeros per token edge.
  bool compress_tokens = false;
  // XXH3 of four (AVX2) or eight (AVX-512 F, BW, DQ) tokens at a time;
  // nullptr: one token at a time.
  Xxh3SpansFn xxh3_spans = nullptr;
  // sdbm and the stopword probe of eight tokens (AVX-512 F, BW, DQ);
  // nullptr: one token at a time.
  SdbmSpansFn sdbm_spans = nullptr;
};

// The table for a feature set, by value (tests hand any set; the CPU need
// not run what it returns).
TextKernels ChooseTextKernels(CpuPath path, const CpuFeatures& features);

// ChooseTextKernels(path, FeaturesAt(path)), built once per path.
// REQUIRES: CpuSupports(path).
const TextKernels& TextKernelsFor(CpuPath path);

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_TEXT_KERNELS_H_
