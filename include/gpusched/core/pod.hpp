// Pods: the resource request plus the scheduling attributes (after the seed's ModelJob).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/named_resources.hpp"
#include "gpusched/core/node_constraints.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// A pod asks for CPU, memory and either `num_gpu` whole GPUs (gpu_milli == 1000) or a share of
// GPUs (gpu_milli < 1000 on each of num_gpu devices; openb only has num_gpu == 1 for shares).
struct pod {
  std::string name;
  milli cpu_milli = 0;
  mib memory_mib = 0;
  std::int32_t num_gpu = 0;
  std::int32_t gpu_milli = 0;    // per-GPU share; 0 when num_gpu == 0
  std::int32_t gpu_mem_mib = 0;  // GPU memory needed on each GPU
  std::vector<short_name> allowed_models;  // empty: any model

  short_name model_type;  // served model, e.g. "resnet50"; empty for none
  std::int32_t priority = 0;  // any int32, as Kubernetes' PodSpec.Priority (core/types.hpp)
  qos_class qos = qos_class::burstable;
  tier tier_ = tier::dev;
  std::string gang;  // gang name; empty when the pod is alone
  std::int32_t gang_min_members = 0;
  std::string tenant;
  double submit_time = 0.0;  // seconds
  placement_ref placement;  // tolerations, nodeSelector, node affinity (core/node_constraints.hpp)
  std::vector<named_quantity> scalars{};  // requests of named resources (core/named_resources.hpp); a pod counts 1 against `pods`

  [[nodiscard]] bool wants_gpu() const noexcept { return num_gpu > 0; }
  [[nodiscard]] bool is_gpu_share() const noexcept { return num_gpu > 0 && gpu_milli < gpu_milli_whole; }
  // Total GPU milli the pod asks for (num_gpu * gpu_milli).
  [[nodiscard]] milli gpu_milli_total() const noexcept { return milli{num_gpu} * gpu_milli; }
  [[nodiscard]] bool model_allowed(const short_name& m) const noexcept {
    if (allowed_models.empty()) return true;
    for (const auto& a : allowed_models) {
      if (a == m) return true;
    }
    return false;
  }
};

// Whether a and b ask for the same resources: CPU, memory, GPUs (count, share, GPU memory), the
// GPU models allowed, the served model and the QoS class. Pods so alike make one gang role
// (gang/gang_pods.hpp); the simulation driver's retry rule adds what it also needs (sim/driver.hpp).
inline bool same_shape(const pod& a, const pod& b) noexcept {
  return a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib && a.num_gpu == b.num_gpu &&
         a.gpu_milli == b.gpu_milli && a.gpu_mem_mib == b.gpu_mem_mib && a.allowed_models == b.allowed_models &&
         a.model_type == b.model_type && a.qos == b.qos;
}

// A priority given as a wider integer (Python, YAML) as Kubernetes' int32; throws
// invalid_argument_error naming `field` when it does not fit.
inline std::int32_t checked_priority(std::int64_t v, const std::string& field) {
  if (v < min_priority || v > max_priority) {
    throw invalid_argument_error(field, "must be a Kubernetes priority within " + std::to_string(min_priority) + ".." +
                                            std::to_string(max_priority) + " (int32), got " + std::to_string(v));
  }
  return static_cast<std::int32_t>(v);
}

// The seed's ModelJob priority (seed_min_priority..seed_max_priority, 0..10) and tier as one
// Kubernetes priority value, for a host that runs them as PriorityClasses (docs/queue.md):
//   dev:  1000 * p            (0 .. 10,000; dev priority 0 is Kubernetes' default, no class)
//   prod: 100,000 + 1000 * p  (100,000 .. 110,000)
// so that every prod job outranks every dev job and, within a tier, the ModelJob order is kept, all
// below Kubernetes' HighestUserDefinablePriority (1,000,000,000; pkg/apis/scheduling/types.go) and
// with room between levels for a cluster's own classes. gpusched itself orders by tier before
// priority and never lets dev preempt prod, so the seed's simulators keep pod.priority = p (and
// the queue's aging band 0..10); this mapping is for what the host writes into Kubernetes.
inline constexpr std::int32_t modeljob_priority_step = 1000;
inline constexpr std::int32_t modeljob_prod_base = 100'000;
inline std::int32_t kubernetes_priority(std::int32_t modeljob_priority, tier t) {
  if (modeljob_priority < seed_min_priority || modeljob_priority > seed_max_priority) {
    throw invalid_argument_error("modeljob.priority", "must be within " + std::to_string(seed_min_priority) + ".." +
                                                          std::to_string(seed_max_priority) + ", got " +
                                                          std::to_string(modeljob_priority));
  }
  if (t != tier::prod && t != tier::dev) throw invalid_argument_error("modeljob.tier", "is not a tier");
  return (t == tier::prod ? modeljob_prod_base : 0) + modeljob_priority_step * modeljob_priority;
}

namespace detail {
// Builds the error only on failure, so that validating a good pod allocates nothing.
[[noreturn]] inline void pod_field_error(const pod& p, const char* field, const std::string& why) {
  throw invalid_argument_error("pod '" + p.name + "'." + field, why);
}
}  // namespace detail

// Throws invalid_argument_error naming the field of the first invalid value ("pod.name",
// "pod 'p'.priority"). Allocates nothing when p is valid (it is called on every placement).
inline void validate(const pod& p) {
  if (p.name.empty()) throw invalid_argument_error("pod.name", "must not be empty");
  if (p.name.find('\0') != std::string::npos) throw invalid_argument_error("pod.name", "must not contain a NUL character");
  if (p.cpu_milli < 0 || p.cpu_milli > max_quantity) detail::pod_field_error(p, "cpu_milli", "must be within 0..2^50");
  if (p.memory_mib < 0 || p.memory_mib > max_quantity) detail::pod_field_error(p, "memory_mib", "must be within 0..2^50");
  if (p.num_gpu < 0 || p.num_gpu > max_gpus_per_node) {
    detail::pod_field_error(p, "num_gpu", "must be within 0..64, got " + std::to_string(p.num_gpu));
  }
  if (p.num_gpu == 0 && (p.gpu_milli != 0 || p.gpu_mem_mib != 0)) {
    detail::pod_field_error(p, "gpu_milli", "a pod with num_gpu == 0 asks for no GPU share or GPU memory");
  }
  if (p.num_gpu > 0 && (p.gpu_milli <= 0 || p.gpu_milli > gpu_milli_whole)) {
    detail::pod_field_error(p, "gpu_milli", "must be within 1..1000 when num_gpu > 0");
  }
  if (p.gpu_mem_mib < 0) detail::pod_field_error(p, "gpu_mem_mib", "must be >= 0");
  if (static_cast<unsigned>(p.qos) > static_cast<unsigned>(qos_class::best_effort)) {
    detail::pod_field_error(p, "qos", "is not a QoS class");
  }
  if (static_cast<unsigned>(p.tier_) > static_cast<unsigned>(tier::dev)) detail::pod_field_error(p, "tier", "is not a tier");
  if (p.gang.empty() && p.gang_min_members != 0) {
    detail::pod_field_error(p, "gang_min_members", "set without a gang name");
  }
  if (!p.gang.empty() && p.gang_min_members < 1) {
    detail::pod_field_error(p, "gang_min_members", "must be >= 1 for a gang member");
  }
  if (!(p.submit_time >= 0.0) || p.submit_time > 1e15) {
    detail::pod_field_error(p, "submit_time", "must be a finite time >= 0");
  }
  validate_named(p.scalars, [&] { return "pod '" + p.name + "'."; });
}

// Fluent builder in the manner of Kubernetes' pkg/scheduler/testing/wrappers.go:
//   make_pod("infer-1").cpu(4000).memory(16384).gpu_share(500).gpu_memory(8192).model("resnet50")
// build() validates and throws invalid_argument_error naming the field.
class pod_builder {
 public:
  explicit pod_builder(std::string name) { p_.name = std::move(name); }
  pod_builder& cpu(milli m) { p_.cpu_milli = m; return *this; }
  pod_builder& memory(mib m) { p_.memory_mib = m; return *this; }
  pod_builder& gpus(std::int32_t n) { p_.num_gpu = n; p_.gpu_milli = gpu_milli_whole; return *this; }
  pod_builder& gpu_share(std::int32_t milli_share, std::int32_t n = 1) { p_.num_gpu = n; p_.gpu_milli = milli_share; return *this; }
  pod_builder& gpu_memory(std::int32_t m) { p_.gpu_mem_mib = m; return *this; }
  pod_builder& allow_model(std::string_view m) { p_.allowed_models.emplace_back(m, "pod.allowed_models"); return *this; }
  pod_builder& model(std::string_view m) { p_.model_type = short_name(m, "pod.model_type"); return *this; }
  pod_builder& priority(std::int32_t v) { p_.priority = v; return *this; }
  pod_builder& qos(qos_class q) { p_.qos = q; return *this; }
  pod_builder& prod() { p_.tier_ = tier::prod; return *this; }
  pod_builder& dev() { p_.tier_ = tier::dev; return *this; }
  pod_builder& gang(std::string g, std::int32_t min_members) { p_.gang = std::move(g); p_.gang_min_members = min_members; return *this; }
  pod_builder& tenant(std::string t) { p_.tenant = std::move(t); return *this; }
  pod_builder& submitted(double t) { p_.submit_time = t; return *this; }
  pod_builder& scalar(std::string_view resource, std::int64_t amount) {
    p_.scalars.push_back(named_quantity{resource_name(resource, "pod.scalars.name"), amount});
    return *this;
  }
  [[nodiscard]] pod build() const { validate(p_); return p_; }
  operator pod() const { return build(); }  // NOLINT(google-explicit-constructor)

 private:
  pod p_;
};

inline pod_builder make_pod(std::string name) { return pod_builder(std::move(name)); }

}  // namespace gpusched
