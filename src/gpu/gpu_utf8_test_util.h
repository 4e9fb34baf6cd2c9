// Texts for the tests and the check of the GPU path's UTF-8 normalisation
// (gpu_utf8_test.cc on the host, cuda_test and neardup_gpu_check on a GPU).
#ifndef NEARDUP_GPU_GPU_UTF8_TEST_UTIL_H_
#define NEARDUP_GPU_GPU_UTF8_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "text/utf8.h"
#include "util/mix.h"

namespace neardup::internal::gpu {

// The golden texts of tests/golden_test.cc (every script the recipes treat
// differently), and edge cases of units, documents and segments.
inline std::vector<std::string> Utf8GoldenAndEdgeTexts() {
  return {
      "The quick brown fox jumps over the lazy dog. The dog sleeps in the sun.",
      "\xc3\x87\xc3\xa0 et l\xc3\xa0, les \xc3\xa9l\xc3\xa8ves d\xc3\xa9j\xc3\xa0 partis; "
      "Stra\xc3\x9f"
      "e, na\xc3\xafve fa\xc3\xa7"
      "ade, cr\xc3\xa8me br\xc3\xbbl\xc3\xa9"
      "e.",
      "\xce\x97 \xce\xb3\xcf\x81\xce\xae\xce\xb3\xce\xbf\xcf\x81\xce\xb7 \xce\xb1\xce\xbb\xce\xb5"
      "\xcf\x80\xce\xbf\xcf\x8d \xcf\x80\xce\xb7\xce\xb4\xce\xac. "
      "\xce\x9f\xce\x94\xce\x9f\xce\xa3 "
      "\xce\xbf\xce\xb4\xcf\x8c\xcf\x82",
      "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xaf\xe6\x97\xa5\xe6\x9c\xac\xe3\x81\xae\xe9\xa6\x96\xe9"
      "\x83\xbd\xe3\x81\xa7\xe3\x81\x99\xe3\x80\x82 \xea\xb0\x80\xeb\x82\x98\xeb\x8b\xa4 "
      "\xe5\x8c\x97\xe4\xba\xac",
      "I love pizza \xf0\x9f\x8d\x95\xf0\x9f\x8d\x95 and sushi \xf0\x9f\x8d\xa3! "
      "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd family \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9",
      "R\xc3\xa9sum\xc3\xa9: na\xc3\xafve \xe6\x9d\xb1\xe4\xba\xac caf\xc3\xa9 "
      "\xce\x91\xce\x92\xce\x93 123 \xef\xac\x81nance \xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3",
      "bad \xff\xfe bytes \xc3 and \xed\xa0\x80 surrogate \xf4\x90\x80\x80 end",
      "",
      "Hello",
      "東京は日本の首都です。コンピュータのプログラムはneardupで重複を検出します。"
      "ひらがなとカタカナと漢字が混ざった文章、第3章。",
      "我们的近似重复检测工具可以处理中文文本，不需要空格。这是第二句话。",
      "ภาษาไทยเขียนโดยไม่มีช่องว่างระหว่างคำ ພາສາລາວ ភាសាខ្មែរ မြန်မာဘာသာ",
      "\xe3\x90\x80\xe4\xb6\xb5 \xf0\xa0\x80\x80\xf0\xaa\x9a\xb2 \xef\xa4\x80 "
      "\xef\xbd\xb6\xef\xbe\x80\xef\xbd\xb6\xef\xbe\x85 \xe3\x80\x85 "
      "\xe3\x81\x8b\xe3\x82\x99",
      "漢\xe6\x97字\xe3\x81 か\xff な\xed\xa0\x80カナ\xf0\xa0\x80",
      // Units across documents: a sequence cut at a document's end, a
      // document that starts with continuation bytes, lone continuations.
      "ends in a cut sequence \xe6\x9d",
      "\xb1\xe4\xba\xac starts with continuation bytes",
      "\x80\x80\x80\x80\x80 five \xbf",
      "\xe2\x82",
      "\xac",
      "カタカナ漢字ｶﾀｶﾅかな ａｂｃ ＡＢＣ ﬁﬂ ½ ™ Ⅻ ㌀ 　 \xc2\xa0 x\xe2\x80\x83y",
      "Ωmega ΣΑΣ ς Straße İstanbul ǅ ﬀ",
      // Segments never look back across a document: this one ends in a
      // kSingle, the next starts with marks (combining class 0, so covered)
      // before a letter, which the CPU does not cut from them.
      "ends in 漢",
      "\xe0\xb8\xb1\xe0\xa4\xbe"
      "abc \xe0\xb8\xb1漢\xe0\xb8\xb1"
      "a",
  };
}

// A seeded document from pieces of many scripts: precomposed and
// decomposed accents, Greek, Cyrillic, Arabic and Hebrew with marks,
// Devanagari, Thai, CJK, kana (full and half width), compatibility forms,
// white space and ignorable code points, emoji, random BMP code points, and
// invalid UTF-8 of every kind. `plain` documents leave out the pieces that
// send a document to the CPU, so that coverage is not left to chance.
inline std::string MultiScriptDocument(SplitMix64* rng, bool plain) {
  static const char* const kCovered[] = {"word",
                                         "The",
                                         " ",
                                         ", ",
                                         ". ",
                                         "\n",
                                         "caf\xc3\xa9",
                                         "STRASSE",
                                         "Stra\xc3\x9f"
                                         "e",
                                         "\xce\xa3\xce\xbf\xcf\x86\xce\xaf\xce\xb1",
                                         "\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
                                         "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d",
                                         "\xd8\xb3\xd9\x84\xd8\xa7\xd9\x85",
                                         "東京",
                                         "漢字",
                                         "ひらがな",
                                         "カタカナー",
                                         "ｶﾀｶﾅ",
                                         "ＡＢＣ",
                                         "ﬁ",
                                         "½",
                                         "™",
                                         "　",
                                         "\xc2\xa0",
                                         "ภาษาไทย",
                                         "한국어",
                                         "Ⅻ",
                                         "…",
                                         "«»",
                                         "—",
                                         "\xef\xbf\xbd",
                                         "İ",
                                         "ǅ",
                                         "ς",
                                         "ẞ",
                                         "\xe0\xb8\xb1",
                                         "\xe0\xa4\xbe"};  // marks of combining class 0
  static const char* const kOther[] = {
      "e\xcc\x81",  // e + combining acute: composes
      "\xcc\x81",   // a lone combining mark
      "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\x82\xe0\xa4\xa6\xe0\xa5\x80",  // Devanagari
      "\xc2\xad",                                                      // soft hyphen (ignorable)
      "\xe2\x80\x8b",                                                  // zero-width space
      "\xf0\x9f\x98\x80",                                              // emoji (supplementary)
      "\xf0\xa0\x80\x80",                                              // CJK extension B
      "\xea\xb0\x80\xe1\x86\xa8",  // Hangul syllable + trailing jamo
      "\xe3\x81\x8b\xe3\x82\x99",  // か + voiced mark
      "\xff",
      "\xc0\x80",
      "\xed\xa0\x80",
      "\xe6\x9d",
      "\xf4\x90\x80\x80",
      "\x80",
      "\xf0\x9f\x98"};
  std::string doc;
  const size_t pieces = rng->Next() % 40;
  for (size_t i = 0; i < pieces; ++i) {
    const uint64_t r = rng->Next() % 100;
    if (r < 55 || (plain && r < 90)) {
      doc += kCovered[rng->Next() % std::size(kCovered)];
    } else if (r < 75 && !plain) {
      doc += kOther[rng->Next() % std::size(kOther)];
    } else if (r < 90 && !plain) {
      // A random BMP code point (many unassigned, some marks).
      auto cp = static_cast<char32_t>(0x80 + rng->Next() % (0x10000 - 0x80));
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0x4E00;
      AppendUtf8(cp, &doc);
    } else {
      doc.push_back(" -'\t"[rng->Next() % 4]);
    }
  }
  return doc;
}

// `num_docs` seeded MultiScriptDocuments, every third one plain.
inline std::vector<std::string> MultiScriptCorpus(uint64_t seed, size_t num_docs) {
  SplitMix64 rng(seed);
  std::vector<std::string> docs;
  docs.reserve(num_docs);
  for (size_t i = 0; i < num_docs; ++i) docs.push_back(MultiScriptDocument(&rng, i % 3 == 0));
  return docs;
}

}  // namespace neardup::internal::gpu

#endif  // NEARDUP_GPU_GPU_UTF8_TEST_UTIL_H_
