// resource_fit: CPU and memory fit, with an optional overcommit ceiling per resource.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

// Kubernetes' NodeResourcesFit filter (kubernetes pkg/scheduler/framework/plugins/noderesources/
// fit.go, fitsRequest, in its order): the node's pod limit ("Too many pods"), CPU and memory, then
// each named resource the pod asks for ("Insufficient example.com/foo"; a zero request is skipped)
// when the cluster has the node_named_resources hook (core/named_resources.hpp). CPU and memory are
// extended with a ceiling: allocated + request <= capacity * ratio (ratio 1.0 by default, i.e. no
// overcommit); named resources have none.
struct resource_fit {
  std::int64_t cpu_ratio_permille = 1000;
  std::int64_t memory_ratio_permille = 1000;
  // NodeResourcesFitArgs ignoredResources / ignoredResourceGroups: extended resources (a name with a
  // '/', outside kubernetes.io, not requests.*) the filter does not check (fit.go, fitsRequest).
  std::vector<resource_name> ignored_resources{};
  std::vector<std::string> ignored_resource_groups{};

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeResourcesFit"; }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    if constexpr (NamedResources<C>) {
      // The rare case out of line, so that the common check (no pod limit, no named resource)
      // stays small enough to inline into the filter loop.
      const named_resources_state* named = named_resources_of(c, n);
      if (named != nullptr || !p.scalars.empty()) [[unlikely]] return check_named(c, p, n, named);
    }
    return check_cpu_memory(c, p, n);
  }

  template <Cluster C>
  [[nodiscard]] reason check_cpu_memory(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    if (!within_ceiling(r.cpu_allocated, p.cpu_milli, r.cpu_capacity, cpu_ratio_permille)) return reason::insufficient_cpu;
    if (!within_ceiling(r.mem_allocated, p.memory_mib, r.mem_capacity, memory_ratio_permille)) return reason::insufficient_memory;
    return reason::ok;
  }

  // fitsRequest in its order: pods, CPU, memory, named resources.
  template <Cluster C>
  [[gnu::noinline]] reason check_named(const C& c, const pod& p, node_index n, const named_resources_state* named) const {
    if (named != nullptr && named->too_many_pods()) return reason::too_many_pods;
    if (const reason r = check_cpu_memory(c, p, n); r != reason::ok) return r;
    if (short_named(p, named) != nullptr) return reason::insufficient_named;
    return reason::ok;
  }

  // v1helper.IsExtendedResourceName: not native (a '/' outside kubernetes.io/) and not requests.*.
  [[nodiscard]] static bool is_extended(std::string_view r) noexcept {
    return r.find('/') != std::string_view::npos && r.find("kubernetes.io/") == std::string_view::npos &&
           r.rfind("requests.", 0) != 0;
  }
  [[nodiscard]] bool ignored(resource_name r) const noexcept {
    if (ignored_resources.empty() && ignored_resource_groups.empty()) return false;
    if (!is_extended(r.str())) return false;
    for (const resource_name& i : ignored_resources) {
      if (i == r) return true;
    }
    const std::string_view group = r.str().substr(0, r.str().find('/'));
    for (const std::string& g : ignored_resource_groups) {
      if (g == group) return true;
    }
    return false;
  }

  // The first named resource p asks for (a non-zero amount, not ignored) that the node has not
  // enough of free, nullptr when none: allocatable - requested, 0 for a resource the node lacks.
  [[nodiscard]] const named_quantity* short_named(const pod& p, const named_resources_state* named) const noexcept {
    for (const named_quantity& q : p.scalars) {
      if (q.amount == 0 || ignored(q.name)) continue;
      const auto* slot = named != nullptr ? named->find(q.name) : nullptr;
      if (slot == nullptr || q.amount > slot->allocatable - slot->requested) return &q;
    }
    return nullptr;
  }

  // The rejection with fit.go's InsufficientResource quantities: "Insufficient cpu (requested 3000,
  // used 2000, capacity 4000)"; capacity is the ceiling under overcommit.
  template <Cluster C>
  [[nodiscard]] reason_detail explain(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    switch (check(c, p, n)) {
      case reason::insufficient_cpu:
        return insufficient_resource(reason::insufficient_cpu, "cpu", p.cpu_milli, r.cpu_allocated,
                                     overcommit_ceiling(r.cpu_capacity, cpu_ratio_permille));
      case reason::insufficient_memory:
        return insufficient_resource(reason::insufficient_memory, "memory", p.memory_mib, r.mem_allocated,
                                     overcommit_ceiling(r.mem_capacity, memory_ratio_permille));
      case reason::too_many_pods: {  // fit.go: Requested 1, Used len(nodeInfo.Pods), Capacity allowedPodNumber
        const named_resources_state* named = named_resources_of(c, n);
        reason_detail d = insufficient_resource(reason::too_many_pods, "pods", 1, named->pod_count, named->allowed_pods);
        d.text = "Too many pods";
        return d;
      }
      case reason::insufficient_named: {
        const named_resources_state* named = named_resources_of(c, n);
        const named_quantity* q = short_named(p, named);
        const auto* slot = named != nullptr ? named->find(q->name) : nullptr;
        return insufficient_resource(reason::insufficient_named, q->name.str(), q->amount, slot ? slot->requested : 0,
                                     slot ? slot->allocatable : 0);
      }
      default: return {};
    }
  }
};

}  // namespace gpusched
