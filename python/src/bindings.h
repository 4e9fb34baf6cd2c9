// Shared pieces of the `neardup._neardup` extension module: the mapping of
// a library Status to a Python exception, the recipe wrapper every
// fingerprinting call takes, the reading of documents and hash arrays from
// Python objects, and the registration function of each concept's file.
//
// The bindings include only include/neardup/ headers (and pybind11, numpy,
// oneTBB for thread limits); they hold no algorithm of their own.
// Thread safety: every function here runs with the GIL held unless it says
// otherwise.
#ifndef NEARDUP_PYTHON_BINDINGS_H_
#define NEARDUP_PYTHON_BINDINGS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup::python {

namespace py = pybind11;

// Thrown by ThrowIfError; translated to the Python exception of the status
// code (neardup.InvalidArgumentError, neardup.StorageError or neardup.Error)
// with the library's message.
struct StatusException {
  Status status;
};

// Raises the Python exception for `status` when it is not OK.
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusException{status};
}

template <typename T>
T ValueOrThrow(Result<T> result) {
  if (!result.ok()) throw StatusException{std::move(result).status()};
  return std::move(result).value();
}

// A Recipe plus the fingerprinters made from it, one per sketch selection,
// created on first use (creating one costs table set-up; a recipe is
// usually reused for many calls).
// Thread safety: Fingerprinter() may be called from several threads.
class PyRecipe {
 public:
  explicit PyRecipe(Recipe recipe) : recipe_(std::move(recipe)) {}
  const Recipe& recipe() const { return recipe_; }

  // The CPU fingerprinter of this recipe for `selection`.
  std::shared_ptr<const Fingerprinter> GetFingerprinter(const SketchSelection& selection) const;

 private:
  Recipe recipe_;
  mutable std::mutex mutex_;
  mutable std::array<std::shared_ptr<const Fingerprinter>, 16> cache_;
};

// The recipe a call was given, or the `default` preset for None.
std::shared_ptr<const PyRecipe> RecipeOrDefault(const py::object& recipe);

// The documents of an iterable of str / bytes or (id, text) pairs. The text
// views point into the Python objects, which `holders` keeps alive: no copy
// of any text is made (a str's UTF-8 form is the object's own buffer, or
// cached in it on first use).
struct DocumentViews {
  std::vector<std::string_view> texts;
  std::vector<py::object> holders;
  // ids[i]: the id of an (id, text) pair, or the index i for a bare text.
  py::list ids;
  bool has_ids = false;
};

// TypeError for an item that is neither str, bytes nor a 2-tuple with one,
// or for None; ValueError (UnicodeError) for bytes that are not UTF-8 or a
// str with lone surrogates.
DocumentViews ReadDocuments(const py::handle& documents);

// A read-only view of a sequence of unsigned 64-bit values: a 1-D numpy
// uint64 array is used in place, any other iterable is converted (each item
// an int in [0, 2^64)). TypeError for another dtype or a non-integer item,
// OverflowError for a value out of range.
class HashSpan {
 public:
  explicit HashSpan(const py::handle& values);
  std::span<const uint64_t> span() const { return span_; }

 private:
  py::object array_;  // keeps a numpy argument alive
  std::vector<uint64_t> copy_;
  std::span<const uint64_t> span_;
};

// One unsigned 64-bit value from a Python int (TypeError / OverflowError).
uint64_t ToUint64(const py::handle& value);

// Runs `work` with the GIL released, on at most `threads` worker threads
// (0: all cores). ValueError for threads < 0.
void RunWithoutGil(int threads, const std::function<void()>& work);

// A numpy array that owns `values` (moved, not copied), of `shape`.
template <typename T>
py::array_t<T> OwningArray(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), owned->data(), owner);
}

void RegisterErrors(py::module_& m);
void RegisterRecipe(py::module_& m);
void RegisterFingerprint(py::module_& m);
void RegisterHamming(py::module_& m);
void RegisterMinHash(py::module_& m);
void RegisterNearDuplicates(py::module_& m);
void RegisterCollection(py::module_& m);
void RegisterStream(py::module_& m);

}  // namespace neardup::python

#endif  // NEARDUP_PYTHON_BINDINGS_H_
