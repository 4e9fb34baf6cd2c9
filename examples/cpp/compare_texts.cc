// compare_texts: fingerprints two text files with the `default` recipe and
// prints how similar they are by SimHash (Hamming distance of 64 bits) and by
// MinHash (estimated Jaccard of word 5-shingles).
//
//   compare_texts a.txt b.txt
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "neardup/similarity.h"

namespace {

bool ReadFile(const char* path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

int Fail(const neardup::Status& status) {
  std::fprintf(stderr, "compare_texts: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compare_texts FILE_A FILE_B\n");
    return 2;
  }
  std::string texts[2];
  for (int i = 0; i < 2; ++i) {
    if (!ReadFile(argv[i + 1], &texts[i])) {
      std::fprintf(stderr, "compare_texts: cannot read %s\n", argv[i + 1]);
      return 1;
    }
  }

  neardup::Result<neardup::Recipe> recipe = neardup::PresetRecipe("default");
  if (!recipe.ok()) return Fail(recipe.status());
  auto fingerprinter = neardup::CreateCpuFingerprinter(
      *recipe, neardup::SketchSelection{.simhash = true, .minhash = true});
  if (!fingerprinter.ok()) return Fail(fingerprinter.status());

  const std::vector<std::string_view> views = {texts[0], texts[1]};
  std::vector<neardup::Fingerprint> fingerprints;
  if (neardup::Status status = (*fingerprinter)->ComputeBatch(views, &fingerprints); !status.ok()) {
    return Fail(status);
  }

  const int distance = neardup::HammingDistance(fingerprints[0].simhash, fingerprints[1].simhash);
  const neardup::Result<double> jaccard =
      neardup::EstimateJaccard(fingerprints[0].minhash, fingerprints[1].minhash);
  if (!jaccard.ok()) return Fail(jaccard.status());
  std::printf("recipe %s\n", neardup::RecipeId(*recipe).c_str());
  std::printf("simhash %016llx %016llx distance %d of 64\n",
              static_cast<unsigned long long>(fingerprints[0].simhash),
              static_cast<unsigned long long>(fingerprints[1].simhash), distance);
  std::printf("minhash jaccard %.4f\n", *jaccard);
  return 0;
}
