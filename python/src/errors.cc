// Status -> Python exception, in one place. The classes:
//   neardup.Error(Exception)                        every library error
//   neardup.InvalidArgumentError(Error, ValueError) bad parameters or input
//   neardup.StorageError(Error, OSError)            files: missing, unreadable, corrupt
// Each instance carries `code` (the status code's name, e.g.
// "invalid_argument") and the library's message as its text.
#include <string>

#include "bindings.h"

namespace neardup::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_invalid_argument = nullptr;
PyObject* g_storage = nullptr;

PyObject* ClassFor(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return g_invalid_argument;
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
    case StatusCode::kDataLoss:
      return g_storage;
    default:
      return g_error;
  }
}

PyObject* NewClass(py::module_& m, const char* name, py::object bases, const char* doc) {
  const std::string qualified = std::string("neardup.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));  // the module holds the reference
  return cls;
}

}  // namespace

void RegisterErrors(py::module_& m) {
  g_error = NewClass(m, "Error", py::reinterpret_borrow<py::object>(PyExc_Exception),
                     "Base class of every error the neardup library reports. `code` is the "
                     "status code's name (e.g. 'invalid_argument').");
  py::handle error(g_error);
  g_invalid_argument =
      NewClass(m, "InvalidArgumentError", py::make_tuple(error, py::handle(PyExc_ValueError)),
               "A bad parameter or input (wrong sketch length, mismatched k, invalid recipe...).");
  g_storage = NewClass(m, "StorageError", py::make_tuple(error, py::handle(PyExc_OSError)),
                       "A file that is missing, unreadable, unwritable or corrupt.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusException& e) {
      PyObject* cls = ClassFor(e.status.code());
      py::object instance = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(cls, "s", e.status.message().c_str()));
      if (!instance) return;  // the call set its own exception
      instance.attr("code") = std::string(StatusCodeName(e.status.code()));
      PyErr_SetObject(cls, instance.ptr());
    }
  });
}

}  // namespace neardup::python
