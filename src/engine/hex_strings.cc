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
// The most any writer stores past the last value's separator: the vector
// path's second 64-byte store of a group.
constexpr size_t kSlackBytes = 128 - 4 * kBytesPerValue + 4;

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

// Byte permutes that lay four values' 64 digits out as they are written:
// value v's digits at 19 v, `","` after each (76 bytes, in two 64-byte
// stores). Index i < 64: digit byte i; 64: '"'; 65: ','.
constexpr std::array<uint8_t, 128> kLayout = [] {
  std::array<uint8_t, 128> layout{};
  for (int j = 0; j < 4 * static_cast<int>(kBytesPerValue); ++j) {
    const int value = j / kBytesPerValue;
    const int offset = j % kBytesPerValue;
    layout[j] = static_cast<uint8_t>(offset < 16 ? 16 * value + offset : (offset == 17 ? 65 : 64));
  }
  return layout;
}();
constexpr std::array<uint8_t, 64> kQuoteComma = [] {
  std::array<uint8_t, 64> bytes{};
  bytes[0] = '"';
  bytes[1] = ',';
  return bytes;
}();

// Writes four values' digits and separators at p[0, 76), and may write up
// to p + 128.
NEARDUP_HEX_TARGET void StoreFour(char* p, __m512i digits, __m512i layout_low, __m512i layout_high,
                                  __m512i quote_comma) {
  _mm512_storeu_si512(p, _mm512_permutex2var_epi8(digits, layout_low, quote_comma));
  _mm512_storeu_si512(p + 64, _mm512_permutex2var_epi8(digits, layout_high, quote_comma));
}

NEARDUP_HEX_TARGET void WriteDigitsAvx512(char* p, std::span<const uint64_t> values) {
  const __m512i first_four = _mm512_loadu_si512(kFirstFour.data());
  const __m512i last_four = _mm512_loadu_si512(kLastFour.data());
  const __m512i digit_table = _mm512_loadu_si512(kDigits.data());
  const __m512i low_nibble = _mm512_set1_epi8(0x0F);
  const __m512i layout_low = _mm512_loadu_si512(kLayout.data());
  const __m512i layout_high = _mm512_loadu_si512(kLayout.data() + 64);
  const __m512i quote_comma = _mm512_loadu_si512(kQuoteComma.data());
  size_t i = 0;
  for (; i + 8 <= values.size(); i += 8) {
    const __m512i bytes = _mm512_loadu_si512(values.data() + i);
    const __m512i high = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low_nibble);
    const __m512i low = _mm512_and_si512(bytes, low_nibble);
    const __m512i a = _mm512_permutex2var_epi8(high, first_four, low);
    const __m512i b = _mm512_permutex2var_epi8(high, last_four, low);
    StoreFour(p, _mm512_shuffle_epi8(digit_table, a), layout_low, layout_high, quote_comma);
    StoreFour(p + 4 * kBytesPerValue, _mm512_shuffle_epi8(digit_table, b), layout_low, layout_high,
              quote_comma);
    p += 8 * kBytesPerValue;
  }
  WriteDigitsPortable(p, values.subspan(i));
}

using AppendFunction = void (*)(std::string*, std::span<const uint64_t>);

AppendFunction ChooseAppend() {
  if (DetectCpuPath() == CpuPath::kAvx512 && HexStringsAvx512Supported()) {
    return &AppendHexStringArrayAvx512;
  }
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

bool HexStringsAvx512Supported() {
  const CpuFeatures& features = HostCpuFeatures();
  return features.avx512f && features.avx512bw && features.avx512vbmi;
}

}  // namespace neardup::internal
