// Every CPU path against the reference on real text: the SpamAssassin bodies
// (mostly ASCII, 8% of documents with bytes >= 0x80, some invalid UTF-8) and
// the translated manual pages (UTF-8 in nine languages), when
// scripts/fetch_corpora.sh and scripts/make_i18n_corpus.sh have made them;
// skipped otherwise. Every preset, every sketch, both shingle widths the
// bench measures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hash/cpu_path.h"
#include "neardup/document_reader.h"
#include "neardup/fingerprinter.h"

namespace neardup {
namespace {

// Per corpus: the first kFirstDocuments documents and the first
// kNonAsciiDocuments further ones with a byte >= 0x80 (every code path,
// quick under the sanitizers).
constexpr size_t kFirstDocuments = 200;
constexpr size_t kNonAsciiDocuments = 250;

std::vector<std::string> LoadCorpus(const std::string& name) {
  std::vector<std::string> texts;
  const std::string path = std::string(NEARDUP_SOURCE_DIR) + "/cache/corpora/" + name;
  if (!std::filesystem::exists(path)) return texts;
  Result<std::unique_ptr<DocumentReader>> reader = DocumentReader::Open({path}, InputOptions{});
  if (!reader.ok()) return texts;
  Document doc;
  size_t non_ascii = 0;
  while (non_ascii < kNonAsciiDocuments) {
    Result<bool> next = (*reader)->Next(&doc);
    if (!next.ok() || !*next) break;
    if (texts.size() >= kFirstDocuments) {
      bool ascii = true;
      for (char c : doc.text) ascii &= static_cast<unsigned char>(c) < 0x80;
      if (ascii) continue;
      ++non_ascii;
    }
    texts.push_back(std::move(doc.text));
  }
  return texts;
}

// Fingerprints of `texts` with the fingerprinter NEARDUP_CPU_PATH=path picks.
std::vector<Fingerprint> Compute(const Recipe& recipe, internal::CpuPath path,
                                 const std::vector<std::string>& texts) {
  const char* saved = std::getenv("NEARDUP_CPU_PATH");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("NEARDUP_CPU_PATH", std::string(internal::CpuPathName(path)).c_str(), 1);
  SketchSelection all;
  all.simhash = all.minhash = all.kvalue_minhash = all.chunks = true;
  std::unique_ptr<Fingerprinter> fingerprinter =
      std::move(CreateCpuFingerprinter(recipe, all)).value();
  std::vector<Fingerprint> out(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    // Compute builds the thread's workspace (and its kernels) on first use,
    // so the variable stays set until the last call.
    EXPECT_TRUE(fingerprinter->Compute(texts[i], &out[i]).ok());
  }
  if (saved != nullptr) {
    setenv("NEARDUP_CPU_PATH", saved_value.c_str(), 1);
  } else {
    unsetenv("NEARDUP_CPU_PATH");
  }
  return out;
}

void ExpectEveryPathEqualsReference(const std::string& corpus) {
  const std::vector<std::string> texts = LoadCorpus(corpus);
  if (texts.empty()) GTEST_SKIP() << corpus << " not found (scripts/fetch_corpora.sh)";
  for (const std::string& preset : PresetNames()) {
    for (int minhash_width : {0, 3}) {
      Recipe recipe = *PresetRecipe(preset);
      if (minhash_width != 0) recipe.minhash.shingle_width = minhash_width;
      const std::vector<Fingerprint> want = Compute(recipe, internal::CpuPath::kReference, texts);
      for (internal::CpuPath path : internal::SupportedCpuPaths()) {
        if (path == internal::CpuPath::kReference) continue;
        const std::vector<Fingerprint> got = Compute(recipe, path, texts);
        for (size_t i = 0; i < texts.size(); ++i) {
          const std::string where = corpus + " document " + std::to_string(i) + " preset " +
                                    preset + " path " + std::string(internal::CpuPathName(path));
          ASSERT_EQ(got[i].simhash, want[i].simhash) << where;
          ASSERT_EQ(got[i].minhash, want[i].minhash) << where;
          ASSERT_EQ(got[i].kvalue_minhash, want[i].kvalue_minhash) << where;
          ASSERT_EQ(got[i].chunks, want[i].chunks) << where;
          ASSERT_EQ(got[i].num_tokens, want[i].num_tokens) << where;
          ASSERT_EQ(got[i].invalid_utf8_sequences, want[i].invalid_utf8_sequences) << where;
        }
      }
    }
  }
}

TEST(CpuPathsCorpusTest, SpamAssassinEveryPathEqualsReference) {
  ExpectEveryPathEqualsReference("spamassassin.jsonl");
}

TEST(CpuPathsCorpusTest, TranslatedManPagesEveryPathEqualsReference) {
  ExpectEveryPathEqualsReference("manpages_i18n.jsonl");
}

}  // namespace
}  // namespace neardup
