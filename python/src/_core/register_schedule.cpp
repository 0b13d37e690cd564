// schedule/: schedulers (the dynamic profile, and the seed's static profile for cross-checks),
// their explained results, and transactions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/schedule/transaction.hpp>

#include "bindings.hpp"
#include "seed_profile.hpp"

namespace gpusched::python {

namespace {

// Checks percentage_of_nodes_to_score before the scheduler does, naming the Python argument.
schedule_options make_options(int percentage, std::uint64_t seed, bool explain, const std::string& ties) {
  if (percentage < 0 || percentage > 100) {
    throw invalid_argument_error("percentage_of_nodes_to_score", "must be within 0..100, got " + std::to_string(percentage));
  }
  schedule_options o{percentage, seed, explain};
  if (ties == "reservoir") {
    o.tie_break = tie_break_rule::reservoir;
  } else if (ties == "hashed") {
    o.tie_break = tie_break_rule::hashed;  // as the batch engine ranks ties
  } else if (ties == "first_node") {
    o.tie_break = tie_break_rule::first_node;
  } else {
    throw invalid_argument_error("tie_break", "must be 'reservoir', 'hashed' or 'first_node', got '" + ties + "'");
  }
  return o;
}

template <class Profile>
struct py_scheduler {
  scheduler<cluster_t, Profile> s;
  busy_flag flag{false, "Scheduler"};
};

// Places pods one by one inside a transaction: a Python exception (a scorer's, Ctrl-C) or an error
// rolls back every placement of the call. The GIL is released except between chunks, where
// signals are checked and `progress(done)` is called.
template <class Profile>
std::vector<py_result> place_many(py_scheduler<Profile>& self, py_cluster& pc, const std::vector<pod>& pods,
                                  const py::object& progress) {
  busy_scope sb(self.flag);
  pc.flag.check();
  busy_scope cb(pc.flag);
  constexpr std::size_t chunk = 256;
  std::vector<py_result> out;
  out.reserve(pods.size());
  {
    py::gil_scoped_release nogil;
    transaction<cluster_t> tx(pc.c, pods.size());
    for (std::size_t i = 0; i < pods.size(); ++i) {
      const schedule_result r = self.s.schedule_one(pc.c, pods[i]);
      if (r.scheduled) tx.reserve(pods[i], r.where);
      out.push_back(detach(r, pc.c));
      if ((i + 1) % chunk == 0 || i + 1 == pods.size()) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!progress.is_none()) progress(i + 1);
      }
    }
    tx.commit();
  }
  return out;
}

template <class Profile>
py_result schedule_or_place(py_scheduler<Profile>& self, py_cluster& pc, const pod& p, bool place) {
  busy_scope sb(self.flag);
  busy_scope cb(pc.flag);
  py::gil_scoped_release nogil;
  const schedule_result r = place ? self.s.place_one(pc.c, p) : self.s.schedule_one(pc.c, p);
  return detach(r, pc.c);
}

template <class Profile>
void bind_scheduler_methods(py::class_<py_scheduler<Profile>>& cls) {
  using S = py_scheduler<Profile>;
  cls.def(
         "schedule_one", [](S& s, py_cluster& c, const pod& p) { return schedule_or_place(s, c, p, false); },
         py::arg("cluster"), py::arg("pod"), "Decides where the pod would go; changes nothing. Releases the GIL.")
      .def(
          "place_one", [](S& s, py_cluster& c, const pod& p) { return schedule_or_place(s, c, p, true); },
          py::arg("cluster"), py::arg("pod"), "Decides and reserves (the cluster changes only when scheduled).")
      .def("place_many", &place_many<Profile>, py::arg("cluster"), py::arg("pods"), py::arg("progress") = py::none(),
           "Places the pods in order (each as place_one) with the GIL released; returns one result per pod. "
           "All or nothing: an exception (from a Python scorer, Ctrl-C) releases every placement of the call. "
           "`progress(done)` is called every 256 pods and at the end.")
      .def_property_readonly("percentage_of_nodes_to_score",
                             [](const S& s) { return s.s.options().percentage_of_nodes_to_score; })
      .def_property_readonly("seed", [](const S& s) { return s.s.options().seed; })
      .def_property_readonly("explain_scores", [](const S& s) { return s.s.options().explain_scores; });
}

// A transaction over a Python cluster: keeps the cluster alive (the C++ transaction owns copies of
// the pods it changed).
struct py_transaction {
  py::object owner;
  py_cluster* pc;
  std::optional<transaction<cluster_t>> tx;

  explicit py_transaction(py::object cluster) : owner(std::move(cluster)), pc(owner.cast<py_cluster*>()) {
    tx.emplace(pc->get());
  }
  transaction<cluster_t>& open() {
    if (!tx) throw std::runtime_error("the transaction is already committed or rolled back");
    pc->flag.check();
    return *tx;
  }
  void reserve(const pod& p, const binding& b) { open().reserve(p, b); }
  template <class Profile>
  py_result place(py_scheduler<Profile>& s, const pod& p) {
    auto& t = open();
    busy_scope sb(s.flag);
    const schedule_result r = s.s.schedule_one(pc->c, p);
    if (r.scheduled) t.reserve(p, r.where);
    return detach(r, pc->c);
  }
  void commit() {
    open().commit();
    tx.reset();
  }
  // Closed either way; a refused undo (the cluster was changed under the transaction) raises
  // RuntimeError (gpusched::rollback_error) after every other change is undone.
  void rollback() {
    auto& t = open();
    try {
      t.rollback();
    } catch (...) {
      tx.reset();
      throw;
    }
    tx.reset();
  }
};

py::object plugin_tuple(const std::string& name, const plugin_score& s) { return py::make_tuple(name, s.score, s.weight); }

}  // namespace

void register_schedule(py::module_& m) {
  py::class_<py_result>(m, "ScheduleResult",
                        "An explained decision: where the pod goes (node, GPU indices) with its score and "
                        "per-plugin breakdown, or why no node fits.")
      .def_property_readonly("scheduled", [](const py_result& r) { return r.r.scheduled; })
      .def("__bool__", [](const py_result& r) { return r.r.scheduled; })
      .def_property_readonly("node",
                             [](const py_result& r) -> std::optional<node_index> {
                               if (!r.r.scheduled) return std::nullopt;
                               return r.r.where.node;
                             })
      .def_property_readonly("node_name",
                             [](const py_result& r) -> std::optional<std::string> {
                               if (!r.r.scheduled) return std::nullopt;
                               return r.node_name;
                             })
      .def_property_readonly("gpus", [](const py_result& r) { return gpu_list(r.r.where.gpus); }, "GPU indices, ascending")
      .def_property_readonly("binding",
                             [](const py_result& r) -> std::optional<binding> {
                               if (!r.r.scheduled) return std::nullopt;
                               return r.r.where;
                             })
      .def_property_readonly("score", [](const py_result& r) { return r.r.score; }, "weighted sum of the chosen node")
      .def_property_readonly("feasible", [](const py_result& r) { return r.r.feasible; })
      .def_property_readonly("examined", [](const py_result& r) { return r.r.rejections.examined; })
      .def_property_readonly(
          "rejections",
          [](const py_result& r) {
            py::dict d;
            for (std::size_t i = 1; i < reason_count; ++i) {
              const auto why = static_cast<reason>(i);
              if (r.r.rejections[why] > 0) d[py::str(std::string(to_string(why)))] = r.r.rejections[why];
            }
            return d;
          },
          "reason -> number of examined nodes it rejected (each node under its first failing check)")
      .def_property_readonly(
          "breakdown",
          [](const py_result& r) {
            py::list l;
            for (std::size_t k = 0; k < r.plugin_names.size(); ++k) l.append(plugin_tuple(r.plugin_names[k], r.r.breakdown[k]));
            return l;
          },
          "(plugin, score 0..100, weight) of the chosen node, when the scheduler explains scores")
      .def_property_readonly("explanation", [](const py_result& r) { return r.explanation; },
                             "\"3/8 nodes fit: 5 insufficient GPU share; chose v100-4 with score 570 (...)\"")
      .def("__repr__", [](const py_result& r) { return "<ScheduleResult " + r.explanation + ">"; });

  using dyn = py_scheduler<profile_t>;
  py::class_<dyn> sched(m, "Scheduler",
                        "Schedules pods with a Profile. Keeps what persists between cycles: the seeded tie-break "
                        "generator, the round-robin start of partial scoring and reusable buffers.");
  sched.def(py::init([](const profile_t& p, int percentage, std::uint64_t seed, bool explain, const std::string& ties) {
              return new dyn{scheduler<cluster_t, profile_t>(p, make_options(percentage, seed, explain, ties))};
            }),
            py::arg("profile"), py::kw_only(), py::arg("percentage_of_nodes_to_score") = 100, py::arg("seed") = 0,
            py::arg("explain_scores") = true, py::arg("tie_break") = "reservoir",
            "tie_break: 'reservoir' (Kubernetes' uniform draw, seeded), 'hashed' (uniform and stateless, as "
            "BatchScorer ranks ties) or 'first_node'.");
  bind_scheduler_methods(sched);

  using seed = py_scheduler<seed_static_profile>;
  py::class_<seed> seed_sched(m, "SeedStaticScheduler",
                              "The seed's profile (NodeResourcesFit + GPUCheck; LoadAware and ModelAffinity "
                              "weighted) compiled as a static profile: a cross-check of the dynamic one.");
  seed_sched.def(py::init([](std::int64_t la, std::int64_t ma, const std::vector<std::pair<std::string, std::string>>& pairs,
                             int percentage, std::uint64_t s, bool explain, const std::string& ties) {
                   return new seed{scheduler<cluster_t, seed_static_profile>(make_seed_profile(la, ma, pairs),
                                                                             make_options(percentage, s, explain, ties))};
                 }),
                 py::kw_only(), py::arg("load_aware_weight") = 10, py::arg("model_affinity_weight") = 5,
                 py::arg("interfering_pairs") = std::vector<std::pair<std::string, std::string>>{},
                 py::arg("percentage_of_nodes_to_score") = 100, py::arg("seed") = 0, py::arg("explain_scores") = true,
                 py::arg("tie_break") = "reservoir");
  bind_scheduler_methods(seed_sched);

  py::class_<py_transaction>(m, "Transaction",
                             "Reservations that apply together: commit() keeps them, rollback() (or leaving a `with` "
                             "block by an exception) releases them in reverse order, leaving the cluster exactly as "
                             "before. Leaving a `with` block normally commits. If the cluster was changed under the "
                             "transaction so that an undo is refused, rollback() undoes everything else and raises "
                             "RuntimeError naming the refused change.")
      .def(py::init<py::object>(), py::arg("cluster"))
      .def("reserve", &py_transaction::reserve, py::arg("pod"), py::arg("binding"))
      .def("place", &py_transaction::place<profile_t>, py::arg("scheduler"), py::arg("pod"),
           "schedule_one, then reserve the decision inside the transaction.")
      .def("place", &py_transaction::place<seed_static_profile>, py::arg("scheduler"), py::arg("pod"))
      .def("commit", &py_transaction::commit)
      .def("rollback", &py_transaction::rollback)
      .def_property_readonly("size", [](const py_transaction& t) { return t.tx ? t.tx->size() : 0; })
      .def_property_readonly("open", [](const py_transaction& t) { return t.tx.has_value(); })
      .def("__enter__", [](py_transaction& t) -> py_transaction& { return t; }, py::return_value_policy::reference)
      .def("__exit__", [](py_transaction& t, const py::object& exc_type, const py::object&, const py::object&) {
        if (!t.tx) return false;
        if (exc_type.is_none()) {
          t.commit();
        } else {
          t.rollback();
        }
        return false;
      });
}

}  // namespace gpusched::python
