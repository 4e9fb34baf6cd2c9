#include "util/base64.h"

namespace neardup::internal {

void AppendBase64(std::string* out, std::span<const uint8_t> bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out->push_back(kAlphabet[v >> 18]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest == 0) return;
  uint32_t v = uint32_t{bytes[i]} << 16;
  if (rest == 2) v |= uint32_t{bytes[i + 1]} << 8;
  out->push_back(kAlphabet[v >> 18]);
  out->push_back(kAlphabet[(v >> 12) & 63]);
  out->push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
  out->push_back('=');
}

std::vector<uint8_t> WideSimHashBytes(const WideSimHash& simhash) {
  std::vector<uint8_t> bytes(static_cast<size_t>(simhash.bits / 8));
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(simhash.words[i / 8] >> (56 - 8 * (i % 8)));
  }
  return bytes;
}

}  // namespace neardup::internal
