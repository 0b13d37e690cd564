// batch/: the batch engine over a curated, named set of static profiles (profile_names below): the
// pods x nodes score matrix as a numpy array over the engine's own buffer (no copy), per-pod top-k,
// and greedy assignment of a whole batch.
// Each profile's engine is instantiated once, in engine_of<P>, behind the small virtual interface
// engine_base; the calls below are written once over it. Each call snapshots the cluster into a
// node_table (O(nodes)) and releases the GIL while scoring.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gpusched/batch/assign_greedy.hpp>
#include <gpusched/batch/batch_scorer.hpp>
#include <gpusched/batch/configured.hpp>
#include <gpusched/batch/fgd_plugin.hpp>
#include <gpusched/scoring/fgd.hpp>
#include <gpusched/scoring/node_resources.hpp>
#include <gpusched/scoring/typical_pods.hpp>
#include <gpusched/schedule/transaction.hpp>

#include "bindings.hpp"
#include "seed_profile.hpp"

namespace gpusched::python {

namespace {

// The profiles a BatchScorer can run, by name.
constexpr const char* profile_names[] = {"seed", "kube-default", "most-allocated", "fgd"};
std::string joined_profile_names() {
  std::string s;
  for (const char* n : profile_names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

// Kubernetes' default score plugins (NodeResourcesFit LeastAllocated and
// NodeResourcesBalancedAllocation, weight 1 each; sim/experiment/experiment.hpp kube_default_wiring),
// with the experiment's BalancedAllocation formula (BalanceAfter, before kubernetes PR #135573; moving
// the experiment's kube-default to the current formula is tracked separately).
inline auto make_kube_default() {
  return make_profile(checks(resource_fit{}, gpu_check{}),
                      scores(weighted{least_allocated{}, 1},
                             weighted{balanced_allocation{resource_weights{}, balance_formula::after}, 1}));
}
// Bin packing: NodeResourcesFit MostAllocated, weight 1.
inline auto make_most_allocated() {
  return make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{most_allocated{}, 1}));
}
// FGD (Weng et al., USENIX ATC'23) as score plugin and GPU selector (scoring/fgd.hpp).
inline auto make_fgd(const std::vector<pod>& typical) {
  const fgd_scorer fgd(typical_workload::from_pods(typical));
  return make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{fgd, 1}), fgd);
}

// What a BatchScorer's calls need of an engine, whatever its profile.
class engine_base {
 public:
  engine_base() = default;
  engine_base(const engine_base&) = delete;
  engine_base& operator=(const engine_base&) = delete;
  virtual ~engine_base() = default;
  virtual void scores(const cluster_t& c, const std::vector<pod>& pods, batch::score_matrix& m) const = 0;
  virtual void top_k(const cluster_t& c, const std::vector<pod>& pods, std::size_t k, batch::top_k_result& r) const = 0;
  [[nodiscard]] virtual batch::assignment assign(const cluster_t& c, const std::vector<pod>& pods,
                                                 const batch::greedy_options& o) const = 0;
};

template <class Profile>
class engine_of final : public engine_base {
 public:
  engine_of(Profile profile, batch::batch_options opts) : profile_(std::move(profile)), opts_(opts) {
    const batch::batch_scorer<Profile> check(profile_, opts_);  // validates the options now, not at the first call
  }
  void scores(const cluster_t& c, const std::vector<pod>& pods, batch::score_matrix& m) const override {
    prepared p(*this, c, pods);
    p.engine.scores(p.pods, m);
  }
  void top_k(const cluster_t& c, const std::vector<pod>& pods, std::size_t k, batch::top_k_result& r) const override {
    prepared p(*this, c, pods);
    p.engine.top_k(p.pods, k, r);
  }
  batch::assignment assign(const cluster_t& c, const std::vector<pod>& pods, const batch::greedy_options& o) const override {
    prepared p(*this, c, pods);
    return batch::assign_greedy(p.engine, p.nodes, pods, p.pods, o);
  }

 private:
  // A node table, pod table and engine prepared on them, for one call.
  struct prepared {
    batch::node_table nodes;
    batch::pod_table pods;
    batch::batch_scorer<Profile> engine;
    prepared(const engine_of& e, const cluster_t& c, const std::vector<pod>& ps)
        : nodes(c), pods(ps, nodes), engine(e.profile_, e.opts_) {
      engine.prepare(nodes);
    }
  };
  Profile profile_;
  batch::batch_options opts_;
};

template <class Profile>
std::unique_ptr<engine_base> engine_for(Profile p, const batch::batch_options& o) {
  return std::make_unique<engine_of<Profile>>(std::move(p), o);
}

struct py_batch {
  std::string profile;
  std::unique_ptr<engine_base> engine;
  batch::batch_options opts;
  busy_flag flag{false, "BatchScorer"};
};

using pair_list = std::vector<std::pair<std::string, std::string>>;

// Refuses a keyword that only the seed's (or FGD's) profile takes.
template <class T>
void only_for(const std::optional<T>& v, const char* field, const std::string& profile, const char* owner) {
  if (v && profile != owner) {
    throw invalid_argument_error(field, std::string("applies to profile='") + owner + "' only, not '" + profile + "'");
  }
}

std::unique_ptr<py_batch> make_batch(const std::string& profile, std::optional<std::int64_t> la,
                                     std::optional<std::int64_t> ma, const std::optional<pair_list>& pairs,
                                     const std::optional<std::vector<pod>>& typical, std::uint64_t seed, unsigned threads) {
  batch::batch_options o;
  o.seed = seed;
  o.threads = threads;
  only_for(la, "load_aware_weight", profile, "seed");
  only_for(ma, "model_affinity_weight", profile, "seed");
  only_for(pairs, "interfering_pairs", profile, "seed");
  only_for(typical, "typical_pods", profile, "fgd");
  auto b = std::make_unique<py_batch>();
  b->profile = profile;
  b->opts = o;
  if (profile == "seed") {
    b->engine = engine_for(make_seed_profile(la.value_or(10), ma.value_or(5), pairs.value_or(pair_list{})), o);
  } else if (profile == "kube-default") {
    b->engine = engine_for(make_kube_default(), o);
  } else if (profile == "most-allocated") {
    b->engine = engine_for(make_most_allocated(), o);
  } else if (profile == "fgd") {
    if (!typical || typical->empty()) {
      throw invalid_argument_error("typical_pods", "profile='fgd' needs a non-empty list of typical pods (the workload FGD "
                                                   "measures fragmentation against)");
    }
    b->engine = engine_for(make_fgd(*typical), o);
  } else {
    throw invalid_argument_error("profile", "unknown profile '" + profile + "'; valid: " + joined_profile_names());
  }
  return b;
}

// A configured profile (Profile, from plugins by name or from a file) through the batch engine's
// erased forms (batch/configured.hpp): every plugin needs a batch form, else InvalidArgumentError names it.
std::unique_ptr<py_batch> make_configured_batch(const profile_t& p, std::optional<std::int64_t> la,
                                                std::optional<std::int64_t> ma, const std::optional<pair_list>& pairs,
                                                const std::optional<std::vector<pod>>& typical, std::uint64_t seed,
                                                unsigned threads) {
  if (la || ma || pairs || typical) {
    throw invalid_argument_error(la ? "load_aware_weight" : ma ? "model_affinity_weight" : pairs ? "interfering_pairs" : "typical_pods",
                                 "applies to a named profile only; a Profile carries its own plugin arguments");
  }
  batch::batch_options o;
  o.seed = seed;
  o.threads = threads;
  auto b = std::make_unique<py_batch>();
  b->profile = "configured";
  b->opts = o;
  b->engine = engine_for(batch::configured(p), o);
  return b;
}

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
    self.engine->scores(pc.c, pods, *m);
    if (!extra.empty()) add_python_scores(*m, pc.c, pods, extra);  // python_scores takes the GIL per call
  }
  const auto rows = static_cast<py::ssize_t>(m->rows()), cols = static_cast<py::ssize_t>(m->cols());
  constexpr auto item = static_cast<py::ssize_t>(sizeof(std::int32_t));
  return py::array_t<std::int32_t>({rows, cols}, {cols * item, item}, m->data(), owner);
}

// k is at most the cluster's node count (at least 1): a pod has at most one candidate per node, and
// the result holds pods x k entries, so a larger k only pads (k = 10**12 would ask for terabytes).
py::dict top_k(py_batch& self, py_cluster& pc, const std::vector<pod>& pods, std::size_t k) {
  const std::size_t most = std::max<std::size_t>(num_nodes(pc.c), 1);
  if (k == 0 || k > most) {
    throw invalid_argument_error(
        "k", "must be within 1.." + std::to_string(most) + " (the cluster's nodes), got " + std::to_string(k));
  }
  busy_scope sb(self.flag);
  busy_scope cb(pc.flag);
  batch::top_k_result r;
  {
    py::gil_scoped_release nogil;
    self.engine->top_k(pc.c, pods, k, r);
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
    batch::greedy_options o;
    o.cache_k = cache_k;
    o.one_per_round = one_per_round;
    a = self.engine->assign(pc.c, pods, o);
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
                       "The batch engine over one of a named set of static profiles: every (pod, node) pair checked "
                       "and scored as schedule_one would with the same profile, vectorised and multi-threaded. Ties "
                       "rank by a hash of (seed, pod name, node), not schedule_one's random draw (its "
                       "tie_break='hashed' picks the same).\n\nprofile: 'seed' (default; the SeedStaticScheduler's: "
                       "NodeResourcesFit + GPUCheck, LoadAware x load_aware_weight (10) + ModelAffinity x "
                       "model_affinity_weight (5) with interfering_pairs), 'kube-default' (NodeResourcesFit + GPUCheck; "
                       "NodeResourcesFit LeastAllocated x1 + NodeResourcesBalancedAllocation x1), 'most-allocated' "
                       "(NodeResourcesFit + GPUCheck; MostAllocated x1), 'fgd' (NodeResourcesFit + GPUCheck; FGD x1 "
                       "and FGD's GPU choice, over the workload of typical_pods), or a Profile (built by plugin name or "
                       "Profile.from_file, e.g. data/profiles/*.yaml) whose plugins all have batch forms (docs/batch.md; "
                       "an InvalidArgumentError names the plugin otherwise; its `profile` is then 'configured').")
      .def(py::init([](const py::object& profile, std::optional<std::int64_t> la, std::optional<std::int64_t> ma,
                       const std::optional<pair_list>& pairs, const std::optional<std::vector<pod>>& typical,
                       std::uint64_t seed, unsigned threads) {
             if (py::isinstance<profile_t>(profile)) {
               return make_configured_batch(profile.cast<const profile_t&>(), la, ma, pairs, typical, seed, threads).release();
             }
             if (!py::isinstance<py::str>(profile)) throw py::type_error("profile must be a name (str) or a Profile");
             return make_batch(profile.cast<std::string>(), la, ma, pairs, typical, seed, threads).release();
           }),
           py::kw_only(), py::arg("profile") = "seed", py::arg("load_aware_weight") = py::none(),
           py::arg("model_affinity_weight") = py::none(), py::arg("interfering_pairs") = py::none(),
           py::arg("typical_pods") = py::none(), py::arg("seed") = 0, py::arg("threads") = 1)
      .def("scores", &scores, py::arg("cluster"), py::arg("pods"), py::kw_only(),
           py::arg("python_scores") = std::vector<python_score>{},
           "The weighted totals, a (pods, nodes) int32 array, -1 where a check fails; the array owns the engine's "
           "buffer (no copy). Releases the GIL. python_scores: [(fn, weight, name)] scorers written in Python "
           "(fn(NodeFeatures, Pod) -> scores 0..100), called once per pod with its feasible nodes; weight x score "
           "is added to those entries.")
      .def("top_k", &top_k, py::arg("cluster"), py::arg("pods"), py::arg("k") = 1,
           "The k best nodes per pod, best first (k within 1..the cluster's node count): {'node': (pods, k) int32, "
           "'score': (pods, k) int32 (-1 padding when fewer fit), 'feasible': (pods,) int64 feasible-node counts}.")
      .def("assign_greedy", &assign, py::arg("cluster"), py::arg("pods"), py::kw_only(), py::arg("apply") = false,
           py::arg("cache_k") = 64, py::arg("one_per_round") = false,
           "Places the whole batch by greedy rounds (docs/batch.md). Returns {'node' (per pod, -1 unplaced), "
           "'score', 'order' (commit order), 'gpus' (per pod, None unplaced), 'bindings' [(pod index, Binding)], "
           "'placed', 'rounds', 'total_score'}. apply=True reserves the bindings on the cluster (all or nothing); "
           "otherwise the cluster is unchanged.")
      .def_property_readonly("profile", [](const py_batch& b) { return b.profile; })
      .def_property_readonly("seed", [](const py_batch& b) { return b.opts.seed; })
      .def_property_readonly("threads", [](const py_batch& b) { return b.opts.threads; })
      .def_static("profiles", [] { return std::vector<std::string>(std::begin(profile_names), std::end(profile_names)); },
                  "The profile names BatchScorer(profile=...) takes.");
}

}  // namespace gpusched::python
