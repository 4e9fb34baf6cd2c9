#include "hash/siphash.h"

#include <sys/random.h>

#include <cerrno>
#include <random>

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
    std::random_device device;
    for (uint64_t& word : words) word = (uint64_t{device()} << 32) ^ device();
  }
  return SipKey{words[0], words[1]};
}

const SipKey& ProcessSipKey() {
  static const SipKey key = RandomSipKey();
  return key;
}

}  // namespace neardup::internal
