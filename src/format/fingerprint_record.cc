#include "neardup/format/fingerprint_record.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

namespace neardup::format {
namespace {

// Stores `value` little-endian at `at`, whatever the host's byte order.
char* Put(char* at, uint64_t value) {
  if constexpr (std::endian::native == std::endian::big) {
    for (int i = 0; i < 8; ++i) at[i] = static_cast<char>(value >> (8 * i));
  } else {
    std::memcpy(at, &value, sizeof value);
  }
  return at + 8;
}

// k values, the missing ones as `fill`.
char* PutValues(char* at, std::span<const uint64_t> values, size_t k, uint64_t fill) {
  const size_t n = std::min(values.size(), k);
  if constexpr (std::endian::native == std::endian::little) {
    if (n > 0) std::memcpy(at, values.data(), n * 8);  // data() may be null when empty
    at += n * 8;
  } else {
    for (size_t i = 0; i < n; ++i) at = Put(at, values[i]);
  }
  for (size_t i = n; i < k; ++i) at = Put(at, fill);
  return at;
}

}  // namespace

Result<FingerprintRecordLayout> MakeFingerprintRecordLayout(const Recipe& recipe,
                                                            const SketchSelection& selection) {
  if (selection.chunks) {
    return InvalidArgumentError(
        "the binary format has fixed-width records and chunk sets vary in length: "
        "use the JSON format for --chunks");
  }
  FingerprintRecordLayout layout;
  layout.selection = selection;
  layout.simhash_bits = recipe.simhash.bits;
  layout.num_hashes = static_cast<size_t>(recipe.minhash.num_hashes);
  if (selection.simhash && layout.simhash_bits != 64 && layout.simhash_bits != 128) {
    return InvalidArgumentError("the binary format holds a 64- or 128-bit SimHash, not " +
                                std::to_string(layout.simhash_bits) +
                                " bits: use the JSON format for this recipe");
  }
  size_t words = 1;
  if (selection.simhash) words += layout.simhash_bits / 64;
  if (selection.minhash) words += 1 + layout.num_hashes;
  if (selection.kvalue_minhash) words += 1 + layout.num_hashes;
  layout.record_bytes = 8 * words;
  return layout;
}

std::string FingerprintRecordDtype(const FingerprintRecordLayout& layout) {
  const std::string k = std::to_string(layout.num_hashes);
  std::string dtype = "[(\"tokens\", \"<u8\")";
  if (layout.selection.simhash && layout.simhash_bits == 128) {
    dtype += ", (\"simhash_hi\", \"<u8\"), (\"simhash_lo\", \"<u8\")";
  } else if (layout.selection.simhash) {
    dtype += ", (\"simhash\", \"<u8\")";
  }
  if (layout.selection.minhash) {
    dtype += ", (\"minhash_count\", \"<u8\"), (\"minhash\", \"<u8\", (" + k + ",))";
  }
  if (layout.selection.kvalue_minhash) {
    dtype += ", (\"kminhash_empty\", \"<u8\"), (\"kminhash\", \"<u8\", (" + k + ",))";
  }
  return dtype + "]";
}

namespace {

// One record from either form of a document: `simhash128`, `minhash`,
// `kvalue` are what Fingerprint and FingerprintView hold.
void AppendRecord(std::string* out, const FingerprintRecordLayout& layout, uint64_t num_tokens,
                  uint64_t simhash, SimHash128 simhash128, std::span<const uint64_t> minhash,
                  std::span<const uint64_t> kvalue, bool kvalue_empty) {
  const size_t start = out->size();
  out->resize(start + layout.record_bytes);
  char* at = out->data() + start;
  at = Put(at, num_tokens);
  if (layout.selection.simhash && layout.simhash_bits == 128) {
    at = Put(at, simhash128.high);
    at = Put(at, simhash128.low);
  } else if (layout.selection.simhash) {
    at = Put(at, simhash);
  }
  if (layout.selection.minhash) {
    at = Put(at, std::min(minhash.size(), layout.num_hashes));
    at = PutValues(at, minhash, layout.num_hashes, std::numeric_limits<uint64_t>::max());
  }
  if (layout.selection.kvalue_minhash) {
    at = Put(at, kvalue_empty ? 1 : 0);
    at = PutValues(at, kvalue_empty ? std::span<const uint64_t>() : kvalue, layout.num_hashes, 0);
  }
}

}  // namespace

void AppendFingerprintRecord(std::string* out, const Fingerprint& fingerprint,
                             const FingerprintRecordLayout& layout) {
  AppendRecord(out, layout, fingerprint.num_tokens, fingerprint.simhash, fingerprint.simhash128,
               fingerprint.minhash.values, fingerprint.kvalue_minhash.values,
               fingerprint.kvalue_minhash.empty);
}

void AppendFingerprintRecord(std::string* out, const FingerprintView& fingerprint,
                             const FingerprintRecordLayout& layout) {
  const bool simhash = layout.selection.simhash;
  const bool kvalue = layout.selection.kvalue_minhash;
  AppendRecord(out, layout, fingerprint.num_tokens(), simhash ? fingerprint.simhash() : 0,
               simhash ? fingerprint.simhash128() : SimHash128{0, 0},
               layout.selection.minhash ? fingerprint.minhash() : std::span<const uint64_t>(),
               kvalue ? fingerprint.kvalue_minhash() : std::span<const uint64_t>(),
               kvalue ? fingerprint.kvalue_empty() : true);
}

}  // namespace neardup::format
