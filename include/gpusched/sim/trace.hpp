// A loaded trace: nodes, pods in name order, and the workload's typical pod shapes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/typical_pods.hpp"
#include "gpusched/sim/openb.hpp"

namespace gpusched::sim {

struct trace {
  std::string nodes_file, pods_file;
  std::vector<node_spec> nodes;
  std::vector<openb_pod> pods;                      // sorted by name, as the authors' SetWorkloadPods does
  std::vector<pod> requests;                        // pods[i].spec, contiguous for the simulators
  std::shared_ptr<const typical_workload> typical;  // from every pod of the trace (GetTypicalPods)
  milli gpu_milli_capacity = 0;

  static trace from(std::vector<node_spec> nodes, std::vector<openb_pod> pods, typical_pod_options o = {}) {
    trace t;
    t.nodes = std::move(nodes);
    t.pods = std::move(pods);
    std::stable_sort(t.pods.begin(), t.pods.end(),
                     [](const openb_pod& a, const openb_pod& b) { return a.spec.name < b.spec.name; });
    t.requests.reserve(t.pods.size());
    for (const auto& p : t.pods) t.requests.push_back(p.spec);
    t.typical = std::make_shared<const typical_workload>(typical_workload::from_pods(t.requests, o));
    for (const auto& n : t.nodes) t.gpu_milli_capacity += static_cast<milli>(n.gpus.size()) * gpu_milli_whole;
    return t;
  }

  static trace load(const std::string& nodes_path, const std::string& pods_path, typical_pod_options o = {}) {
    trace t = from(read_openb_nodes(nodes_path), read_openb_pods(pods_path), o);
    t.nodes_file = nodes_path;
    t.pods_file = pods_path;
    return t;
  }

  [[nodiscard]] bool has_times() const noexcept {
    return !pods.empty() && std::all_of(pods.begin(), pods.end(), [](const openb_pod& p) { return p.has_times; });
  }
};

// Throws invalid_argument_error unless the trace has nodes, GPUs and pods: both replays report shares
// of the cluster's GPU capacity, which a trace without them does not have (or has nothing to place).
inline void check_replayable(const trace& t) {
  const auto in = [](const std::string& file) { return file.empty() ? std::string() : " (" + file + ")"; };
  if (t.nodes.empty()) throw invalid_argument_error("trace.nodes", "the node list is empty" + in(t.nodes_file));
  if (t.gpu_milli_capacity <= 0) {
    throw invalid_argument_error(
        "trace.nodes", "no node has a GPU" + in(t.nodes_file) + "; the replays report shares of GPU capacity");
  }
  if (t.pods.empty()) throw invalid_argument_error("trace.pods", "the pod list is empty" + in(t.pods_file));
}

// Pod priorities from the trace's QoS column, for replays that preempt (the openb traces give every
// pod priority 0, and Kubernetes preempts strictly lower priorities only). Koordinator's priority
// classes (koordinator.sh docs, "Priority"; its QoS design pairs LS with koord-prod and BE with
// koord-batch): LS, Guaranteed and Burstable pods get koord-prod's lowest priority, 9000; BE pods
// koord-batch's, 5000. Throws invalid_argument_error naming the pod (file:line when loaded), and
// changes nothing, for a pod without a QoS (the 5-column files have none).
inline constexpr std::int32_t koord_prod_priority = 9000;   // koord-prod: [9000, 9999]
inline constexpr std::int32_t koord_batch_priority = 5000;  // koord-batch: [5000, 5999]

inline void set_priorities_by_qos(trace& t) {
  for (const openb_pod& p : t.pods) {
    if (p.qos.empty()) {
      const std::string where = t.pods_file.empty() ? std::string() : t.pods_file + ":" + std::to_string(p.line) + ": ";
      throw invalid_argument_error("trace.pods", where + "pod '" + p.spec.name + "' has no qos to take a priority from");
    }
  }
  for (std::size_t i = 0; i < t.pods.size(); ++i) {
    const std::int32_t prio = t.pods[i].qos == "BE" ? koord_batch_priority : koord_prod_priority;
    t.pods[i].spec.priority = prio;
    t.requests[i].priority = prio;
  }
}

// "cpu=12000m gpu=1x1000" or "cpu=8000m gpu=1x470 model=T4|P100": a pod's shape as a text key.
inline std::string shape_key(const pod& p) {
  std::string s =
      "cpu=" + std::to_string(p.cpu_milli) + "m gpu=" + std::to_string(p.num_gpu) + "x" + std::to_string(p.gpu_milli);
  if (!p.allowed_models.empty()) s += " model=" + gpu_type_key(p.allowed_models);
  return s;
}

}  // namespace gpusched::sim
