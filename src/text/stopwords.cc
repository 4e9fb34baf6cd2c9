#include "text/stopwords.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "text/normalizer.h"

namespace neardup::internal {
namespace {

// Frozen with kRecipeFormatVersion. Lower-case ASCII letters only (so that no
// normalization changes them), no contractions (the word tokenizer would split
// them). Sorted here for review; StopwordSet sorts anyway.
constexpr const char* kEnglishStopwords[] = {
    "a",       "about", "above",    "after",      "again",   "against", "all",    "also",
    "am",      "among", "an",       "and",        "another", "any",     "are",    "around",
    "as",      "at",    "be",       "because",    "been",    "before",  "being",  "below",
    "between", "both",  "but",      "by",         "can",     "could",   "did",    "do",
    "does",    "doing", "down",     "during",     "each",    "either",  "else",   "ever",
    "every",   "few",   "for",      "from",       "further", "had",     "has",    "have",
    "having",  "he",    "her",      "here",       "hers",    "herself", "him",    "himself",
    "his",     "how",   "however",  "i",          "if",      "in",      "into",   "is",
    "it",      "its",   "itself",   "just",       "least",   "less",    "may",    "me",
    "might",   "mine",  "more",     "most",       "much",    "must",    "my",     "myself",
    "neither", "no",    "nor",      "not",        "now",     "of",      "off",    "often",
    "on",      "once",  "one",      "only",       "onto",    "or",      "other",  "others",
    "ought",   "our",   "ours",     "ourselves",  "out",     "over",    "own",    "per",
    "rather",  "same",  "shall",    "she",        "should",  "since",   "so",     "some",
    "such",    "than",  "that",     "the",        "their",   "theirs",  "them",   "themselves",
    "then",    "there", "these",    "they",       "this",    "those",   "though", "through",
    "thus",    "to",    "too",      "toward",     "towards", "under",   "until",  "up",
    "upon",    "us",    "very",     "was",        "we",      "were",    "what",   "whatever",
    "when",    "where", "whether",  "which",      "while",   "who",     "whom",   "whose",
    "why",     "will",  "with",     "within",     "without", "would",   "yet",    "you",
    "your",    "yours", "yourself", "yourselves",
};

std::string Trim(std::string_view line) {
  const char* kBlank = " \t\r\n\v\f";
  size_t first = line.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return "";
  size_t last = line.find_last_not_of(kBlank);
  return std::string(line.substr(first, last - first + 1));
}

// The slot hash of the open-addressing table: never stored, so not frozen.
// Short words are most tokens; their bytes are read in at most two loads and
// mixed with two multiplies (a third of the cost of XXH3 per token).
uint64_t SlotHash(std::string_view word) {
  const char* p = word.data();
  const size_t n = word.size();
  uint64_t a = 0;
  uint64_t b = 0;
  if (n >= 8) {
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t x, y;
    std::memcpy(&x, p, 4);
    std::memcpy(&y, p + n - 4, 4);
    a = x;
    b = y;
  } else if (n > 0) {
    a = static_cast<unsigned char>(p[0]) | (uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
        (uint64_t{static_cast<unsigned char>(p[n - 1])} << 16);
  }
  uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL) ^ n;
  return h ^ (h >> 29);
}

// SplitMix64's output function: the multipliers tried for the probe table.
uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hash and displace (Belazzougui, Botelho, Dietzfelbinger 2009, "Hash,
// displace, and compress", without the compression): words fall into 64
// buckets by the top bits of their 32-bit hash; buckets, largest first, each
// get the smallest displacement (XORed into the word's position) that puts
// all their words in free slots. Returns false when no multiplier of a few
// tried works at any table size up to 2^kMaxSlotBits slots (then callers use
// the scalar Contains, which is always exact).
bool BuildProbeTable(const std::vector<std::string>& words, StopwordProbeTable* table) {
  std::vector<std::string_view> fit;
  for (const std::string& w : words) {
    if (!w.empty() && w.size() <= StopwordProbeTable::kMaxLength) fit.push_back(w);
  }
  if (fit.empty() || fit.size() > StopwordSet::kMaxProbeWords) return false;
  constexpr int kBuckets = 1 << StopwordProbeTable::kBucketBits;
  int slot_bits = 6;
  while ((size_t{1} << slot_bits) < 4 * fit.size()) ++slot_bits;
  for (; slot_bits <= StopwordProbeTable::kMaxSlotBits; ++slot_bits) {
    const size_t num_slots = size_t{1} << slot_bits;
    for (uint64_t attempt = 0; attempt < 64; ++attempt) {
      StopwordProbeTable t;
      t.multiplier = static_cast<uint32_t>(SplitMix(attempt)) | 1;
      t.slot_bits = slot_bits;
      t.slot_mask = static_cast<uint32_t>(num_slots - 1);
      // With zero displacements Slot() is the position; the bucket is the
      // index of the displacement it reads.
      std::vector<std::vector<uint32_t>> bucket_positions(kBuckets);
      for (std::string_view w : fit) {
        const uint32_t position = t.Slot(w);
        const uint64_t x = StopwordProbeTable::KeyA(w) ^ StopwordProbeTable::KeyB(w);
        const uint32_t h = static_cast<uint32_t>(x ^ (x >> 32)) * t.multiplier;
        bucket_positions[h >> (32 - StopwordProbeTable::kBucketBits)].push_back(position);
      }
      std::vector<int> order(kBuckets);
      for (int b = 0; b < kBuckets; ++b) order[b] = b;
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        return bucket_positions[x].size() > bucket_positions[y].size();
      });
      std::vector<bool> used(num_slots, false);
      bool ok = true;
      for (int b : order) {
        const std::vector<uint32_t>& positions = bucket_positions[b];
        if (positions.empty()) break;
        bool placed = false;
        for (uint32_t d = 0; d < num_slots && !placed; ++d) {
          bool free = true;
          for (size_t i = 0; i < positions.size() && free; ++i) {
            free = !used[positions[i] ^ d];
            // Two words of a bucket at one position collide for every d.
            for (size_t j = 0; j < i && free; ++j) free = positions[j] != positions[i];
          }
          if (!free) continue;
          for (uint32_t position : positions) used[position ^ d] = true;
          t.displacement[b] = static_cast<uint16_t>(d);
          placed = true;
        }
        if (!placed) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      t.keys.assign(2 * num_slots, 0);
      for (std::string_view w : fit) {
        const uint32_t slot = t.Slot(w);
        t.keys[2 * slot] = StopwordProbeTable::KeyA(w);
        t.keys[2 * slot + 1] = StopwordProbeTable::KeyB(w);
      }
      *table = std::move(t);
      return true;
    }
  }
  return false;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

StopwordSet::StopwordSet(std::vector<std::string> words) : words_(std::move(words)) {
  size_t num_slots = 8;
  while (num_slots < 2 * words_.size()) num_slots *= 2;
  slots_.assign(num_slots, kEmptySlot);
  mask_ = num_slots - 1;
  for (uint32_t i = 0; i < words_.size(); ++i) {
    max_length_ = std::max(max_length_, words_[i].size());
    uint64_t slot = SlotHash(words_[i]) & mask_;
    while (slots_[slot] != kEmptySlot) slot = (slot + 1) & mask_;
    slots_[slot] = i;
  }
  BuildProbeTable(words_, &probe_);
}

uint64_t StopwordProbeTable::KeyA(std::string_view token) {
  uint64_t a = 0;
  std::memcpy(&a, token.data(), std::min<size_t>(token.size(), 8));
  return a;
}

uint64_t StopwordProbeTable::KeyB(std::string_view token) {
  uint64_t b = token.size();
  if (token.size() > 8) {
    uint64_t rest = 0;  // bytes 8..n-1
    std::memcpy(&rest, token.data() + 8, token.size() - 8);
    b |= rest << (8 * (16 - token.size()));
  }
  return b;
}

bool StopwordProbeTable::Contains(std::string_view token) const {
  if (token.empty() || token.size() > kMaxLength) return false;
  const uint32_t slot = Slot(token);
  return keys[2 * slot] == KeyA(token) && keys[2 * slot + 1] == KeyB(token);
}

StopwordSet StopwordSet::English() {
  // The list is lower-case ASCII, which every NormalizationOptions maps to
  // itself; FromWords still sorts it.
  std::vector<std::string> words(std::begin(kEnglishStopwords), std::end(kEnglishStopwords));
  return FromWords(std::move(words), NormalizationOptions());
}

StopwordSet StopwordSet::FromWords(std::vector<std::string> words,
                                   const NormalizationOptions& options) {
  std::vector<std::string> normalized;
  normalized.reserve(words.size());
  std::string scratch;
  for (const std::string& word : words) {
    Normalize(word, options, &scratch, nullptr);
    if (!scratch.empty()) normalized.push_back(scratch);
  }
  std::sort(normalized.begin(), normalized.end());
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  return StopwordSet(std::move(normalized));
}

Result<StopwordSet> StopwordSet::FromFile(const std::string& path,
                                          const NormalizationOptions& options) {
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    int error = errno;
    std::string message = "stopword file '" + path + "': " + std::strerror(error);
    if (error == ENOENT) return NotFoundError(std::move(message));
    return IoError(std::move(message));
  }
  std::string content;
  char buffer[1 << 14];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) content.append(buffer, n);
  if (std::ferror(file.get())) {
    return IoError("stopword file '" + path + "': read failed: " + std::strerror(errno));
  }
  std::vector<std::string> words;
  size_t begin = 0;
  while (begin < content.size()) {
    size_t newline = content.find('\n', begin);
    if (newline == std::string::npos) newline = content.size();
    std::string word = Trim(std::string_view(content).substr(begin, newline - begin));
    if (!word.empty() && word[0] != '#') words.push_back(std::move(word));
    begin = newline + 1;
  }
  return FromWords(std::move(words), options);
}

bool StopwordSet::Contains(std::string_view token) const {
  if (token.size() > max_length_ || words_.empty()) return false;
  uint64_t slot = SlotHash(token) & mask_;
  while (slots_[slot] != kEmptySlot) {
    if (words_[slots_[slot]] == token) return true;
    slot = (slot + 1) & mask_;
  }
  return false;
}

}  // namespace neardup::internal
