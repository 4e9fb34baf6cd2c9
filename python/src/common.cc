// The helpers of bindings.h shared by every concept's bindings.
#include <oneapi/tbb/task_arena.h>

#include <string>

#include "bindings.h"

namespace neardup::python {

std::shared_ptr<const Fingerprinter> PyRecipe::GetFingerprinter(
    const SketchSelection& selection) const {
  const size_t slot = (selection.simhash ? 1 : 0) | (selection.minhash ? 2 : 0) |
                      (selection.kvalue_minhash ? 4 : 0) | (selection.chunks ? 8 : 0);
  std::lock_guard<std::mutex> lock(mutex_);
  if (cache_[slot] == nullptr) {
    cache_[slot] = ValueOrThrow(CreateCpuFingerprinter(recipe_, selection));
  }
  return cache_[slot];
}

std::shared_ptr<const PyRecipe> RecipeOrDefault(const py::object& recipe) {
  if (recipe.is_none()) {
    static const std::shared_ptr<const PyRecipe> kDefault =
        std::make_shared<PyRecipe>(ValueOrThrow(PresetRecipe("default")));
    return kDefault;
  }
  if (!py::isinstance<PyRecipe>(recipe)) {
    throw py::type_error("recipe must be a neardup.Recipe or None, not " +
                         std::string(py::str(recipe.get_type().attr("__name__"))));
  }
  return recipe.cast<std::shared_ptr<PyRecipe>>();
}

namespace {

// The UTF-8 bytes of a str or bytes object. TypeError for anything else.
std::string_view TextView(const py::handle& text, size_t index) {
  if (PyUnicode_Check(text.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();  // lone surrogates
    return std::string_view(data, static_cast<size_t>(size));
  }
  if (PyBytes_Check(text.ptr())) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(text.ptr(), &data, &size) != 0) throw py::error_already_set();
    // Strict check: the library would replace bad sequences with U+FFFD,
    // which silently changes the text; Python callers get an error instead.
    py::object decoded =
        py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(data, size, "strict"));
    if (!decoded) throw py::error_already_set();
    return std::string_view(data, static_cast<size_t>(size));
  }
  const std::string type =
      text.is_none() ? std::string("None") : std::string(py::str(text.get_type().attr("__name__")));
  throw py::type_error("document " + std::to_string(index) +
                       ": expected str, bytes or an (id, text) pair, got " + type);
}

}  // namespace

DocumentViews ReadDocuments(const py::handle& documents) {
  if (documents.is_none() || PyUnicode_Check(documents.ptr()) || PyBytes_Check(documents.ptr())) {
    throw py::type_error(
        "documents must be an iterable of str, bytes or (id, text) pairs (a single str is "
        "not: wrap it in a list)");
  }
  DocumentViews out;
  if (py::hasattr(documents, "__len__")) {
    const size_t n = py::len(documents);
    out.texts.reserve(n);
    out.holders.reserve(n);
  }
  for (py::handle item : py::iter(documents)) {
    const size_t index = out.texts.size();
    if (PyTuple_Check(item.ptr())) {
      if (PyTuple_GET_SIZE(item.ptr()) != 2) {
        throw py::type_error("document " + std::to_string(index) +
                             ": an (id, text) pair must have two items");
      }
      py::handle text = PyTuple_GET_ITEM(item.ptr(), 1);
      out.texts.push_back(TextView(text, index));
      out.holders.push_back(py::reinterpret_borrow<py::object>(text));
      out.ids.append(py::handle(PyTuple_GET_ITEM(item.ptr(), 0)));
      out.has_ids = true;
    } else {
      out.texts.push_back(TextView(item, index));
      out.holders.push_back(py::reinterpret_borrow<py::object>(item));
      out.ids.append(py::int_(index));
    }
  }
  return out;
}

uint64_t ToUint64(const py::handle& value) {
  if (!PyLong_Check(value.ptr())) {
    const std::string type = value.is_none()
                                 ? std::string("None")
                                 : std::string(py::str(value.get_type().attr("__name__")));
    // numpy integer scalars are not PyLong but convert exactly.
    if (py::hasattr(value, "__index__") && !PyFloat_Check(value.ptr()) &&
        !PyBool_Check(value.ptr())) {
      return ToUint64(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())));
    }
    throw py::type_error("expected an int in [0, 2**64), got " + type);
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<uint64_t>(v);
}

HashSpan::HashSpan(const py::handle& values) {
  if (py::isinstance<py::array>(values)) {
    py::array array = py::reinterpret_borrow<py::array>(values);
    // Any unsigned 64-bit dtype in native byte order ('L' and 'Q' are both
    // uint64 on Linux but distinct dtype objects).
    const py::dtype dtype = array.dtype();
    const char byteorder = dtype.attr("byteorder").cast<std::string>()[0];
    if (dtype.kind() != 'u' || dtype.itemsize() != 8 || byteorder == '>') {
      throw py::type_error("expected a numpy array of dtype uint64, got " +
                           std::string(py::str(array.dtype())));
    }
    if (array.ndim() != 1) {
      throw py::value_error("expected a 1-D array, got " + std::to_string(array.ndim()) +
                            " dimensions");
    }
    // A strided view is copied once into a contiguous array.
    auto contiguous = py::array_t<uint64_t, py::array::c_style>::ensure(array);
    if (!contiguous) throw py::error_already_set();
    span_ = std::span<const uint64_t>(contiguous.data(), static_cast<size_t>(contiguous.size()));
    array_ = std::move(contiguous);
    return;
  }
  if (values.is_none() || PyUnicode_Check(values.ptr()) || PyBytes_Check(values.ptr())) {
    throw py::type_error("expected an iterable of ints or a numpy uint64 array");
  }
  if (py::hasattr(values, "__len__")) copy_.reserve(py::len(values));
  for (py::handle item : py::iter(values)) copy_.push_back(ToUint64(item));
  span_ = copy_;
}

void RunWithoutGil(int threads, const std::function<void()>& work) {
  if (threads < 0) {
    throw py::value_error("threads (" + std::to_string(threads) +
                          ") must be 0 (all cores) or positive");
  }
  py::gil_scoped_release release;
  if (threads == 0) {
    work();
    return;
  }
  // An arena limits this call only (tbb::global_control would limit every
  // concurrent caller in the process).
  tbb::task_arena arena(threads);
  arena.execute(work);
}

}  // namespace neardup::python
