// sim/experiment/: the seed's A/B experiment (serving replicas and training gangs on one simulated
// period) one run at a time, so Python loops seeds (with a progress bar) while each run releases
// the GIL. run_metrics become a dict through `metric_fields` below: a new metric is one line there.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/sim/experiment/experiment.hpp>
#include <gpusched/sim/experiment/report.hpp>
#include <gpusched/sim/serving/scenario_yaml.hpp>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

namespace ex = sim::experiment;
namespace sv = sim::serving;

// run_metrics -> Python: the ONE list of (key, member). A field missing here but present in
// report.hpp's metric_defs() makes experiment_metrics() raise, so the tests catch it.
struct metric_field {
  const char* key;
  double ex::run_metrics::*member;
};
constexpr metric_field metric_fields[] = {
    {"throughput_qps", &ex::run_metrics::throughput_qps},
    {"p50_ms", &ex::run_metrics::p50_ms},
    {"p95_ms", &ex::run_metrics::p95_ms},
    {"p99_ms", &ex::run_metrics::p99_ms},
    {"slo_attainment_pct", &ex::run_metrics::slo_attainment_pct},
    {"gpu_util_mean_pct", &ex::run_metrics::gpu_util_mean_pct},
    {"gpu_util_swing_pct", &ex::run_metrics::gpu_util_swing_pct},
    {"sched_success_pct", &ex::run_metrics::sched_success_pct},
    {"jct_mean_s", &ex::run_metrics::jct_mean_s},
    {"jobs_finished", &ex::run_metrics::jobs_finished},
    {"preemptions", &ex::run_metrics::preemptions},
    {"partial_gang_gpu_hours", &ex::run_metrics::partial_gang_gpu_hours},
    {"oom_crashes", &ex::run_metrics::oom_crashes},
    {"leak_restarts", &ex::run_metrics::leak_restarts},
    {"leak_ttf_left_min_s", &ex::run_metrics::leak_ttf_left_min_s},
    {"jobs_restarted", &ex::run_metrics::jobs_restarted},
    {"replicas_pending_s", &ex::run_metrics::replicas_pending_s},
};

py::dict metrics_dict(const ex::run_metrics& r) {
  py::dict d;
  for (const auto& f : metric_fields) d[f.key] = r.*(f.member);
  return d;
}

// A loaded scenario with its latency model (built once: it reads the profile tables).
struct py_scenario {
  sv::scenario sc;
  std::shared_ptr<const sv::latency_model> lm;
};

ex::profile_wiring wiring(const py_scenario& s, const std::string& profile) { return ex::resolve_profile(s.sc, profile); }

}  // namespace

void register_experiment(py::module_& m) {
  py::class_<py_scenario, std::shared_ptr<py_scenario>>(
      m, "Scenario", "The seed experiment's scenario (serving services, training jobs, node pool, profiles); immutable.")
      .def_static(
          "load",
          [](const std::string& path) {
            auto s = std::make_shared<py_scenario>();
            s->sc = sv::load_scenario(path);
            s->lm = std::make_shared<const sv::latency_model>(sv::make_latency_model(s->sc));
            return s;
          },
          py::arg("path"), "Reads a scenario YAML (errors: ConfigFileError with file and line).")
      .def_property_readonly("file", [](const py_scenario& s) { return s.sc.file; })
      .def_property_readonly("name", [](const py_scenario& s) { return s.sc.name; })
      .def_property_readonly("duration_s", [](const py_scenario& s) { return s.sc.duration_s; })
      .def_property_readonly("seeds", [](const py_scenario& s) { return s.sc.seeds; })
      .def_property_readonly(
          "profiles",
          [](const py_scenario& s) {
            std::vector<std::string> v{"kube-default"};
            for (const auto& p : s.sc.profiles) {
              if (p.name != "kube-default") v.push_back(p.name);
            }
            return v;
          },
          "Profile names run_once accepts: the built-in kube-default and the scenario's.")
      .def_property_readonly("num_nodes", [](const py_scenario& s) { return s.sc.nodes.count; })
      .def("__repr__", [](const py_scenario& s) { return "<Scenario '" + s.sc.name + "' from " + s.sc.file + ">"; });

  m.def(
      "experiment_run_once",
      [](const py_scenario& s, const std::string& profile, std::uint64_t seed, std::optional<double> duration_s) {
        if (duration_s && !(*duration_s > 0.0 && std::isfinite(*duration_s))) {
          throw invalid_argument_error("duration_s", "must be a finite number > 0, got " + std::to_string(*duration_s));
        }
        const ex::profile_wiring w = wiring(s, profile);
        ex::run_metrics r;
        {
          py::gil_scoped_release nogil;
          r = ex::run_once(s.sc, *s.lm, w, seed, duration_s ? *duration_s : -1.0);
        }
        return metrics_dict(r);
      },
      py::arg("scenario"), py::arg("profile"), py::arg("seed"), py::arg("duration_s") = py::none(),
      "Runs one profile on one seed (duration_s: the scenario's when None); releases the GIL. Returns the run's "
      "metrics as a dict (see experiment_metrics()).");
  m.def(
      "experiment_metrics",
      [] {
        // (key, label) in report order; every metric of report.hpp must have a key here.
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& d : ex::metric_defs()) {
          const char* key = nullptr;
          for (const auto& f : metric_fields) {
            if (f.member == d.field) key = f.key;
          }
          if (key == nullptr) {
            throw std::logic_error(std::string("metric '") + d.name +
                                   "' has no key in register_experiment.cpp's metric_fields");
          }
          out.emplace_back(key, d.name);
        }
        return out;
      },
      "The run metrics as (key, label) pairs in report order; jct_mean_s is in seconds (the report's label says "
      "hours: it divides by 3600).");
  m.def(
      "summarise",
      [](const std::vector<double>& x) {
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (!std::isfinite(x[i])) throw invalid_argument_error("x[" + std::to_string(i) + "]", "must be finite");
        }
        const ex::mean_ci c = ex::summarise(x);
        return std::make_pair(c.mean, c.half);
      },
      py::arg("x"),
      "Mean and 95% confidence half-width (Student's t, sample standard deviation): (mean, half); half is 0 with "
      "fewer than two values.");
}

}  // namespace gpusched::python
