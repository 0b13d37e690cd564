// sim/experiment/: the seed's A/B experiment (serving replicas and training gangs on one simulated
// period) one run at a time, so Python loops seeds (with a progress bar) while each run releases
// the GIL. run_metrics become a dict through report.hpp's metric_fields (the table's and JSON's list).
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

// run_metrics -> Python: report.hpp's metric_fields, the list the table and the JSON use too.
py::dict metrics_dict(const ex::run_metrics& r) {
  py::dict d;
  for (const auto& f : ex::metric_fields) {
    const double v = f.get(r);
    if (f.kind == sim::value_kind::integer) {
      d[py::str(std::string(f.key))] = static_cast<std::int64_t>(std::llround(v));
    } else {
      d[py::str(std::string(f.key))] = v;
    }
  }
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
      "experiment_fields",
      [] {
        py::list out;
        for (const auto& f : ex::metric_fields) {
          py::dict d;
          d["key"] = std::string(f.key);
          d["label"] = std::string(f.label);
          d["kind"] = std::string(sim::kind_name(f.kind));
          d["precision"] = f.precision;
          d["lower_is_better"] = f.lower_is_better;
          out.append(d);
        }
        return out;
      },
      "The run metrics in report order, as the JSON's \"fields\" (docs/results.schema.json): dicts with key "
      "(snake_case, unit last), label (the table's), kind ('integer' or 'real'), precision and lower_is_better.");
  m.def(
      "experiment_metrics",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& f : ex::metric_fields) out.emplace_back(std::string(f.key), std::string(f.label));
        return out;
      },
      "The run metrics as (key, label) pairs in report order; each value is in its key's unit (jct_mean_h: hours, "
      "as the label says).");
  m.def(
      "experiment_inputs",
      [](const py_scenario& s, const std::vector<std::string>& profiles) {
        std::vector<ex::profile_wiring> ws;
        for (const auto& p : profiles) ws.push_back(wiring(s, p));
        py::list out;
        for (const auto& in : ex::inputs_of(s.sc, ws)) {
          py::dict d;
          d["role"] = in.role;
          d["path"] = in.path;
          d["sha256"] = in.sha256;
          out.append(d);
        }
        return out;
      },
      py::arg("scenario"), py::arg("profiles"),
      "The files behind run_ab's results, as the JSON's \"inputs\": dicts with role, path and sha256 (the scenario, "
      "its latency tables, each profile's configuration).");
  m.def(
      "summary_of",
      [](const std::vector<double>& x) {
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (!std::isfinite(x[i])) throw invalid_argument_error("x[" + std::to_string(i) + "]", "must be finite");
        }
        const sim::mean_ci c = sim::summarise(x);
        py::dict d;
        d["mean"] = c.mean;
        d["sd"] = c.sd;
        d["ci95"] = c.half;
        return d;
      },
      py::arg("x"),
      "Mean, sample standard deviation and 95% confidence half-width (Student's t) of per-seed values: "
      "{'mean', 'sd', 'ci95'}, as in the JSON's results.");
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
