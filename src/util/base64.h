// Base64 (RFC 4648 section 4: the standard alphabet, "=" padding), as
// Elixir's Base.encode64 writes it: the text form of the digest route's
// SimHash in `neardup fingerprint`. Cost: O(bytes). Thread safety: pure.
#ifndef NEARDUP_UTIL_BASE64_H_
#define NEARDUP_UTIL_BASE64_H_

#include <cstdint>
#include <span>
#include <string>

namespace neardup::internal {

// Appends the Base64 form of `bytes` (4 characters per 3 bytes, padded).
void AppendBase64(std::string* out, std::span<const uint8_t> bytes);

}  // namespace neardup::internal

#endif  // NEARDUP_UTIL_BASE64_H_
