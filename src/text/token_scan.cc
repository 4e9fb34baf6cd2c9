#include "text/token_scan.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "neardup/check.h"
#include "text/char_class.h"
#include "text/non_ascii_class.h"
#include "text/non_ascii_class_avx512_inl.h"
#include "text/text_kernels.h"
#include "util/intrinsics_warnings.h"

namespace neardup::internal {
namespace {

constexpr size_t kBlock = 64;

// Byte tables of the portable classifier: 1 where an ASCII byte is a token
// byte, 0 for separators and bytes >= 0x80 (classified separately).
template <bool kWord>
constexpr std::array<uint8_t, 256> MakeTokenByteTable() {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 128; ++c) {
    if (kWord) {
      table[c] = (kAsciiClass[c] & kAsciiWordBit) != 0;
    } else {
      table[c] = (kAsciiClass[c] & kAsciiWhiteSpaceBit) == 0;
    }
  }
  return table;
}
constexpr std::array<uint8_t, 256> kWordByte = MakeTokenByteTable<true>();
constexpr std::array<uint8_t, 256> kNonSpaceByte = MakeTokenByteTable<false>();

template <bool kWord>
uint64_t ClassifyPortable(const char* block, uint64_t* high) {
  const auto* s = reinterpret_cast<const unsigned char*>(block);
  const std::array<uint8_t, 256>& table = kWord ? kWordByte : kNonSpaceByte;
  uint64_t mask = 0;
  uint64_t h = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    mask |= static_cast<uint64_t>(table[s[i]]) << i;
    h |= static_cast<uint64_t>(s[i] >> 7) << i;
  }
  *high = h;
  return mask;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_HAVE_X86_PATHS 1

// x <u bound, bytewise, as 0xFF/0x00: min(x, bound - 1) == x.
__attribute__((target("avx2"))) inline __m256i LessThanAvx2(__m256i x, char bound) {
  return _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(static_cast<char>(bound - 1))), x);
}

template <bool kWord>
__attribute__((target("avx2"))) uint32_t Classify32Avx2(const char* p, uint32_t* high) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  *high = static_cast<uint32_t>(_mm256_movemask_epi8(v));
  __m256i token;
  if (kWord) {
    const __m256i digit = LessThanAvx2(_mm256_sub_epi8(v, _mm256_set1_epi8('0')), 10);
    const __m256i folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    const __m256i alpha = LessThanAvx2(_mm256_sub_epi8(folded, _mm256_set1_epi8('a')), 26);
    token = _mm256_or_si256(digit, alpha);
    return static_cast<uint32_t>(_mm256_movemask_epi8(token));
  }
  // White space: \t \n \v \f \r (9..13) and space.
  const __m256i controls = LessThanAvx2(_mm256_sub_epi8(v, _mm256_set1_epi8(9)), 5);
  const __m256i space = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(' '));
  const uint32_t white =
      static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_or_si256(controls, space)));
  return ~white & ~*high;
}

template <bool kWord>
__attribute__((target("avx2"))) uint64_t ClassifyAvx2(const char* block, uint64_t* high) {
  uint32_t high_lo, high_hi;
  const uint64_t lo = Classify32Avx2<kWord>(block, &high_lo);
  const uint64_t hi = Classify32Avx2<kWord>(block + 32, &high_hi);
  *high = high_lo | (static_cast<uint64_t>(high_hi) << 32);
  return lo | (hi << 32);
}

template <bool kWord>
__attribute__((target("avx512f,avx512bw"))) uint64_t ClassifyAvx512(const char* block,
                                                                    uint64_t* high) {
  const __m512i v = _mm512_loadu_si512(block);
  const __mmask64 h = _mm512_movepi8_mask(v);
  *high = h;
  if (kWord) {
    const __mmask64 digit =
        _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
    const __m512i folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    const __mmask64 alpha = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(folded, _mm512_set1_epi8('a')),
                                                   _mm512_set1_epi8(26));
    return digit | alpha;
  }
  const __mmask64 controls =
      _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8(9)), _mm512_set1_epi8(5));
  const __mmask64 space = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(' '));
  return ~(controls | space | h);
}

// Spans 8 * group .. 8 * group + 7 of a block from its compressed edge
// indices: token j's start and end are indices 2j - carry and 2j + 1 - carry.
// Byte 8j of `pick` selects them; with a token open (carry 1), the first start
// selects index -1, which vpermb reads as 63 (its low six bits): a value the
// caller replaces.
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2"))) inline void StoreSpanGroup(
    __m512i edge_index, size_t pos, uint32_t carry, size_t group, TokenSpan* out) {
  const __m512i pick_start = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i pick_end = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  const __mmask64 low_bytes = 0x0101010101010101ULL;
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(pos));
  const __m512i interleave_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
  const __m512i interleave_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(group * 16 - carry));
  const __m512i starts =
      _mm512_maskz_permutexvar_epi8(low_bytes, _mm512_add_epi8(pick_start, offset), edge_index);
  const __m512i ends =
      _mm512_maskz_permutexvar_epi8(low_bytes, _mm512_add_epi8(pick_end, offset), edge_index);
  const __m512i begin = _mm512_add_epi64(base, starts);
  const __m512i length = _mm512_sub_epi64(ends, starts);
  TokenSpan* dst = out + group * 8;
  _mm512_storeu_si512(dst, _mm512_permutex2var_epi64(begin, interleave_lo, length));
  _mm512_storeu_si512(dst + 4, _mm512_permutex2var_epi64(begin, interleave_hi, length));
}

// The tokens that end in a block, from its edge bits, written to out[] as
// spans, eight per step. Bit i of `edges`: an edge at pos + i; edges
// alternate, and the lowest is a start unless *open (a token left open by the
// previous block, beginning at *open_begin), in which case it is that token's
// end. vpcompressb turns the edge bits into their indices, vpermb spreads the
// start and end indices of each token into 64-bit lanes: with a token open,
// the indices are shifted by one (a virtual start before the block), and the
// first span, whose start is not in the block, is written again from scalar
// registers. No branch depends on the text below 17 tokens a block: whether
// a token is open and the number of tokens (8 or fewer in most blocks of
// UTF-8 text, 9 to 12 in many) are both unpredictable.
// Returns the number of tokens; *open and *open_begin describe the token
// left open at the end of the block.
// REQUIRES: room for max(16, tokens rounded up to 8) spans at out (whole
// groups are stored, the first two always).
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2"),
               always_inline)) inline size_t
EmitTokensAvx512(uint64_t edges, size_t pos, TokenSpan* out, bool* open, size_t* open_begin) {
  const uint32_t carry = *open ? 1 : 0;
  const uint32_t count = static_cast<uint32_t>(__builtin_popcountll(edges)) + carry;
  const size_t tokens = count / 2;
  const __m512i iota = _mm512_set_epi8(
      63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
      40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
      17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i edge_index = _mm512_maskz_compress_epi8(edges, iota);
  StoreSpanGroup(edge_index, pos, carry, 0, out);
  StoreSpanGroup(edge_index, pos, carry, 1, out);
  for (size_t group = 2; group * 8 < tokens; ++group) {
    StoreSpanGroup(edge_index, pos, carry, group, out);
  }
  // The first span again, right in both cases (selects, not branches): the
  // open token and its end at the lowest edge, or the block's first two
  // edges (the vector's answer). Garbage, never counted, when no token ends.
  // Selects by masks: GCC turns the ternaries into branches.
  const size_t first = pos + _tzcnt_u64(edges);
  const size_t second = pos + _tzcnt_u64(_blsr_u64(edges));
  const size_t carry_mask = size_t{0} - carry;
  const size_t first_begin = (*open_begin & carry_mask) | (first & ~carry_mask);
  const size_t first_end = (first & carry_mask) | (second & ~carry_mask);
  out[0] = TokenSpan{first_begin, first_end - first_begin};
  // The token left open: the highest edge, when count is odd and there is
  // one; with no edge at all the open token goes on. When count is even the
  // value is unused.
  *open = (count & 1) != 0;
  const size_t highest = pos + 63 - static_cast<size_t>(__builtin_clzll(edges | 1));
  const size_t any_edge = size_t{0} - static_cast<size_t>(edges != 0);
  *open_begin = (highest & any_edge) | (*open_begin & ~any_edge);
  return tokens;
}
#endif

TokenScanner::ClassifyFn ChooseClassifier(bool word, CpuPath path) {
  switch (path) {
    case CpuPath::kReference:
      break;
    case CpuPath::kPortable:
      return word ? &ClassifyPortable<true> : &ClassifyPortable<false>;
#ifdef NEARDUP_HAVE_X86_PATHS
    case CpuPath::kAvx2:
      return word ? &ClassifyAvx2<true> : &ClassifyAvx2<false>;
    case CpuPath::kAvx512:
      return word ? &ClassifyAvx512<true> : &ClassifyAvx512<false>;
#else
    case CpuPath::kAvx2:
    case CpuPath::kAvx512:
      break;
#endif
  }
  NEARDUP_CHECK(false) << "TokenScanner: no block classifier for path " << CpuPathName(path);
  return nullptr;
}

// Bits [from, to) of a 64-bit mask, 0 <= from < to <= 64.
inline uint64_t BitRange(uint32_t from, uint32_t to) {
  const uint64_t upto = to >= 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
  return upto & ~((uint64_t{1} << from) - 1);
}

}  // namespace

TokenScanner::TokenScanner(TokenizerKind kind, CpuPath path, std::string_view text)
    : word_(kind == TokenizerKind::kWord), text_(text) {
  NEARDUP_CHECK(kind == TokenizerKind::kWord || kind == TokenizerKind::kWhitespace)
      << "TokenScanner handles kWord and kWhitespace, not " << static_cast<int>(kind);
  NEARDUP_CHECK(CpuSupports(path)) << "CPU path " << CpuPathName(path) << " is not supported";
  classify_ = ChooseClassifier(word_, path);
  // kAvx512 implies BMI2 (CpuSupports), which ClassifyNonAsciiAvx512 needs too.
  compress_ = TextKernelsFor(path).compress_tokens;
  avx512bw_ = path == CpuPath::kAvx512 && !compress_;
}

void TokenScanner::UseAvx512BwForTesting() {
  NEARDUP_CHECK(compress_ || avx512bw_) << "UseAvx512BwForTesting: not the avx512 path";
  compress_ = false;
  avx512bw_ = true;
}

TokenScanner::TokenScanner(TokenizerKind kind, CpuPath path, std::string_view text,
                           const uint64_t* token_bits)
    : TokenScanner(kind, path, text) {
  NEARDUP_CHECK(token_bits != nullptr) << "TokenScanner: null token bits";
  token_bits_ = token_bits;
}

namespace {

// The tokens of a block from its edge bits, one count-trailing-zeros per
// edge: Emit for the paths without VBMI2. Same contract as EmitTokensAvx512
// (it stores only the spans it counts).
size_t EmitTokensScalar(uint64_t edges, size_t pos, TokenSpan* out, bool* open,
                        size_t* open_begin) {
  size_t n = 0;
  if (*open && edges != 0) {  // the end of the token left open
    out[n++] =
        TokenSpan{*open_begin, pos + static_cast<size_t>(__builtin_ctzll(edges)) - *open_begin};
    edges &= edges - 1;
    *open = false;
  }
  while (edges != 0) {
    const size_t begin = pos + static_cast<size_t>(__builtin_ctzll(edges));
    edges &= edges - 1;
    if (edges == 0) {  // the token runs past this block
      *open_begin = begin;
      *open = true;
      break;
    }
    const size_t end = pos + static_cast<size_t>(__builtin_ctzll(edges));
    edges &= edges - 1;
    out[n++] = TokenSpan{begin, end - begin};
  }
  return n;
}

// The paths without a block kernel for bytes >= 0x80.
struct NoBlockNonAscii {
  bool operator()(const char*, size_t, uint32_t, NonAsciiBlockClass*) const { return false; }
};

}  // namespace

// ScanBits (below) repeats this loop's cursor, emit and last-block steps for
// the normalizer's token bits: keep the two in step.
template <class Classify, class NonAscii, class Emit>
__attribute__((always_inline)) inline size_t TokenScanner::Scan(TokenSpan* out, size_t capacity,
                                                                Classify classify,
                                                                NonAscii non_ascii_block,
                                                                Emit emit) {
  NEARDUP_DCHECK(capacity >= kMaxTokensPerBlock);
  // The cursor lives in locals for the loop: stores through `out` could
  // otherwise alias the members and force a reload per token.
  size_t n = 0;
  size_t pos = pos_;
  bool in_token = in_token_;
  size_t token_begin = token_begin_;
  bool segment_leads = in_token && segment_leads_;
  const size_t size = text_.size();
  while (!done_ && capacity - n >= kMaxTokensPerBlock) {
    const size_t remaining = size - pos;
    uint64_t mask;
    uint64_t high;
    if (remaining >= kBlock) {
      mask = classify(text_.data() + pos, &high);
    } else {
      // The tail: classify a zero-padded copy, then drop the padding.
      alignas(64) char padded[kBlock] = {};
      if (remaining > 0) std::memcpy(padded, text_.data() + pos, remaining);
      mask = classify(padded, &high);
      const uint64_t valid = remaining == 0 ? 0 : BitRange(0, static_cast<uint32_t>(remaining));
      mask &= valid;
      high &= valid;
    }
    // Continuation bytes of a code point that began in the previous block
    // (none when spill_length is 0), without a branch: in CJK text most
    // blocks begin with some.
    const uint32_t spill_length = spill_length_;
    const uint64_t spill_bits = (uint64_t{1} << spill_length) - 1;  // spill_length <= 3
    mask = (mask & ~spill_bits) | (spill_bits & (uint64_t{0} - uint64_t{spill_in_token_}));
    high &= ~spill_bits;
    spill_length_ = 0;
    if (high != 0) {
      NonAsciiBlockClass non_ascii;
      if (!non_ascii_block(text_.data() + pos, remaining, spill_length, &non_ascii)) {
        non_ascii = ClassifyNonAsciiScalar(word_, text_.data() + pos, remaining, high);
      }
      mask |= non_ascii.token_bits;
      segment_leads |= non_ascii.segment_leads;
      spill_length_ = non_ascii.spill_length;
      spill_in_token_ = non_ascii.spill_in_token;
    }

    // Bit i of `edges`: a token starts (mask bit set) or ends (clear) at i.
    // Edges alternate; the lowest ends the open token when there is one.
    const uint64_t edges = mask ^ ((mask << 1) | static_cast<uint64_t>(in_token));
    n += emit(edges, pos, out + n, &in_token, &token_begin);
    if (remaining <= kBlock) {
      if (in_token) out[n++] = TokenSpan{token_begin, size - token_begin};
      in_token = false;
      done_ = true;
    } else {
      pos += kBlock;
    }
  }
  pos_ = pos;
  in_token_ = in_token;
  segment_leads_ = segment_leads;
  token_begin_ = token_begin;
  return n;
}

// Scan without the bytes: each block's mask is its word of token_bits_
// (zero past the text, so the last block needs no padding), and an ASCII
// text has no code point to classify, carry or segment. Its cursor, emit
// and last-block steps are Scan's: keep the two in step.
template <class Emit>
__attribute__((always_inline)) inline size_t TokenScanner::ScanBits(TokenSpan* out, size_t capacity,
                                                                    Emit emit) {
  NEARDUP_DCHECK(capacity >= kMaxTokensPerBlock);
  size_t n = 0;
  size_t pos = pos_;
  bool in_token = in_token_;
  size_t token_begin = token_begin_;
  const size_t size = text_.size();
  const uint64_t* const bits = token_bits_;
  while (!done_ && capacity - n >= kMaxTokensPerBlock) {
    const uint64_t mask = bits[pos / kBlock];
    const uint64_t edges = mask ^ ((mask << 1) | static_cast<uint64_t>(in_token));
    n += emit(edges, pos, out + n, &in_token, &token_begin);
    if (size - pos <= kBlock) {
      if (in_token) out[n++] = TokenSpan{token_begin, size - token_begin};
      in_token = false;
      done_ = true;
    } else {
      pos += kBlock;
    }
  }
  pos_ = pos;
  in_token_ = in_token;
  token_begin_ = token_begin;
  return n;
}

size_t TokenScanner::Next(TokenSpan* out, size_t capacity) {
#ifdef NEARDUP_HAVE_X86_PATHS
  if (compress_) {
    return token_bits_ != nullptr ? NextBitsAvx512(out, capacity) : NextAvx512(out, capacity);
  }
  if (avx512bw_) return NextAvx512Bw(out, capacity);
#endif
  if (token_bits_ != nullptr) return ScanBits(out, capacity, &EmitTokensScalar);
  return Scan(out, capacity, classify_, NoBlockNonAscii(), &EmitTokensScalar);
}

#ifdef NEARDUP_HAVE_X86_PATHS
#define NEARDUP_VBMI2_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2")))

namespace {

// Function objects (not pointers) so that Scan inlines them.
template <bool kWord>
struct ClassifyBlockAvx512 {
  NEARDUP_VBMI2_TARGET uint64_t operator()(const char* block, uint64_t* high) const {
    return ClassifyAvx512<kWord>(block, high);
  }
};

// The block kernel of text/non_ascii_class.h, inlined into the block loop.
template <bool kWord>
struct NonAsciiBlockAvx512 {
  const non_ascii_avx512::LookupTables* tables;
  NEARDUP_VBMI2_TARGET bool operator()(const char* block, size_t available, uint32_t spill_length,
                                       NonAsciiBlockClass* out) const {
    return non_ascii_avx512::ClassifyBlock<kWord>(block, available, spill_length, *tables, out);
  }
};

struct EmitBlockAvx512 {
  NEARDUP_VBMI2_TARGET size_t operator()(uint64_t edges, size_t pos, TokenSpan* out, bool* open,
                                         size_t* open_begin) const {
    return EmitTokensAvx512(edges, pos, out, open, open_begin);
  }
};

}  // namespace

NEARDUP_VBMI2_TARGET size_t TokenScanner::NextAvx512(TokenSpan* out, size_t capacity) {
  const non_ascii_avx512::LookupTables* tables = &non_ascii_avx512::Tables();
  return word_ ? Scan(out, capacity, ClassifyBlockAvx512<true>(), NonAsciiBlockAvx512<true>{tables},
                      EmitBlockAvx512())
               : Scan(out, capacity, ClassifyBlockAvx512<false>(),
                      NonAsciiBlockAvx512<false>{tables}, EmitBlockAvx512());
}

NEARDUP_VBMI2_TARGET size_t TokenScanner::NextBitsAvx512(TokenSpan* out, size_t capacity) {
  return ScanBits(out, capacity, EmitBlockAvx512());
}

#define NEARDUP_AVX512BW_TARGET __attribute__((target("avx512f,avx512bw,bmi,bmi2")))

namespace {

template <bool kWord>
struct ClassifyBlockAvx512Bw {
  NEARDUP_AVX512BW_TARGET uint64_t operator()(const char* block, uint64_t* high) const {
    return ClassifyAvx512<kWord>(block, high);
  }
};

NEARDUP_INTRINSICS_WARNINGS_OFF

// Spans token .. token + 3 from their edge indices index[2 * token ..]:
// the (start, end) pairs widened to 64-bit lanes, the start lanes become
// pos + start (`base` holds pos), the end lanes end - start.
NEARDUP_AVX512BW_TARGET __attribute__((always_inline)) inline void StoreSpanStepAvx512Bw(
    const uint32_t* index, size_t token, __m512i base, TokenSpan* out) {
  const __m512i pairs = _mm512_cvtepu32_epi64(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index + 2 * token)));
  const __m512i starts = _mm512_permutexvar_epi64(_mm512_set_epi64(6, 6, 4, 4, 2, 2, 0, 0), pairs);
  _mm512_storeu_si512(out + token,
                      _mm512_mask_sub_epi64(_mm512_add_epi64(pairs, base), 0xAA, pairs, starts));
}

// EmitTokensAvx512 without VBMI2 (no vpcompressb): the edge indices by
// vpcompressd, sixteen edges at a time, into a small array; then four
// tokens per step, their (start, end) index pairs widened to 64 bits and
// turned into (begin, length) spans by one add and one masked subtract;
// the first span is written again from scalar registers (right whether or
// not a token was open). No branch on the text below 13 tokens a block.
// Same contract as EmitTokensAvx512; stores whole steps of four
// spans, three always, so REQUIRES room for max(13, carry + tokens rounded
// up to 4) spans at out (at most kMaxTokensPerBlock).
NEARDUP_AVX512BW_TARGET __attribute__((always_inline)) inline size_t EmitTokensAvx512Bw(
    uint64_t edges, size_t pos, TokenSpan* out, bool* open, size_t* open_begin) {
  const uint32_t carry = *open ? 1 : 0;
  const uint32_t count = static_cast<uint32_t>(__builtin_popcountll(edges)) + carry;
  const size_t tokens = count / 2;
  // index[carry + i]: the i-th edge of the block (index[0] unused with a
  // token open); 64 edges, plus room for a whole store past the last and
  // for the span steps' loads past it. The entries past the edges are
  // indeterminate: the spans made from them lie past `tokens` and are never
  // counted (a memory checker may still flag their loads).
  alignas(64) uint32_t index[1 + 64 + 16 + 16];
  const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  uint32_t* dst = index + carry;
  for (int quarter = 0; quarter < 4; ++quarter) {
    const auto bits = static_cast<__mmask16>(edges >> (16 * quarter));
    const __m512i at = _mm512_add_epi32(iota, _mm512_set1_epi32(16 * quarter));
    _mm512_storeu_si512(dst, _mm512_maskz_compress_epi32(bits, at));
    dst += __builtin_popcount(bits);
  }
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(pos));
  // Token t's edges are index[2t] and index[2t + 1] whether or not a
  // token was open (the edges start at index[carry]); tokens carry ..
  // tokens - 1 from those pairs, three steps always.
  for (size_t token = carry; token < carry + 12; token += 4) {
    StoreSpanStepAvx512Bw(index, token, base, out);
  }
  for (size_t token = carry + 12; token < tokens; token += 4) {
    StoreSpanStepAvx512Bw(index, token, base, out);
  }
  // The first span, right in both cases (selects, as in EmitTokensAvx512):
  // the open token and its end at the lowest edge, or the first two edges.
  const size_t first = pos + _tzcnt_u64(edges);
  const size_t second = pos + _tzcnt_u64(_blsr_u64(edges));
  const size_t carry_mask = size_t{0} - carry;
  const size_t first_begin = (*open_begin & carry_mask) | (first & ~carry_mask);
  const size_t first_end = (first & carry_mask) | (second & ~carry_mask);
  out[0] = TokenSpan{first_begin, first_end - first_begin};
  *open = (count & 1) != 0;
  const size_t highest = pos + 63 - static_cast<size_t>(__builtin_clzll(edges | 1));
  const size_t any_edge = size_t{0} - static_cast<size_t>(edges != 0);
  *open_begin = (highest & any_edge) | (*open_begin & ~any_edge);
  return tokens;
}

struct EmitBlockAvx512Bw {
  NEARDUP_AVX512BW_TARGET size_t operator()(uint64_t edges, size_t pos, TokenSpan* out, bool* open,
                                            size_t* open_begin) const {
    return EmitTokensAvx512Bw(edges, pos, out, open, open_begin);
  }
};

}  // namespace

NEARDUP_AVX512BW_TARGET size_t TokenScanner::NextAvx512Bw(TokenSpan* out, size_t capacity) {
  if (token_bits_ != nullptr) return ScanBits(out, capacity, EmitBlockAvx512Bw());
  return word_ ? Scan(out, capacity, ClassifyBlockAvx512Bw<true>(), NoBlockNonAscii(),
                      EmitBlockAvx512Bw())
               : Scan(out, capacity, ClassifyBlockAvx512Bw<false>(), NoBlockNonAscii(),
                      EmitBlockAvx512Bw());
}
NEARDUP_INTRINSICS_WARNINGS_ON
#else
size_t TokenScanner::NextAvx512(TokenSpan* out, size_t capacity) {
  return Scan(out, capacity, classify_, NoBlockNonAscii(), &EmitTokensScalar);
}
size_t TokenScanner::NextBitsAvx512(TokenSpan* out, size_t capacity) {
  return ScanBits(out, capacity, &EmitTokensScalar);
}
size_t TokenScanner::NextAvx512Bw(TokenSpan* out, size_t capacity) {
  if (token_bits_ != nullptr) return ScanBits(out, capacity, &EmitTokensScalar);
  return Scan(out, capacity, classify_, NoBlockNonAscii(), &EmitTokensScalar);
}
#endif

}  // namespace neardup::internal
