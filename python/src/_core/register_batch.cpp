// batch/: the batch engine over the seed's static profile (NodeResourcesFit + GPUCheck; LoadAware
// and ModelAffinity weighted): the pods x nodes score matrix as a numpy array over the engine's own
// buffer (no copy), per-pod top-k, and greedy assignment of a whole batch.
// Each call snapshots the cluster into a node_table (O(nodes)) and releases the GIL while scoring.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gpusched/batch/assign_greedy.hpp>
#include <gpusched/batch/batch_scorer.hpp>
#include <gpusched/schedule/transaction.hpp>

#include "bindings.hpp"
#include "seed_profile.hpp"

namespace gpusched::python {

namespace {

using engine_t = batch::batch_scorer<seed_static_profile>;

struct py_batch {
  seed_static_profile profile;
  batch::batch_options opts;
  busy_flag flag{false, "BatchScorer"};
};

// A node table, pod table and engine prepared on them, for one call.
struct prepared {
  batch::node_table nodes;
  batch::pod_table pods;
  engine_t engine;
  prepared(const py_batch& b, const cluster_t& c, const std::vector<pod>& ps)
      : nodes(c), pods(ps, nodes), engine(b.profile, b.opts) {
    engine.prepare(nodes);
  }
};

using python_score = std::tuple<py::object, std::int64_t, std::string>;  // (fn, weight, name)

// Adds weight x the Python scorers' scores to every feasible entry of each row (one call per pod
// and scorer, with that pod's feasible nodes), as a dynamic profile adds them to the C++ plugins'.
void add_python_scores(batch::score_matrix& m, const cluster_t& c, const std::vector<pod>& pods,
                       const std::vector<python_score>& extra) {
  std::vector<node_index> feasible;
  std::vector<std::int64_t> out;
  for (const auto& [fn, weight, name] : extra) {
    if (weight < 1 || weight > 100) {
      throw invalid_argument_error("python_scores." + name + ".weight", "must be within 1..100, got " + std::to_string(weight));
    }
  }
  for (std::size_t i = 0; i < pods.size(); ++i) {
    feasible.clear();
    for (Eigen::Index n = 0; n < m.cols(); ++n) {
      if (m(static_cast<Eigen::Index>(i), n) >= 0) feasible.push_back(static_cast<node_index>(n));
    }
    if (feasible.empty()) continue;
    out.resize(feasible.size());
    for (const auto& [fn, weight, name] : extra) {
      python_scores(fn, name, c, pods[i], feasible, out.data());
      for (std::size_t j = 0; j < feasible.size(); ++j) {
        m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(feasible[j])) += static_cast<std::int32_t>(weight * out[j]);
      }
    }
  }
}

py::array_t<std::int32_t> scores(py_batch& self, py_cluster& pc, const std::vector<pod>& pods,
                                 const std::vector<python_score>& extra) {
  busy_scope sb(self.flag);
  busy_scope cb(pc.flag);
  auto* m = new batch::score_matrix();
  py::capsule owner(m, [](void* p) { delete static_cast<batch::score_matrix*>(p); });
  {
    py::gil_scoped_release nogil;
    prepared p(self, pc.c, pods);
    p.engine.scores(p.pods, *m);
    if (!extra.empty()) add_python_scores(*m, pc.c, pods, extra);  // python_scores takes the GIL per call
  }
  const auto rows = static_cast<py::ssize_t>(m->rows()), cols = static_cast<py::ssize_t>(m->cols());
  constexpr auto item = static_cast<py::ssize_t>(sizeof(std::int32_t));
  return py::array_t<std::int32_t>({rows, cols}, {cols * item, item}, m->data(), owner);
}

py::dict top_k(py_batch& self, py_cluster& pc, const std::vector<pod>& pods, std::size_t k) {
  if (k == 0) throw invalid_argument_error("k", "must be >= 1");
  busy_scope sb(self.flag);
  busy_scope cb(pc.flag);
  batch::top_k_result r;
  {
    py::gil_scoped_release nogil;
    prepared p(self, pc.c, pods);
    p.engine.top_k(p.pods, k, r);
  }
  const std::size_t n = pods.size();
  std::vector<std::int32_t> node(n * k, -1), score(n * k, -1);
  std::vector<std::int64_t> feasible(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = r.candidates(i);
    for (std::size_t j = 0; j < c.size(); ++j) {
      node[i * k + j] = static_cast<std::int32_t>(c[j].node);
      score[i * k + j] = c[j].score;
    }
    feasible[i] = r.feasible(i);
  }
  const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(k)};
  py::dict d;
  d["node"] = to_numpy(std::move(node)).reshape(shape);
  d["score"] = to_numpy(std::move(score)).reshape(shape);
  d["feasible"] = to_numpy(std::move(feasible));
  return d;
}

py::dict assign(py_batch& self, py_cluster& pc, const std::vector<pod>& pods, bool apply, std::uint32_t cache_k,
                bool one_per_round) {
  if (cache_k == 0) throw invalid_argument_error("cache_k", "must be >= 1");
  busy_scope sb(self.flag);
  busy_scope cb(pc.flag);
  batch::assignment a;
  {
    py::gil_scoped_release nogil;
    prepared p(self, pc.c, pods);
    batch::greedy_options o;
    o.cache_k = cache_k;
    o.one_per_round = one_per_round;
    a = batch::assign_greedy(p.engine, p.nodes, pods, p.pods, o);
    if (apply) {  // all or nothing on the host's cluster
      transaction<cluster_t> tx(pc.c, a.order.size());
      for (const std::uint32_t i : a.order) tx.reserve(pods[i], a.bindings[i]);
      tx.commit();
    }
  }
  py::dict d;
  py::list gpus;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    gpus.append(a.node[i] >= 0 ? py::cast(gpu_list(a.bindings[i].gpus)) : py::none());
  }
  py::list bindings;
  for (const std::uint32_t i : a.order) bindings.append(py::make_tuple(i, a.bindings[i]));
  d["rounds"] = a.rounds;
  d["placed"] = a.placed();
  d["total_score"] = a.total_score();
  d["node"] = to_numpy(std::move(a.node));
  d["score"] = to_numpy(std::move(a.score));
  d["order"] = to_numpy(std::move(a.order));
  d["gpus"] = gpus;
  d["bindings"] = bindings;
  return d;
}

}  // namespace

void register_batch(py::module_& m) {
  py::class_<py_batch>(m, "BatchScorer",
                       "The batch engine over the seed's profile (the SeedStaticScheduler's): every (pod, node) pair "
                       "checked and scored as schedule_one would, vectorised and multi-threaded. Ties rank by a hash "
                       "of (seed, pod name, node), not schedule_one's random draw.")
      .def(py::init([](std::int64_t la, std::int64_t ma, const std::vector<std::pair<std::string, std::string>>& pairs,
                       std::uint64_t seed, unsigned threads) {
             batch::batch_options o;
             o.seed = seed;
             o.threads = threads;
             auto b = std::make_unique<py_batch>(py_batch{make_seed_profile(la, ma, pairs), o, {false, "BatchScorer"}});
             const engine_t check(b->profile, o);  // validates the options now, not at the first call
             return b.release();
           }),
           py::kw_only(), py::arg("load_aware_weight") = 10, py::arg("model_affinity_weight") = 5,
           py::arg("interfering_pairs") = std::vector<std::pair<std::string, std::string>>{}, py::arg("seed") = 0,
           py::arg("threads") = 1)
      .def("scores", &scores, py::arg("cluster"), py::arg("pods"), py::kw_only(),
           py::arg("python_scores") = std::vector<python_score>{},
           "The weighted totals, a (pods, nodes) int32 array, -1 where a check fails; the array owns the engine's "
           "buffer (no copy). Releases the GIL. python_scores: [(fn, weight, name)] scorers written in Python "
           "(fn(NodeFeatures, Pod) -> scores 0..100), called once per pod with its feasible nodes; weight x score "
           "is added to those entries.")
      .def("top_k", &top_k, py::arg("cluster"), py::arg("pods"), py::arg("k") = 1,
           "The k best nodes per pod, best first: {'node': (pods, k) int32, 'score': (pods, k) int32 (-1 padding "
           "when fewer fit), 'feasible': (pods,) int64 feasible-node counts}.")
      .def("assign_greedy", &assign, py::arg("cluster"), py::arg("pods"), py::kw_only(), py::arg("apply") = false,
           py::arg("cache_k") = 64, py::arg("one_per_round") = false,
           "Places the whole batch by greedy rounds (docs/batch.md). Returns {'node' (per pod, -1 unplaced), "
           "'score', 'order' (commit order), 'gpus' (per pod, None unplaced), 'bindings' [(pod index, Binding)], "
           "'placed', 'rounds', 'total_score'}. apply=True reserves the bindings on the cluster (all or nothing); "
           "otherwise the cluster is unchanged.")
      .def_property_readonly("seed", [](const py_batch& b) { return b.opts.seed; })
      .def_property_readonly("threads", [](const py_batch& b) { return b.opts.threads; });
}

}  // namespace gpusched::python
