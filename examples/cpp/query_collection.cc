// query_collection: builds a containment collection from documents, then
// checks one text file against it and prints the best matches with how much
// of the query each one contains and the matching passages.
//
//   query_collection NEW_DIR QUERY_FILE INPUT...
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "neardup/collection.h"
#include "neardup/containment_engine.h"
#include "neardup/document_reader.h"
#include "neardup/recipe.h"

namespace {

int Fail(const neardup::Status& status) {
  std::fprintf(stderr, "query_collection: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: query_collection NEW_DIR QUERY_FILE INPUT...\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::ifstream query_in(argv[2], std::ios::binary);
  if (!query_in) {
    std::fprintf(stderr, "query_collection: cannot read %s\n", argv[2]);
    return 1;
  }
  const std::string query_text((std::istreambuf_iterator<char>(query_in)),
                               std::istreambuf_iterator<char>());

  neardup::Result<neardup::Recipe> recipe = neardup::PresetRecipe("default");
  if (!recipe.ok()) return Fail(recipe.status());
  if (neardup::Status status = neardup::Collection::Create(dir, *recipe, {}); !status.ok()) {
    return Fail(status);
  }
  neardup::Collection::OpenOptions open_options;
  open_options.mode = neardup::Collection::Mode::kReadWrite;
  auto collection = neardup::Collection::Open(dir, open_options);
  if (!collection.ok()) return Fail(collection.status());

  auto reader = neardup::DocumentReader::Open(std::vector<std::string>(argv + 3, argv + argc),
                                              neardup::InputOptions{});
  if (!reader.ok()) return Fail(reader.status());
  neardup::AddDocumentsStats added;
  if (neardup::Status status = neardup::AddDocuments(**reader, **collection, {}, &added);
      !status.ok()) {
    return Fail(status);
  }
  std::printf("added %llu documents\n", static_cast<unsigned long long>(added.added));

  auto fingerprinter = neardup::CreateCollectionFingerprinter(**collection);
  if (!fingerprinter.ok()) return Fail(fingerprinter.status());
  neardup::QueryOptions options;
  options.top_n = 3;
  options.passages_top = 1;
  auto result = neardup::QueryDocument(**collection, **fingerprinter, query_text, options);
  if (!result.ok()) return Fail(result.status());
  for (const neardup::QueryMatch& match : result->matches) {
    std::printf("%s contains %.3f of the query (query contains %.3f of it)\n", match.id.c_str(),
                match.a_in_b, match.b_in_a);
    for (const neardup::Passage& passage : match.passages) {
      std::printf("  passage: \"%.*s\"\n",
                  static_cast<int>(passage.query_end - passage.query_begin),
                  query_text.data() + passage.query_begin);
    }
  }
  return 0;
}
