// Requested-after-placement and capacity per resource, the input of the NodeResources scorers.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/named_resources.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched {

enum class resource_kind : std::uint8_t { cpu = 0, memory = 1, gpu = 2 };
inline constexpr int resource_kinds = 3;

// Weight per resource; a zero weight leaves the resource out (Kubernetes' `resources` list).
// Kubernetes' default is cpu 1, memory 1 (pkg/scheduler/apis/config/v1/defaults.go).
struct resource_weights {
  std::int64_t cpu = 1;
  std::int64_t memory = 1;
  std::int64_t gpu = 0;  // GPU milli, as nvidia.com/gpu would be weighted
  [[nodiscard]] constexpr std::int64_t operator[](int r) const noexcept { return r == 0 ? cpu : r == 1 ? memory : gpu; }
  [[nodiscard]] constexpr std::array<std::int64_t, 3> as_array() const noexcept { return {cpu, memory, gpu}; }
};

struct resource_usage {
  std::array<std::int64_t, resource_kinds> requested{};  // node allocation plus the pod's request
  std::array<std::int64_t, resource_kinds> capacity{};
};

template <Cluster C>
std::int64_t gpu_milli_allocated(const C& c, node_index n, int gpu_count) {
  std::int64_t used = 0;
  for (int g = 0; g < gpu_count; ++g) used += gpu_milli_whole - traits_of<C>::node_gpu(c, n, g).milli_free;
  return used;
}

// Kubernetes computes the requested amount as the node's requested plus the pod's request
// (noderesources/resource_allocation.go, calculateResourceAllocatableRequest).
// A scalar (extended) resource the pod does not request is left out of the score: upstream returns
// allocatable 0, requested 0 for it and the scorers skip a zero allocatable (resource_allocation.go
// at kubernetes commit b170451c, "bypass scoring on this resource"). cpu and memory are always
// scored. So with need_gpu the GPU dimension has capacity 0 (skipped by every formula) for a pod that
// asks for no GPU; without need_gpu (the GPU weight is 0) it is not read at all.
template <Cluster C>
resource_usage usage_with(const C& c, const pod& p, node_index n, bool need_gpu) {
  const node_state r = traits_of<C>::node_resources(c, n);
  resource_usage u;
  u.requested = {r.cpu_allocated + p.cpu_milli, r.mem_allocated + p.memory_mib, 0};
  u.capacity = {r.cpu_capacity, r.mem_capacity, std::int64_t{r.gpu_count} * gpu_milli_whole};
  if (need_gpu) {
    if (p.gpu_milli_total() == 0) {
      u.capacity[2] = 0;
    } else {
      u.requested[2] = gpu_milli_allocated(c, n, r.gpu_count) + p.gpu_milli_total();
    }
  }
  return u;
}

}  // namespace gpusched

namespace gpusched {

// A named resource in scoringStrategy.resources (or BalancedAllocation's resources), weight 1..100.
struct named_weight {
  resource_name name;
  std::int64_t weight = 1;
  friend bool operator==(const named_weight&, const named_weight&) = default;
};

// cpu, memory, GPU and up to 13 named resources per scorer: the scorers fill fixed arrays (no
// allocation on the hot path); the configuration refuses more (profile/builtin_plugins.hpp).
inline constexpr int max_scored_resources = 16;
inline constexpr int max_named_weights = max_scored_resources - resource_kinds;

// What the scorers read when they score named resources: cpu, memory, GPU as usage_with, then one
// entry per named weight.
struct scored_resources {
  int count = 0;
  std::int64_t requested[max_scored_resources];  // node's requested plus the pod's request
  std::int64_t capacity[max_scored_resources];   // 0: left out of the score
  std::int64_t weight[max_scored_resources];
  std::int64_t pod_request[max_scored_resources];
};

// Kubernetes' non-zero request defaults (pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest
// = 100, DefaultMemoryRequest = 200 * 1024 * 1024 bytes = 200 MiB), which NodeResourcesFit's
// scorers apply to a container that requests no CPU / no memory, for the pod and for the pods on
// the node (NonZeroRequested; noderesources/resource_allocation.go, useRequested false).
// BalancedAllocation does not apply them. gpusched has one request per pod and no "missing": a
// request of 0 counts as missing. The node side comes from the node_named_resources hook
// (zero_cpu_pods, zero_memory_pods): exact on nodes with a pod limit, as every Kubernetes node has;
// a node without the record counts its allocation as it is. Off unless a profile asks
// (NodeResourcesFit args nonZeroRequests; docs/plugins.md).
struct nonzero_requests {
  bool enabled = false;
  std::int64_t cpu_milli = 100;  // DefaultMilliCPURequest
  std::int64_t memory = 200;     // DefaultMemoryRequest in the cluster's memory unit (MiB: 200)
  friend bool operator==(const nonzero_requests&, const nonzero_requests&) = default;
};

// The pod's request of r (0 when it asks for none).
inline std::int64_t request_of(const pod& p, resource_name r) noexcept {
  for (const named_quantity& q : p.scalars) {
    if (q.name == r) return q.amount;
  }
  return 0;
}

// usage_with plus the named resources: Kubernetes' calculateResourceAllocatableRequest
// (noderesources/resource_allocation.go): a scalar resource the pod does not request is left out
// (allocatable 0), ephemeral-storage is scored whether requested or not; a resource the node does not
// have has allocatable 0 and is left out too. Allocates nothing.
template <Cluster C>
void scored_usage(const C& c, const pod& p, node_index n, const resource_weights& w, std::span<const named_weight> named,
                  scored_resources& out, const nonzero_requests& nonzero = {}) noexcept {
  const resource_usage u = usage_with(c, p, n, w.gpu != 0);
  const std::int64_t pod_base[resource_kinds] = {p.cpu_milli, p.memory_mib, w.gpu != 0 ? p.gpu_milli_total() : 0};
  for (int r = 0; r < resource_kinds; ++r) {
    out.requested[r] = u.requested[static_cast<std::size_t>(r)];
    out.capacity[r] = u.capacity[static_cast<std::size_t>(r)];
    out.weight[r] = w[r];
    out.pod_request[r] = pod_base[r];
  }
  const named_resources_state* state = named_resources_of(c, n);
  if (nonzero.enabled) {
    const std::int64_t pod_cpu = p.cpu_milli == 0 ? nonzero.cpu_milli : p.cpu_milli;
    const std::int64_t pod_mem = p.memory_mib == 0 ? nonzero.memory : p.memory_mib;
    out.requested[0] += pod_cpu - p.cpu_milli + (state != nullptr ? state->zero_cpu_pods * nonzero.cpu_milli : 0);
    out.requested[1] += pod_mem - p.memory_mib + (state != nullptr ? state->zero_memory_pods * nonzero.memory : 0);
    out.pod_request[0] = pod_cpu;
    out.pod_request[1] = pod_mem;
  }
  int k = resource_kinds;
  for (const named_weight& nw : named) {
    if (k == max_scored_resources) break;  // the configuration refuses more
    const std::int64_t want = request_of(p, nw.name);
    const auto* slot = state != nullptr ? state->find(nw.name) : nullptr;
    const bool skip = slot == nullptr || (want == 0 && is_scalar_resource(nw.name));
    out.requested[k] = skip ? 0 : slot->requested + want;
    out.capacity[k] = skip ? 0 : slot->allocatable;
    out.weight[k] = nw.weight;
    out.pod_request[k] = skip ? 0 : want;
    ++k;
  }
  out.count = k;
}

}  // namespace gpusched
