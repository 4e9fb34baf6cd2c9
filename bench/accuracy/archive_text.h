// The synthetic archive of the containment benchmarks: documents made from
// real text the way an archive with reuse is (see containment_bench.cc).
#ifndef NEARDUP_BENCH_ACCURACY_ARCHIVE_TEXT_H_
#define NEARDUP_BENCH_ACCURACY_ARCHIVE_TEXT_H_

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "accuracy/synthetic_text.h"
#include "util/mix.h"

namespace neardup::accuracy {

// Each text: a window of 150..600 words of a real text (cache/corpora
// brown.jsonl and spamassassin.jsonl, texts of >= 100 words), word-edited at
// a rate uniform in [0, 10%], and in a quarter of them a pasted passage of
// 40..120 words of another text. Windows of one source overlap.
class ArchiveTextMaker {
 public:
  ArchiveTextMaker() {
    for (const char* name : {"brown", "spamassassin"}) {
      accuracy::LoadedCorpus corpus = accuracy::LoadJsonlOrDie(std::string(NEARDUP_SOURCE_DIR) +
                                                               "/cache/corpora/" + name + ".jsonl");
      for (std::string& text : corpus.texts) sources_.push_back(std::move(text));
    }
    for (const std::string& text : sources_) {
      std::vector<std::string_view> words = SplitWords(text);
      if (words.size() < 100) continue;
      vocabulary_.insert(vocabulary_.end(), words.begin(), words.end());
      words_.push_back(std::move(words));
    }
  }

  std::string Make(internal::SplitMix64& rng) const {
    const auto& source = words_[UniformBelow(rng, words_.size())];
    const size_t length = std::min<size_t>(source.size(), 150 + UniformBelow(rng, 451));
    const size_t start = UniformBelow(rng, source.size() - length + 1);
    std::vector<std::string_view> window(source.begin() + start, source.begin() + start + length);
    if (Uniform01(rng) < 0.25) {
      const auto& other = words_[UniformBelow(rng, words_.size())];
      const size_t paste = std::min<size_t>(other.size(), 40 + UniformBelow(rng, 81));
      const size_t from = UniformBelow(rng, other.size() - paste + 1);
      const size_t at = UniformBelow(rng, window.size() + 1);
      window.insert(window.begin() + at, other.begin() + from, other.begin() + from + paste);
    }
    return EditWords(window, 0.1 * Uniform01(rng), vocabulary_, rng);
  }

 private:
  std::vector<std::string> sources_;
  std::vector<std::vector<std::string_view>> words_;
  std::vector<std::string_view> vocabulary_;
};

}  // namespace neardup::accuracy

#endif  // NEARDUP_BENCH_ACCURACY_ARCHIVE_TEXT_H_
