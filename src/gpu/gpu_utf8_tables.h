// GpuUtf8Tables: the tables of the GPU path's UTF-8 normalisation
// (gpu/gpu_utf8.h), built on the host from the CPU path's own definitions,
// never from a copy of them:
// - which code points are covered: under NFKC or case folding, exactly the
//   context-free code points of the CPU normaliser's own table
//   (ContextFreeTableFor, text/normalizer_tables.h), the ones it normalises
//   as units of their own; without either, every BMP code point (the CPU
//   then only repairs invalid UTF-8 and drops punctuation per code point);
// - each covered code point's output: Normalize of that code point alone;
//   an invalid subpart's: Normalize of a lone invalid byte;
// - each output byte's attribute: whether ForEachToken (the recipe's
//   tokenizer) puts it in a token, and, for the word tokenizer with script
//   segmentation, ScriptSegmentClass of the code point starting there.
// Supplementary-plane code points are not covered (the tables hold the BMP).
// Entries are stored in two stages (256 blocks of 256, identical blocks
// shared); an output that is the input itself is stored in the entry, the
// others in a pool of bytes and attributes.
//
// Cost: building normalises each BMP code point once (about 64K Normalize
// calls and the CPU's context-free table: tens of milliseconds); the tables
// take about 100-200 KB. Thread safety: a plain value.
#ifndef NEARDUP_GPU_GPU_UTF8_TABLES_H_
#define NEARDUP_GPU_GPU_UTF8_TABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_tables.h"
#include "gpu/gpu_utf8.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal::gpu {

struct GpuUtf8Tables {
  std::vector<uint16_t> stage1;  // 256 block indices
  std::vector<uint32_t> stage2;  // 256 entries per distinct block
  std::vector<uint8_t> pool_bytes;
  std::vector<uint8_t> pool_attrs;
  uint32_t invalid_entry = 0;
  // The word tokenizer with ScriptSegmentation::kCharacters: the batch needs
  // the segment codes and the cut pass (SegmentCutHd).
  bool segments = false;
  // Covered BMP code points >= 0x80 (for the docs and the tests).
  uint32_t num_covered = 0;

  size_t bytes() const {
    return stage1.size() * 2 + stage2.size() * 4 + pool_bytes.size() + pool_attrs.size();
  }
  // A view of these tables with the ASCII tables of `ascii` (host memory).
  Utf8TablesView View(const GpuRecipeTables& ascii) const;
};

// REQUIRES: GpuCoversRecipe(recipe).
Result<GpuUtf8Tables> BuildGpuUtf8Tables(const Recipe& recipe);

// Whether the GPU runs its UTF-8 path: NEARDUP_GPU_UTF8=1 in the
// environment. Off by default until it has been verified on a GPU
// (docs/GPU.md); documents with a byte >= 0x80 then go to the CPU.
bool GpuUtf8PathEnabled();

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_UTF8_TABLES_H_
