#include "gpu/gpu_utf8_tables.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <utility>

#include "text/normalizer.h"
#include "text/normalizer_tables.h"
#include "text/script_segments.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace neardup::internal::gpu {
namespace {

// The attribute of each byte of `normalized` (the output of one unit): the
// token bit from the recipe's tokenizer, and at each code point start of a
// token its segment code when `segments`.
std::string OutputAttrs(const Recipe& recipe, bool segments, const std::string& normalized) {
  std::string attrs(normalized.size(), '\0');
  ForEachToken(recipe.tokenizer, normalized, [&](std::string_view token) {
    const auto begin = static_cast<size_t>(token.data() - normalized.data());
    for (size_t i = begin; i < begin + token.size(); ++i) attrs[i] = kAttrToken;
  });
  if (!segments) return attrs;
  const char* const base = normalized.data();
  const char* p = base;
  const char* const end = p + normalized.size();
  while (p < end) {
    const DecodedCodePoint d = DecodeUtf8(p, end);
    auto& a = attrs[static_cast<size_t>(p - base)];
    if (a != 0) {
      const auto code =
          static_cast<uint8_t>(1 + static_cast<int>(ScriptSegmentClass(d.code_point)));
      a = static_cast<char>(a | (code << kSegShift));
    }
    p += d.length;
  }
  return attrs;
}

}  // namespace

Utf8TablesView GpuUtf8Tables::View(const GpuRecipeTables& ascii) const {
  Utf8TablesView view;
  view.stage1 = stage1.data();
  view.stage2 = stage2.data();
  view.pool_bytes = pool_bytes.data();
  view.pool_attrs = pool_attrs.data();
  view.ascii_class = ascii.byte_class.data();
  view.ascii_mapped = ascii.mapped.data();
  view.invalid_entry = invalid_entry;
  return view;
}

Result<GpuUtf8Tables> BuildGpuUtf8Tables(const Recipe& recipe) {
  NEARDUP_CHECK(GpuCoversRecipe(recipe, nullptr)) << "recipe not covered by the GPU path";
  const NormalizationOptions& options = recipe.normalization;
  const bool unicode = options.nfkc || options.case_fold;
  const ContextFreeTable* context_free = unicode ? &ContextFreeTableFor(options) : nullptr;
  GpuUtf8Tables tables;
  tables.segments = recipe.tokenizer == TokenizerKind::kWord &&
                    recipe.segment_scripts == ScriptSegmentation::kCharacters;
  // Pool strings (bytes, then attributes) shared by every entry that has them.
  std::map<std::pair<std::string, std::string>, uint32_t> pooled;
  auto pool_entry = [&](const std::string& bytes, const std::string& attrs) -> Result<uint32_t> {
    if (bytes.size() > 15) {
      return InternalError("an output of " + std::to_string(bytes.size()) +
                           " bytes does not fit a table entry (15)");
    }
    auto [it, added] = pooled.emplace(std::make_pair(bytes, attrs), 0);
    if (added) {
      it->second = static_cast<uint32_t>(tables.pool_bytes.size());
      tables.pool_bytes.insert(tables.pool_bytes.end(), bytes.begin(), bytes.end());
      tables.pool_attrs.insert(tables.pool_attrs.end(), attrs.begin(), attrs.end());
      if (tables.pool_bytes.size() > kUtf8OffsetMask) return InternalError("UTF-8 pool too large");
    }
    return kUtf8Covered | static_cast<uint32_t>(bytes.size()) << kUtf8LengthShift | it->second;
  };
  std::vector<uint32_t> flat(0x10000, 0);
  std::string input;
  std::string output;
  for (char32_t cp = 0x80; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (unicode && (context_free->entries[cp] & kContextFree) == 0) continue;
    input.clear();
    AppendUtf8(cp, &input);
    Normalize(input, options, &output, nullptr);
    const std::string attrs = OutputAttrs(recipe, tables.segments, output);
    bool identity = output == input;
    for (size_t i = 1; identity && i < attrs.size(); ++i) {
      identity = attrs[i] == (attrs[0] & kAttrToken);
    }
    if (identity) {
      flat[cp] = kUtf8Covered | kUtf8Identity | static_cast<uint8_t>(attrs[0]);
    } else {
      NEARDUP_ASSIGN_OR_RETURN(flat[cp], pool_entry(output, attrs));
    }
    ++tables.num_covered;
  }
  NormalizeStats stats;
  Normalize("\xFF", options, &output, &stats);
  if (stats.invalid_utf8_sequences != 1) return InternalError("Normalize did not repair 0xFF");
  NEARDUP_ASSIGN_OR_RETURN(tables.invalid_entry,
                           pool_entry(output, OutputAttrs(recipe, tables.segments, output)));
  // Two stages: identical blocks of 256 entries stored once.
  std::map<std::vector<uint32_t>, uint16_t> blocks;
  for (uint32_t b = 0; b < 256; ++b) {
    std::vector<uint32_t> block(flat.begin() + b * 256, flat.begin() + (b + 1) * 256);
    auto [it, added] = blocks.emplace(block, static_cast<uint16_t>(blocks.size()));
    if (added) tables.stage2.insert(tables.stage2.end(), block.begin(), block.end());
    tables.stage1.push_back(it->second);
  }
  return tables;
}

bool GpuUtf8PathEnabled() {
  const char* value = std::getenv("NEARDUP_GPU_UTF8");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace neardup::internal::gpu
