// preemption/: Kubernetes' DefaultPreemption (PostFilter) with whole gangs as victims, on a
// BoundCluster (a Cluster that also records which pods run where). The curated profile is the
// filter of the batch engine and the simulator: GPUCheck + NodeResourcesFit.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <gpusched/core/bound_cluster.hpp>
#include <gpusched/preemption/disruption_budget.hpp>
#include <gpusched/preemption/preemption.hpp>
#include <gpusched/preflight/gpu_check.hpp>
#include <gpusched/preflight/resource_fit.hpp>
#include <gpusched/profile/static_profile.hpp>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

using bound_t = bound_cluster<cluster_t>;
inline auto fit_profile() { return make_profile(checks(gpu_check{}, resource_fit{}), scores()); }
using fit_profile_t = decltype(fit_profile());
using preemptor_t = preemptor<bound_t, fit_profile_t>;

struct py_bound {
  bound_t c;
  busy_flag flag{false, "BoundCluster"};
};

struct py_plan {
  pod preemptor_pod;
  preemption_result r;
  std::string explanation;
};

using pod_row = std::tuple<pod_id, std::string, std::int32_t, double>;

std::vector<pod_row> pods_on(const bound_t& c, node_index n) {
  if (n >= num_nodes(c.base())) throw invalid_argument_error("node", "node index " + std::to_string(n) + " out of range");
  std::vector<pod_row> out;
  for (const bound_pod& b : c.pods_on(n)) out.emplace_back(b.id, c.spec(b.id).name, b.priority, b.start_time);
  return out;
}

}  // namespace

void register_preemption(py::module_& m) {
  py::class_<py_bound>(m, "BoundCluster",
                       "A cluster that also records which pods run where (priority, start time, gang): what "
                       "preemption needs. Built from a copy of a Cluster's nodes and loads.")
      .def(py::init([](py_cluster& pc) { return new py_bound{bound_t(pc.get())}; }), py::arg("cluster"))
      .def(
          "bind", [](py_bound& b, const pod& p, const binding& where, double start_time) {
            b.flag.check();
            return b.c.bind(p, where, start_time);
          },
          py::arg("pod"), py::arg("binding"), py::arg("start_time") = 0.0,
          "Reserves and records; returns the pod's id. A binding the cluster refuses raises and changes nothing.")
      .def(
          "unbind", [](py_bound& b, pod_id id) {
            b.flag.check();
            b.c.unbind(id);
          },
          py::arg("id"))
      .def("pods_on", [](const py_bound& b, node_index n) { return pods_on(b.c, n); }, py::arg("node"),
           "[(id, name, priority, start_time)] of the pods bound on the node.")
      .def("find", [](const py_bound& b, const std::string& name) -> py::object {
             const bound_pod* f = b.c.find(name);
             if (f == nullptr) return py::none();
             return py::cast(f->where);
           }, py::arg("name"), "The Binding of the bound pod of that name, or None.")
      .def_property_readonly("bound_count", [](const py_bound& b) { return b.c.bound_count(); })
      .def_property_readonly("gpu_milli_allocated", [](const py_bound& b) {
        milli t = 0;
        const auto& c = b.c.base();
        for (node_index n = 0; n < c.size(); ++n) {
          for (const gpu_device& g : c.gpus(n)) t += gpu_milli_whole - g.milli_free;
        }
        return t;
      })
      .def("__len__", [](const py_bound& b) { return b.c.base().size(); })
      .def("__eq__", [](const py_bound& a, const py_bound& b) { return a.c == b.c; }, py::is_operator())
      .def("copy", [](const py_bound& b) { return new py_bound{b.c}; });

  py::class_<py_plan>(m, "PreemptionPlan", "Which victims would let the pod fit, and where (a dry run).")
      .def_property_readonly("found", [](const py_plan& p) { return p.r.found; })
      .def("__bool__", [](const py_plan& p) { return p.r.found; })
      .def_property_readonly("node", [](const py_plan& p) -> py::object {
        return p.r.found ? py::cast(p.r.node) : py::none();
      })
      .def_property_readonly("binding", [](const py_plan& p) -> py::object {
        return p.r.found ? py::cast(p.r.preemptor_binding) : py::none();
      })
      .def_property_readonly(
          "victims",
          [](const py_plan& p) {
            std::vector<std::tuple<std::string, pod_id, node_index, std::int32_t>> out;
            for (const auto& v : p.r.victims) out.emplace_back(v.spec.name, v.record.id, v.record.where.node, v.record.priority);
            return out;
          },
          "[(name, id, node, priority)], most important first; members of a victim gang on other nodes included.")
      .def_property_readonly("violations", [](const py_plan& p) { return p.r.cost.violations; },
                             "How many victims' PodDisruptionBudgets the plan violates (0 without budgets).")
      .def_property_readonly(
          "violating",
          [](const py_plan& p) {
            std::vector<std::string> out;
            for (const auto& v : p.r.victims) {
              if (v.violating) out.push_back(v.spec.name);
            }
            return out;
          },
          "Names of the victims whose eviction violates a PodDisruptionBudget, most important first.")
      .def_property_readonly("gangs", [](const py_plan& p) { return p.r.gangs; })
      .def_property_readonly("candidates", [](const py_plan& p) { return p.r.candidates; })
      .def_property_readonly("examined", [](const py_plan& p) { return p.r.examined; })
      .def_property_readonly("explanation", [](const py_plan& p) { return p.explanation; })
      .def("__repr__", [](const py_plan& p) { return "<PreemptionPlan " + p.explanation + ">"; });

  py::class_<disruption_budgets>(
      m, "DisruptionBudgets",
      "PodDisruptionBudgets as preemption sees them: each allows `disruptions_allowed` more evictions of the pods "
      "it covers (status.disruptionsAllowed), named explicitly (what a label selector resolves to). Victims that "
      "would violate a budget are reprieved first and their count leads the node choice (docs/preemption.md).")
      .def(py::init<>())
      .def(
          "add",
          [](disruption_budgets& d, std::string name, std::int32_t disruptions_allowed, const std::vector<std::string>& pods) {
            for (const auto& p : pods) {
              if (p.empty()) throw invalid_argument_error("pdb '" + name + "'.pods", "a pod name must not be empty");
            }
            const std::uint32_t i = d.add(std::move(name), disruptions_allowed);  // throws before any change
            for (const auto& p : pods) d.cover(p, d.name(i));
            return i;
          },
          py::arg("name"), py::arg("disruptions_allowed"), py::kw_only(), py::arg("pods") = std::vector<std::string>{},
          "Adds a budget covering the named pods; returns its index. An empty or repeated name raises "
          "InvalidArgumentError and changes nothing. A negative allowance behaves as 0, as in Kubernetes.")
      .def("cover", &disruption_budgets::cover, py::arg("pod"), py::arg("pdb"),
           "Budget `pdb` also covers the pod of that name (a pod may be covered by several budgets).")
      .def("disruptions_allowed", [](const disruption_budgets& d, std::string_view pdb) {
             return d.disruptions_allowed(d.index_of(pdb));
           }, py::arg("pdb"))
      .def_property_readonly("names", [](const disruption_budgets& d) {
        std::vector<std::string> out;
        for (std::uint32_t i = 0; i < d.size(); ++i) out.push_back(d.name(i));
        return out;
      }, "The budgets, in the order they were added.")
      .def("__len__", &disruption_budgets::size)
      .def("__contains__", [](const disruption_budgets& d, std::string_view pdb) {
        for (std::uint32_t i = 0; i < d.size(); ++i) {
          if (d.name(i) == pdb) return true;
        }
        return false;
      })
      .def("__repr__", [](const disruption_budgets& d) { return "<DisruptionBudgets " + std::to_string(d.size()) + " budget(s)>"; });

  py::class_<preemptor_t>(m, "Preemptor",
                          "Kubernetes' DefaultPreemption with GPUCheck + NodeResourcesFit: the cheapest set of "
                          "lower-priority victims (whole gangs) that lets a pod fit (docs/preemption.md).")
      .def(py::init([](std::uint64_t seed, bool protect_guaranteed, bool sample_candidates) {
             preemption_options o;
             o.seed = seed;
             o.protect_guaranteed = protect_guaranteed;
             o.sample_candidates = sample_candidates;
             return new preemptor_t(fit_profile(), o);
           }),
           py::kw_only(), py::arg("seed") = 0, py::arg("protect_guaranteed") = false, py::arg("sample_candidates") = true)
      .def(
          "plan",
          [](preemptor_t& self, py_bound& b, const pod& p, double now, const disruption_budgets* pdbs) {
            validate(p);
            busy_scope cb(b.flag);
            auto out = std::make_unique<py_plan>();
            out->preemptor_pod = p;
            // A copy: another thread may change the Python object while the GIL is released.
            std::optional<disruption_budgets> budgets;
            if (pdbs != nullptr) budgets = *pdbs;
            {
              py::gil_scoped_release nogil;
              out->r = self.plan(b.c, p, now, nullptr, budgets ? &*budgets : nullptr);
            }
            out->explanation =
                out->r.explain(out->r.found ? std::string(b.c.base().name(out->r.node)) : std::string());
            return out;
          },
          py::arg("cluster"), py::arg("pod"), py::arg("now") = 0.0, py::kw_only(), py::arg("pdbs") = nullptr,
          "The dry run; changes nothing. `pdbs`: the DisruptionBudgets to respect (None: none).")
      .def(
          "apply",
          [](preemptor_t& self, py_bound& b, const py_plan& plan, double now) {
            busy_scope cb(b.flag);
            self.apply(b.c, plan.preemptor_pod, plan.r, now);
          },
          py::arg("cluster"), py::arg("plan"), py::arg("now") = 0.0,
          "Evicts the victims and binds the pod, as one transaction; a stale plan raises InvalidArgumentError and "
          "changes nothing.");
}

}  // namespace gpusched::python
