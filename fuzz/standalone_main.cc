// Drives a libFuzzer entry point without libFuzzer (for g++ and CI): every file
// of the seed corpus directories given on the command line, then seeded random
// inputs and mutations of the seeds. Deterministic: the same binary always
// feeds the same inputs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Fewer for some targets in a sanitizer build (neardup_add_fuzzer's
// SANITIZED_INPUTS, fuzz/CMakeLists.txt).
#ifndef NEARDUP_FUZZ_RANDOM_INPUTS
#define NEARDUP_FUZZ_RANDOM_INPUTS 3000
#endif
constexpr int kRandomInputs = NEARDUP_FUZZ_RANDOM_INPUTS;
constexpr size_t kMaxRandomSize = 4096;

void Run(const std::string& input) {
  // Copy into an exactly sized buffer so ASan catches reads past the end.
  std::vector<uint8_t> buffer(input.begin(), input.end());
  LLVMFuzzerTestOneInput(buffer.data(), buffer.size());
}

std::string RandomInput(std::mt19937_64& rng, const std::vector<std::string>& seeds) {
  std::string out;
  if (!seeds.empty() && rng() % 2 == 0) out = seeds[rng() % seeds.size()];
  size_t size = rng() % kMaxRandomSize;
  // Bias towards bytes that matter to text parsers: ASCII, UTF-8 lead and
  // continuation bytes, quotes, braces, new lines.
  static const char kInteresting[] = "{}[]\":,\\\n \t.\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\xc0";
  if (out.empty()) {
    for (size_t i = 0; i < size; ++i) {
      out.push_back(rng() % 3 == 0 ? kInteresting[rng() % (sizeof(kInteresting) - 1)]
                                   : static_cast<char>(rng() % 256));
    }
  } else {
    int mutations = 1 + static_cast<int>(rng() % 8);
    for (int m = 0; m < mutations && !out.empty(); ++m) {
      size_t pos = rng() % out.size();
      switch (rng() % 3) {
        case 0:
          out[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          out.erase(pos, 1 + rng() % 8);
          break;
        default:
          out.insert(pos, 1, kInteresting[rng() % (sizeof(kInteresting) - 1)]);
      }
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path dir(argv[i]);
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  Run("");
  for (const std::string& seed : seeds) Run(seed);
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < kRandomInputs; ++i) Run(RandomInput(rng, seeds));
  std::printf("fuzz: %zu seeds and %d generated inputs ran clean\n", seeds.size(), kRandomInputs);
  return 0;
}
