#include "text/normalizer.h"

#include <utf8proc.h>

#include <array>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/normalizer_block.h"
#include "text/normalizer_tables.h"
#include "text/text_kernels.h"
#include "text/utf8.h"
#include "util/intrinsics_warnings.h"

namespace neardup::internal {
namespace {

// Per-thread scratch, kept between calls so steady-state normalization does
// not allocate. Buffers grown past kMaxRetainedCodePoints by one huge document
// are released afterwards.
constexpr size_t kMaxRetainedCodePoints = size_t{1} << 22;

struct Scratch {
  std::string sanitized;
  std::vector<utf8proc_int32_t> code_points;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// kAsciiFolded[c]: c with A-Z mapped to a-z. kAsciiIsPunctuation[c]: 1 for
// ASCII P*.
constexpr std::array<char, 128> kAsciiFolded = [] {
  std::array<char, 128> table{};
  for (int c = 0; c < 128; ++c) table[c] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return table;
}();
constexpr std::array<uint8_t, 128> kAsciiIsPunctuation = [] {
  std::array<uint8_t, 128> table{};
  for (int c = 0; c < 128; ++c) table[c] = (kAsciiClass[c] & kAsciiPunctuationBit) != 0;
  return table;
}();

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_AVX512_NORMALIZE 1

constexpr size_t kPrefetchBytes = 1024;

// kAsciiClass (char_class.h) with kUpperBit for A-Z: one byte permute gives
// the fold, punctuation and token classes of 64 bytes.
constexpr uint8_t kUpperBit = 0x20;  // the fold's own bit: A-Z | 0x20 is a-z
constexpr std::array<uint8_t, 128> kTokenClass = [] {
  std::array<uint8_t, 128> table = kAsciiClass;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] |= kUpperBit;
  return table;
}();

// Token bits for the scanner (FormTokenBits in normalizer.h): none, kWord's
// (ASCII letters and digits) or kWhitespace's (every byte but \t..\r and
// space).
enum class AsciiTokenBits { kNone, kWord, kWhitespace };

// The AVX-512 form of the ASCII copy. REQUIRES: `dst` has room for
// text.size() + 64 bytes. Copies `text` up to the first 64-byte block that
// holds a byte >= 0x80 (the ASCII check and the copy in one pass), sets
// *consumed to the bytes copied (all of them for ASCII text) and returns the
// bytes written.
// With kBits other than kNone (and no punctuation to drop), also writes the
// output's token bits to words[]: bit i of words[j] is set when output byte
// 64j + i is a token byte of that tokenizer, bits past the output are zero
// (folding keeps a letter a letter, so the input's classes are the
// output's). REQUIRES: room for text.size() / 64 + 2 words; !drop_punctuation.
// Valid only when *consumed == text.size().
template <AsciiTokenBits kBits>
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2"))) size_t AppendAsciiAvx512(
    std::string_view text, bool fold, bool drop_punctuation, char* dst, size_t* consumed,
    uint64_t* words = nullptr) {
  const __m512i table_lo = _mm512_loadu_si512(kAsciiIsPunctuation.data());
  const __m512i table_hi = _mm512_loadu_si512(kAsciiIsPunctuation.data() + 64);
  const __m512i class_lo = _mm512_loadu_si512(kTokenClass.data());
  const __m512i class_hi = _mm512_loadu_si512(kTokenClass.data() + 64);
  char* const begin = dst;
  const char* p = text.data();
  size_t remaining = text.size();
  // The text is usually not in cache (a new document): ask for its first
  // lines at once rather than one miss at a time until the hardware
  // prefetcher has seen the stream.
  for (size_t ahead = 0; ahead < remaining && ahead < kPrefetchBytes; ahead += 64) {
    _mm_prefetch(p + ahead, _MM_HINT_T0);
  }
  while (remaining > 0) {
    if (remaining > kPrefetchBytes) _mm_prefetch(p + kPrefetchBytes, _MM_HINT_T0);
    const size_t n = remaining < 64 ? remaining : 64;
    const __mmask64 valid = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    __m512i v = _mm512_maskz_loadu_epi8(valid, p);  // masked: never reads past the end
    if (_mm512_movepi8_mask(v) != 0) break;
    if constexpr (kBits == AsciiTokenBits::kNone) {
      if (fold) {
        const __mmask64 upper =
            _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('A')), _mm512_set1_epi8(26));
        v = _mm512_mask_add_epi8(v, upper, v, _mm512_set1_epi8(0x20));
      }
      if (drop_punctuation) {
        // Byte i of the permute is the table entry for the low 7 bits of v[i].
        const __m512i punct = _mm512_permutex2var_epi8(table_lo, v, table_hi);
        const __mmask64 keep = _mm512_testn_epi8_mask(punct, punct) & valid;
        _mm512_storeu_si512(dst, _mm512_maskz_compress_epi8(keep, v));
        dst += __builtin_popcountll(keep);
      } else {
        _mm512_storeu_si512(dst, v);
        dst += n;
      }
    } else {
      // One permute gives the fold's and the token's classes (kTokenClass).
      const __m512i cls = _mm512_permutex2var_epi8(class_lo, v, class_hi);
      const uint64_t token =
          kBits == AsciiTokenBits::kWord
              ? _mm512_test_epi8_mask(cls, _mm512_set1_epi8(kAsciiWordBit))
              : _mm512_testn_epi8_mask(cls, _mm512_set1_epi8(kAsciiWhiteSpaceBit)) & valid;
      if (fold) {  // v | (cls & 0x20): one ternary-logic op
        v = _mm512_ternarylogic_epi32(v, cls, _mm512_set1_epi8(kUpperBit), 0xF8);
      }
      // No byte is removed: the form's blocks are the text's, one word each.
      NEARDUP_DCHECK(!drop_punctuation);
      _mm512_storeu_si512(dst, v);
      dst += n;
      *words++ = token;
    }
    p += n;
    remaining -= n;
  }
  if constexpr (kBits != AsciiTokenBits::kNone) *words = 0;
  *consumed = text.size() - remaining;
  return static_cast<size_t>(dst - begin);
}

// kPunctuationByLowNibble[c & 15] has bit (c >> 4) set when ASCII c is
// punctuation (kAsciiClass): a byte shuffle of it, tested against one of
// kBitOfHighNibble, classifies 64 bytes without a byte permute.
constexpr std::array<uint8_t, 64> kPunctuationByLowNibble = [] {
  std::array<uint8_t, 64> table{};
  for (int c = 0; c < 128; ++c) {
    if (kAsciiIsPunctuation[c]) {
      for (int lane = 0; lane < 4; ++lane) table[16 * lane + (c & 15)] |= 1 << (c >> 4);
    }
  }
  return table;
}();
constexpr std::array<uint8_t, 64> kBitOfHighNibble = [] {
  std::array<uint8_t, 64> table{};
  for (int i = 0; i < 64; ++i) table[i] = (i & 15) < 8 ? static_cast<uint8_t>(1 << (i & 15)) : 0;
  return table;
}();

NEARDUP_INTRINSICS_WARNINGS_OFF
// Stores the bytes of quarter kQuarter (16 bytes) of v whose `keep` bits
// are set, packed, at dst (a whole 16-byte store) and returns dst past them.
template <int kQuarter>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline char* StoreKeptQuarter(
    __m512i v, __mmask64 keep, char* dst) {
  const auto keep16 = static_cast<__mmask16>(keep >> (16 * kQuarter));
  const __m512i wide = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(v, kQuarter));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                   _mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(keep16, wide)));
  return dst + __builtin_popcount(keep16);
}

// AppendAsciiAvx512 for CPUs with AVX-512 BW but not VBMI and VBMI2
// (Skylake-SP, Cascade Lake: no byte permute, no vpcompressb): the fold by
// compare and masked add, the token classes by the scanner's compares
// (token_scan.cc, ClassifyAvx512), punctuation by two byte shuffles and its
// removal by vpcompressd of each 16 bytes widened to 32 bits. Same
// contract, same bytes and bits. REQUIRES: room for text.size() + 64 bytes
// at `dst`; with kBits, !drop_punctuation and room for text.size() / 64 + 2
// words.
template <AsciiTokenBits kBits>
__attribute__((target("avx512f,avx512bw"))) size_t AppendAsciiAvx512Bw(std::string_view text,
                                                                       bool fold,
                                                                       bool drop_punctuation,
                                                                       char* dst, size_t* consumed,
                                                                       uint64_t* words = nullptr) {
  const __m512i punctuation_table = _mm512_loadu_si512(kPunctuationByLowNibble.data());
  const __m512i bit_table = _mm512_loadu_si512(kBitOfHighNibble.data());
  const __m512i low_nibble = _mm512_set1_epi8(0x0F);
  char* const begin = dst;
  const char* p = text.data();
  size_t remaining = text.size();
  for (size_t ahead = 0; ahead < remaining && ahead < kPrefetchBytes; ahead += 64) {
    _mm_prefetch(p + ahead, _MM_HINT_T0);
  }
  while (remaining > 0) {
    if (remaining > kPrefetchBytes) _mm_prefetch(p + kPrefetchBytes, _MM_HINT_T0);
    const size_t n = remaining < 64 ? remaining : 64;
    const __mmask64 valid = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    __m512i v = _mm512_maskz_loadu_epi8(valid, p);  // masked: never reads past the end
    if (_mm512_movepi8_mask(v) != 0) break;
    const __mmask64 upper =
        _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('A')), _mm512_set1_epi8(26));
    if constexpr (kBits == AsciiTokenBits::kWord) {
      const __mmask64 lower =
          _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('a')), _mm512_set1_epi8(26));
      const __mmask64 digit =
          _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
      *words++ = upper | lower | digit;  // the padding (zero bytes) is no letter or digit
    } else if constexpr (kBits == AsciiTokenBits::kWhitespace) {
      const __mmask64 controls =
          _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8(9)), _mm512_set1_epi8(5));
      const __mmask64 space = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' '));
      *words++ = ~(controls | space) & valid;
    }
    if (fold) v = _mm512_mask_add_epi8(v, upper, v, _mm512_set1_epi8(0x20));
    if (kBits == AsciiTokenBits::kNone && drop_punctuation) {
      // Folding changes no byte's punctuation class; the padding is dropped.
      const __m512i high = _mm512_and_si512(_mm512_srli_epi16(v, 4), low_nibble);
      const __mmask64 punct = _mm512_test_epi8_mask(
          _mm512_shuffle_epi8(punctuation_table, _mm512_and_si512(v, low_nibble)),
          _mm512_shuffle_epi8(bit_table, high));
      const __mmask64 keep = ~punct & valid;
      dst = StoreKeptQuarter<0>(v, keep, dst);
      dst = StoreKeptQuarter<1>(v, keep, dst);
      dst = StoreKeptQuarter<2>(v, keep, dst);
      dst = StoreKeptQuarter<3>(v, keep, dst);
    } else {
      NEARDUP_DCHECK(kBits == AsciiTokenBits::kNone || !drop_punctuation);
      _mm512_storeu_si512(dst, v);
      dst += n;
    }
    p += n;
    remaining -= n;
  }
  if constexpr (kBits != AsciiTokenBits::kNone) *words = 0;
  *consumed = text.size() - remaining;
  return static_cast<size_t>(dst - begin);
}
NEARDUP_INTRINSICS_WARNINGS_ON

// The VBMI ASCII copy (`vbmi`: TextKernels::ascii_normalizer_avx512) or the
// BW one (ascii_copy_avx512bw); same contract.
template <AsciiTokenBits kBits>
size_t AppendAsciiAvx512Either(bool vbmi, std::string_view text, bool fold, bool drop_punctuation,
                               char* dst, size_t* consumed, uint64_t* words = nullptr) {
  return vbmi ? AppendAsciiAvx512<kBits>(text, fold, drop_punctuation, dst, consumed, words)
              : AppendAsciiAvx512Bw<kBits>(text, fold, drop_punctuation, dst, consumed, words);
}
#endif

// Appends the ASCII path's form of `text`: `fold` maps A-Z to a-z,
// `drop_punctuation` deletes ASCII P*. Returns the bytes of `text` it
// consumed. `avx512` (the CPU has AVX-512 VBMI2): stops at the first 64-byte
// block with a byte >= 0x80, so any text may be passed; otherwise REQUIRES:
// `text` is ASCII (all of it is consumed).
size_t AppendAscii(std::string_view text, bool fold, bool drop_punctuation, bool avx512,
                   std::string* out) {
  const size_t old_size = out->size();
#ifdef NEARDUP_HAVE_AVX512_NORMALIZE
  if (avx512) {
    out->resize(old_size + text.size() + 64);
    size_t consumed = 0;
    const size_t written = AppendAsciiAvx512<AsciiTokenBits::kNone>(
        text, fold, drop_punctuation, out->data() + old_size, &consumed);
    out->resize(old_size + written);
    return consumed;
  }
#else
  (void)avx512;
#endif
  if (!fold && !drop_punctuation) {
    out->append(text);
    return text.size();
  }
  out->resize(old_size + text.size());
  char* const begin = out->data() + old_size;
  char* dst = begin;
  if (!drop_punctuation) {
    // Arithmetic, not a table: the compiler vectorizes this form.
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      *dst++ = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    }
  } else {
    // Branch-free: every byte is written, a punctuation byte is overwritten
    // by the next (dst never passes the input position, so it stays in range).
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      *dst = fold ? kAsciiFolded[c] : ch;
      dst += 1 - kAsciiIsPunctuation[c];
    }
  }
  out->resize(old_size + static_cast<size_t>(dst - begin));
  return text.size();
}

// AppendAscii for a stretch of ASCII text between two runs of bytes >= 0x80:
// those are mostly a space or a few characters, for which the vector copy's
// setup and its 64 bytes of room cost more than a byte loop.
void AppendAsciiStretch(std::string_view text, bool fold, bool drop_punctuation, bool avx512,
                        std::string* out) {
  if (text.size() >= 32) {
    AppendAscii(text, fold, drop_punctuation, avx512, out);
    return;
  }
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (drop_punctuation && kAsciiIsPunctuation[c]) continue;
    out->push_back(fold ? kAsciiFolded[c] : ch);
  }
}

// Appends valid UTF-8 `text` to *out without its punctuation.
void AppendWithoutPunctuation(std::string_view text, std::string* out) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    DecodedCodePoint d = DecodeUtf8(p, end);
    if (!IsPunctuation(d.code_point)) out->append(p, d.length);
    p += d.length;
  }
}

// Writes through a raw pointer into *out's bytes (its size is the room),
// growing it on demand; Finish() trims *out to what was written.
class OutputCursor {
 public:
  // Writes after the first `used` bytes of *out. REQUIRES: used <= size.
  OutputCursor(std::string* out, size_t used)
      : dst(out->data() + used), out_(out), limit_(out->data() + out->size()) {}

  // Ensures room for `n` more bytes at dst.
  void Reserve(size_t n) {
    if (static_cast<size_t>(limit_ - dst) < n) Grow(n);
  }
  void Finish() { out_->resize(static_cast<size_t>(dst - out_->data())); }

  char* dst;

 private:
  void Grow(size_t n) {
    const auto used = static_cast<size_t>(dst - out_->data());
    // Geometric, so that growing is amortized O(1) per byte.
    out_->resize(used + n + used / 2);
    dst = out_->data() + used;
    limit_ = out_->data() + out_->size();
  }

  std::string* out_;
  char* limit_;
};

// utf8proc's normalization of valid UTF-8 `text` into *buffer; returns the
// number of code points.
size_t Utf8procCodePoints(std::string_view text, utf8proc_option_t flags,
                          std::vector<utf8proc_int32_t>* buffer) {
  // A first guess of one code point per byte; decompositions can expand
  // further (U+FDFA is 18 code points under NFKC), then we retry at the size
  // utf8proc asks for.
  if (buffer->size() < text.size()) buffer->resize(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto length = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t count;
  while (true) {
    count = utf8proc_decompose(bytes, length, buffer->data(),
                               static_cast<utf8proc_ssize_t>(buffer->size()), flags);
    // Invalid UTF-8 was repaired before and the flags are a fixed valid set.
    NEARDUP_CHECK(count >= 0) << "utf8proc_decompose: " << utf8proc_errmsg(count);
    if (static_cast<size_t>(count) <= buffer->size()) break;
    buffer->resize(static_cast<size_t>(count));
  }
  count = utf8proc_normalize_utf32(buffer->data(), count, flags);
  NEARDUP_CHECK(count >= 0) << "utf8proc_normalize_utf32: " << utf8proc_errmsg(count);
  return static_cast<size_t>(count);
}

// Encodes code_points[0, count) at dst (room for 4 bytes each), without
// punctuation when asked; returns the bytes written.
size_t EncodeCodePoints(const utf8proc_int32_t* code_points, size_t count, bool drop_punctuation,
                        char* dst) {
  auto* const begin = reinterpret_cast<utf8proc_uint8_t*>(dst);
  auto* p = begin;
  for (size_t i = 0; i < count; ++i) {
    const utf8proc_int32_t cp = code_points[i];
    if (drop_punctuation && IsPunctuation(static_cast<char32_t>(cp))) continue;
    p += utf8proc_encode_char(cp, p);
  }
  return static_cast<size_t>(p - begin);
}

// Appends utf8proc's normalization of valid UTF-8 `text`.
void AppendUtf8proc(std::string_view text, utf8proc_option_t flags, bool drop_punctuation,
                    std::vector<utf8proc_int32_t>* buffer, std::string* out) {
  const size_t count = Utf8procCodePoints(text, flags, buffer);
  const size_t old_size = out->size();
  out->resize(old_size + count * 4);
  const size_t written =
      EncodeCodePoints(buffer->data(), count, drop_punctuation, out->data() + old_size);
  out->resize(old_size + written);
}

void AppendUtf8proc(std::string_view text, utf8proc_option_t flags, bool drop_punctuation,
                    std::vector<utf8proc_int32_t>* buffer, OutputCursor* out) {
  const size_t count = Utf8procCodePoints(text, flags, buffer);
  out->Reserve(count * 4);
  out->dst += EncodeCodePoints(buffer->data(), count, drop_punctuation, out->dst);
}

// What the code point loop needs.
struct UnitContext {
  const ContextFreeTable* table;
  const BlockTable* block;  // table->block[drop_punctuation]
  utf8proc_option_t flags;
  bool fold;
  bool drop_punctuation;
  Scratch* scratch;
  NormalizeStats* stats;
};

// The code point loop. Normalizes [p, end) unit by unit from the split point
// p and returns the split point after the first unit that ends at or after
// `stop`. A unit starts at an ASCII character, a context-free code point or
// an invalid subpart, and runs to the next one. Exact:
// - Unicode normalization is per code point except canonical reordering
//   and composition, which never cross the start of a starter that composes
//   with nothing before it: an ASCII character, a context-free code point,
//   or U+FFFD, which replaces an invalid subpart (the reference repairs the
//   whole text first; the maximal subparts are found by the same decoder
//   whether it runs on the whole text or from a split point, since a
//   split point is never inside a sequence). So the text splits there and
//   each unit normalizes alone.
// - A unit of one such character is its table's output (ASCII: folded or
//   dropped; U+FFFD: itself); anything longer goes through utf8proc (an
//   invalid subpart first replaced by U+FFFD).
// An ASCII stretch is copied up to its last character (a possible base for
// what follows). Validates as it decodes.
const char* NormalizeUnits(const char* p, const char* end, const char* stop, const UnitContext& ctx,
                           OutputCursor* out) {
  const bool fold = ctx.fold;
  const bool drop = ctx.drop_punctuation;
  const uint32_t* const block_entries = ctx.block->entries.data();
  const uint32_t* const entries = ctx.table->entries.data();
  // The code point at p when the previous unit's end was found by decoding
  // it (each code point is decoded once), with its block entry.
  bool decoded = false;
  DecodedCodePoint first{};
  uint32_t first_block = 0;
  do {
    if (!decoded) {
      if (static_cast<unsigned char>(*p) < 0x80) {
        const auto remaining = static_cast<size_t>(end - p);
        const size_t ascii = FindFirstNonAscii(std::string_view(p, remaining), 1);
        const char* stretch_end = ascii == remaining ? end : p + ascii - 1;
        if (stretch_end > p) {
          out->Reserve(static_cast<size_t>(stretch_end - p));
          char* dst = out->dst;
          if (!drop) {
            // Arithmetic, not a table: the compiler vectorizes this form.
            for (; p < stretch_end; ++p) {
              const auto c = static_cast<unsigned char>(*p);
              *dst++ = static_cast<char>(fold && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
            }
          } else {
            // Branch-free: a dropped byte is overwritten by the next.
            for (; p < stretch_end; ++p) {
              const auto c = static_cast<unsigned char>(*p);
              *dst = fold ? kAsciiFolded[c] : static_cast<char>(c);
              dst += 1 - kAsciiIsPunctuation[c];
            }
          }
          out->dst = dst;
          continue;
        }
      }
      first = DecodeUtf8(p, end);
      first_block = first.valid && first.code_point >= 0x80 && first.code_point < 0x10000
                        ? block_entries[first.code_point]
                        : 0;
    }
    decoded = false;
    const char* const unit = p;
    p += first.length;
    DecodedCodePoint next{};
    uint32_t next_block = 0;
    while (p < end && static_cast<unsigned char>(*p) >= 0x80) {
      next = DecodeUtf8(p, end);
      if (!next.valid) {
        decoded = true;
        break;
      }
      if (next.code_point < 0x10000) {
        // A block entry implies a context-free code point.
        next_block = block_entries[next.code_point];
        if (next_block != 0 || (entries[next.code_point] & kContextFree)) {
          decoded = true;
          break;
        }
      }
      p += next.length;
    }
    const bool alone = p == unit + first.length;
    if (!first.valid) {
      if (ctx.stats != nullptr) ++ctx.stats->invalid_utf8_sequences;
      if (alone) {
        out->Reserve(kReplacementUtf8.size());
        std::memcpy(out->dst, kReplacementUtf8.data(), kReplacementUtf8.size());
        out->dst += kReplacementUtf8.size();
      } else {
        std::string& repaired = ctx.scratch->sanitized;
        repaired.assign(kReplacementUtf8);
        repaired.append(unit + first.length, p);
        AppendUtf8proc(repaired, ctx.flags, drop, &ctx.scratch->code_points, out);
      }
    } else if (alone && first_block != 0) {
      out->Reserve(3);
      out->dst[0] = static_cast<char>(first_block);
      out->dst[1] = static_cast<char>(first_block >> 8);
      out->dst[2] = static_cast<char>(first_block >> 16);
      out->dst += BlockEntryLength(first_block);
    } else if (alone && first.code_point < 0x80) {
      const char32_t c = first.code_point;
      if (!(drop && kAsciiIsPunctuation[c])) {
        out->Reserve(1);
        *out->dst++ = fold ? kAsciiFolded[c] : static_cast<char>(c);
      }
    } else {
      const uint32_t entry = first.code_point < 0x10000 ? entries[first.code_point] : 0;
      if (alone && (entry & kContextFree) && !(drop && (entry & kOutputHasPunctuation))) {
        const size_t length = (entry >> kLengthShift) & 0xF;
        out->Reserve(length);
        std::memcpy(out->dst, ctx.table->bytes.data() + (entry & kOffsetMask), length);
        out->dst += length;
      } else {
        AppendUtf8proc(std::string_view(unit, static_cast<size_t>(p - unit)), ctx.flags, drop,
                       &ctx.scratch->code_points, out);
      }
    }
    first = next;
    first_block = next_block;
  } while (p < end && p < stop);
  return p;
}

// Normalize with nfkc or case_fold: *out holds the first `used` bytes of
// the output, those of text[0, pos); pos is a split point. The block kernel
// where the CPU has it, the code point loop where it stops.
void NormalizeUnicode(std::string_view text, size_t pos, const NormalizationOptions& options,
                      bool block, std::string* out, size_t used, NormalizeStats* stats) {
  const ContextFreeTable& table = ContextFreeTableFor(options);
  const bool drop = options.remove_punctuation;
  const UnitContext ctx{&table,
                        &table.block[drop ? 1 : 0],
                        Utf8procOptions(options),
                        options.case_fold,
                        drop,
                        &ThreadScratch(),
                        stats};
  OutputCursor cursor(out, used);
  const char* p = text.data() + pos;
  const char* const end = text.data() + text.size();
  while (p < end) {
    if (block) {
      cursor.Reserve(static_cast<size_t>(end - p) + 64);
      p = NormalizeBlocksAvx512(p, end, *ctx.block, options.case_fold, drop, &cursor.dst);
      if (p == end) break;
      // The next unit needs the code point loop.
      p = NormalizeUnits(p, end, p + 1, ctx, &cursor);
    } else {
      p = NormalizeUnits(p, end, end, ctx, &cursor);
    }
  }
  cursor.Finish();
  Scratch& scratch = *ctx.scratch;
  if (scratch.code_points.size() > kMaxRetainedCodePoints) {
    std::vector<utf8proc_int32_t>().swap(scratch.code_points);
  }
  if (scratch.sanitized.capacity() > kMaxRetainedCodePoints) std::string().swap(scratch.sanitized);
}

// The reference path (CpuPath::kReference): the whole text validated and
// repaired first, then split at ASCII characters as in Normalize. Kept as
// the definition the run-by-run path is tested against.
void NormalizeReference(std::string_view text, const NormalizationOptions& options,
                        std::string* out, NormalizeStats* stats) {
  if (IsAscii(text)) {
    AppendAscii(text, options.case_fold, options.remove_punctuation, false, out);
    return;
  }
  Scratch& scratch = ThreadScratch();
  std::string_view valid = text;
  if (!IsValidUtf8(text)) {
    uint64_t replaced = SanitizeUtf8(text, &scratch.sanitized);
    if (stats != nullptr) stats->invalid_utf8_sequences += replaced;
    valid = scratch.sanitized;
  }
  if (!options.nfkc && !options.case_fold) {
    if (options.remove_punctuation) {
      AppendWithoutPunctuation(valid, out);
    } else {
      out->assign(valid);
    }
    return;
  }
  const utf8proc_option_t flags = Utf8procOptions(options);
  size_t pos = 0;
  while (pos < valid.size()) {
    const size_t non_ascii = FindFirstNonAscii(valid, pos);
    const size_t ascii_end =
        (non_ascii < valid.size() && non_ascii > pos) ? non_ascii - 1 : non_ascii;
    AppendAscii(valid.substr(pos, ascii_end - pos), options.case_fold, options.remove_punctuation,
                false, out);
    if (non_ascii == valid.size()) break;
    size_t next_ascii = non_ascii;
    while (next_ascii < valid.size() && static_cast<unsigned char>(valid[next_ascii]) >= 0x80) {
      ++next_ascii;
    }
    AppendUtf8proc(valid.substr(ascii_end, next_ascii - ascii_end), flags,
                   options.remove_punctuation, &scratch.code_points, out);
    pos = next_ascii;
  }
}

// Normalize's body. keep_room: a text whose normalized form is all ASCII
// leaves *out at its size (the room for the next text) and returns the
// form's size, instead of shrinking *out to it (the next text's resize would
// zero-fill that room again). Else *out is the form and its size returned.
// bits: null, or the token bits asked for (FormTokenBits).
// kernels: TextKernelsFor(kernels.path), or another table the CPU runs (tests).
size_t NormalizeInto(std::string_view text, const NormalizationOptions& options, std::string* out,
                     NormalizeStats* stats, const TextKernels& kernels, bool keep_room,
                     FormTokenBits* bits) {
  if (bits != nullptr) bits->valid = false;
  const CpuPath path = kernels.path;
  const bool fold = options.case_fold;
  const bool drop = options.remove_punctuation;
#ifdef NEARDUP_HAVE_AVX512_NORMALIZE
  const bool avx512 = kernels.ascii_normalizer_avx512;
  const bool bw = kernels.ascii_copy_avx512bw;
#else
  const bool avx512 = false;
  const bool bw = false;
  (void)kernels;
#endif
  if (path == CpuPath::kReference) {
    out->clear();
    NormalizeReference(text, options, out, stats);
    return out->size();
  }
  const bool unicode = options.nfkc || options.case_fold;
  size_t pos = 0;
#ifdef NEARDUP_HAVE_AVX512_NORMALIZE
  if (avx512 || bw) {
    // One pass for ASCII text; other text continues below from the block
    // where the first byte >= 0x80 is. The bytes *out already holds (the
    // previous text's) serve as room: resize zero-fills only what it adds.
    if (out->size() < text.size() + 64) out->resize(text.size() + 64);
    size_t written;
    if (bits == nullptr || drop) {
      written = AppendAsciiAvx512Either<AsciiTokenBits::kNone>(avx512, text, fold, drop,
                                                               out->data(), &pos);
    } else {
      const size_t words = text.size() / 64 + 2;
      if (bits->words.size() < words) bits->words.resize(words);
      uint64_t* const w = bits->words.data();
      written = bits->kind == TokenizerKind::kWhitespace
                    ? AppendAsciiAvx512Either<AsciiTokenBits::kWhitespace>(avx512, text, fold, drop,
                                                                           out->data(), &pos, w)
                    : AppendAsciiAvx512Either<AsciiTokenBits::kWord>(avx512, text, fold, drop,
                                                                     out->data(), &pos, w);
      bits->valid = pos == text.size();
    }
    if (pos == text.size()) {
      if (!keep_room) {
        out->resize(written);
      } else if (written < out->size()) {
        (*out)[written] = '\0';  // as after a resize: the form is followed by a zero
      }
      return written;
    }
    if (unicode) {
      // The last ASCII character may be the base of what follows: it is
      // taken back so that the text splits before it.
      if (pos > 0) {
        --pos;
        if (!(drop && kAsciiIsPunctuation[static_cast<unsigned char>(text[pos])])) --written;
      }
      NormalizeUnicode(text, pos, options, kernels.block_normalizer, out, written, stats);
      return out->size();
    }
    out->resize(written);
  }
#endif
  if (!avx512 && !bw) {
    out->clear();
    if (IsAscii(text)) {
      AppendAscii(text, fold, drop, avx512, out);
      return out->size();
    }
    if (unicode) {
      out->resize(text.size() + 64);
      NormalizeUnicode(text, 0, options, false, out, 0, stats);
      return out->size();
    }
  }
  if (pos == text.size()) return out->size();

  // Neither NFKC nor case folding: ASCII stretches take the ASCII copy; each
  // maximal run of bytes >= 0x80 is validated (and repaired) on its own and
  // copied, without its punctuation when asked. Exact, since UTF-8 validity
  // and the maximal invalid subparts (utf8.h) never cross an ASCII byte (it
  // is never part of a multi-byte sequence).
  Scratch& scratch = ThreadScratch();
  while (pos < text.size()) {
    const size_t run = FindFirstNonAscii(text, pos);
    AppendAsciiStretch(text.substr(pos, run - pos), fold, drop, avx512, out);
    if (run == text.size()) break;
    size_t run_end = run;
    while (run_end < text.size() && static_cast<unsigned char>(text[run_end]) >= 0x80) ++run_end;
    std::string_view segment = text.substr(run, run_end - run);
    if (!IsValidUtf8(segment)) {
      const uint64_t replaced = SanitizeUtf8(segment, &scratch.sanitized);
      if (stats != nullptr) stats->invalid_utf8_sequences += replaced;
      segment = scratch.sanitized;
    }
    if (drop) {
      AppendWithoutPunctuation(segment, out);
    } else {
      out->append(segment);
    }
    pos = run_end;
  }
  if (scratch.sanitized.capacity() > kMaxRetainedCodePoints) std::string().swap(scratch.sanitized);
  return out->size();
}

}  // namespace

void Normalize(std::string_view text, const NormalizationOptions& options, std::string* out,
               NormalizeStats* stats, CpuPath path) {
  NormalizeInto(text, options, out, stats, TextKernelsFor(path), /*keep_room=*/false,
                /*bits=*/nullptr);
}

size_t NormalizeKeepingRoom(std::string_view text, const NormalizationOptions& options,
                            std::string* out, NormalizeStats* stats, CpuPath path) {
  return NormalizeInto(text, options, out, stats, TextKernelsFor(path), /*keep_room=*/true,
                       /*bits=*/nullptr);
}

size_t NormalizeKeepingRoom(std::string_view text, const NormalizationOptions& options,
                            std::string* out, NormalizeStats* stats, CpuPath path,
                            FormTokenBits* bits) {
  NEARDUP_DCHECK(bits == nullptr || bits->kind == TokenizerKind::kWord ||
                 bits->kind == TokenizerKind::kWhitespace);
  return NormalizeInto(text, options, out, stats, TextKernelsFor(path), /*keep_room=*/true, bits);
}

size_t NormalizeKeepingRoomForTesting(std::string_view text, const NormalizationOptions& options,
                                      std::string* out, const TextKernels& kernels,
                                      FormTokenBits* bits) {
  NEARDUP_CHECK(CpuSupports(kernels.path)) << "CPU path " << CpuPathName(kernels.path);
  NEARDUP_DCHECK(bits == nullptr || bits->kind == TokenizerKind::kWord ||
                 bits->kind == TokenizerKind::kWhitespace);
  return NormalizeInto(text, options, out, nullptr, kernels, /*keep_room=*/true, bits);
}

}  // namespace neardup::internal
