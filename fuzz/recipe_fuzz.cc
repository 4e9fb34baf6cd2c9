// Fuzz target: ParseRecipeJson on arbitrary bytes. A recipe that parses must
// validate, and its canonical form must parse back to the same recipe.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "neardup/recipe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  neardup::Result<neardup::Recipe> recipe = neardup::ParseRecipeJson(input);
  if (!recipe.ok()) {
    NEARDUP_CHECK(!recipe.status().message().empty());
    return 0;
  }
  NEARDUP_CHECK(neardup::ValidateRecipe(*recipe).ok());
  std::string canonical = neardup::CanonicalJson(*recipe);
  neardup::Result<neardup::Recipe> again = neardup::ParseRecipeJson(canonical);
  NEARDUP_CHECK(again.ok()) << again.status();
  NEARDUP_CHECK(neardup::CanonicalJson(*again) == canonical);
  return 0;
}
