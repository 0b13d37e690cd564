// gpusched's C++ errors as Python exceptions that keep the field (and file:line) they name.
//   gpusched::invalid_argument_error -> InvalidArgumentError(ValueError), .field
//   gpusched::file_error             -> ConfigFileError(ValueError), .file, .line
#include <pybind11/gil_safe_call_once.h>
#include <pybind11/pybind11.h>

#include <exception>

#include <gpusched/core/error.hpp>

namespace gpusched::python {

namespace py = pybind11;

namespace {

PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> invalid_argument_type;
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> file_error_type;

py::object new_exception(const char* qualified, const char* doc) {
  PyObject* t = PyErr_NewExceptionWithDoc(qualified, doc, PyExc_ValueError, nullptr);
  if (t == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(t);
}

void raise(const py::object& type, const py::object& instance) { PyErr_SetObject(type.ptr(), instance.ptr()); }

}  // namespace

void register_errors(py::module_& m) {
  invalid_argument_type.call_once_and_store_result([] {
    return new_exception("gpusched._core.InvalidArgumentError",
                         "A value given to gpusched is invalid; `field` names it (\"pod 'p'.gpu_milli\"). "
                         "Nothing was changed.");
  });
  file_error_type.call_once_and_store_result([] {
    return new_exception("gpusched._core.ConfigFileError",
                         "A configuration file or text is malformed; `file` and `line` (1-based, 0 when "
                         "unknown) say where. Nothing was loaded.");
  });
  m.attr("InvalidArgumentError") = invalid_argument_type.get_stored();
  m.attr("ConfigFileError") = file_error_type.get_stored();

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const invalid_argument_error& e) {
      const py::object& type = invalid_argument_type.get_stored();
      py::object inst = type(e.what());
      inst.attr("field") = e.field();
      raise(type, inst);
    } catch (const file_error& e) {
      const py::object& type = file_error_type.get_stored();
      py::object inst = type(e.what());
      inst.attr("file") = e.file();
      inst.attr("line") = e.line();
      raise(type, inst);
    }
  });
}

}  // namespace gpusched::python
