// The `neardup._neardup` extension module: each concept registers itself
// from its own file; python/neardup/__init__.py re-exports the public names.
#include "bindings.h"

PYBIND11_MODULE(_neardup, m) {
  m.doc() =
      "neardup's C++ engine: recipes, fingerprints, the simhash-package Corpus, "
      "datasketch-like MinHash and MinHashLSH, and near-duplicate pairs. Import the "
      "`neardup` package rather than this module.";
  neardup::python::RegisterErrors(m);
  neardup::python::RegisterRecipe(m);
  neardup::python::RegisterFingerprint(m);
  neardup::python::RegisterHamming(m);
  neardup::python::RegisterMinHash(m);
  neardup::python::RegisterNearDuplicates(m);
  neardup::python::RegisterCollection(m);
  neardup::python::RegisterStream(m);
}
