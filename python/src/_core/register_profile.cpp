// profile/: dynamic profiles built by plugin name (from Python or a KubeSchedulerConfiguration).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <gpusched/profile/config_yaml.hpp>
#include <gpusched/profile/profile_file.hpp>
#include <gpusched/profile/registry.hpp>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

using registry_t = plugin_registry<cluster_t>;

const registry_t& builtin_registry() {
  static const registry_t r = registry_t::builtins();
  return r;
}

// Python plugin arguments -> the YAML node the registry's factories read.
YAML::Node to_yaml(py::handle o, const std::string& field) {
  if (o.is_none()) return YAML::Node(YAML::NodeType::Null);
  if (py::isinstance<py::bool_>(o)) return YAML::Node(o.cast<bool>() ? "true" : "false");
  if (py::isinstance<py::int_>(o)) return YAML::Node(py::str(o).cast<std::string>());
  if (py::isinstance<py::float_>(o)) {
    const double d = o.cast<double>();
    if (!std::isfinite(d)) throw invalid_argument_error(field, "must be a finite number");
    return YAML::Node(py::repr(o).cast<std::string>());
  }
  if (py::isinstance<py::str>(o)) {  // a string, never a number: tagged as a quoted YAML scalar is
    YAML::Node n(o.cast<std::string>());
    n.SetTag("!");
    return n;
  }
  if (py::isinstance<py::dict>(o)) {
    YAML::Node n(YAML::NodeType::Map);
    for (auto kv : py::reinterpret_borrow<py::dict>(o)) {
      if (!py::isinstance<py::str>(kv.first)) throw py::type_error(field + ": keys must be strings");
      const auto k = kv.first.cast<std::string>();
      n[k] = to_yaml(kv.second, field + "." + k);
    }
    return n;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    YAML::Node n(YAML::NodeType::Sequence);
    std::size_t i = 0;
    for (auto item : o) n.push_back(to_yaml(item, field + "[" + std::to_string(i++) + "]"));
    return n;
  }
  throw py::type_error(field + ": unsupported type " + py::str(py::type::of(o).attr("__name__")).cast<std::string>() +
                       " (use dict, list, str, int, float, bool or None)");
}

// Runs a registry factory on arguments given from Python; a file_error from the argument reader
// (whose "file" is the field) becomes an invalid_argument_error naming that field.
template <class F>
void with_python_args(const std::string& field, F&& f) {
  try {
    f();
  } catch (const file_error& e) {
    const std::string prefix = e.file() + ":" + std::to_string(e.line()) + ": ";
    std::string why = e.what();
    if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
    throw invalid_argument_error(field, why);
  }
}

std::string known(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void add_check_by_name(profile_t& p, const std::string& name, const py::object& args) {
  const auto* f = builtin_registry().find_check(name);
  if (f == nullptr) {
    throw invalid_argument_error("profile.check", "unknown check plugin '" + name + "' (known: " +
                                                      known(builtin_registry().check_names()) + ")");
  }
  const std::string field = "profile.check." + name + ".args";
  const YAML::Node node = to_yaml(args, field);
  with_python_args(field, [&] { (*f)(p, plugin_args(node, field, name)); });
}

void add_score_by_name(profile_t& p, const std::string& name, std::int64_t weight, const py::object& args) {
  const auto* f = builtin_registry().find_score(name);
  if (f == nullptr) {
    throw invalid_argument_error("profile.score", "unknown score plugin '" + name + "' (known: " +
                                                      known(builtin_registry().score_names()) + ")");
  }
  validate_weight(weight, name);
  const std::string field = "profile.score." + name + ".args";
  const YAML::Node node = to_yaml(args, field);
  with_python_args(field, [&] { (*f)(p, weight, plugin_args(node, field, name)); });
}

struct py_config {
  scheduler_config<cluster_t> cfg;
};

py_config parse_config(const std::string& text, const std::string& source, const py::dict& python_scores) {
  registry_t reg = builtin_registry();
  for (auto kv : python_scores) {
    const auto name = kv.first.cast<std::string>();
    if (reg.find_score(name) || reg.find_check(name)) {
      throw invalid_argument_error("python_scores", "'" + name + "' is the name of a built-in plugin");
    }
    py::object fn = py::reinterpret_borrow<py::object>(kv.second);
    if (!PyCallable_Check(fn.ptr())) throw py::type_error("python_scores['" + name + "'] must be callable");
    // The factory keeps a reference to fn; it runs now, during parsing, with the GIL held.
    reg.add_score(name, [fn, name](profile_t& p, std::int64_t weight, const plugin_args& a) {
      a.allow_only({});
      add_python_scorer(p, fn, weight, name);
    });
  }
  py_config out{parse_scheduler_config<cluster_t>(text, source, reg)};
  return out;
}

}  // namespace

void register_profile(py::module_& m) {
  py::class_<profile_t>(m, "Profile",
                        "A dynamic profile: preflight checks and weighted scorers chosen by plugin name, as in a "
                        "KubeSchedulerConfiguration (see docs/plugins.md), plus scorers written in Python. Checks run "
                        "in the order added; the GPU selector is best fit.")
      .def(py::init<>())
      .def(
          "add_check",
          [](profile_t& p, const std::string& name, const py::object& args) -> profile_t& {
            add_check_by_name(p, name, args);
            return p;
          },
          py::arg("name"), py::arg("args") = py::none(), py::return_value_policy::reference_internal,
          "Appends a check by plugin name (GPUCheck, NodeResourcesFit, LoadAware, ...) with its `args` as in a "
          "config's pluginConfig. Returns self.")
      .def(
          "add_score",
          [](profile_t& p, const std::string& name, std::int64_t weight, const py::object& args) -> profile_t& {
            add_score_by_name(p, name, weight, args);
            return p;
          },
          py::arg("name"), py::arg("weight") = 1, py::arg("args") = py::none(),
          py::return_value_policy::reference_internal,
          "Appends a scorer by plugin name with its weight (1..100) and `args`. Returns self.")
      .def(
          "add_python_score",
          [](profile_t& p, py::function fn, std::int64_t weight, std::string name) -> profile_t& {
            add_python_scorer(p, std::move(fn), weight, std::move(name));
            return p;
          },
          py::arg("fn"), py::arg("weight") = 1, py::arg("name") = "PythonScore",
          py::return_value_policy::reference_internal,
          "Appends a scorer written in Python: fn(nodes: NodeFeatures, pod: Pod) -> array of one score per node, "
          "within 0..100 (floats are truncated toward zero, as Kubernetes' int64 conversion). Called once per "
          "pod with the feasible nodes. Returns self.")
      .def(
          "without_default_fit", [](profile_t& p) -> profile_t& { return p.without_default_fit(); },
          py::return_value_policy::reference_internal,
          "Removes the default NodeResourcesFit filter (CPU and memory), as `disabled: - name: NodeResourcesFit` in "
          "a config does. A new Profile checks CPU and memory first (docs/plugins.md, \"The CPU/memory fit in code\"). Returns self.")
      .def_static(
          "from_file",
          [](const std::string& path, const std::optional<std::vector<pod>>& typical_pods, std::uint64_t seed) {
            plugin_context ctx;
            ctx.seed = seed;
            if (typical_pods) {
              if (typical_pods->empty()) throw invalid_argument_error("typical_pods", "must not be empty when given");
              ctx.workload = std::make_shared<const typical_workload>(typical_workload::from_pods(*typical_pods));
            }
            return load_profile_file<cluster_t>(path, std::move(ctx)).profile;
          },
          py::arg("path"), py::kw_only(), py::arg("typical_pods") = py::none(), py::arg("seed") = 0,
          "The one profile of a profile file (a KubeSchedulerConfiguration with one profile, e.g. "
          "data/profiles/fgd.yaml). typical_pods: the workload FGDScore / FillAware measure against when the file "
          "gives no typicalPods; seed: RandomScore's device choice. Errors raise ConfigFileError with file:line.")
      .def_property_readonly("checks",
                             [](const profile_t& p) {
                               std::vector<std::string> v;
                               for (std::size_t i = 0; i < p.check_count(); ++i) v.emplace_back(p.check_name(i));
                               return v;
                             })
      .def_property_readonly("scores",
                             [](const profile_t& p) {
                               std::vector<std::pair<std::string, std::int64_t>> v;
                               for (std::size_t i = 0; i < p.score_plugin_count(); ++i) {
                                 v.emplace_back(std::string(p.score_plugin_name(i)), p.score_plugin_weight(i));
                               }
                               return v;
                             },
                             "(plugin, weight) per scorer, in order")
      .def_property_readonly("gpu_selector", [](const profile_t& p) { return std::string(p.gpu_selector_name()); })
      .def("__repr__",
           [](const profile_t& p) {
             std::string s = "Profile(checks=[";
             for (std::size_t i = 0; i < p.check_count(); ++i) s += (i ? ", " : "") + std::string(p.check_name(i));
             s += "], scores=[";
             for (std::size_t i = 0; i < p.score_plugin_count(); ++i) {
               s += (i ? ", " : "") + std::string(p.score_plugin_name(i)) + "x" + std::to_string(p.score_plugin_weight(i));
             }
             return s + "])";
           })
      .def_static(
          "plugin_names",
          [] {
            py::dict d;
            d["checks"] = builtin_registry().check_names();
            d["scores"] = builtin_registry().score_names();
            return d;
          },
          "The built-in plugin names: {'checks': [...], 'scores': [...]}.");

  py::class_<py_config>(m, "Config", "A parsed KubeSchedulerConfiguration: one profile per schedulerName.")
      .def_property_readonly("scheduler_names",
                             [](const py_config& c) {
                               std::vector<std::string> v;
                               for (const auto& p : c.cfg.profiles) v.push_back(p.scheduler_name);
                               return v;
                             })
      .def(
          "profile", [](const py_config& c, const std::string& name) { return c.cfg.profile(name).profile; },
          py::arg("scheduler_name"), "A copy of the profile of this schedulerName (InvalidArgumentError when none).")
      .def(
          "percentage_of_nodes_to_score",
          [](const py_config& c, const std::string& name) {
            return c.cfg.profile(name).options.percentage_of_nodes_to_score;
          },
          py::arg("scheduler_name"))
      .def(
          "defaults_not_run",
          [](const py_config& c, const std::string& name) { return c.cfg.profile(name).defaults_not_run; },
          py::arg("scheduler_name"),
          "Kubernetes' default plugins this (apiVersion v1) profile would run that gpusched has no counterpart "
          "for (PrioritySort, NodePorts, PodTopologySpread, ...), in Kubernetes' order: reported, not run "
          "(docs/plugins.md, \"Default plugins and multiPoint\"). Empty before v1 and with multiPoint disabled '*'.");

  m.def("_parse_config", &parse_config, py::arg("text"), py::arg("source"), py::arg("python_scores"),
        "Parses a KubeSchedulerConfiguration (use gpusched.load_config). Errors raise ConfigFileError with "
        "file:line.");
}

}  // namespace gpusched::python
