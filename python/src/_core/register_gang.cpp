// gang/: all-or-nothing placement of a gang (roles of identical members) with a dynamic profile:
// every member is reserved, or the cluster is exactly as before.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gpusched/gang/placement.hpp>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

struct py_gang_placer {
  gang_placer<profile_t> placer;
  busy_flag flag{false, "GangPlacer"};
};

// A placed (or refused) gang: the spec and the result, so that it can be released later.
struct py_gang_result {
  gang_spec spec;
  gang_result r;
  std::string explanation;
  bool released = false;
};

using role_tuple = std::tuple<std::string, pod, std::int32_t, std::int32_t>;

gang_spec make_spec(std::string name, const std::vector<role_tuple>& roles, std::int64_t priority, double submit_time) {
  gang_spec g;
  g.name = std::move(name);
  for (const auto& [role, member, lo, hi] : roles) g.roles.push_back(gang_role{role, member, lo, hi});
  g.priority = checked_priority(priority, "gang '" + g.name + "'.priority");
  g.submit_time = submit_time;
  return g;
}

}  // namespace

void register_gang(py::module_& m) {
  py::class_<py_gang_result>(m, "GangResult", "The outcome of GangPlacer.place: all members' bindings, or why not.")
      .def_property_readonly("placed", [](const py_gang_result& g) { return g.r.placed; })
      .def("__bool__", [](const py_gang_result& g) { return g.r.placed; })
      .def_property_readonly("name", [](const py_gang_result& g) { return g.spec.name; })
      .def_property_readonly(
          "members",
          [](const py_gang_result& g) {
            std::vector<std::tuple<std::string, std::uint32_t, binding>> out;
            for (const auto& mb : g.r.members) out.emplace_back(g.spec.roles[mb.role].name, mb.ordinal, mb.where);
            return out;
          },
          "[(role, ordinal, Binding)] in placement order; empty when not placed.")
      .def_property_readonly("per_role", [](const py_gang_result& g) { return g.r.per_role; })
      .def_property_readonly("nodes_used", [](const py_gang_result& g) { return g.r.nodes_used; })
      .def_property_readonly("racks_used", [](const py_gang_result& g) { return g.r.racks_used; })
      .def_property_readonly(
          "failure",
          [](const py_gang_result& g) -> py::object {
            if (g.r.placed) return py::none();
            py::dict d;
            const auto& f = g.r.failure;
            d["role"] = f.role < g.spec.roles.size() ? g.spec.roles[f.role].name : std::string();
            d["placed"] = f.placed;
            d["needed"] = f.needed;
            d["rejections"] = f.rejections.to_string();
            return d;
          },
          "None when placed; else {'role', 'placed', 'needed', 'rejections'}.")
      .def_property_readonly("explanation", [](const py_gang_result& g) { return g.explanation; })
      .def(
          "release",
          [](py_gang_result& g, py_cluster& pc) {
            if (!g.r.placed) throw std::runtime_error("gang '" + g.spec.name + "' was not placed: nothing to release");
            if (g.released) throw std::runtime_error("gang '" + g.spec.name + "' is already released");
            release_gang(pc.get(), g.spec, g.r);
            g.released = true;
          },
          py::arg("cluster"), "Gives every member's resources back (the gang finished or was evicted whole).")
      .def("__repr__", [](const py_gang_result& g) { return "<GangResult " + g.explanation + ">"; });

  py::class_<py_gang_placer>(m, "GangPlacer",
                             "All-or-nothing, topology-aware placement of gangs with a Profile (docs/gang.md).")
      .def(py::init([](const profile_t& p, bool elastic, bool prefer_racks) {
             gang_options o;
             o.elastic = elastic;
             o.prefer_racks = prefer_racks;
             return new py_gang_placer{gang_placer<profile_t>(p, o)};
           }),
           py::arg("profile"), py::kw_only(), py::arg("elastic") = true, py::arg("prefer_racks") = true)
      .def(
          "place",
          [](py_gang_placer& self, py_cluster& pc, const std::string& name, const std::vector<role_tuple>& roles,
             std::int64_t priority, double submit_time) {
            busy_scope sb(self.flag);
            busy_scope cb(pc.flag);
            auto out = std::make_unique<py_gang_result>();
            out->spec = make_spec(name, roles, priority, submit_time);
            {
              py::gil_scoped_release nogil;
              out->r = self.placer.place(pc.c, out->spec);
            }
            out->explanation = out->r.explain(out->spec);
            return out;
          },
          py::arg("cluster"), py::arg("name"), py::arg("roles"), py::kw_only(), py::arg("priority") = 0,
          py::arg("submit_time") = 0.0,
          "Places every member or none. roles: [(role name, Pod, min_count, desired_count)]. Releases the GIL.");
}

}  // namespace gpusched::python
