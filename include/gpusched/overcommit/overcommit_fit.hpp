// overcommit_fit: CPU, memory and GPU fit under the overcommit ceilings of an overcommit_policy.
//
// It replaces resource_fit + gpu_check in a profile when nodes may be overcommitted: the CPU and
// memory ceilings nest per QoS class (overcommit_policy.hpp), and a device takes a GPU of the
// request when its free share covers gpu_milli and its used memory plus gpu_mem_mib stays within
// mem_total * gpu_memory ratio. With the default policy it accepts exactly what
// resource_fit + gpu_check accept.
#pragma once

#include <string_view>

#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/overcommit/overcommit_policy.hpp"
#include "gpusched/preflight/preflight.hpp"
#include "gpusched/schedule/gpu_selection.hpp"

namespace gpusched {

// The node's allocation per class, or its total counted as Guaranteed when the cluster does not
// account per class (every nested sum is then the total: conservative).
template <Cluster C>
qos_allocation qos_allocation_of(const C& c, node_index n) {
  if constexpr (QosAccounted<C>) {
    return bound_traits_of<C>::node_qos_allocation(c, n);
  } else {
    const node_state r = traits_of<C>::node_resources(c, n);
    qos_allocation a;
    a.add(qos_class::guaranteed, r.cpu_allocated, r.mem_allocated);
    return a;
  }
}

// The GPU part of the check: as gpu_check, with the device-memory ceiling of the pod's class.
template <Cluster C>
reason gpu_fit_with_ceiling(const C& c, const pod& p, node_index n, std::int64_t gpu_mem_ratio) {
  if (!p.wants_gpu()) return reason::ok;
  const int count = traits_of<C>::node_resources(c, n).gpu_count;
  if (count == 0) return reason::no_gpu;
  int allowed = 0, with_share = 0, with_both = 0;
  for (int g = 0; g < count; ++g) {
    const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
    if (!p.model_allowed(d.model)) continue;
    ++allowed;
    if (d.milli_free >= p.gpu_milli) {
      ++with_share;
      with_both += device_memory_within_ceiling(d.mem_total_mib, d.mem_free_mib, p.gpu_mem_mib, gpu_mem_ratio) ? 1 : 0;
    }
  }
  if (allowed == 0) return reason::gpu_model_not_allowed;
  if (allowed < p.num_gpu) return reason::insufficient_gpu_count;
  if (with_share < p.num_gpu) return reason::insufficient_gpu_share;
  if (with_both < p.num_gpu) return reason::insufficient_gpu_memory;
  return reason::ok;
}

struct overcommit_fit {
  overcommit_policy policy{};
  static constexpr bool fits_cpu_memory = true;  // decides CPU and memory: replaces the default resource_fit

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "Overcommit"; }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    const qos_allocation a = qos_allocation_of(c, n);
    if (!cpu_within_ceilings(policy, a, p.qos, p.cpu_milli, r.cpu_capacity)) return reason::insufficient_cpu;
    if (!memory_within_ceilings(policy, a, p.qos, p.memory_mib, r.mem_capacity)) return reason::insufficient_memory;
    return gpu_fit_with_ceiling(c, p, n, policy.ceiling(p.qos).gpu_memory_permille);
  }
};

// Device choice that agrees with overcommit_fit when GPU memory may be overcommitted: best fit
// (as best_fit_gpus) among devices within the pod's GPU-memory ceiling.
struct overcommit_best_fit_gpus {
  overcommit_policy policy{};

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "OvercommitBestFit"; }

  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    const std::int64_t ratio = policy.ceiling(p.qos).gpu_memory_permille;
    return best_fit_select(c, p, n, [&](const gpu_device& d) {
      return d.milli_free >= p.gpu_milli &&
             device_memory_within_ceiling(d.mem_total_mib, d.mem_free_mib, p.gpu_mem_mib, ratio);
    });
  }
};

}  // namespace gpusched
