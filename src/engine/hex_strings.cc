#include "engine/hex_strings.h"

#include <immintrin.h>

#include <array>
#include <cstring>

#include "hash/cpu_features.h"
#include "hash/cpu_path.h"

namespace neardup::internal {
namespace {

// Each value takes its 16 digits and the `","` before the next one.
constexpr size_t kBytesPerValue = 19;
// The vector path writes eight values' 152 bytes as three 64-byte stores.
constexpr size_t kGroupBytes = 8 * kBytesPerValue;
// Room kept past the last value's separator: the vector path's third
// 64-byte store of a group reaches 40 bytes past it, the portable writer's
// four-byte separator store 1 byte; the other 4 bytes are spare.
constexpr size_t kSlackBytes = 3 * 64 - kGroupBytes + 4;

// out: the array's bytes from '[' on, with room for values.size() *
// kBytesPerValue + 2 + kSlackBytes (the stores past the last value).
// Returns the array's size.
template <typename WriteDigits>
size_t WriteArray(char* out, std::span<const uint64_t> values, WriteDigits write_digits) {
  char* p = out;
  *p++ = '[';
  if (values.empty()) {
    *p++ = ']';
    return 2;
  }
  *p++ = '"';
  write_digits(p, values);
  p += values.size() * kBytesPerValue - 3;  // after the last value's digits
  *p++ = '"';
  *p++ = ']';
  return static_cast<size_t>(p - out);
}

void WriteDigitsPortable(char* p, std::span<const uint64_t> values) {
  for (const uint64_t value : values) {
    WriteHex64Digits(p, value);
    std::memcpy(p + 16, "\",\"", 4);  // the 4th byte is the next value's first digit or spare
    p += kBytesPerValue;
  }
}

#define NEARDUP_HEX_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

// Byte permutes that turn four values (32 bytes, little-endian) into their
// 64 nibbles in output order: index i < 64 takes the high nibble of byte i,
// 64 + i the low nibble of byte i.
constexpr std::array<uint8_t, 64> NibbleOrder(int first_value) {
  std::array<uint8_t, 64> order{};
  for (int value = 0; value < 4; ++value) {
    for (int k = 0; k < 8; ++k) {
      const int byte = 8 * (first_value + value) + 7 - k;  // most significant first
      order[16 * value + 2 * k] = static_cast<uint8_t>(byte);
      order[16 * value + 2 * k + 1] = static_cast<uint8_t>(64 + byte);
    }
  }
  return order;
}
constexpr std::array<uint8_t, 64> kFirstFour = NibbleOrder(0);
constexpr std::array<uint8_t, 64> kLastFour = NibbleOrder(4);
constexpr std::array<uint8_t, 64> kDigits = [] {
  std::array<uint8_t, 64> digits{};
  for (int i = 0; i < 64; ++i) digits[i] = static_cast<uint8_t>("0123456789abcdef"[i & 15]);
  return digits;
}();

// Eight values' output (8 * 19 = 152 bytes) as three 64-byte stores at
// offsets 0, 64 and 128 (the third one's last 40 bytes are overwritten by
// the next group, or are slack). Value v's 16 digits lie in
// `first_four_digits` (values 0-3) or `last_four_digits` (values 4-7) at
// byte 16 (v % 4); its `","` follows them. kStore[s][t] is the source byte
// of output byte 64 s + t: store 0 permutes the first four's digits and
// kQuoteComma, store 2 the last four's and kQuoteComma (64: '"', 65: ','),
// store 1 both (64 + i: byte i of the last four's) with its separators
// blended in from kStore1Separators where kStore1SeparatorMask is set.
constexpr std::array<std::array<uint8_t, 64>, 3> kStore = [] {
  std::array<std::array<uint8_t, 64>, 3> store{};
  for (int s = 0; s < 3; ++s) {
    for (int t = 0; t < 64; ++t) {
      const int j = 64 * s + t;
      if (j >= static_cast<int>(kGroupBytes)) continue;  // overwritten later
      const int value = j / kBytesPerValue;
      const int offset = j % kBytesPerValue;
      const int digit = 16 * (value % 4) + offset;
      if (offset >= 16) {
        store[s][t] = static_cast<uint8_t>(s == 1 ? 0 : (offset == 17 ? 65 : 64));
      } else if (s == 1) {
        store[s][t] = static_cast<uint8_t>(value < 4 ? digit : 64 + digit);
      } else {
        store[s][t] = static_cast<uint8_t>(digit);
      }
    }
  }
  return store;
}();
constexpr uint64_t kStore1SeparatorMask = [] {
  uint64_t mask = 0;
  for (int t = 0; t < 64; ++t) {
    if ((64 + t) % kBytesPerValue >= 16) mask |= uint64_t{1} << t;
  }
  return mask;
}();
constexpr std::array<uint8_t, 64> kStore1Separators = [] {
  std::array<uint8_t, 64> bytes{};
  for (int t = 0; t < 64; ++t) {
    const int offset = (64 + t) % kBytesPerValue;
    bytes[t] = offset == 17 ? ',' : (offset >= 16 ? '"' : 0);
  }
  return bytes;
}();
constexpr std::array<uint8_t, 64> kQuoteComma = [] {
  std::array<uint8_t, 64> bytes{};
  bytes[0] = '"';
  bytes[1] = ',';
  return bytes;
}();

NEARDUP_HEX_TARGET void WriteDigitsAvx512(char* p, std::span<const uint64_t> values) {
  const __m512i first_four = _mm512_loadu_si512(kFirstFour.data());
  const __m512i last_four = _mm512_loadu_si512(kLastFour.data());
  const __m512i digit_table = _mm512_loadu_si512(kDigits.data());
  const __m512i low_nibble = _mm512_set1_epi8(0x0F);
  const __m512i store0 = _mm512_loadu_si512(kStore[0].data());
  const __m512i store1 = _mm512_loadu_si512(kStore[1].data());
  const __m512i store2 = _mm512_loadu_si512(kStore[2].data());
  const __m512i separators1 = _mm512_loadu_si512(kStore1Separators.data());
  const __m512i quote_comma = _mm512_loadu_si512(kQuoteComma.data());
  const __mmask64 separator_mask1 = kStore1SeparatorMask;
  size_t i = 0;
  for (; i + 8 <= values.size(); i += 8) {
    const __m512i bytes = _mm512_loadu_si512(values.data() + i);
    const __m512i high_nibbles = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low_nibble);
    const __m512i low_nibbles = _mm512_and_si512(bytes, low_nibble);
    const __m512i first_four_digits = _mm512_shuffle_epi8(
        digit_table, _mm512_permutex2var_epi8(high_nibbles, first_four, low_nibbles));
    const __m512i last_four_digits = _mm512_shuffle_epi8(
        digit_table, _mm512_permutex2var_epi8(high_nibbles, last_four, low_nibbles));
    _mm512_storeu_si512(p, _mm512_permutex2var_epi8(first_four_digits, store0, quote_comma));
    _mm512_storeu_si512(
        p + 64,
        _mm512_mask_blend_epi8(
            separator_mask1, _mm512_permutex2var_epi8(first_four_digits, store1, last_four_digits),
            separators1));
    _mm512_storeu_si512(p + 128, _mm512_permutex2var_epi8(last_four_digits, store2, quote_comma));
    p += kGroupBytes;
  }
  WriteDigitsPortable(p, values.subspan(i));
}

#define NEARDUP_HEX_AVX2_TARGET __attribute__((target("avx2")))

// Four values per step without byte permutes across lanes (AVX2, and the
// AVX-512 CPUs without VBMI): the bytes of each value reversed (most
// significant first) by vpshufb, split into nibbles, the high and low
// nibbles interleaved (each 128-bit lane then holds two values' 32 nibbles)
// and turned into digits by a table vpshufb; each value's 16 digits are one
// 16-byte store, its `","` a 4-byte one before the next value's digits.
NEARDUP_HEX_AVX2_TARGET void WriteDigitsAvx2(char* p, std::span<const uint64_t> values) {
  const __m256i reverse = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7,
                                           6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  const __m256i digit_table = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kDigits.data()));
  const __m256i low_nibble = _mm256_set1_epi8(0x0F);
  size_t i = 0;
  for (; i + 4 <= values.size(); i += 4) {
    const __m256i bytes = _mm256_shuffle_epi8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values.data() + i)), reverse);
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low_nibble);
    const __m256i low = _mm256_and_si256(bytes, low_nibble);
    // Lane 0: values i (unpacklo) and i + 1 (unpackhi); lane 1: i + 2, i + 3.
    const __m256i even = _mm256_shuffle_epi8(digit_table, _mm256_unpacklo_epi8(high, low));
    const __m256i odd = _mm256_shuffle_epi8(digit_table, _mm256_unpackhi_epi8(high, low));
    const __m128i digits[4] = {_mm256_castsi256_si128(even), _mm256_castsi256_si128(odd),
                               _mm256_extracti128_si256(even, 1), _mm256_extracti128_si256(odd, 1)};
    for (const __m128i& d : digits) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), d);
      std::memcpy(p + 16, "\",\"", 4);  // the 4th byte is the next value's first digit or spare
      p += kBytesPerValue;
    }
  }
  WriteDigitsPortable(p, values.subspan(i));
}

using AppendFunction = void (*)(std::string*, std::span<const uint64_t>);

AppendFunction ChooseAppend() {
  const CpuPath path = DetectCpuPath();
  if (path == CpuPath::kAvx512 && HexStringsAvx512Supported()) {
    return &AppendHexStringArrayAvx512;
  }
  if (path >= CpuPath::kAvx2) return &AppendHexStringArrayAvx2;
  return &AppendHexStringArrayPortable;
}

template <typename WriteDigits>
void Append(std::string* out, std::span<const uint64_t> values, WriteDigits write_digits) {
  const size_t start = out->size();
  out->resize(start + values.size() * kBytesPerValue + 2 + kSlackBytes);
  out->resize(start + WriteArray(out->data() + start, values, write_digits));
}

}  // namespace

void WriteHex64Digits(char* out, uint64_t value) {
  // 32 bits into 8 nibbles, one per byte, least significant nibble in the
  // lowest byte.
  auto spread = [](uint64_t x) {
    x = ((x & 0xFFFF0000u) << 16) | (x & 0xFFFFu);
    x = ((x & 0x0000FF000000FF00u) << 8) | (x & 0x000000FF000000FFu);
    x = ((x & 0x00F000F000F000F0u) << 4) | (x & 0x000F000F000F000Fu);
    return x;
  };
  auto digits = [](uint64_t nibbles) {
    // 0-9 -> '0'-'9', 10-15 -> 'a'-'f': add '0', and 'a' - '0' - 10 = 39
    // where the nibble is 10 or more (bit 4 of nibble + 6).
    const uint64_t letters = ((nibbles + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
    return nibbles + 0x3030303030303030u + letters * 39;
  };
  const uint64_t high = __builtin_bswap64(digits(spread(value >> 32)));
  const uint64_t low = __builtin_bswap64(digits(spread(value & 0xFFFFFFFFu)));
  std::memcpy(out, &high, 8);
  std::memcpy(out + 8, &low, 8);
}

void AppendHexStringArray(std::string* out, std::span<const uint64_t> values) {
  static const AppendFunction append = ChooseAppend();
  append(out, values);
}

void AppendHexStringArrayPortable(std::string* out, std::span<const uint64_t> values) {
  Append(out, values, &WriteDigitsPortable);
}

void AppendHexStringArrayAvx512(std::string* out, std::span<const uint64_t> values) {
  Append(out, values, &WriteDigitsAvx512);
}

void AppendHexStringArrayAvx2(std::string* out, std::span<const uint64_t> values) {
  Append(out, values, &WriteDigitsAvx2);
}

bool HexStringsAvx512Supported() {
  const CpuFeatures& features = HostCpuFeatures();
  return features.avx512f && features.avx512bw && features.avx512vbmi;
}

}  // namespace neardup::internal
