// StopwordSet: tokens to drop before hashing (frequent function words that
// carry little about a document's content). Membership is by exact bytes of
// the normalized token, so a set is built by normalizing its words with the
// recipe's NormalizationOptions.
//
// The built-in English list (English()) is frozen with kRecipeFormatVersion:
// changing it changes every fingerprint of a recipe using it. It holds only
// lower-case ASCII letters, so every NormalizationOptions leaves it unchanged.
//
// Cost: Contains is one cheap hash of the token and usually one comparison (an
// open-addressing table at most half full); tokens longer than the longest
// word are rejected before hashing. The probe table (StopwordProbeTable, for
// vector probes) is built once per set: 16 bytes per slot, 1024 slots for
// the English list. Memory: the words plus 4 bytes per slot.
// Thread safety: const methods may run concurrently.
#ifndef NEARDUP_TEXT_STOPWORDS_H_
#define NEARDUP_TEXT_STOPWORDS_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::internal {

// The set's words of 1..kMaxLength bytes in a perfect hash table, for probes
// of eight tokens per vector (text/sdbm_avx512.h). A token's key is two
// 64-bit words that determine its bytes and length:
//   KeyA: its first min(n, 8) bytes, little-endian, zero-padded;
//   KeyB: n in the low byte, and for n > 8 bytes 8..n-1 in the top n - 8
//         bytes (they never overlap the low byte since n <= 15).
// Its slot: x = KeyA ^ KeyB folded to 32 bits, h = x * multiplier mod 2^32,
// slot = (bits [26 - slot_bits, 26) of h) ^ displacement[h >> 26] (hash and
// displace: each of the 64 buckets got the displacement that puts all its
// words in free slots). Only a 32x32-bit multiply from the key words, so a
// vector probe does not wait for the token's hash. Empty slots hold the key
// (0, 0), which no token of 1 or more bytes has. So a token of
// 1..kMaxLength bytes is in the set iff the two words at its slot equal its
// key: one probe, no compare loop.
struct StopwordProbeTable {
  static constexpr size_t kMaxLength = 15;
  static constexpr int kBucketBits = 6;
  static constexpr int kMaxSlotBits = 12;

  static uint64_t KeyA(std::string_view token);
  static uint64_t KeyB(std::string_view token);
  // REQUIRES: 1 <= token.size() <= kMaxLength.
  uint32_t Slot(std::string_view token) const {
    const uint64_t x = KeyA(token) ^ KeyB(token);
    const uint32_t h = static_cast<uint32_t>(x ^ (x >> 32)) * multiplier;
    return ((h >> (32 - kBucketBits - slot_bits)) & slot_mask) ^
           displacement[h >> (32 - kBucketBits)];
  }
  bool Contains(std::string_view token) const;

  // Contains for a token whose 16 bytes from token.data() are readable (the
  // bytes past the token are masked off, so any values do): two unaligned
  // loads and no length-dependent copy, for the scalar paths' per-token test.
  // REQUIRES: 1 <= token.size() <= kMaxLength.
  bool ContainsReadable16(std::string_view token) const {
    const size_t n = token.size();
    uint64_t lo;
    uint64_t hi;
    std::memcpy(&lo, token.data(), 8);
    std::memcpy(&hi, token.data() + 8, 8);
    // KeyA: bytes 0..min(n, 8)-1. KeyB: n, and for n > 8 bytes 8..n-1 moved
    // to the top n - 8 bytes (the left shift drops the bytes past the token).
    const uint64_t a = n >= 8 ? lo : lo & ((uint64_t{1} << (8 * n)) - 1);
    const uint64_t b = n > 8 ? (hi << (8 * (16 - n))) | n : n;
    const uint64_t x = a ^ b;
    const uint32_t h = static_cast<uint32_t>(x ^ (x >> 32)) * multiplier;
    const uint32_t slot =
        ((h >> (32 - kBucketBits - slot_bits)) & slot_mask) ^ displacement[h >> (32 - kBucketBits)];
    return keys[2 * slot] == a && keys[2 * slot + 1] == b;
  }

  uint32_t multiplier = 0;  // odd
  int slot_bits = 0;
  uint32_t slot_mask = 0;  // (1 << slot_bits) - 1
  std::array<uint16_t, 1 << kBucketBits> displacement{};
  std::vector<uint64_t> keys;  // slot s: keys[2s] = KeyA, keys[2s + 1] = KeyB
};

class StopwordSet {
 public:
  // The empty set.
  StopwordSet() : StopwordSet(std::vector<std::string>()) {}

  // The built-in English list (about 170 articles, pronouns, auxiliaries,
  // prepositions, conjunctions and common adverbs).
  static StopwordSet English();

  // Normalizes each word with `options` (invalid UTF-8 repaired), drops empty
  // results, sorts and removes duplicates. A word containing a separator of
  // the recipe's tokenizer can never match a token.
  static StopwordSet FromWords(std::vector<std::string> words, const NormalizationOptions& options);

  // One word per line (surrounding white space trimmed, CR LF accepted);
  // lines that are blank or whose first non-blank character is '#' are
  // ignored. NotFound if `path` does not exist; IoError if it cannot be read.
  static Result<StopwordSet> FromFile(const std::string& path, const NormalizationOptions& options);

  bool Contains(std::string_view token) const;

  // Contains(token) for a token inside a text that ends at `text_end`: tokens
  // of 1..StopwordProbeTable::kMaxLength bytes with 16 readable bytes before
  // text_end take the probe table (one slot, two key compares, no memcmp);
  // the others, and sets without a table, take Contains. The table holds
  // every word of those lengths, so the answer is Contains's for every token.
  // REQUIRES: token.data() <= text_end.
  bool ContainsInText(std::string_view token, const char* text_end) const {
    if (!probe_.keys.empty() && token.size() - 1 < StopwordProbeTable::kMaxLength &&
        text_end - token.data() >= 16) {
      return probe_.ContainsReadable16(token);
    }
    return Contains(token);
  }

  // The vector probe table of the words of 1..StopwordProbeTable::kMaxLength
  // bytes, or null when none was built (more than kMaxProbeWords such words,
  // or no perfect hash found: callers then use Contains). Tokens longer than
  // kMaxLength must still be checked with Contains when max_length() allows.
  const StopwordProbeTable* probe_table() const { return probe_.keys.empty() ? nullptr : &probe_; }
  size_t max_length() const { return max_length_; }
  static constexpr size_t kMaxProbeWords = 1024;

  // Sorted, unique, non-empty.
  const std::vector<std::string>& words() const { return words_; }
  bool empty() const { return words_.empty(); }

 private:
  // REQUIRES: `words` sorted, unique, non-empty strings.
  explicit StopwordSet(std::vector<std::string> words);

  static constexpr uint32_t kEmptySlot = UINT32_MAX;

  std::vector<std::string> words_;
  // Open addressing with linear probing: slots_[SlotHash(w) & mask_] onwards
  // holds the index of w in words_. Invariant: at most half the slots used.
  std::vector<uint32_t> slots_;
  uint64_t mask_ = 0;
  size_t max_length_ = 0;
  StopwordProbeTable probe_;
};

}  // namespace neardup::internal

#endif  // NEARDUP_TEXT_STOPWORDS_H_
