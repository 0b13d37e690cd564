// Nodes as a host describes them: CPU, memory, GPU devices, topology, optional measured load.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/named_resources.hpp"
#include "gpusched/core/node_constraints.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// One GPU device as seen by the scheduler. milli_free is the compute share not yet reserved
// (1000 = the whole device is free).
struct gpu_device {
  short_name model;            // e.g. "V100M32", "T4"
  std::int32_t milli_free = gpu_milli_whole;
  std::int32_t mem_total_mib = 0;
  std::int32_t mem_free_mib = 0;
  std::int16_t nvlink_island = 0;  // devices with the same island id share an NVLink domain
  std::int16_t reserved_ = 0;
  friend bool operator==(const gpu_device&, const gpu_device&) = default;
};
static_assert(sizeof(gpu_device) == 32);

// Measured load reported by the host (Koordinator's NodeMetric, DCGM). Fractions in [0, 1].
struct node_metrics {
  double cpu_used = 0.0;  // measured CPU usage / capacity
  double mem_used = 0.0;  // measured memory usage / capacity
  double gpu_used = 0.0;  // mean measured GPU (SM) utilisation over the node's devices
  // Requests of pods assigned after this reading was taken, which it cannot reflect yet; LoadAware
  // adds their estimated usage (Koordinator does the same for pods assigned since the NodeMetric).
  milli assigned_cpu_since = 0;
  mib assigned_mem_since = 0;
  milli assigned_gpu_milli_since = 0;
  friend bool operator==(const node_metrics&, const node_metrics&) = default;
};

// A node's static description. GPU devices all start fully free.
struct node_spec {
  std::string name;
  milli cpu_milli = 0;
  mib memory_mib = 0;
  std::vector<gpu_device> gpus;
  std::string rack;  // optional: topology beyond the node (used by gang placement)
  node_constraints constraints{};  // labels, taints, cordon (NodeAffinity, TaintToleration, NodeUnschedulable)
  std::int64_t pods = no_pod_limit;        // allocatable pods (Kubernetes' status.allocatable.pods); -1: no limit
  std::vector<named_quantity> scalars{};   // allocatable named resources (core/named_resources.hpp)

  // Fluent helpers for tests and examples.
  node_spec& add_gpus(int count, std::string_view model, std::int32_t mem_mib, std::int16_t island = 0) {
    for (int i = 0; i < count; ++i) {
      gpus.push_back(gpu_device{short_name(model, "node.gpus.model"), gpu_milli_whole, mem_mib, mem_mib,
                                island, 0});
    }
    return *this;
  }
  // Allocatable `amount` of the named resource `name` (throws invalid_argument_error for a bad name).
  node_spec& add_scalar(std::string_view resource, std::int64_t amount) {
    scalars.push_back(named_quantity{resource_name(resource, "node.scalars.name"), amount});
    return *this;
  }
};

// Throws invalid_argument_error naming the field when the description cannot be a real node.
inline void validate(const node_spec& n) {
  if (n.name.empty()) throw invalid_argument_error("node.name", "must not be empty");
  if (n.name.find('\0') != std::string::npos) throw invalid_argument_error("node.name", "must not contain a NUL character");
  const std::string at = "node '" + n.name + "'.";
  constexpr std::int64_t limit = max_quantity;  // keeps ratio * capacity products in int64
  if (n.cpu_milli < 0 || n.cpu_milli > limit) throw invalid_argument_error(at + "cpu_milli", "must be within 0..2^50");
  if (n.memory_mib < 0 || n.memory_mib > limit) throw invalid_argument_error(at + "memory_mib", "must be within 0..2^50");
  if (n.gpus.size() > static_cast<std::size_t>(max_gpus_per_node)) {
    throw invalid_argument_error(at + "gpus", "at most 64 GPUs per node");
  }
  for (std::size_t g = 0; g < n.gpus.size(); ++g) {
    const auto& d = n.gpus[g];
    const std::string f = at + "gpus[" + std::to_string(g) + "].";
    if (d.model.empty()) throw invalid_argument_error(f + "model", "must not be empty");
    if (d.milli_free < 0 || d.milli_free > gpu_milli_whole) {
      throw invalid_argument_error(f + "milli_free", "must be within 0..1000");
    }
    if (d.mem_total_mib < 0) throw invalid_argument_error(f + "mem_total_mib", "must be >= 0");
    if (d.mem_free_mib < 0 || d.mem_free_mib > d.mem_total_mib) {
      throw invalid_argument_error(f + "mem_free_mib", "must be within 0..mem_total_mib");
    }
  }
  if (n.pods < no_pod_limit || n.pods > max_quantity) throw invalid_argument_error(at + "pods", "must be -1 (no limit) or within 0..2^50");
  validate_named(n.scalars, [&] { return at; });
  validate(n.constraints, at);
}

inline void validate(const node_metrics& m, const std::string& node_name) {
  auto check = [&](double v, const char* field) {
    if (!std::isfinite(v) || v < 0.0 || v > 1.0) {
      throw invalid_argument_error("node '" + node_name + "'.metrics." + field,
                                   "must be a finite fraction within 0..1");
    }
  };
  check(m.cpu_used, "cpu_used");
  check(m.mem_used, "mem_used");
  check(m.gpu_used, "gpu_used");
  auto check_since = [&](std::int64_t v, const char* field) {
    if (v < 0 || v > max_quantity) {
      throw invalid_argument_error("node '" + node_name + "'.metrics." + field, "must be within 0..2^50");
    }
  };
  check_since(m.assigned_cpu_since, "assigned_cpu_since");
  check_since(m.assigned_mem_since, "assigned_mem_since");
  check_since(m.assigned_gpu_milli_since, "assigned_gpu_milli_since");
}

}  // namespace gpusched
