// core/: QoS and Tier, Pod, GPU, Binding and Cluster (in_memory_cluster).
#include <pybind11/native_enum.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "bindings.hpp"

namespace gpusched::python {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

qos_class to_qos(const std::variant<qos_class, std::string>& v) {
  if (const auto* q = std::get_if<qos_class>(&v)) return *q;
  const std::string s = lower(std::get<std::string>(v));
  if (s == "guaranteed" || s == "ls") return qos_class::guaranteed;  // openb: LS (latency-sensitive)
  if (s == "burstable") return qos_class::burstable;
  if (s == "besteffort" || s == "best_effort" || s == "be") return qos_class::best_effort;  // openb: BE
  throw invalid_argument_error("pod.qos", "must be Guaranteed, Burstable or BestEffort (or openb's LS, BE), got '" +
                                              std::get<std::string>(v) + "'");
}

tier to_tier(const std::variant<tier, std::string>& v) {
  if (const auto* t = std::get_if<tier>(&v)) return *t;
  const std::string s = lower(std::get<std::string>(v));
  if (s == "prod") return tier::prod;
  if (s == "dev") return tier::dev;
  throw invalid_argument_error("pod.tier", "must be prod or dev, got '" + std::get<std::string>(v) + "'");
}

// {name: amount} -> named quantities, validated (bad name or amount: InvalidArgumentError naming
// `at` + "scalars[<name>]"); in name order, so that equal dicts give equal pods.
using scalar_map = std::map<std::string, std::int64_t>;
std::vector<named_quantity> to_named(const scalar_map& m, const std::string& at) {
  std::vector<named_quantity> out;
  for (const auto& [k, v] : m) {
    const std::string f = at + "scalars['" + k + "']";
    resource_name r(k, f);
    if (v < 0 || v > max_quantity) throw invalid_argument_error(f, "must be within 0..2^50, got " + std::to_string(v));
    out.push_back({r, v});
  }
  return out;
}
py::dict from_named(const std::vector<named_quantity>& qs) {
  py::dict d;
  for (const auto& q : qs) d[py::str(std::string(q.name.str()))] = q.amount;
  return d;
}

taint_effect to_effect(const std::string& s, const std::string& field) {
  if (s == "NoSchedule") return taint_effect::no_schedule;
  if (s == "PreferNoSchedule") return taint_effect::prefer_no_schedule;
  if (s == "NoExecute") return taint_effect::no_execute;
  throw invalid_argument_error(field, "must be NoSchedule, PreferNoSchedule or NoExecute, got '" + s + "'");
}
std::string dict_str(const py::dict& d, const char* key, const std::string& field, bool required) {
  if (!d.contains(key)) {
    if (required) throw invalid_argument_error(field + "." + key, "is required");
    return "";
  }
  return py::str(d[key]).cast<std::string>();
}
void allow_keys(const py::dict& d, std::initializer_list<const char*> keys, const std::string& field) {
  for (auto kv : d) {
    const auto k = py::str(kv.first).cast<std::string>();
    bool ok = false;
    for (const char* a : keys) ok = ok || k == a;
    if (!ok) throw invalid_argument_error(field + "." + k, "unknown key");
  }
}

// Node labels {key: value}, taints [{key, value, effect}], unschedulable -> node_constraints.
node_constraints to_constraints(const std::map<std::string, std::string>& labels, const std::vector<py::dict>& taints,
                                bool unschedulable) {
  node_constraints k;
  for (const auto& [key, value] : labels) k.labels.push_back({label_name(key), label_name(value)});
  for (std::size_t i = 0; i < taints.size(); ++i) {
    const std::string f = "taints[" + std::to_string(i) + "]";
    allow_keys(taints[i], {"key", "value", "effect"}, f);
    k.taints.push_back({label_name(dict_str(taints[i], "key", f, true)), label_name(dict_str(taints[i], "value", f, false)),
                        to_effect(dict_str(taints[i], "effect", f, true), f + ".effect")});
  }
  k.unschedulable = unschedulable;
  return k;
}

// A pod's nodeSelector {key: value} and tolerations [{key, operator, value, effect}] -> placement.
void set_placement(pod& p, const std::map<std::string, std::string>& node_selector, const std::vector<py::dict>& tolerations) {
  if (node_selector.empty() && tolerations.empty()) return;
  pod_placement pl;
  for (const auto& [key, value] : node_selector) pl.node_selector.push_back({label_name(key), label_name(value)});
  for (std::size_t i = 0; i < tolerations.size(); ++i) {
    const std::string f = "pod '" + p.name + "'.tolerations[" + std::to_string(i) + "]";
    allow_keys(tolerations[i], {"key", "operator", "value", "effect"}, f);
    toleration t;
    t.key = label_name(dict_str(tolerations[i], "key", f, false));
    const std::string op = tolerations[i].contains("operator") ? dict_str(tolerations[i], "operator", f, false) : "Equal";
    if (op == "Exists") {
      t.op = toleration_operator::exists;
    } else if (op != "Equal") {
      throw invalid_argument_error(f + ".operator", "must be Equal or Exists, got '" + op + "'");
    }
    t.value = label_name(dict_str(tolerations[i], "value", f, false));
    if (tolerations[i].contains("effect") && !tolerations[i]["effect"].is_none()) {
      t.effect = to_effect(dict_str(tolerations[i], "effect", f, false), f + ".effect");
    }
    pl.tolerations.push_back(t);
  }
  p.placement.set(std::move(pl), "pod '" + p.name + "'.");
}
py::dict placement_selector(const pod& p) {
  py::dict d;
  for (const auto& l : p.placement.get().node_selector) d[py::str(std::string(l.key.str()))] = std::string(l.value.str());
  return d;
}
py::list placement_tolerations(const pod& p) {
  py::list out;
  for (const auto& t : p.placement.get().tolerations) {
    py::dict d;
    d["key"] = std::string(t.key.str());
    d["operator"] = t.op == toleration_operator::exists ? "Exists" : "Equal";
    d["value"] = std::string(t.value.str());
    d["effect"] = t.effect ? py::object(py::str(std::string(to_string(*t.effect)))) : py::object(py::none());
    out.append(d);
  }
  return out;
}

pod make_py_pod(std::string name, milli cpu_milli, mib memory_mib, std::int32_t num_gpu, std::optional<std::int32_t> gpu_milli,
                std::int32_t gpu_mem_mib, const std::vector<std::string>& allowed_models, const std::string& model_type,
                std::int64_t priority, const std::variant<qos_class, std::string>& qos,
                const std::variant<tier, std::string>& tier_, std::string gang, std::int32_t gang_min_members,
                std::string tenant, double submit_time, const scalar_map& scalars,
                const std::map<std::string, std::string>& node_selector, const std::vector<py::dict>& tolerations) {
  pod p;
  p.name = std::move(name);
  p.cpu_milli = cpu_milli;
  p.memory_mib = memory_mib;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli ? *gpu_milli : (num_gpu > 0 ? gpu_milli_whole : 0);
  p.gpu_mem_mib = gpu_mem_mib;
  for (const auto& m : allowed_models) p.allowed_models.emplace_back(m, "pod.allowed_models");
  p.model_type = short_name(model_type, "pod.model_type");
  p.priority = checked_priority(priority, "pod.priority");
  p.qos = to_qos(qos);
  p.tier_ = to_tier(tier_);
  p.gang = std::move(gang);
  p.gang_min_members = gang_min_members;
  p.tenant = std::move(tenant);
  p.submit_time = submit_time;
  p.scalars = to_named(scalars, "pod '" + p.name + "'.");
  set_placement(p, node_selector, tolerations);
  validate(p);
  return p;
}

constexpr const char* pod_fields[] = {"name",  "cpu_milli",        "memory_mib", "num_gpu",    "gpu_milli",
                                      "gpu_mem_mib", "allowed_models", "model_type", "priority", "qos",
                                      "tier",  "gang",             "gang_min_members", "tenant", "submit_time",
                                      "scalars", "node_selector", "tolerations"};

py::dict pod_to_dict(const pod& p) {
  py::dict d;
  d["name"] = p.name;
  d["cpu_milli"] = p.cpu_milli;
  d["memory_mib"] = p.memory_mib;
  d["num_gpu"] = p.num_gpu;
  d["gpu_milli"] = p.gpu_milli;
  d["gpu_mem_mib"] = p.gpu_mem_mib;
  py::list models;
  for (const auto& m : p.allowed_models) models.append(m.str());
  d["allowed_models"] = models;
  d["model_type"] = p.model_type.str();
  d["priority"] = p.priority;
  d["qos"] = p.qos;
  d["tier"] = p.tier_;
  d["gang"] = p.gang;
  d["gang_min_members"] = p.gang_min_members;
  d["tenant"] = p.tenant;
  d["submit_time"] = p.submit_time;
  d["scalars"] = from_named(p.scalars);
  d["node_selector"] = placement_selector(p);
  d["tolerations"] = placement_tolerations(p);
  return d;
}

pod pod_from_dict(const py::dict& d) {
  for (auto kv : d) {
    const auto key = py::str(kv.first).cast<std::string>();
    bool known = false;
    for (const char* f : pod_fields) known = known || key == f;
    if (!known) {
      std::string all;
      for (const char* f : pod_fields) all += std::string(all.empty() ? "" : ", ") + f;
      throw py::type_error("Pod: unknown field '" + key + "' (fields: " + all + ")");
    }
  }
  if (!d.contains("name")) throw py::type_error("Pod: the field 'name' is required");
  return py::type::of<pod>()(**d).cast<pod>();
}

std::string pod_repr(const pod& p) {
  std::string s = "Pod('" + p.name + "', cpu_milli=" + std::to_string(p.cpu_milli) +
                  ", memory_mib=" + std::to_string(p.memory_mib);
  if (p.num_gpu > 0) {
    s += ", num_gpu=" + std::to_string(p.num_gpu) + ", gpu_milli=" + std::to_string(p.gpu_milli);
    if (p.gpu_mem_mib) s += ", gpu_mem_mib=" + std::to_string(p.gpu_mem_mib);
  }
  if (!p.model_type.empty()) s += ", model_type='" + p.model_type.str() + "'";
  if (p.priority) s += ", priority=" + std::to_string(p.priority);
  for (const auto& q : p.scalars) s += ", " + std::string(q.name.str()) + "=" + std::to_string(q.amount);
  s += ", qos='" + std::string(to_string(p.qos)) + "', tier='" + std::string(to_string(p.tier_)) + "')";
  return s;
}

bool pods_equal(const pod& a, const pod& b) {
  return a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib && a.num_gpu == b.num_gpu &&
         a.gpu_milli == b.gpu_milli && a.gpu_mem_mib == b.gpu_mem_mib && a.allowed_models == b.allowed_models &&
         a.model_type == b.model_type && a.priority == b.priority && a.qos == b.qos && a.tier_ == b.tier_ &&
         a.gang == b.gang && a.gang_min_members == b.gang_min_members && a.tenant == b.tenant &&
         a.submit_time == b.submit_time && a.scalars == b.scalars &&
         placement_selector(a).equal(placement_selector(b)) && placement_tolerations(a).equal(placement_tolerations(b));
}

node_spec make_spec(std::string name, milli cpu, mib mem, std::int64_t gpu_count, const std::string& model,
                    std::int64_t gpu_mem, std::string rack) {
  node_spec n{std::move(name), cpu, mem, {}, std::move(rack)};
  const std::string at = "node '" + n.name + "'.";
  if (gpu_count < 0 || gpu_count > max_gpus_per_node) throw invalid_argument_error(at + "gpu_count", "must be within 0..64");
  if (gpu_mem < 0 || gpu_mem > INT32_MAX) throw invalid_argument_error(at + "gpu_mem_mib", "must be within 0..2^31-1");
  if (gpu_count > 0 && model.empty()) throw invalid_argument_error(at + "gpu_model", "must not be empty for a node with GPUs");
  if (gpu_count > 0) n.add_gpus(static_cast<int>(gpu_count), model, static_cast<std::int32_t>(gpu_mem));
  return n;
}

template <class T>
const T* column(const py::array_t<T, py::array::c_style | py::array::forcecast>& a, std::size_t n, const char* field) {
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n) {
    throw invalid_argument_error(field, "expected a 1-D array of " + std::to_string(n) + " values");
  }
  return a.data();
}

using i64_array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using f64_array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using bool_array = py::array_t<bool, py::array::c_style | py::array::forcecast>;

}  // namespace

std::vector<int> gpu_list(gpu_set s) {
  std::vector<int> v;
  for_each_gpu(s, [&](int g) { v.push_back(g); });
  return v;
}

gpu_set gpu_mask(const std::vector<int>& gpus, const char* field) {
  gpu_set s = 0;
  for (int g : gpus) {
    if (g < 0 || g >= max_gpus_per_node) throw invalid_argument_error(field, "GPU index " + std::to_string(g) + " is outside 0..63");
    if ((s >> g) & 1U) throw invalid_argument_error(field, "GPU index " + std::to_string(g) + " is listed twice");
    s |= gpu_set{1} << g;
  }
  return s;
}

void register_core(py::module_& m) {
  py::native_enum<qos_class>(m, "QoS", "enum.Enum", "Kubernetes QoS classes (openb: LS -> GUARANTEED, BE -> BEST_EFFORT).")
      .value("GUARANTEED", qos_class::guaranteed)
      .value("BURSTABLE", qos_class::burstable)
      .value("BEST_EFFORT", qos_class::best_effort)
      .finalize();
  py::native_enum<tier>(m, "Tier", "enum.Enum", "Two-tier isolation: PROD (serving) and DEV (training, experiments).")
      .value("PROD", tier::prod)
      .value("DEV", tier::dev)
      .finalize();

  py::class_<pod>(m, "Pod",
                  "A pod: CPU (milli-cores), memory (MiB) and either `num_gpu` whole GPUs (gpu_milli 1000, "
                  "the default) or a share `gpu_milli` < 1000 of each of `num_gpu` GPUs, with GPU memory per GPU.\n"
                  "Immutable; `replace(**changes)` returns a modified copy. Invalid values raise "
                  "InvalidArgumentError naming the field.")
      .def(py::init(&make_py_pod), py::arg("name"), py::kw_only(), py::arg("cpu_milli") = 0, py::arg("memory_mib") = 0,
           py::arg("num_gpu") = 0, py::arg("gpu_milli") = py::none(), py::arg("gpu_mem_mib") = 0,
           py::arg("allowed_models") = std::vector<std::string>{}, py::arg("model_type") = "", py::arg("priority") = 0,
           py::arg("qos") = "Burstable", py::arg("tier") = "dev", py::arg("gang") = "",
           py::arg("gang_min_members") = 0, py::arg("tenant") = "", py::arg("submit_time") = 0.0,
           py::arg("scalars") = scalar_map{}, py::arg("node_selector") = std::map<std::string, std::string>{},
           py::arg("tolerations") = std::vector<py::dict>{})
      .def_static("from_dict", &pod_from_dict, py::arg("fields"),
                  "A pod from a mapping of the constructor's fields; unknown keys raise TypeError.")
      .def("to_dict", &pod_to_dict, "The constructor's fields as a dict (Pod.from_dict(p.to_dict()) == p).")
      .def(
          "replace", [](const pod& p, const py::kwargs& changes) {
            py::dict d = pod_to_dict(p);
            for (auto kv : changes) d[kv.first] = kv.second;
            return pod_from_dict(d);
          },
          "A copy with the given fields changed (validated).")
      .def_readonly("name", &pod::name)
      .def_readonly("cpu_milli", &pod::cpu_milli)
      .def_readonly("memory_mib", &pod::memory_mib)
      .def_readonly("num_gpu", &pod::num_gpu)
      .def_readonly("gpu_milli", &pod::gpu_milli)
      .def_readonly("gpu_mem_mib", &pod::gpu_mem_mib)
      .def_property_readonly("allowed_models",
                             [](const pod& p) {
                               std::vector<std::string> v;
                               for (const auto& a : p.allowed_models) v.push_back(a.str());
                               return v;
                             })
      .def_property_readonly("model_type", [](const pod& p) { return p.model_type.str(); })
      .def_readonly("priority", &pod::priority)
      .def_readonly("qos", &pod::qos)
      .def_readonly("tier", &pod::tier_)
      .def_readonly("gang", &pod::gang)
      .def_readonly("gang_min_members", &pod::gang_min_members)
      .def_readonly("tenant", &pod::tenant)
      .def_readonly("submit_time", &pod::submit_time)
      .def_property_readonly("gpu_milli_total", &pod::gpu_milli_total, "num_gpu * gpu_milli")
      .def_property_readonly("scalars", [](const pod& p) { return from_named(p.scalars); },
                             "Requests of named resources, {name: amount} (a pod also counts 1 against a node's pods)")
      .def_property_readonly("node_selector", &placement_selector)
      .def_property_readonly("tolerations", &placement_tolerations)
      .def("__eq__", [](const pod& a, const pod& b) { return pods_equal(a, b); }, py::is_operator())
      .def("__repr__", &pod_repr)
      .def(py::pickle([](const pod& p) { return pod_to_dict(p); }, [](const py::dict& d) { return pod_from_dict(d); }));

  py::class_<gpu_device>(m, "GPU", "One GPU device: model, free share (milli, 1000 = whole), memory, NVLink island.")
      .def(py::init([](const std::string& model, std::int32_t mem_mib, std::int16_t nvlink_island) {
             return gpu_device{short_name(model, "gpu.model"), gpu_milli_whole, mem_mib, mem_mib, nvlink_island, 0};
           }),
           py::arg("model"), py::arg("mem_mib") = 0, py::arg("nvlink_island") = 0, "A wholly free device.")
      .def_property_readonly("model", [](const gpu_device& d) { return d.model.str(); })
      .def_readonly("milli_free", &gpu_device::milli_free)
      .def_readonly("mem_total_mib", &gpu_device::mem_total_mib)
      .def_readonly("mem_free_mib", &gpu_device::mem_free_mib)
      .def_readonly("nvlink_island", &gpu_device::nvlink_island)
      .def("__eq__", [](const gpu_device& a, const gpu_device& b) { return a == b; }, py::is_operator())
      .def("__repr__", [](const gpu_device& d) {
        return "GPU('" + d.model.str() + "', milli_free=" + std::to_string(d.milli_free) +
               ", mem_free_mib=" + std::to_string(d.mem_free_mib) + "/" + std::to_string(d.mem_total_mib) + ")";
      });

  py::class_<binding>(m, "Binding", "A pod's request placed on one node and a set of GPU indices.")
      .def(py::init([](const pod& p, node_index node, const std::vector<int>& gpus) {
             return make_binding(p, node, gpu_mask(gpus, "binding.gpus"));
           }),
           py::arg("pod"), py::arg("node"), py::arg("gpus") = std::vector<int>{})
      .def_readonly("node", &binding::node)
      .def_property_readonly("gpus", [](const binding& b) { return gpu_list(b.gpus); }, "GPU indices, ascending")
      .def_readonly("gpu_set", &binding::gpus, "GPU indices as a bit mask (bit g = GPU g)")
      .def_readonly("cpu_milli", &binding::cpu_milli)
      .def_readonly("memory_mib", &binding::memory_mib)
      .def_readonly("gpu_milli", &binding::gpu_milli)
      .def_readonly("gpu_mem_mib", &binding::gpu_mem_mib)
      .def("__eq__", [](const binding& a, const binding& b) { return a == b; }, py::is_operator())
      .def("__repr__", [](const binding& b) {
        std::string g;
        for (int i : gpu_list(b.gpus)) g += (g.empty() ? "" : ", ") + std::to_string(i);
        return "Binding(node=" + std::to_string(b.node) + ", gpus=[" + g + "], gpu_milli=" + std::to_string(b.gpu_milli) + ")";
      });

  py::class_<py_cluster>(m, "Cluster",
                         "The reference in-memory cluster (gpusched::in_memory_cluster). Build it node by node "
                         "with add_node, or from numpy arrays with gpusched.Cluster.from_arrays.")
      .def(py::init<>())
      .def(
          "add_node",
          [](py_cluster& self, std::string name, milli cpu_milli, mib memory_mib, std::int64_t gpu_count,
             const std::string& gpu_model, std::int64_t gpu_mem_mib, std::string rack,
             std::optional<std::vector<gpu_device>> gpus, std::int64_t pods, const scalar_map& scalars,
             const std::map<std::string, std::string>& labels, const std::vector<py::dict>& taints, bool unschedulable) {
            cluster_t& c = self.get();
            node_spec n = make_spec(name, cpu_milli, memory_mib, gpus ? 0 : gpu_count, gpu_model, gpu_mem_mib, std::move(rack));
            n.pods = pods;
            n.scalars = to_named(scalars, "node '" + name + "'.");
            n.constraints = to_constraints(labels, taints, unschedulable);
            if (gpus) {
              if (gpu_count != 0 || !gpu_model.empty()) {
                throw invalid_argument_error("node '" + name + "'.gpus", "give either gpus or gpu_count/gpu_model, not both");
              }
              n.gpus = *gpus;
            }
            return c.add_node(n);
          },
          py::arg("name"), py::kw_only(), py::arg("cpu_milli"), py::arg("memory_mib"), py::arg("gpu_count") = 0,
          py::arg("gpu_model") = "", py::arg("gpu_mem_mib") = 0, py::arg("rack") = "", py::arg("gpus") = py::none(),
          py::arg("pods") = no_pod_limit, py::arg("scalars") = scalar_map{},
          py::arg("labels") = std::map<std::string, std::string>{}, py::arg("taints") = std::vector<py::dict>{},
          py::arg("unschedulable") = false,
          "Adds a node with `gpu_count` wholly free GPUs of one model (or the devices in `gpus`) and returns its "
          "index; `pods` is its allocatable pod count (-1: no limit), `scalars` its allocatable named resources "
          "{name: amount}, `labels`, `taints` ([{key, value, effect}]) and `unschedulable` what NodeAffinity, "
          "TaintToleration and NodeUnschedulable read. Validated: an invalid node raises InvalidArgumentError and adds "
          "nothing.")
      .def(
          "_add_nodes",
          [](py_cluster& self, const std::vector<std::string>& names, const i64_array& cpu, const i64_array& mem,
             const i64_array& gpu_count, const std::vector<std::string>& models, const i64_array& gpu_mem,
             const std::vector<std::string>& racks, const i64_array& pods,
             const std::map<std::string, i64_array>& scalars) {
            cluster_t& c = self.get();
            const std::size_t n = names.size();
            const auto* pp = column(pods, n, "pods");
            std::vector<std::pair<resource_name, const std::int64_t*>> named;
            for (const auto& [k, a] : scalars) {
              const std::string f = "scalars['" + k + "']";
              named.emplace_back(resource_name(k, f), column(a, n, f.c_str()));
            }
            if (models.size() != n || racks.size() != n) throw invalid_argument_error("nodes", "column lengths differ");
            const auto* cp = column(cpu, n, "cpu_milli");
            const auto* mp = column(mem, n, "memory_mib");
            const auto* gp = column(gpu_count, n, "gpu_count");
            const auto* gm = column(gpu_mem, n, "gpu_mem_mib");
            std::vector<node_spec> specs;
            specs.reserve(n);
            std::unordered_map<std::string, std::size_t> seen;  // names must be unique, in the columns and the cluster
            seen.reserve(n);
            for (std::size_t i = 0; i < n; ++i) {
              specs.push_back(make_spec(names[i], cp[i], mp[i], gp[i], models[i], gm[i], racks[i]));
              specs.back().pods = pp[i];
              for (const auto& [r, col] : named) {
                if (col[i] != 0) specs.back().scalars.push_back({r, col[i]});  // 0: the node does not have it
              }
              validate(specs.back());
              if (const auto k = c.find(names[i])) {
                throw invalid_argument_error("names[" + std::to_string(i) + "]",
                                             "node '" + names[i] + "' is already node #" + std::to_string(*k));
              }
              if (const auto [it, fresh] = seen.emplace(names[i], i); !fresh) {
                throw invalid_argument_error("names[" + std::to_string(i) + "]",
                                             "node '" + names[i] + "' is also names[" + std::to_string(it->second) + "]");
              }
            }
            // All validated: add_node cannot fail now except for lack of memory.
            for (const auto& s : specs) c.add_node(s);
          },
          py::arg("names"), py::arg("cpu_milli"), py::arg("memory_mib"), py::arg("gpu_count"), py::arg("gpu_model"),
          py::arg("gpu_mem_mib"), py::arg("racks"), py::arg("pods"), py::arg("scalars"),
          "Adds validated columns of nodes, all or none (gpusched.Cluster.from_arrays checks dtypes first).")
      .def(
          "_copy_from", [](py_cluster& self, py_cluster& other) { self.get() = other.get(); }, py::arg("other"))
      .def("__len__", [](py_cluster& self) { return self.get().size(); })
      .def("__eq__", [](py_cluster& a, py_cluster& b) { return a.get() == b.get(); }, py::is_operator(),
           "Equal nodes, allocations, loads and served models.")
      .def_property_readonly("node_names",
                             [](py_cluster& self) {
                               const cluster_t& c = self.get();
                               std::vector<std::string> v;
                               v.reserve(c.size());
                               for (node_index i = 0; i < c.size(); ++i) v.emplace_back(c.name(i));
                               return v;
                             })
      .def(
          "node_index",
          [](py_cluster& self, std::string_view name) {
            if (const auto i = self.get().find(name)) return *i;
            throw py::key_error("no node named '" + std::string(name) + "'");
          },
          py::arg("name"), "The index of the node with this name (KeyError when none).")
      .def(
          "gpus",
          [](py_cluster& self, node_index n) {
            const cluster_t& c = self.get();
            if (n >= c.size()) throw py::index_error("node index " + std::to_string(n) + " out of range");
            auto g = c.gpus(n);
            return std::vector<gpu_device>(g.begin(), g.end());
          },
          py::arg("node"), "The node's GPU devices (copies).")
      .def(
          "resources",
          [](py_cluster& self, node_index n) {
            const cluster_t& c = self.get();
            if (n >= c.size()) throw py::index_error("node index " + std::to_string(n) + " out of range");
            const node_state& r = c.resources(n);
            py::dict d;
            d["cpu_capacity"] = r.cpu_capacity;
            d["cpu_allocated"] = r.cpu_allocated;
            d["memory_capacity"] = r.mem_capacity;
            d["memory_allocated"] = r.mem_allocated;
            d["gpu_count"] = r.gpu_count;
            return d;
          },
          py::arg("node"), "CPU / memory capacity and allocation and the GPU count of a node.")
      .def(
          "named_resources",
          [](py_cluster& self, node_index n) {
            const cluster_t& c = self.get();
            if (n >= c.size()) throw py::index_error("node index " + std::to_string(n) + " out of range");
            py::dict d;
            const named_resources_state* x = c.named(n);
            d["pods"] = x ? x->allowed_pods : no_pod_limit;
            d["pod_count"] = x ? x->pod_count : 0;
            py::dict scal;
            if (x) {
              for (const auto& sl : x->scalars) scal[py::str(std::string(sl.name.str()))] = py::make_tuple(sl.allocatable, sl.requested);
            }
            d["scalars"] = scal;
            return d;
          },
          py::arg("node"),
          "The node's pod limit (-1: none), pods counted against it, and {name: (allocatable, requested)} of its "
          "named resources.")
      .def(
          "model_replicas",
          [](py_cluster& self, node_index n) {
            const cluster_t& c = self.get();
            if (n >= c.size()) throw py::index_error("node index " + std::to_string(n) + " out of range");
            py::dict d;
            for (const auto& mc : c.model_types(n)) d[py::str(mc.model.str())] = mc.replicas;
            return d;
          },
          py::arg("node"), "Served model type -> replicas on the node.")
      .def(
          "set_load",
          [](py_cluster& self, node_index n, double cpu_used, double mem_used, double gpu_used) {
            cluster_t& c = self.get();
            const node_metrics mtr{cpu_used, mem_used, gpu_used, 0, 0, 0};
            c.set_load(n, &mtr);
          },
          py::arg("node"), py::kw_only(), py::arg("cpu_used"), py::arg("mem_used"), py::arg("gpu_used"),
          "Sets a node's measured load (fractions within 0..1). Reservations made afterwards count as "
          "assigned-since-reading until the next set_load.")
      .def(
          "clear_load", [](py_cluster& self, node_index n) { self.get().set_load(n, nullptr); }, py::arg("node"))
      .def(
          "_set_loads",
          [](py_cluster& self, const f64_array& cpu, const f64_array& mem, const f64_array& gpu, const bool_array& has) {
            cluster_t& c = self.get();
            const std::size_t n = c.size();
            const auto* cp = column(cpu, n, "cpu_used");
            const auto* mp = column(mem, n, "mem_used");
            const auto* gp = column(gpu, n, "gpu_used");
            const auto* hp = column(has, n, "has_load");
            for (node_index i = 0; i < n; ++i) {
              if (hp[i]) validate(node_metrics{cp[i], mp[i], gp[i], 0, 0, 0}, std::string(c.name(i)));
            }
            for (node_index i = 0; i < n; ++i) {
              const node_metrics mtr{cp[i], mp[i], gp[i], 0, 0, 0};
              c.set_load(i, hp[i] ? &mtr : nullptr);
            }
          },
          py::arg("cpu_used"), py::arg("mem_used"), py::arg("gpu_used"), py::arg("has_load"),
          "Sets every node's load at once, all or none (gpusched.Cluster.set_loads checks dtypes first).")
      .def(
          "load",
          [](py_cluster& self, node_index n) -> py::object {
            const cluster_t& c = self.get();
            if (n >= c.size()) throw py::index_error("node index " + std::to_string(n) + " out of range");
            const node_metrics* l = c.load(n);
            if (l == nullptr) return py::none();
            py::dict d;
            d["cpu_used"] = l->cpu_used;
            d["mem_used"] = l->mem_used;
            d["gpu_used"] = l->gpu_used;
            d["assigned_cpu_since"] = l->assigned_cpu_since;
            d["assigned_mem_since"] = l->assigned_mem_since;
            d["assigned_gpu_milli_since"] = l->assigned_gpu_milli_since;
            return d;
          },
          py::arg("node"), "The node's measured load as a dict, or None.")
      .def(
          "reserve", [](py_cluster& self, const pod& p, const binding& b) { self.get().reserve(p, b); }, py::arg("pod"),
          py::arg("binding"),
          "Takes the binding's resources; raises InvalidArgumentError and changes nothing when a GPU lacks the share.")
      .def(
          "release", [](py_cluster& self, const pod& p, const binding& b) { self.get().release(p, b); }, py::arg("pod"),
          py::arg("binding"), "Gives back exactly what reserve(pod, binding) took.")
      .def_property_readonly(
          "gpu_milli_total",
          [](py_cluster& self) {
            const cluster_t& c = self.get();
            std::int64_t t = 0;
            for (node_index i = 0; i < c.size(); ++i) t += std::int64_t{c.resources(i).gpu_count} * gpu_milli_whole;
            return t;
          },
          "GPU capacity in milli (1000 per GPU).")
      .def_property_readonly(
          "gpu_milli_allocated",
          [](py_cluster& self) {
            const cluster_t& c = self.get();
            std::int64_t t = 0;
            for (node_index i = 0; i < c.size(); ++i) {
              for (const auto& d : c.gpus(i)) t += gpu_milli_whole - d.milli_free;
            }
            return t;
          },
          "GPU share reserved, in milli.")
      .def(
          "features",
          [](py_cluster& self, std::optional<std::vector<node_index>> nodes) {
            const cluster_t& c = self.get();
            std::vector<node_index> idx;
            if (nodes) {
              idx = std::move(*nodes);
              for (node_index n : idx) {
                if (n >= c.size()) throw py::index_error("node index " + std::to_string(n) + " out of range");
              }
            } else {
              idx.resize(c.size());
              for (node_index i = 0; i < c.size(); ++i) idx[i] = i;
            }
            return node_features_of(c, idx.data(), idx.size());
          },
          py::arg("nodes") = py::none(),
          "NodeFeatures (numpy arrays) of the given nodes, or of all: what a Python scorer receives.");
}

}  // namespace gpusched::python
