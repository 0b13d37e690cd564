// gpusched._core: the private extension under the pure-Python `gpusched` package.
#include <pybind11/pybind11.h>

#include <gpusched/config.hpp>

#include "areas.inc"

PYBIND11_MODULE(_core, m) {
  m.doc() = "gpusched's C++ core (private: use the `gpusched` package).";
  m.attr("__version__") = GPUSCHED_VERSION_STRING;
  gpusched::python::register_all_areas(m);
}
