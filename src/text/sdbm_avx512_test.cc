#include "text/sdbm_avx512.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hash/feature_hash.h"
#include "text/stopwords.h"
#include "text/text_kernels.h"
#include "text/token_kernel_test_util.h"
#include "util/mix.h"

namespace neardup::internal {
namespace {

// Whether the AVX-512 path's kernel table holds the sdbm kernel.
bool HaveSdbmAvx512() {
  return CpuSupports(CpuPath::kAvx512) && TextKernelsFor(CpuPath::kAvx512).sdbm_spans != nullptr;
}

// The scalar definition: SdbmHash of each span not in `stopwords`.
std::vector<uint64_t> Expected(const std::string& text, const std::vector<TokenSpan>& spans,
                               uint64_t seed, const StopwordSet* stopwords) {
  std::vector<uint64_t> want;
  for (const TokenSpan& span : spans) {
    const std::string_view token = std::string_view(text).substr(span.begin, span.length);
    if (stopwords != nullptr && stopwords->Contains(token)) continue;
    want.push_back(SdbmHash(token, seed));
  }
  return want;
}

void ExpectSpans(const std::string& text, const std::vector<TokenSpan>& spans, uint64_t seed,
                 const StopwordSet* stopwords) {
  std::vector<uint64_t> got(spans.size() + 1, 0x5555);
  const size_t n = SdbmSpansAvx512(text, spans.data(), spans.size(), seed, stopwords, got.data());
  ASSERT_LE(n, spans.size());
  EXPECT_EQ(got[spans.size()], 0x5555u) << "wrote past num_spans";
  got.resize(n);
  ASSERT_EQ(got, Expected(text, spans, seed, stopwords)) << "seed " << seed;
}

TEST(SdbmAvx512Test, EveryLength0To300AtEveryAlignmentMatchesSdbmHash) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  const std::string text = testing::RandomTokenBytes(400, 1);
  for (uint64_t seed : testing::TokenKernelTestSeeds()) {
    for (size_t length = 0; length <= 300; ++length) {
      for (size_t begin = 0; begin < 80 && begin + length <= text.size(); begin += 1 + begin / 8) {
        const std::string_view token = std::string_view(text).substr(begin, length);
        ASSERT_EQ(SdbmHashAvx512(token, seed), SdbmHash(token, seed))
            << "length " << length << " at " << begin << " seed " << seed;
      }
      const std::string_view last = std::string_view(text).substr(text.size() - length);
      ASSERT_EQ(SdbmHashAvx512(last, seed), SdbmHash(last, seed)) << length;
    }
  }
}

TEST(SdbmAvx512Test, SpansOfEveryLengthAndOffsetMatchSdbmHash) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  const std::string text = testing::RandomTokenBytes(200, 2);
  const std::vector<TokenSpan> spans = testing::EverySpanUpTo(text.size(), 40);
  for (uint64_t seed : testing::TokenKernelTestSeeds()) {
    // Odd counts leave a tail after the groups of eight.
    for (size_t count : {spans.size(), spans.size() - 5, size_t{7}, size_t{0}}) {
      ExpectSpans(text, std::vector<TokenSpan>(spans.begin(), spans.begin() + count), seed,
                  nullptr);
    }
  }
}

TEST(SdbmAvx512Test, RandomSpansOfShortTextsMatchSdbmHash) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  SplitMix64 rng(3);
  for (int round = 0; round < 300; ++round) {
    const std::string text = testing::RandomTokenBytes(1 + rng.Next() % 40, rng.Next());
    std::vector<TokenSpan> spans;
    for (int i = 0; i < 24; ++i) {
      const size_t begin = rng.Next() % text.size();
      const size_t length = rng.Next() % (text.size() - begin + 1);
      spans.push_back({begin, length});
    }
    ExpectSpans(text, spans, rng.Next(), nullptr);
  }
}

// Tokens that are stopwords, near misses of them (one byte more, less or
// changed, a NUL inside or after, the same bytes at other lengths), and
// random words, with the spans placed anywhere in the text.
std::string StopwordText(const StopwordSet& set, SplitMix64* rng, std::vector<TokenSpan>* spans) {
  std::string text;
  auto add = [&](const std::string& token) {
    text.append(rng->Next() % 3, ' ');
    spans->push_back({text.size(), token.size()});
    text += token;
  };
  const std::vector<std::string>& words = set.words();
  for (int i = 0; i < 400; ++i) {
    std::string w = words[rng->Next() % words.size()];
    switch (rng->Next() % 9) {
      case 0:
        w.push_back(static_cast<char>('a' + rng->Next() % 26));
        break;
      case 1:
        w.pop_back();
        break;
      case 2:
        w[rng->Next() % w.size()] ^= static_cast<char>(1 << (rng->Next() % 8));
        break;
      case 3:
        w.push_back('\0');
        break;
      case 4:
        w.insert(w.begin() + static_cast<long>(rng->Next() % w.size()), '\0');
        break;
      case 5:
        w = w + w;
        break;
      case 6:
        w = testing::RandomTokenBytes(1 + rng->Next() % 24, rng->Next());
        break;
      default:
        break;  // the stopword itself
    }
    add(w);
  }
  return text;
}

void ExpectFilterMatchesContains(const StopwordSet& set, uint64_t seed) {
  SplitMix64 rng(seed);
  for (int round = 0; round < 20; ++round) {
    std::vector<TokenSpan> spans;
    const std::string text = StopwordText(set, &rng, &spans);
    ExpectSpans(text, spans, seed, &set);
  }
}

TEST(SdbmAvx512Test, EnglishStopwordFilterMatchesContains) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  const StopwordSet english = StopwordSet::English();
  ASSERT_NE(english.probe_table(), nullptr);
  for (uint64_t seed : testing::TokenKernelTestSeeds()) ExpectFilterMatchesContains(english, seed);
  // Every word, alone and at the start and end of the text (the guards).
  for (const std::string& word : english.words()) {
    for (const std::string& text : {word, word + " x", "x " + word, std::string(20, 'x') + word}) {
      std::vector<TokenSpan> spans(9, TokenSpan{text.size() - word.size(), word.size()});
      ExpectSpans(text, spans, 0, &english);
    }
  }
}

TEST(SdbmAvx512Test, CustomStopwordFilterMatchesContains) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  NormalizationOptions raw;
  raw.nfkc = false;
  raw.case_fold = false;
  // Words of every probe length, longer ones (Contains only), bytes >= 0x80
  // and NUL.
  std::vector<std::string> words = {"x",
                                    std::string("a\0b", 3),
                                    std::string(8, 'q'),
                                    std::string(9, 'q'),
                                    std::string(15, 'r'),
                                    std::string(16, 'r'),
                                    std::string(40, 's'),
                                    "\xC3\xA9t\xC3\xA9"};
  SplitMix64 rng(9);
  for (int i = 0; i < 60; ++i)
    words.push_back(testing::RandomTokenBytes(1 + rng.Next() % 20, rng.Next()));
  const StopwordSet set = StopwordSet::FromWords(words, raw);
  ASSERT_NE(set.probe_table(), nullptr);
  for (uint64_t seed : testing::TokenKernelTestSeeds()) ExpectFilterMatchesContains(set, seed);
}

// Spans of every length 0..300 at many alignments, the last ones ending at
// the text's end and the first ones starting at its start (the edges where
// the kernel's 8-byte reads would leave the text), with and without stopword
// sets; the counts leave every tail size after the groups of eight.
TEST(SdbmAvx512Test, SpansOfEveryLength0To300AtManyAlignmentsMatchScalar) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  NormalizationOptions raw;
  raw.nfkc = false;
  raw.case_fold = false;
  std::string text = testing::RandomTokenBytes(420, 21);
  text[100] = '\0';
  text[101] = '\0';
  // Words cut from the text itself, so some spans are stopwords: 1..15
  // bytes (the probe), 16 and 40 bytes (Contains only).
  std::vector<std::string> words;
  for (size_t length : {1, 2, 3, 7, 8, 9, 12, 15, 16, 40}) {
    words.push_back(text.substr(0, length));
    words.push_back(text.substr(text.size() - length));
    words.push_back(text.substr(97, length));
  }
  const StopwordSet cut = StopwordSet::FromWords(words, raw);
  const StopwordSet english = StopwordSet::English();
  std::vector<TokenSpan> spans;
  for (size_t length = 0; length <= 300; ++length) {
    for (size_t begin = 0; begin < 70 && begin + length <= text.size(); begin += 1 + begin / 6) {
      spans.push_back({begin, length});
      spans.push_back({97, std::min(length, text.size() - 97)});
    }
    spans.push_back({text.size() - length, length});
  }
  for (uint64_t seed : testing::TokenKernelTestSeeds()) {
    for (size_t drop = 0; drop < 8; ++drop) {
      const std::vector<TokenSpan> some(spans.begin(), spans.end() - static_cast<long>(drop));
      ExpectSpans(text, some, seed, nullptr);
      ExpectSpans(text, some, seed, &cut);
      ExpectSpans(text, some, seed, &english);
    }
  }
}

// Groups where several 9-15-byte tokens are stopwords (the second pass
// clears their keep bits one by one), between 1-8-byte stopwords and long
// tokens, over more than one call's worth of spans.
TEST(SdbmAvx512Test, ManyMidLengthStopwordsPerGroupMatchContains) {
  if (!HaveSdbmAvx512()) GTEST_SKIP() << "no AVX-512";
  NormalizationOptions raw;
  raw.nfkc = false;
  raw.case_fold = false;
  SplitMix64 rng(23);
  std::vector<std::string> words;
  for (size_t length = 1; length <= 20; ++length)
    words.push_back(testing::RandomTokenBytes(length, rng.Next()));
  const StopwordSet set = StopwordSet::FromWords(words, raw);
  ASSERT_NE(set.probe_table(), nullptr);
  for (int round = 0; round < 30; ++round) {
    std::string text;
    std::vector<TokenSpan> spans;
    const size_t count = 1 + rng.Next() % 700;
    for (size_t i = 0; i < count; ++i) {
      std::string w = set.words()[rng.Next() % set.words().size()];
      if (rng.Next() % 4 == 0) w.back() ^= 1;  // a near miss
      text.append(rng.Next() % 2, ' ');
      spans.push_back({text.size(), w.size()});
      text += w;
    }
    ExpectSpans(text, spans, rng.Next(), &set);
  }
}

TEST(StopwordProbeTableTest, AgreesWithContains) {
  NormalizationOptions raw;
  raw.nfkc = false;
  raw.case_fold = false;
  SplitMix64 rng(11);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> words;
    const size_t count = 1 + rng.Next() % 300;
    for (size_t i = 0; i < count; ++i)
      words.push_back(testing::RandomTokenBytes(1 + rng.Next() % 16, rng.Next()));
    const StopwordSet set = StopwordSet::FromWords(words, raw);
    const StopwordProbeTable* table = set.probe_table();
    ASSERT_NE(table, nullptr) << count << " words";
    for (const std::string& w : set.words()) {
      EXPECT_EQ(table->Contains(w), w.size() <= StopwordProbeTable::kMaxLength) << w.size();
    }
    std::vector<TokenSpan> spans;
    const std::string text = StopwordText(set, &rng, &spans);
    for (const TokenSpan& span : spans) {
      const std::string_view token = std::string_view(text).substr(span.begin, span.length);
      if (token.size() > StopwordProbeTable::kMaxLength) continue;
      ASSERT_EQ(table->Contains(token), set.Contains(token));
    }
  }
}

TEST(StopwordProbeTableTest, TooManyWordsHaveNoTableAndStillFilter) {
  NormalizationOptions raw;
  std::vector<std::string> words;
  for (size_t i = 0; i <= StopwordSet::kMaxProbeWords; ++i)
    words.push_back("w" + std::to_string(i));
  const StopwordSet set = StopwordSet::FromWords(words, raw);
  EXPECT_EQ(set.probe_table(), nullptr);
  EXPECT_TRUE(set.Contains("w17"));
  // Only words too long for the table: no table either.
  const StopwordSet long_words = StopwordSet::FromWords({std::string(16, 'z')}, raw);
  EXPECT_EQ(long_words.probe_table(), nullptr);
  EXPECT_TRUE(long_words.Contains(std::string(16, 'z')));
}

}  // namespace
}  // namespace neardup::internal
