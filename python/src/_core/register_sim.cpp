// sim/: the openb trace replay (the FGD paper's protocol, and the dynamic replay with departures),
// results as dicts of numpy arrays. The trace is immutable once loaded, so replays of one trace may
// run in parallel Python threads (each call releases the GIL).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gpusched/preflight/gpu_check.hpp>
#include <gpusched/preflight/resource_fit.hpp>
#include <gpusched/profile/dynamic_profile.hpp>
#include <gpusched/sim/dynamic.hpp>
#include <gpusched/sim/paper.hpp>
#include <gpusched/sim/policies.hpp>
#include <gpusched/sim/replay_fields.hpp>
#include <gpusched/sim/trace.hpp>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

using trace_ptr = std::shared_ptr<sim::trace>;  // never mutated after load

sim::policy_kind policy_of(const std::string& name) {
  if (const auto k = sim::find_policy(name)) return *k;
  std::string known;
  for (const auto& p : sim::policies) known += (known.empty() ? "" : ", ") + std::string(p.name);
  throw invalid_argument_error("policy", "unknown policy '" + name + "'; one of " + known);
}

template <class T, class F>
py::array_t<T> column(std::size_t n, F&& f) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = f(i);
  return to_numpy(std::move(v));
}

py::dict shapes_dict(const std::map<std::string, std::size_t>& m) {
  py::dict d;
  for (const auto& [k, v] : m) d[py::str(k)] = v;
  return d;
}

// The field list's scalars (sim/replay_fields.hpp: the keys of gpusched-sim's JSON and table).
template <class Fields, class R>
void put_fields(py::dict& d, const Fields& fields, const R& r) {
  for (const auto& f : fields) {
    const double v = f.get(r);
    if (f.kind == sim::value_kind::integer) {
      d[py::str(std::string(f.key))] = static_cast<std::int64_t>(std::llround(v));
    } else {
      d[py::str(std::string(f.key))] = v;
    }
  }
}

py::dict paper_dict(sim::paper_result&& r, int max_pct) {
  py::dict d;
  d["policy"] = r.policy;
  d["seed"] = r.seed;
  d["tune"] = r.tune;
  d["gpu_capacity_milli"] = r.gpu_capacity;
  put_fields(d, sim::paper_fields, sim::view(r, max_pct));
  const auto curve = r.curve(max_pct);  // merge_alloc_discrete_0920.py's per-percent buckets
  const std::size_t n = curve.size();
  d["arrived_pct"] = column<std::int64_t>(n, [&](std::size_t i) { return curve[i].arrived_pct; });
  d["allocation_pct"] = column<double>(n, [&](std::size_t i) { return curve[i].allocation_pct; });
  d["frag_amount_pct"] = column<double>(n, [&](std::size_t i) { return curve[i].frag_amount_pct; });
  d["frag_ratio_pct"] = column<double>(n, [&](std::size_t i) { return curve[i].frag_ratio_pct; });
  const auto& ev = r.events;  // one per arrival, unbucketed
  d["event_arrived_pct"] =
      column<double>(ev.size(), [&](std::size_t i) { return r.pct(static_cast<double>(ev[i].arrived_gpu_milli)); });
  d["event_allocation_pct"] =
      column<double>(ev.size(), [&](std::size_t i) { return r.pct(static_cast<double>(ev[i].allocated_gpu_milli)); });
  d["event_frag_amount_pct"] = column<double>(ev.size(), [&](std::size_t i) { return r.pct(ev[i].frag_gpu_milli); });
  d["failed_by_shape"] = shapes_dict(r.failed_by_shape);
  return d;
}

// The unallocated GPU by where it is and the waiting pods' GPU by pod kind (sim::dynamic_sample), % of
// capacity, under `prefix` (gpusched-sim's JSON keys).
void put_free_and_waiting(py::dict& d, const std::string& prefix, const std::vector<sim::dynamic_sample>& s,
                          milli capacity) {
  const double cap = capacity > 0 ? static_cast<double>(capacity) : 1.0;
  const auto pct = [&](milli m) { return static_cast<double>(m) / cap * 100.0; };
  d[(prefix + "free_in_whole_gpus_pct").c_str()] =
      column<double>(s.size(), [&](std::size_t i) { return pct(s[i].whole_free_gpu_milli); });
  d[(prefix + "free_in_partly_used_gpus_pct").c_str()] =
      column<double>(s.size(), [&](std::size_t i) { return pct(s[i].partly_free_gpu_milli(capacity)); });
  d[(prefix + "waiting_one_gpu_pct").c_str()] =
      column<double>(s.size(), [&](std::size_t i) { return pct(s[i].waiting_one_gpu_milli); });
  d[(prefix + "waiting_multi_gpu_pct").c_str()] =
      column<double>(s.size(), [&](std::size_t i) { return pct(s[i].waiting_multi_gpu_milli); });
}

py::dict dynamic_dict(sim::dynamic_result&& r) {
  py::dict d;
  d["policy"] = r.policy;
  d["seed"] = r.seed;
  d["gpu_capacity_milli"] = r.gpu_capacity;
  put_fields(d, sim::dynamic_fields, r);
  const double cap = r.gpu_capacity > 0 ? static_cast<double>(r.gpu_capacity) : 1.0;
  const auto& s = r.samples;
  d["time_s"] = column<std::int64_t>(s.size(), [&](std::size_t i) { return s[i].time; });
  d["allocation_pct"] =
      column<double>(s.size(), [&](std::size_t i) { return static_cast<double>(s[i].allocated_gpu_milli) / cap * 100.0; });
  d["running_pods"] = column<std::int64_t>(s.size(), [&](std::size_t i) { return static_cast<std::int64_t>(s[i].running); });
  d["pending_pods"] = column<std::int64_t>(s.size(), [&](std::size_t i) { return static_cast<std::int64_t>(s[i].pending); });
  d["frag_amount_pct"] = column<double>(s.size(), [&](std::size_t i) { return s[i].frag_gpu_milli / cap * 100.0; });
  put_free_and_waiting(d, "", s, r.gpu_capacity);
  const auto& w = r.window;  // evenly spaced points of the arrival window
  d["window_time_s"] = column<std::int64_t>(w.size(), [&](std::size_t i) { return w[i].time; });
  d["window_allocation_pct"] =
      column<double>(w.size(), [&](std::size_t i) { return static_cast<double>(w[i].allocated_gpu_milli) / cap * 100.0; });
  d["window_running_pods"] = column<std::int64_t>(w.size(), [&](std::size_t i) { return static_cast<std::int64_t>(w[i].running); });
  d["window_pending_pods"] = column<std::int64_t>(w.size(), [&](std::size_t i) { return static_cast<std::int64_t>(w[i].pending); });
  d["window_frag_amount_pct"] = column<double>(w.size(), [&](std::size_t i) { return w[i].frag_gpu_milli / cap * 100.0; });
  put_free_and_waiting(d, "window_", w, r.gpu_capacity);
  d["preempted_by_shape"] = shapes_dict(r.preempted_by_shape);
  d["start_s"] = r.start;
  d["end_s"] = r.end;
  d["last_event_s"] = r.last_event;
  d["window_days"] = r.days();
  d["withdrawn_by_shape"] = shapes_dict(r.withdrawn_by_shape);
  d["pods_by_priority"] = r.pods_by_priority;  // {priority: count}
  d["withdrawn_by_priority"] = r.withdrawn_by_priority;
  return d;
}

// A policy written in Python: the simulator's filter (resource_fit + gpu_check), the Python function
// as the only scorer, best-fit devices, first-node ties (as the paper's policies).
struct sim_python_scorer {
  std::string label;
  std::shared_ptr<gil_safe_object> fn;
  [[nodiscard]] std::string_view name() const noexcept { return label; }
  void score_nodes(const sim::replay_cluster& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const {
    python_scores(fn->obj, label, c.base(), p, nodes, out);
  }
};
static_assert(SpanScorer<sim_python_scorer, sim::replay_cluster>);

dynamic_profile<sim::replay_cluster> python_policy(const py::object& fn, const std::string& name) {
  dynamic_profile<sim::replay_cluster> prof;
  prof.add_check(resource_fit{}).add_check(gpu_check{});
  prof.add_score(sim_python_scorer{name, std::make_shared<gil_safe_object>(fn)}, 1);
  return prof;
}

std::string callable_name(const py::object& fn) {
  return py::hasattr(fn, "__name__") ? py::str(fn.attr("__name__")).cast<std::string>() : std::string("python");
}

template <class Run>
auto with_any_policy(const trace_ptr& t, const py::object& policy, std::uint64_t seed, tie_break_rule& ties, Run&& run) {
  if (py::isinstance<py::str>(policy)) {
    const sim::policy_kind k = policy_of(policy.cast<std::string>());
    ties = sim::policy_ties(k);
    const std::string name(sim::policy_name(k));
    py::gil_scoped_release nogil;
    return sim::with_policy(k, t->typical, seed, [&](auto prof) { return run(std::move(prof), name); });
  }
  if (!PyCallable_Check(policy.ptr())) {
    throw py::type_error("policy: expected a policy name or a Python scorer fn(features, pod) -> scores, got " +
                         py::str(py::type::of(policy).attr("__name__")).cast<std::string>());
  }
  ties = tie_break_rule::first_node;
  const std::string name = callable_name(policy);
  auto prof = python_policy(policy, name);
  py::gil_scoped_release nogil;  // the scorer takes the GIL back once per pod
  return run(std::move(prof), name);
}

py::dict run_paper(const trace_ptr& t, const py::object& policy, std::uint64_t seed, double tune, bool shuffle,
                   bool record_events, std::optional<int> max_pct, bool preemption) {
  if (!std::isfinite(tune)) throw invalid_argument_error("tune", "must be a finite number");
  if (max_pct && *max_pct < 0) throw invalid_argument_error("max_pct", "must be >= 0, got " + std::to_string(*max_pct));
  sim::paper_options o;
  o.seed = seed;
  o.tune = tune;
  o.shuffle = shuffle;
  o.preemption = preemption;
  o.record_events = true;  // the curve needs them; dropped below when not wanted
  sim::paper_result r = with_any_policy(t, policy, seed, o.ties, [&](auto prof, const std::string& name) {
    return sim::run_paper(*t, std::move(prof), o, name);
  });
  // Default buckets: up to the tuned demand, or (untuned) up to the final arrived percentage.
  const int top = max_pct ? *max_pct
                          : tune > 0 ? static_cast<int>(std::lround(tune * 100))
                                     : static_cast<int>(std::ceil(r.final_arrived_pct()));
  if (!record_events) {
    py::dict d = paper_dict(std::move(r), top);
    for (const char* key : {"event_arrived_pct", "event_allocation_pct", "event_frag_amount_pct"}) d.attr("pop")(key);
    return d;
  }
  return paper_dict(std::move(r), top);
}

py::dict run_dynamic(const trace_ptr& t, const py::object& policy, std::uint64_t seed, double time_scale,
                     std::int64_t sample_period_s, bool preemption, std::int64_t window_samples,
                     const std::string& queue) {
  if (window_samples < 0 || window_samples > 1000000) {
    throw invalid_argument_error("window_samples", "must be within 0..1000000, got " + std::to_string(window_samples));
  }
  if (queue != "fifo" && queue != "priority") {
    throw invalid_argument_error("queue", "must be 'fifo' or 'priority', got '" + queue + "'");
  }
  sim::dynamic_options o;
  o.queue = queue == "priority" ? sim::queue_order::priority : sim::queue_order::fifo;
  o.preemption = preemption;
  o.window_samples = static_cast<std::size_t>(window_samples);
  o.seed = seed;
  o.time_scale = time_scale;
  o.sample_period = sample_period_s;
  sim::dynamic_result r = with_any_policy(t, policy, seed, o.ties, [&](auto prof, const std::string& name) {
    return sim::run_dynamic(*t, std::move(prof), o, name);
  });
  return dynamic_dict(std::move(r));
}

}  // namespace

void register_sim(py::module_& m) {
  py::class_<sim::trace, trace_ptr>(m, "Trace",
                                    "An openb-format trace (nodes and pods, pods in name order) with its typical pod "
                                    "shapes; immutable.")
      .def_static(
          "load",
          [](const std::string& nodes, const std::string& pods) {
            return std::make_shared<sim::trace>(sim::trace::load(nodes, pods));
          },
          py::arg("nodes"), py::arg("pods"),
          "Reads an openb node list and pod list (11- or 5-column CSV). A malformed row raises ConfigFileError "
          "with file and line.")
      .def(
          "with_priorities_by_qos",
          [](const sim::trace& t) {
            auto copy = std::make_shared<sim::trace>(t);
            sim::set_priorities_by_qos(*copy);
            return copy;
          },
          "A copy whose pods take their priority from the qos column, for replays with preemption=True "
          "(Koordinator's classes: LS, Guaranteed, Burstable 9000, BE 5000; gpusched-sim's --priority-by-qos). "
          "The openb traces give every pod priority 0, and an equal priority is never preempted.")
      .def_property_readonly("nodes_file", [](const sim::trace& t) { return t.nodes_file; })
      .def_property_readonly("pods_file", [](const sim::trace& t) { return t.pods_file; })
      .def_property_readonly("num_nodes", [](const sim::trace& t) { return t.nodes.size(); })
      .def_property_readonly("num_pods", [](const sim::trace& t) { return t.pods.size(); })
      .def_property_readonly("gpu_milli_capacity", [](const sim::trace& t) { return t.gpu_milli_capacity; })
      .def_property_readonly("has_times", &sim::trace::has_times,
                             "Whether every pod has creation and deletion times (needed by run_dynamic).")
      .def(
          "pod_columns",
          [](const sim::trace& t) {
            const auto& p = t.pods;
            const std::size_t n = p.size();
            py::dict d;
            std::vector<std::string> names(n);
            for (std::size_t i = 0; i < n; ++i) names[i] = p[i].spec.name;
            d["name"] = names;
            d["cpu_milli"] = column<std::int64_t>(n, [&](std::size_t i) { return p[i].spec.cpu_milli; });
            d["memory_mib"] = column<std::int64_t>(n, [&](std::size_t i) { return p[i].spec.memory_mib; });
            d["num_gpu"] = column<std::int32_t>(n, [&](std::size_t i) { return p[i].spec.num_gpu; });
            d["gpu_milli"] = column<std::int32_t>(n, [&](std::size_t i) { return p[i].spec.gpu_milli; });
            d["creation_time"] = column<std::int64_t>(n, [&](std::size_t i) { return p[i].creation_time; });
            d["deletion_time"] = column<std::int64_t>(n, [&](std::size_t i) { return p[i].deletion_time; });
            return d;
          },
          "The pods (name order) as numpy columns: name (list), cpu_milli, memory_mib, num_gpu, gpu_milli, "
          "creation_time, deletion_time (0 in 5-column files).")
      .def(
          "node_columns",
          [](const sim::trace& t) {
            const auto& v = t.nodes;
            const std::size_t n = v.size();
            py::dict d;
            std::vector<std::string> names(n), models(n);
            for (std::size_t i = 0; i < n; ++i) {
              names[i] = v[i].name;
              models[i] = v[i].gpus.empty() ? std::string() : std::string(v[i].gpus.front().model.view());
            }
            d["name"] = names;
            d["cpu_milli"] = column<std::int64_t>(n, [&](std::size_t i) { return v[i].cpu_milli; });
            d["memory_mib"] = column<std::int64_t>(n, [&](std::size_t i) { return v[i].memory_mib; });
            d["gpu_count"] = column<std::int32_t>(n, [&](std::size_t i) { return static_cast<std::int32_t>(v[i].gpus.size()); });
            d["gpu_model"] = models;
            return d;
          },
          "The nodes (file order) as numpy columns: name, cpu_milli, memory_mib, gpu_count, gpu_model.")
      .def("__len__", [](const sim::trace& t) { return t.pods.size(); })
      .def("__repr__", [](const sim::trace& t) {
        return "<Trace " + std::to_string(t.nodes.size()) + " nodes, " + std::to_string(t.pods.size()) + " pods>";
      });

  m.def(
      "sim_policies",
      [] {
        py::list out;
        for (const auto& p : sim::policies) {
          py::dict d;
          d["name"] = std::string(p.name);
          d["summary"] = std::string(p.summary);
          d["paper_allocation_pct"] = p.paper_allocation_pct > 0 ? py::object(py::float_(p.paper_allocation_pct)) : py::none();
          py::list former;
          for (const auto& [name, kind] : sim::former_policy_names) {
            if (kind == p.kind) former.append(std::string(name));
          }
          d["former_names"] = former;
          out.append(d);
        }
        return out;
      },
      "The simulator's policies: name, summary, the FGD paper's published GPU allocation % on the default "
      "openb trace at 130% arrived (None for gpusched's own), and former_names (names the policy had before, "
      "still accepted).");
  m.def(
      "canonical_policy", [](const std::string& name) { return std::string(sim::policy_name(policy_of(name))); },
      py::arg("name"),
      "The policy's name as the simulator reports it, for a name in any case or a former name (gpusched-refill "
      "is gpusched); InvalidArgumentError naming `policy` otherwise.");
  m.def("run_paper", &run_paper, py::arg("trace"), py::arg("policy"), py::arg("seed") = 42, py::arg("tune") = 1.3,
        py::arg("shuffle") = true, py::arg("record_events") = true, py::arg("max_pct") = py::none(),
        py::arg("preemption") = false,
        "Replays the trace under the FGD paper's protocol (arrivals only) with one policy and seed; releases the GIL. "
        "policy: a name (sim_policies()) or a Python scorer fn(NodeFeatures, Pod) -> scores 0..100, which runs as "
        "the only scorer after the simulator's filter (NodeResourcesFit + GPUCheck), with best-fit devices. "
        "Returns a dict: the per-percent curve (arrived_pct, allocation_pct, frag_amount_pct, frag_ratio_pct as numpy "
        "arrays, buckets 0..max_pct, default round(tune*100), or the final arrived % when tune <= 0), per-arrival events (event_*), "
        "the scalars of gpusched-sim's JSON (allocation_pct_at_tune, unallocated_pct_at_tune, final_*_pct, arrived_pods, "
        "failed_pods, wall_s, preemptions, preempted_pods; replay_fields('paper')), gpu_capacity_milli and failed_by_shape. "
        "preemption: a pod that fits nowhere may preempt lower-priority pods (Kubernetes' DefaultPreemption over the fit "
        "checks); the victims are gone for good, as failed pods are.");
  m.def("run_dynamic", &run_dynamic, py::arg("trace"), py::arg("policy"), py::arg("seed") = 42,
        py::arg("time_scale") = 1.0, py::arg("sample_period_s") = 6 * 3600, py::arg("preemption") = false,
        py::arg("window_samples") = 20, py::arg("queue") = "fifo",
        "Replays the trace with its own clock (arrivals, departures, a waiting queue); needs an 11-column pod file. "
        "Releases the GIL. Returns a dict of samples (time_s, allocation_pct, running_pods, pending_pods, "
        "frag_amount_pct, free_in_whole_gpus_pct and free_in_partly_used_gpus_pct (the unallocated GPU in wholly free "
        "and in partly used GPUs), waiting_one_gpu_pct and waiting_multi_gpu_pct (the GPU asked by waiting pods of one GPU and of several) "
        "as numpy arrays), the scalars of gpusched-sim's JSON (replay_fields('dynamic')), withdrawn_by_shape, "
        "preempted_by_shape, and pods_by_priority and withdrawn_by_priority ({priority: count}). "
        "preemption: a pod that fits nowhere may preempt lower-priority pods; the victims wait again. "
        "window_samples: evenly spaced points of the arrival window (window_time_s, window_allocation_pct, "
        "window_running_pods, window_pending_pods, window_frag_amount_pct and window_ forms of the four above). queue: the order in which waiting pods "
        "are retried, 'fifo' (arrival) or 'priority' (higher priority first, then arrival: Kubernetes' PrioritySort; "
        "gpusched-sim's --queue).");
  m.def(
      "replay_fields",
      [](const std::string& mode) {
        py::list out;
        auto add = [&](const auto& fields) {
          for (const auto& f : fields) {
            py::dict d;
            d["key"] = std::string(f.key);
            d["label"] = std::string(f.label);
            d["kind"] = std::string(sim::kind_name(f.kind));
            d["precision"] = f.precision;
            d["lower_is_better"] = f.lower_is_better;
            out.append(d);
          }
        };
        if (mode == "paper") {
          add(sim::paper_fields);
        } else if (mode == "dynamic") {
          add(sim::dynamic_fields);
        } else {
          throw invalid_argument_error("mode", "must be 'paper' or 'dynamic', got '" + mode + "'");
        }
        return out;
      },
      py::arg("mode"),
      "The scalar fields of run_paper (mode='paper') or run_dynamic ('dynamic') results, as gpusched-sim's JSON "
      "lists them (docs/results.schema.json): dicts with key, label, kind ('integer' or 'real'), precision and "
      "lower_is_better.");
}

}  // namespace gpusched::python
