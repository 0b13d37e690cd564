// Kubernetes objects (Pod, Node, ModelJob as the API server serves them in JSON) translated into
// gpusched's vocabulary, with Kubernetes' own rules. Needs nlohmann-json (header-only).
//
// This is the one place where Kubernetes meets the library: when the core gains a field (named
// resources, int32 priorities, taints and affinity as filters, names of any length; issue 13), this
// file is what starts passing it through. docs/kubernetes.md lists what is translated today.
//
// Every error is an invalid_argument_error whose field() is the JSON path of the offending value
// ("spec.containers[1].resources.requests.cpu"), and nothing is returned half-translated.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/kube/quantity.hpp"

namespace gpusched::kube {

using json = nlohmann::json;

// Names of the resources, labels and annotations the translation reads and writes.
namespace names {
inline constexpr std::string_view gpu = "nvidia.com/gpu";            // whole GPUs (NVIDIA device plugin)
inline constexpr std::string_view gpu_mem = "nvidia.com/gpumem";     // HAMi: GPU memory per GPU, MiB
inline constexpr std::string_view gpu_cores = "nvidia.com/gpucores"; // HAMi: compute share per GPU, percent
inline constexpr std::string_view gpu_types = "nvidia.com/use-gputype";  // HAMi annotation: allowed models
// NVIDIA GPU feature discovery labels.
inline constexpr std::string_view gfd_product = "nvidia.com/gpu.product";
inline constexpr std::string_view gfd_memory = "nvidia.com/gpu.memory";  // MiB per GPU
inline constexpr std::string_view gfd_count = "nvidia.com/gpu.count";
// The seed's ModelJob (deploy/modeljob-crd.yaml) and the labels that carry its fields on a pod.
inline constexpr std::string_view modeljob_group = "ai.tencent.com";
inline constexpr std::string_view modeljob_kind = "ModelJob";
inline constexpr std::string_view label_model_type = "ai.tencent.com/model-type";
inline constexpr std::string_view label_priority = "ai.tencent.com/priority";
inline constexpr std::string_view label_qos = "ai.tencent.com/qos-class";
// Written by gpusched-extender's bind: the GPU indices of the pod on its node ("0,3").
inline constexpr std::string_view annotation_gpu_indices = "gpusched.ai.tencent.com/gpu-indices";
// HAMi's NVIDIA device protocol (Project-HAMi/HAMi pkg/util/types.go, pkg/device/devices.go,
// pkg/device/nvidia/device.go): the node's devices as its device plugin registers them, and the
// annotations a scheduler sets at bind for the device plugin's Allocate to find the pod and its GPUs.
inline constexpr std::string_view hami_node_register = "hami.io/node-nvidia-register";
inline constexpr std::string_view hami_devices_allocated = "hami.io/vgpu-devices-allocated";
inline constexpr std::string_view hami_devices_to_allocate = "hami.io/vgpu-devices-to-allocate";
inline constexpr std::string_view hami_assigned_node = "hami.io/vgpu-node";
inline constexpr std::string_view hami_bind_time = "hami.io/bind-time";
inline constexpr std::string_view hami_bind_phase = "hami.io/bind-phase";
inline constexpr std::string_view hami_bind_allocating = "allocating";
inline constexpr std::string_view hami_nvidia_type = "NVIDIA";  // NvidiaGPUDevice
}  // namespace names

// A JSON value with the path that reached it; every accessor throws naming the path.
class json_at {
 public:
  json_at(const json& v, std::string path) : v_(&v), path_(std::move(path)) {}
  [[nodiscard]] const json& value() const noexcept { return *v_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[noreturn]] void fail(const std::string& why) const { throw invalid_argument_error(path_.empty() ? "<root>" : path_, why); }

  // The member `key` when present and not null.
  [[nodiscard]] std::optional<json_at> get(std::string_view key) const {
    if (!v_->is_object()) fail("expected an object, got " + std::string(v_->type_name()));
    const auto it = v_->find(key);
    if (it == v_->end() || it->is_null()) return std::nullopt;
    return json_at(*it, join(key));
  }
  [[nodiscard]] json_at at(std::string_view key) const {
    auto m = get(key);
    if (!m) json_at(*v_, join(key)).fail("missing");
    return *m;
  }
  [[nodiscard]] std::string str() const {
    if (!v_->is_string()) fail("expected a string, got " + std::string(v_->type_name()));
    return v_->get<std::string>();
  }
  [[nodiscard]] std::int64_t integer(std::int64_t lo, std::int64_t hi) const {
    if (!v_->is_number_integer()) fail("expected an integer, got " + std::string(v_->type_name()));
    std::int64_t x = 0;
    if (v_->is_number_unsigned()) {
      const auto u = v_->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi)) fail(std::to_string(u) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
      x = static_cast<std::int64_t>(u);
    } else {
      x = v_->get<std::int64_t>();
    }
    if (x < lo || x > hi) fail(std::to_string(x) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return x;
  }
  [[nodiscard]] bool boolean() const {
    if (!v_->is_boolean()) fail("expected true or false, got " + std::string(v_->type_name()));
    return v_->get<bool>();
  }
  // Elements of an array, each with its path.
  [[nodiscard]] std::vector<json_at> items() const {
    if (!v_->is_array()) fail("expected an array, got " + std::string(v_->type_name()));
    std::vector<json_at> out;
    out.reserve(v_->size());
    for (std::size_t i = 0; i < v_->size(); ++i) out.emplace_back((*v_)[i], path_ + "[" + std::to_string(i) + "]");
    return out;
  }
  // Members of an object, each with its path.
  [[nodiscard]] std::vector<std::pair<std::string, json_at>> members() const {
    if (!v_->is_object()) fail("expected an object, got " + std::string(v_->type_name()));
    std::vector<std::pair<std::string, json_at>> out;
    for (auto it = v_->begin(); it != v_->end(); ++it) out.emplace_back(it.key(), json_at(it.value(), join(it.key())));
    return out;
  }
  // A map of strings (labels, annotations).
  [[nodiscard]] std::map<std::string, std::string, std::less<>> string_map() const {
    std::map<std::string, std::string, std::less<>> out;
    for (const auto& [k, v] : members()) out.emplace(k, v.str());
    return out;
  }

 private:
  [[nodiscard]] std::string join(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  const json* v_;
  std::string path_;
};

// A resource list (requests, limits, overhead, allocatable) as exact quantities by name.
using resource_list = std::map<std::string, quantity, std::less<>>;

inline resource_list parse_resource_list(const std::optional<json_at>& v) {
  resource_list out;
  if (!v) return out;
  for (const auto& [name, q] : v->members()) {
    if (!q.value().is_string()) q.fail("expected a quantity string, got " + std::string(q.value().type_name()));
    out.emplace(name, parse_quantity(q.value().get_ref<const std::string&>(), q.path()));
  }
  return out;
}

// Exact sums and maxima of quantities (the sums Kubernetes' PodRequests takes).
inline quantity add(const quantity& a, const quantity& b, const std::string& field) {
  if (a.is_zero()) return b;
  if (b.is_zero()) return a;
  // Bring both to the smaller exponents (value = m * 10^e10 * 2^e2).
  quantity x = a, y = b;
  const int e10 = std::min(x.exp10, y.exp10), e2 = std::min(x.exp2, y.exp2);
  auto scale = [&](quantity& q) {
    for (; q.exp10 > e10; --q.exp10) {
      if (q.mantissa > detail::int128_max / 10) throw invalid_argument_error(field, "sum of quantities out of range");
      q.mantissa *= 10;
    }
    for (; q.exp2 > e2; --q.exp2) {
      if (q.mantissa > detail::int128_max / 2) throw invalid_argument_error(field, "sum of quantities out of range");
      q.mantissa *= 2;
    }
  };
  scale(x);
  scale(y);
  if (x.mantissa > detail::int128_max - y.mantissa) throw invalid_argument_error(field, "sum of quantities out of range");
  x.mantissa += y.mantissa;
  return x;
}
inline bool less(const quantity& a, const quantity& b) { return compare(a, b) < 0; }
inline void add_into(resource_list& into, const resource_list& more, const std::string& field) {
  for (const auto& [name, q] : more) {
    auto [it, fresh] = into.emplace(name, q);
    if (!fresh) it->second = add(it->second, q, field + "." + name);
  }
}
inline void max_into(resource_list& into, const resource_list& other) {
  for (const auto& [name, q] : other) {
    auto [it, fresh] = into.emplace(name, q);
    if (!fresh && less(it->second, q)) it->second = q;
  }
}

// One container's requests after the API server's defaulting: a resource with a limit and no
// request requests its limit (kubernetes pkg/apis/core/v1/defaults.go, SetDefaults_Pod).
struct container_resources {
  resource_list requests;
  resource_list limits;
  bool restartable_init = false;  // an init container with restartPolicy: Always (a sidecar, KEP-753)
};

inline container_resources parse_container(const json_at& c, bool init) {
  container_resources out;
  if (const auto r = c.get("resources")) {
    out.requests = parse_resource_list(r->get("requests"));
    out.limits = parse_resource_list(r->get("limits"));
  }
  for (const auto& [name, q] : out.limits) out.requests.emplace(name, q);  // emplace keeps an explicit request
  if (init) {
    if (const auto rp = c.get("restartPolicy")) out.restartable_init = rp->str() == "Always";
  }
  return out;
}

// The pod's effective requests as kube-scheduler computes them (k8s.io/component-helpers resource/
// helpers.go, PodRequests): the sum of the containers; sidecar init containers add to it; each
// regular init container needs its request plus the sidecars started before it; the pod needs the
// larger of the two; then spec.overhead is added.
inline resource_list pod_requests(const std::vector<container_resources>& containers,
                                  const std::vector<container_resources>& init_containers, const resource_list& overhead,
                                  const std::string& field = "spec") {
  resource_list reqs;
  for (const auto& c : containers) add_into(reqs, c.requests, field + ".containers");
  resource_list restartable;
  resource_list init_max;
  for (const auto& c : init_containers) {
    resource_list need;
    if (c.restartable_init) {
      add_into(reqs, c.requests, field + ".initContainers");
      add_into(restartable, c.requests, field + ".initContainers");
      need = restartable;
    } else {
      need = c.requests;
      add_into(need, restartable, field + ".initContainers");
    }
    max_into(init_max, need);
  }
  max_into(reqs, init_max);
  add_into(reqs, overhead, field + ".overhead");
  return reqs;
}

// QoS class by Kubernetes' rule (kubernetes pkg/apis/core/helper/qos/qos.go, GetPodQOS; only cpu
// and memory count, zero quantities are ignored): no requests and no limits -> BestEffort; limits for
// cpu and memory on every container, equal to the requests -> Guaranteed; otherwise Burstable.
inline qos_class pod_qos(const std::vector<container_resources>& all_containers) {
  resource_list requests, limits;
  bool guaranteed = true;
  const auto counts = [](const std::string& n) { return n == "cpu" || n == "memory"; };
  for (const auto& c : all_containers) {
    for (const auto& [n, q] : c.requests) {
      if (counts(n) && !q.is_zero()) add_into(requests, {{n, q}}, "requests");
    }
    int found = 0;
    for (const auto& [n, q] : c.limits) {
      if (counts(n) && !q.is_zero()) {
        ++found;
        add_into(limits, {{n, q}}, "limits");
      }
    }
    if (found != 2) guaranteed = false;
  }
  if (requests.empty() && limits.empty()) return qos_class::best_effort;
  if (guaranteed) {
    for (const auto& [n, q] : requests) {
      const auto it = limits.find(n);
      if (it == limits.end() || !same_value(it->second, q)) guaranteed = false;
    }
  }
  return guaranteed && requests.size() == limits.size() ? qos_class::guaranteed : qos_class::burstable;
}

inline qos_class parse_qos(const json_at& v) {
  const auto s = v.str();
  if (s == "Guaranteed") return qos_class::guaranteed;
  if (s == "Burstable") return qos_class::burstable;
  if (s == "BestEffort") return qos_class::best_effort;
  v.fail("'" + s + "' is not a QoS class (Guaranteed, Burstable or BestEffort)");
}

// A Kubernetes toleration / taint, carried as written (kube-scheduler's own TaintToleration and
// NodeUnschedulable filters run before the extender is called; the library gains its own in issue 13).
struct toleration {
  std::string key, op, value, effect;
};
struct taint {
  std::string key, value, effect;
};

// The fields of a ModelJob (group ai.tencent.com) that a pod inherits.
struct modeljob_fields {
  std::optional<std::string> model_type;
  std::optional<std::int64_t> priority;  // 0..10
  std::optional<qos_class> qos;
};

// Reads spec.modelType, spec.priority (0..10) and spec.qosClass of a ModelJob object.
inline modeljob_fields parse_modeljob(const json& obj, const std::string& root_path = "") {
  const json_at root(obj, root_path);
  modeljob_fields f;
  const auto spec = root.at("spec");
  if (const auto v = spec.get("modelType")) {
    f.model_type = v->str();
    (void)short_name(*f.model_type, v->path().c_str());  // refused here, not when a pod takes it
  }
  if (const auto v = spec.get("priority")) f.priority = v->integer(0, 10);
  if (const auto v = spec.get("qosClass")) f.qos = parse_qos(*v);
  return f;
}

struct kube_pod {
  std::string uid;
  std::string namespace_;
  std::string name;
  std::string node_name;       // spec.nodeName; empty while pending
  std::string scheduler_name;  // spec.schedulerName
  std::string phase;           // status.phase
  std::int64_t k8s_priority = 0;  // spec.priority as Kubernetes has it (int32)
  qos_class k8s_qos = qos_class::best_effort;  // Kubernetes' QoS class of the pod's resources
  resource_list requests;      // effective requests, every resource by name
  std::vector<toleration> tolerations;
  std::string owner_modeljob;  // name of the owning ModelJob, if any
  modeljob_fields own;         // modelType, priority, qosClass from the pod's labels and itself (all set)
  std::optional<gpu_set> gpu_indices;  // from the extender's bind annotation
  pod spec;                    // gpusched's pod: name is "namespace/name"
  [[nodiscard]] bool terminal() const noexcept { return phase == "Succeeded" || phase == "Failed"; }
};

namespace detail {
inline std::int32_t gpu_count_of(const resource_list& r, const std::string& path) {
  const auto it = r.find(names::gpu);
  if (it == r.end()) return 0;
  return static_cast<std::int32_t>(to_count(it->second, true, max_gpus_per_node, path + "." + std::string(names::gpu)));
}
// The core's validate(), its field prefixed with the object's JSON path.
template <class T>
void validate_under(const T& v, const std::string& root_path) {
  try {
    validate(v);
  } catch (const invalid_argument_error& e) {
    if (root_path.empty()) throw;
    const std::string why = std::string(e.what()).substr(e.field().size() + 2);
    throw invalid_argument_error(root_path + ": " + e.field(), why);
  }
}
inline gpu_set parse_gpu_indices(const json_at& v) {
  const auto s = v.str();
  gpu_set set = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    int g = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && j - i < 3) g = g * 10 + (s[j++] - '0');
    if (j == i || g >= max_gpus_per_node || (j < s.size() && s[j] != ',')) v.fail("'" + s + "' is not a list of GPU indices like \"0,3\"");
    set |= gpu_set{1} << g;
    i = j + 1;
    if (j + 1 == s.size() && s[j] == ',') v.fail("'" + s + "' ends with a comma");
  }
  return set;
}
}  // namespace detail

// The priority gpusched's core can hold today: Kubernetes' int32 priority clamped into
// min_priority..max_priority (core/types.hpp), so this follows when the core widens the range.
constexpr std::int32_t core_priority(std::int64_t k8s_priority) noexcept {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(k8s_priority, min_priority, max_priority));
}

// Writes a GPU set as the annotation's text ("0,3").
inline std::string format_gpu_indices(gpu_set s) {
  std::string out;
  for_each_gpu(s, [&](int g) {
    if (!out.empty()) out += ',';
    out += std::to_string(g);
  });
  return out;
}

// The scheduling attributes of k.spec: the owning ModelJob's fields where it has them (`job` may be
// null: no ModelJob known), else the pod's own (k.own). A kube_pod built by hand, without k.own,
// takes its spec's values as its own first. Cannot fail: parse_modeljob and translate_pod checked
// every value.
inline void apply_modeljob(kube_pod& k, const modeljob_fields* job) {
  if (!k.own.model_type) k.own.model_type = std::string(k.spec.model_type.view());
  if (!k.own.priority) k.own.priority = k.spec.priority;
  if (!k.own.qos) k.own.qos = k.spec.qos;
  const bool by_job_model = job != nullptr && job->model_type.has_value();
  const std::string& model = by_job_model ? *job->model_type : *k.own.model_type;
  k.spec.model_type = model.empty() ? short_name{} : short_name(model, "modelType");
  k.spec.priority = core_priority(job != nullptr && job->priority ? *job->priority : *k.own.priority);
  k.spec.qos = job != nullptr && job->qos ? *job->qos : *k.own.qos;
}

// Translates a v1.Pod. `owner` is the ModelJob named in the pod's ownerReferences when the caller
// has it; its fields win over the pod's ai.tencent.com/* labels, which win over the pod's own.
inline kube_pod translate_pod(const json& obj, const json* owner = nullptr, const std::string& root_path = "") {
  const json_at root(obj, root_path);
  kube_pod k;
  const auto meta = root.at("metadata");
  k.name = meta.at("name").str();
  if (const auto ns = meta.get("namespace")) k.namespace_ = ns->str();
  if (k.namespace_.empty()) k.namespace_ = "default";
  if (const auto uid = meta.get("uid")) k.uid = uid->str();
  std::map<std::string, std::string, std::less<>> labels, annotations;
  if (const auto l = meta.get("labels")) labels = l->string_map();
  if (const auto a = meta.get("annotations")) annotations = a->string_map();
  if (const auto refs = meta.get("ownerReferences")) {
    for (const auto& r : refs->items()) {
      if (r.at("kind").str() == names::modeljob_kind && r.at("apiVersion").str().starts_with(std::string(names::modeljob_group) + "/")) {
        k.owner_modeljob = r.at("name").str();
      }
    }
  }

  const auto spec = root.at("spec");
  std::vector<container_resources> containers, inits;
  for (const auto& c : spec.at("containers").items()) containers.push_back(parse_container(c, false));
  if (const auto ic = spec.get("initContainers")) {
    for (const auto& c : ic->items()) inits.push_back(parse_container(c, true));
  }
  const resource_list overhead = parse_resource_list(spec.get("overhead"));
  k.requests = pod_requests(containers, inits, overhead, spec.path());
  std::vector<container_resources> all = containers;
  all.insert(all.end(), inits.begin(), inits.end());
  k.k8s_qos = pod_qos(all);
  if (const auto v = spec.get("nodeName")) k.node_name = v->str();
  if (const auto v = spec.get("schedulerName")) k.scheduler_name = v->str();
  if (const auto v = spec.get("priority")) k.k8s_priority = v->integer(INT32_MIN, INT32_MAX);
  if (const auto t = spec.get("tolerations")) {
    for (const auto& x : t->items()) {
      toleration tol;
      if (const auto v = x.get("key")) tol.key = v->str();
      if (const auto v = x.get("operator")) tol.op = v->str();
      if (const auto v = x.get("value")) tol.value = v->str();
      if (const auto v = x.get("effect")) tol.effect = v->str();
      k.tolerations.push_back(std::move(tol));
    }
  }
  if (const auto st = root.get("status")) {
    if (const auto v = st->get("phase")) k.phase = v->str();
  }

  pod& p = k.spec;
  p.name = k.namespace_ + "/" + k.name;
  const std::string reqs = spec.path() + ".requests";  // effective requests have no single JSON home
  auto req = [&](std::string_view n) -> const quantity* {
    const auto it = k.requests.find(n);
    return it == k.requests.end() ? nullptr : &it->second;
  };
  if (const auto* q = req("cpu")) p.cpu_milli = to_milli(*q, true, max_quantity, reqs + ".cpu");
  if (const auto* q = req("memory")) p.memory_mib = to_mib(*q, true, max_quantity, reqs + ".memory");
  p.num_gpu = detail::gpu_count_of(k.requests, reqs);
  if (p.num_gpu > 0) {
    p.gpu_milli = gpu_milli_whole;
    if (const auto* q = req(names::gpu_cores)) {
      const auto pct = to_count(*q, true, 100, reqs + "." + std::string(names::gpu_cores));
      if (pct < 1) throw invalid_argument_error(reqs + "." + std::string(names::gpu_cores), "must be within 1..100");
      p.gpu_milli = static_cast<std::int32_t>(pct * 10);
    }
    if (const auto* q = req(names::gpu_mem)) {
      // HAMi counts nvidia.com/gpumem in MiB (one unit = 1 MiB).
      p.gpu_mem_mib = static_cast<std::int32_t>(to_count(*q, true, INT32_MAX, reqs + "." + std::string(names::gpu_mem)));
    }
  } else {
    for (const auto n : {names::gpu_cores, names::gpu_mem}) {
      if (req(n) != nullptr) throw invalid_argument_error(reqs + "." + std::string(n), "needs nvidia.com/gpu >= 1 (the GPUs it applies to)");
    }
  }
  if (const auto it = annotations.find(names::gpu_types); it != annotations.end()) {
    const std::string path = meta.path() + ".annotations." + std::string(names::gpu_types);
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto model = rest.substr(0, comma);
      if (!model.empty()) p.allowed_models.emplace_back(model, path.c_str());
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  if (const auto it = annotations.find(names::annotation_gpu_indices); it != annotations.end()) {
    const json text(it->second);
    k.gpu_indices = detail::parse_gpu_indices(json_at(text, meta.path() + ".annotations." + std::string(names::annotation_gpu_indices)));
  }

  // Scheduling attributes: ModelJob object > the pod's ai.tencent.com/* labels > the pod itself.
  std::int64_t priority = k.k8s_priority;
  qos_class qos = k.k8s_qos;
  std::string model_type;
  const std::string lpath = meta.path() + ".labels.";
  if (const auto it = labels.find(names::label_model_type); it != labels.end()) model_type = it->second;
  if (const auto it = labels.find(names::label_priority); it != labels.end()) {
    const json v = it->second.empty() || it->second.size() > 2 || it->second.find_first_not_of("0123456789") != std::string::npos
                       ? json(it->second)
                       : json(std::stoll(it->second));
    priority = json_at(v, lpath + std::string(names::label_priority)).integer(0, 10);
  }
  if (const auto it = labels.find(names::label_qos); it != labels.end()) {
    qos = parse_qos(json_at(json(it->second), lpath + std::string(names::label_qos)));
  }
  if (!model_type.empty()) (void)short_name(model_type, (lpath + std::string(names::label_model_type)).c_str());
  k.own = modeljob_fields{model_type, priority, qos};
  std::optional<modeljob_fields> job;
  if (owner != nullptr) job = parse_modeljob(*owner);
  apply_modeljob(k, job ? &*job : nullptr);
  detail::validate_under(p, root_path);
  return k;
}

struct kube_node {
  node_spec spec;
  std::map<std::string, std::string, std::less<>> labels;
  std::vector<std::string> gpu_uuids;  // by GPU index, from HAMi's register annotation; empty: unknown
  std::vector<taint> taints;
  bool unschedulable = false;
  std::int64_t allocatable_pods = 0;  // status.allocatable.pods; not enforced by the library yet
};

// The GPU model name gpusched stores for a GPU feature discovery product label: the vendor prefix
// ("NVIDIA-", "Tesla-") dropped, so that "NVIDIA-A100-SXM4-80GB" is "A100-SXM4-80GB". Names longer
// than short_name::max_size after that are refused naming the label (core names are 15 characters
// until issue 13 item 5).
inline short_name gpu_model_name(std::string_view product, const std::string& path) {
  for (const std::string_view prefix : {std::string_view("NVIDIA-"), std::string_view("Tesla-")}) {
    if (product.starts_with(prefix) && product.size() > prefix.size()) product.remove_prefix(prefix.size());
  }
  return short_name(product, path.c_str());
}

namespace detail {
// A decimal integer field of HAMi's register annotation.
inline std::int64_t hami_int(std::string_view text, std::int64_t hi, const json_at& at, const std::string& what) {
  std::int64_t v = 0;
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    at.fail(what + " '" + std::string(text) + "' is not a number");
  }
  for (const char ch : text) v = v * 10 + (ch - '0');
  if (v > hi) at.fail(what + " " + std::to_string(v) + " is outside 0.." + std::to_string(hi));
  return v;
}
}  // namespace detail

// The GPU UUIDs by device index from HAMi's hami.io/node-nvidia-register annotation. Two forms exist
// upstream (Project-HAMi/HAMi pkg/device/devices.go): JSON, a list of DeviceInfo objects
// (MarshalNodeDevices: "id", "index", omitted when 0, ...), and the older text form
// (EncodeNodeDevices): "id,count,devmem,devcore,type,numa,health[,index,mode]:" per device, where
// the 7-field form has no index and lists the devices in index order (DecodeNodeDevices).
inline std::vector<std::string> parse_hami_register(const json_at& at) {
  const std::string text = at.str();
  std::vector<std::string> uuids;
  const auto put = [&](std::int64_t index, std::string id) {
    if (id.empty()) at.fail("a device without an id");
    if (id.find_first_of(",:;") != std::string::npos) at.fail("device id '" + id + "' contains a separator (',', ':' or ';')");
    const auto i = static_cast<std::size_t>(index);
    if (uuids.size() <= i) uuids.resize(i + 1);
    if (!uuids[i].empty()) at.fail("GPU index " + std::to_string(index) + " is listed twice");
    uuids[i] = std::move(id);
  };
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    json list;
    try {
      list = json::parse(text);
    } catch (const json::parse_error& e) {
      at.fail(std::string("not JSON: ") + e.what());
    }
    const json_at root(list, at.path());
    for (const auto& d : root.items()) {
      const std::int64_t index = d.get("index") ? d.at("index").integer(0, max_gpus_per_node - 1) : 0;
      put(index, d.at("id").str());
    }
  } else {
    std::size_t start = 0, position = 0;
    while (start < text.size()) {
      const auto end = std::min(text.find(':', start), text.size());
      const std::string_view dev = std::string_view(text).substr(start, end - start);
      start = end + 1;
      if (dev.empty()) continue;
      std::vector<std::string_view> items;
      for (std::size_t b = 0;;) {
        const auto c = dev.find(',', b);
        items.push_back(dev.substr(b, c == std::string_view::npos ? std::string_view::npos : c - b));
        if (c == std::string_view::npos) break;
        b = c + 1;
      }
      if (items.size() != 7 && items.size() != 9) {
        at.fail("device '" + std::string(dev) + "' has " + std::to_string(items.size()) + " fields, expected 7 or 9");
      }
      const std::int64_t index = items.size() == 9 ? detail::hami_int(items[7], max_gpus_per_node - 1, at, "index")
                                                    : static_cast<std::int64_t>(position);
      if (index >= max_gpus_per_node) at.fail("more than " + std::to_string(max_gpus_per_node) + " devices");
      put(index, std::string(items[0]));
      ++position;
    }
  }
  for (std::size_t i = 0; i < uuids.size(); ++i) {
    if (uuids[i].empty()) at.fail("GPU index " + std::to_string(i) + " is missing");
  }
  return uuids;
}

// HAMi's pod annotation value for one container's devices (EncodePodSingleDevice of
// EncodeContainerDevices): "UUID,NVIDIA,usedmem,usedcores:" per device, then ";" closing the
// container; e.g. "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,3000,0:;" in HAMi's docs.
inline std::string hami_pod_devices(const std::vector<std::string>& uuids, gpu_set gpus, std::int64_t mem_mib,
                                    std::int64_t cores_percent) {
  std::string out;
  for_each_gpu(gpus, [&](int g) {
    out += uuids.at(static_cast<std::size_t>(g));
    out += ',';
    out += names::hami_nvidia_type;
    out += ',' + std::to_string(mem_mib) + ',' + std::to_string(cores_percent) + ':';
  });
  return out + ';';
}

// Translates a v1.Node: status.allocatable (CPU rounded down to milli, memory down to MiB,
// nvidia.com/gpu devices), GPU feature discovery labels for the devices' model and memory, taints
// and spec.unschedulable. A node without nvidia.com/gpu allocatable falls back to the
// nvidia.com/gpu.count label (device plugin not reporting yet); allocatable wins when both exist.
inline kube_node translate_node(const json& obj, const std::string& root_path = "") {
  const json_at root(obj, root_path);
  kube_node k;
  const auto meta = root.at("metadata");
  k.spec.name = meta.at("name").str();
  if (const auto l = meta.get("labels")) k.labels = l->string_map();
  if (const auto a = meta.get("annotations")) {
    const auto ann = a->string_map();  // checks that every annotation is a string
    if (ann.contains(names::hami_node_register)) {
      const json v = ann.find(names::hami_node_register)->second;
      k.gpu_uuids = parse_hami_register(json_at(v, a->path() + "." + std::string(names::hami_node_register)));
    }
  }
  const std::string lpath = meta.path() + ".labels.";
  if (const auto spec = root.get("spec")) {
    if (const auto u = spec->get("unschedulable")) k.unschedulable = u->boolean();
    if (const auto t = spec->get("taints")) {
      for (const auto& x : t->items()) {
        taint tt;
        tt.key = x.at("key").str();
        if (const auto v = x.get("value")) tt.value = v->str();
        tt.effect = x.at("effect").str();
        k.taints.push_back(std::move(tt));
      }
    }
  }
  const auto status = root.at("status");
  const auto alloc_at = status.at("allocatable");
  const resource_list alloc = parse_resource_list(alloc_at);
  const std::string apath = alloc_at.path() + ".";
  if (const auto it = alloc.find("cpu"); it != alloc.end()) k.spec.cpu_milli = to_milli(it->second, false, max_quantity, apath + "cpu");
  if (const auto it = alloc.find("memory"); it != alloc.end()) k.spec.memory_mib = to_mib(it->second, false, max_quantity, apath + "memory");
  if (const auto it = alloc.find("pods"); it != alloc.end()) k.allocatable_pods = to_count(it->second, false, INT64_MAX, apath + "pods");
  std::int64_t gpus = 0;
  if (const auto it = alloc.find(names::gpu); it != alloc.end()) {
    gpus = to_count(it->second, false, max_gpus_per_node, apath + std::string(names::gpu));
  } else if (const auto c = k.labels.find(names::gfd_count); c != k.labels.end()) {
    const json v = c->second.size() <= 3 && !c->second.empty() && c->second.find_first_not_of("0123456789") == std::string::npos
                       ? json(std::stoll(c->second))
                       : json(c->second);
    gpus = json_at(v, lpath + std::string(names::gfd_count)).integer(0, max_gpus_per_node);
  }
  if (gpus > 0) {
    const auto product = k.labels.find(names::gfd_product);
    if (product == k.labels.end()) json_at(obj, lpath + std::string(names::gfd_product)).fail("missing on a node with GPUs");
    const auto model = gpu_model_name(product->second, lpath + std::string(names::gfd_product));
    const auto mem = k.labels.find(names::gfd_memory);
    if (mem == k.labels.end()) json_at(obj, lpath + std::string(names::gfd_memory)).fail("missing on a node with GPUs");
    const json mv = !mem->second.empty() && mem->second.size() <= 9 && mem->second.find_first_not_of("0123456789") == std::string::npos
                        ? json(std::stoll(mem->second))
                        : json(mem->second);
    const auto mem_mib = json_at(mv, lpath + std::string(names::gfd_memory)).integer(0, INT32_MAX);
    for (std::int64_t g = 0; g < gpus; ++g) {
      k.spec.gpus.push_back(gpu_device{model, gpu_milli_whole, static_cast<std::int32_t>(mem_mib), static_cast<std::int32_t>(mem_mib), 0, 0});
    }
  }
  detail::validate_under(k.spec, root_path);
  return k;
}

}  // namespace gpusched::kube
