// neardup.Recipe: a value wrapper of neardup::Recipe (include/neardup/recipe.h).
// Pickled as its canonical JSON plus its name; compared by id.
#include <string>

#include "bindings.h"

namespace neardup::python {
namespace {

std::shared_ptr<PyRecipe> FromJson(const std::string& json, const std::string& name) {
  Recipe recipe = ValueOrThrow(ParseRecipeJson(json));
  ThrowIfError(ValidateRecipe(recipe));
  recipe.name = name;
  return std::make_shared<PyRecipe>(std::move(recipe));
}

}  // namespace

void RegisterRecipe(py::module_& m) {
  py::class_<PyRecipe, std::shared_ptr<PyRecipe>>(
      m, "Recipe",
      "How text becomes fingerprints: normalization, tokenizer, stopwords, shingle widths, "
      "feature hash, seed and sketch sizes. Immutable; build one with Recipe.preset() or "
      "Recipe.from_json(). Its `id` is stored with every fingerprint: fingerprints of "
      "different recipes must never be compared.")
      .def_static(
          "preset",
          [](const std::string& name) {
            return std::make_shared<PyRecipe>(ValueOrThrow(PresetRecipe(name)));
          },
          py::arg("name") = "default",
          "The named preset ('default', 'paper' or 'short'; see Recipe.presets()). "
          "InvalidArgumentError for an unknown name.")
      .def_static("presets", &PresetNames, "The names Recipe.preset() accepts.")
      .def_static(
          "from_json", [](const std::string& json) { return FromJson(json, "custom"); },
          py::arg("json"),
          "Parses a recipe written by to_json() or by hand (keys in any order, missing keys "
          "take the defaults). InvalidArgumentError for unknown keys or bad values.")
      .def(
          "to_json", [](const PyRecipe& r) { return CanonicalJson(r.recipe()); },
          "The canonical one-line JSON form (fixed key order; the name is not part of it).")
      .def_property_readonly(
          "id", [](const PyRecipe& r) { return RecipeId(r.recipe()); },
          "16 hex digits: XXH3-64 of to_json(). Equal ids, equal fingerprints.")
      .def_property_readonly(
          "name", [](const PyRecipe& r) { return r.recipe().name; },
          "The preset's name, or 'custom'. Informational: not part of the id.")
      .def_property_readonly(
          "simhash_bits", [](const PyRecipe& r) { return r.recipe().simhash.bits; }, "64 or 128.")
      .def_property_readonly(
          "num_hashes", [](const PyRecipe& r) { return r.recipe().minhash.num_hashes; },
          "Values per MinHash sketch (k).")
      .def_property_readonly(
          "seed", [](const PyRecipe& r) { return r.recipe().seed; }, "The feature hash seed.")
      .def_property_readonly(
          "hash", [](const PyRecipe& r) { return std::string(FeatureHashName(r.recipe().hash)); },
          "The feature hash: 'xxh3', 'sdbm' or 'fnv1a'.")
      .def_property_readonly(
          "tokenizer",
          [](const PyRecipe& r) { return std::string(TokenizerName(r.recipe().tokenizer)); },
          "'word', 'whitespace' or 'char'.")
      .def("__eq__",
           [](const PyRecipe& a, const py::object& b) {
             return py::isinstance<PyRecipe>(b) &&
                    CanonicalJson(a.recipe()) == CanonicalJson(b.cast<const PyRecipe&>().recipe());
           })
      .def("__hash__", [](const PyRecipe& r) { return py::hash(py::str(RecipeId(r.recipe()))); })
      .def("__repr__",
           [](const PyRecipe& r) {
             return "Recipe(name='" + r.recipe().name + "', id='" + RecipeId(r.recipe()) + "')";
           })
      .def(py::pickle(
          [](const PyRecipe& r) {
            return py::make_tuple(CanonicalJson(r.recipe()), r.recipe().name);
          },
          [](const py::tuple& state) {
            if (state.size() != 2) throw py::value_error("bad Recipe pickle state");
            return FromJson(state[0].cast<std::string>(), state[1].cast<std::string>());
          }));
}

}  // namespace neardup::python
