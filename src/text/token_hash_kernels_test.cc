// The vectorised XXH3 span kernels (token_hash_avx2.h, token_hash_avx512.h)
// against the library's XXH3_64bits_withSeed, each on the CPUs that run it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "hash/cpu_path.h"
#include "hash/feature_hash.h"
#include "text/token_hash_avx2.h"
#include "text/token_hash_avx512.h"
#include "text/token_kernel_test_util.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

struct Xxh3SpansKernel {
  const char* name;
  CpuPath path;  // the kernel runs where CpuSupports(path)
  void (*spans)(std::string_view text, const TokenSpan* spans, size_t num_spans, uint64_t seed,
                uint64_t* out);
};

class Xxh3SpansKernelTest : public ::testing::TestWithParam<Xxh3SpansKernel> {
 protected:
  void SetUp() override {
    if (!CpuSupports(GetParam().path)) GTEST_SKIP() << "the CPU cannot run " << GetParam().name;
  }

  // Xxh3Hash calls the library's XXH3_64bits_withSeed.
  void ExpectSpansMatchLibrary(const std::string& text, const std::vector<TokenSpan>& spans,
                               uint64_t seed) {
    std::vector<uint64_t> got(spans.size());
    GetParam().spans(text, spans.data(), spans.size(), seed, got.data());
    for (size_t i = 0; i < spans.size(); ++i) {
      ASSERT_EQ(got[i],
                Xxh3Hash(std::string_view(text).substr(spans[i].begin, spans[i].length), seed))
          << "span " << spans[i].begin << "+" << spans[i].length << " seed " << seed;
    }
  }
};

TEST_P(Xxh3SpansKernelTest, EveryLength0To300MatchesTheLibrary) {
  const std::string text = testing::RandomTokenBytes(340, 1);
  for (uint64_t seed : testing::TokenKernelTestSeeds()) {
    std::vector<TokenSpan> spans;
    // Every length at offsets near the start (the gather guard), in the
    // middle, and ending at the last byte (the guard at the end).
    for (size_t length = 0; length <= 300; ++length) {
      for (size_t begin : {size_t{0}, size_t{3}, size_t{8}, size_t{13}, size_t{20}}) {
        spans.push_back({begin, length});
      }
      spans.push_back({text.size() - length, length});
    }
    ExpectSpansMatchLibrary(text, spans, seed);
  }
}

TEST_P(Xxh3SpansKernelTest, ShortTokensAtEveryOffsetMatchTheLibrary) {
  const std::string text = testing::RandomTokenBytes(200, 2);
  const std::vector<TokenSpan> spans = testing::EverySpanUpTo(text.size(), 17);
  for (uint64_t seed : testing::TokenKernelTestSeeds()) {
    // Odd counts leave a partial group after the full vectors.
    for (size_t count : {spans.size(), spans.size() - 3, size_t{7}, size_t{0}}) {
      ExpectSpansMatchLibrary(text, std::vector<TokenSpan>(spans.begin(), spans.begin() + count),
                              seed);
    }
  }
}

TEST_P(Xxh3SpansKernelTest, RandomSpansOfShortTextsMatchTheLibrary) {
  SplitMix64 rng(3);
  for (int round = 0; round < 200; ++round) {
    const std::string text = testing::RandomTokenBytes(1 + rng.Next() % 40, rng.Next());
    std::vector<TokenSpan> spans;
    for (int i = 0; i < 24; ++i) {
      const size_t begin = rng.Next() % text.size();
      const size_t length = rng.Next() % (text.size() - begin + 1);
      spans.push_back({begin, length});
    }
    ExpectSpansMatchLibrary(text, spans, rng.Next());
  }
}

TEST_P(Xxh3SpansKernelTest, ManyMixedSpansAcrossChunksMatchTheLibrary) {
  // Thousands of spans of all short length classes in random order: the
  // 9-16-byte tokens are hashed in a second pass and written back by index,
  // in chunks of 256 spans.
  SplitMix64 rng(8);
  const std::string text = testing::RandomTokenBytes(5000, 9);
  for (size_t count : {size_t{255}, size_t{256}, size_t{257}, size_t{3001}}) {
    std::vector<TokenSpan> spans;
    for (size_t i = 0; i < count; ++i) {
      const size_t length = rng.Next() % 21;
      spans.push_back({rng.Next() % (text.size() - length + 1), length});
    }
    ExpectSpansMatchLibrary(text, spans, rng.Next());
  }
}

TEST_P(Xxh3SpansKernelTest, EveryLengthAtEveryAlignmentMatchesTheLibrary) {
  // Every length 0-300 starting at each of 64 offsets (every alignment to
  // a cache line), and ending at each of the last 64 bytes of the text:
  // the 17-128-byte lanes read 16-byte pairs from the front and the back,
  // the 9-16-byte ones 8 bytes from each end, so offsets decide which
  // bytes overlap.
  const std::string text = testing::RandomTokenBytes(420, 11);
  SplitMix64 rng(12);
  for (int seed_round = 0; seed_round < 3; ++seed_round) {
    const uint64_t seed = seed_round == 0 ? 0 : rng.Next();
    std::vector<TokenSpan> spans;
    for (size_t length = 0; length <= 300; ++length) {
      for (size_t offset = 0; offset < 64; ++offset) {
        spans.push_back({offset, length});
        spans.push_back({text.size() - length - offset, length});
      }
    }
    ExpectSpansMatchLibrary(text, spans, seed);
  }
}

TEST_P(Xxh3SpansKernelTest, LongTokensMixedWithShortOnesMatchTheLibrary) {
  // Groups of eight that mix every length class (1-8, 9-16, 17-32, 33-64,
  // 65-96, 97-128, longer, empty), so the 17-128-byte lanes of one vector
  // take different numbers of 16-byte pairs and share it with lanes for
  // the scalar routine; tokens end at the last byte of the text too.
  SplitMix64 rng(13);
  const std::string text = testing::RandomTokenBytes(3000, 14);
  for (size_t count : {size_t{1}, size_t{9}, size_t{256}, size_t{257}, size_t{2000}}) {
    std::vector<TokenSpan> spans;
    for (size_t i = 0; i < count; ++i) {
      const size_t length = rng.Next() % 4 == 0 ? rng.Next() % 301 : rng.Next() % 140;
      const size_t begin =
          rng.Next() % 8 == 0 ? text.size() - length : rng.Next() % (text.size() - length + 1);
      spans.push_back({begin, length});
    }
    ExpectSpansMatchLibrary(text, spans, rng.Next());
  }
}

TEST_P(Xxh3SpansKernelTest, ShortLengthsInEveryLaneOfAGroupMatchTheLibrary) {
  // The 1-8-byte classes take per-length constants by lane (the AVX-512
  // kernel: seed-dependent xor words built in registers for the 1-3- and
  // 4-8-byte entries, and the pre-mix chosen by class per lane). Groups of
  // eight tokens, first all of one length, then lengths 1..8 rotated so
  // every length sits in every lane, for seeds whose halves differ (the
  // 4-8-byte class folds bswap32 of the seed's low half into its high one).
  const std::string text = testing::RandomTokenBytes(720, 15);
  std::vector<uint64_t> seeds = testing::TokenKernelTestSeeds();
  seeds.push_back(0x0123456789abcdefULL);
  seeds.push_back(0xfedcba9800000000ULL);
  for (uint64_t seed : seeds) {
    std::vector<TokenSpan> spans;
    size_t begin = 8;
    auto add = [&](size_t length) {
      spans.push_back({begin, length});
      begin += length + 1;
    };
    for (size_t length = 1; length <= 8; ++length) {
      for (size_t lane = 0; lane < 8; ++lane) add(length);
    }
    for (size_t rotation = 0; rotation < 8; ++rotation) {
      for (size_t lane = 0; lane < 8; ++lane) add((lane + rotation) % 8 + 1);
    }
    ASSERT_LE(begin, text.size());
    ExpectSpansMatchLibrary(text, spans, seed);
  }
}

#ifdef __linux__
// `size` bytes of read-write memory that end right before a no-access page
// (at_end) or start right after one, so that a read or a write past that
// end faults.
class GuardedBytes {
 public:
  GuardedBytes(size_t size, bool at_end) : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    pages_ = (size + page_ - 1) / page_ + 2;
    void* map =
        mmap(nullptr, pages_ * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return;
    base_ = static_cast<char*>(map);
    if (mprotect(base_, page_, PROT_NONE) != 0 ||
        mprotect(base_ + (pages_ - 1) * page_, page_, PROT_NONE) != 0) {
      return;
    }
    data_ = at_end ? base_ + (pages_ - 1) * page_ - size : base_ + page_;
  }
  ~GuardedBytes() {
    if (base_ != nullptr) munmap(base_, pages_ * page_);
  }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;

  // Null when the mapping or its protection failed.
  char* data() const { return data_; }

 private:
  size_t page_;
  size_t pages_ = 0;
  char* base_ = nullptr;
  char* data_ = nullptr;
};

// The text, the spans and out each against a no-access page: the kernels'
// gathers must not read a byte before or after the text or the spans, nor
// write past out[num_spans). Every span of texts of 0-17 bytes (and two
// longer ones), with the text ending at the guard and starting right after
// it; every count 0-40 of those spans shuffled (every tail mask) and counts
// around the 256-span chunk.
TEST_P(Xxh3SpansKernelTest, TextSpansAndOutAgainstNoAccessPagesMatchTheLibrary) {
  SplitMix64 rng(21);
  auto check = [&](std::string_view text, const std::vector<TokenSpan>& spans, uint64_t seed) {
    GuardedBytes guarded_spans(spans.size() * sizeof(TokenSpan), /*at_end=*/true);
    GuardedBytes guarded_out(spans.size() * sizeof(uint64_t), /*at_end=*/true);
    ASSERT_NE(guarded_spans.data(), nullptr);
    ASSERT_NE(guarded_out.data(), nullptr);
    auto* in = reinterpret_cast<TokenSpan*>(guarded_spans.data());
    auto* out = reinterpret_cast<uint64_t*>(guarded_out.data());
    if (!spans.empty()) std::memcpy(in, spans.data(), spans.size() * sizeof(TokenSpan));
    GetParam().spans(text, in, spans.size(), seed, out);
    for (size_t i = 0; i < spans.size(); ++i) {
      ASSERT_EQ(out[i], Xxh3Hash(text.substr(spans[i].begin, spans[i].length), seed))
          << "text of " << text.size() << " bytes, span " << spans[i].begin << "+"
          << spans[i].length << " of " << spans.size() << " seed " << seed;
    }
  };
  std::vector<size_t> sizes;
  for (size_t size = 0; size <= 17; ++size) sizes.push_back(size);
  sizes.push_back(40);
  sizes.push_back(129);
  const uint64_t seeds[] = {0, 0x0123456789abcdefULL, rng.Next()};
  for (size_t size : sizes) {
    for (bool at_end : {true, false}) {
      GuardedBytes guarded_text(size, at_end);
      ASSERT_NE(guarded_text.data(), nullptr);
      const std::string bytes = testing::RandomTokenBytes(size, size + 100);
      if (size > 0) std::memcpy(guarded_text.data(), bytes.data(), size);
      const std::string_view text(guarded_text.data(), size);
      std::vector<TokenSpan> all;
      for (size_t begin = 0; begin <= size; ++begin) {
        for (size_t length = 0; begin + length <= size; ++length) all.push_back({begin, length});
      }
      for (uint64_t seed : seeds) {
        check(text, all, seed);
        std::vector<TokenSpan> shuffled = all;
        for (size_t i = shuffled.size(); i > 1; --i) {
          std::swap(shuffled[i - 1], shuffled[rng.Next() % i]);
        }
        for (size_t count = 0; count <= 40 && count <= shuffled.size(); ++count) {
          check(text, std::vector<TokenSpan>(shuffled.begin(), shuffled.begin() + count), seed);
        }
        for (size_t count : {size_t{255}, size_t{256}, size_t{257}}) {
          std::vector<TokenSpan> spans;
          for (size_t i = 0; i < count; ++i) spans.push_back(all[rng.Next() % all.size()]);
          check(text, spans, seed);
        }
        if (HasFatalFailure()) return;
      }
    }
  }
}
#else
TEST_P(Xxh3SpansKernelTest, TextSpansAndOutAgainstNoAccessPagesMatchTheLibrary) {
  GTEST_SKIP() << "needs mmap and mprotect (Linux)";
}
#endif

INSTANTIATE_TEST_SUITE_P(
    Kernels, Xxh3SpansKernelTest,
    ::testing::Values(Xxh3SpansKernel{"avx2", CpuPath::kAvx2, &Xxh3SpansAvx2},
                      Xxh3SpansKernel{"avx512", CpuPath::kAvx512, &Xxh3SpansAvx512}),
    [](const ::testing::TestParamInfo<Xxh3SpansKernel>& info) { return info.param.name; });

}  // namespace
}  // namespace neardup::internal
