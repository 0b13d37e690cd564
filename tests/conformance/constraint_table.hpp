// Nodes with labels, taints and cordons, and pods with placement, for the TaintToleration,
// NodeAffinity and NodeUnschedulable tables.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/core/node_constraints.hpp"

namespace conformance {

using gpusched::node_constraints;
using gpusched::pod_placement;

// One node per entry, named as given, with no resources.
inline gpusched::in_memory_cluster nodes_with(std::vector<std::pair<std::string, node_constraints>> nodes) {
  gpusched::in_memory_cluster c;
  for (auto& [name, k] : nodes) {
    gpusched::node_spec s{name, 0, 0, {}, ""};
    s.constraints = std::move(k);
    c.add_node(s);
  }
  return c;
}

inline gpusched::pod pod_with(pod_placement pl) {
  gpusched::pod p = gpusched::make_pod("pod1");
  p.placement.set(std::move(pl));
  return p;
}

// Kubernetes' Taint / Toleration literals.
inline gpusched::node_taint taint(const char* key, const char* value, gpusched::taint_effect e) { return {key, value, e}; }
inline gpusched::toleration tol_equal(const char* key, const char* value, std::optional<gpusched::taint_effect> e) {
  return {key, gpusched::toleration_operator::equal, value, e};
}
inline gpusched::toleration tol_exists(const char* key, std::optional<gpusched::taint_effect> e) {
  return {key, gpusched::toleration_operator::exists, {}, e};
}

}  // namespace conformance
