#include "hash/siphash.h"

#include <sys/random.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <random>
#include <string_view>

namespace neardup::internal {

SipKey RandomSipKey() {
  uint64_t words[2] = {0, 0};
  size_t filled = 0;
  char* out = reinterpret_cast<char*>(words);
  while (filled < sizeof(words)) {
    const ssize_t n = ::getrandom(out + filled, sizeof(words) - filled, 0);
    if (n > 0) {
      filled += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;  // ENOSYS (a kernel before 3.17) or a seccomp filter
    }
  }
  if (filled < sizeof(words)) {
    try {
      std::random_device device;  // may throw (no source, or a failed read)
      for (uint64_t& word : words) word = (uint64_t{device()} << 32) ^ device();
      filled = sizeof(words);
    } catch (...) {
      // The last resort below.
    }
  }
  if (filled < sizeof(words)) {
    // No random source at all: what differs between processes and runs,
    // mixed, so that the key is at least not one fixed value.
    const uint64_t seed[4] = {
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()),
        static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()),
        static_cast<uint64_t>(::getpid()), reinterpret_cast<uintptr_t>(&filled)};
    const std::string_view bytes(reinterpret_cast<const char*>(seed), sizeof(seed));
    words[0] ^= SipHash13(SipKey{words[0], 1}, bytes);
    words[1] ^= SipHash13(SipKey{words[1], 2}, bytes);
  }
  return SipKey{words[0], words[1]};
}

const SipKey& ProcessSipKey() {
  static const SipKey key = RandomSipKey();
  return key;
}

}  // namespace neardup::internal
