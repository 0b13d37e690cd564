// Structured reasons why a node cannot take a pod, and their text.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpusched {

enum class reason : std::uint8_t {
  ok = 0,
  insufficient_cpu,
  insufficient_memory,
  no_gpu,                   // the pod wants GPUs and the node has none
  gpu_model_not_allowed,    // no device of an allowed model
  insufficient_gpu_count,   // fewer devices of an allowed model than num_gpu
  insufficient_gpu_share,   // not enough devices with gpu_milli free
  insufficient_gpu_memory,  // not enough devices with both the share and gpu_mem_mib free
  cpu_load_too_high,        // measured CPU usage above the threshold (LoadAware filter)
  memory_load_too_high,
  gpu_load_too_high,
  custom,                   // rejected by a host-defined check
  node_unschedulable,       // the node is cordoned (NodeUnschedulable)
  untolerated_taint,        // a NoSchedule / NoExecute taint the pod does not tolerate (TaintToleration)
  node_affinity_mismatch,   // nodeSelector or required node affinity not met (NodeAffinity)
  too_many_pods,            // the node's allocatable pods are taken (NodeResourcesFit, "Too many pods")
  insufficient_named,       // not enough of a named resource ("Insufficient example.com/foo")
  count_                    // number of reasons; keep last
};

inline constexpr std::size_t reason_count = static_cast<std::size_t>(reason::count_);

constexpr std::string_view to_string(reason r) noexcept {
  switch (r) {
    case reason::ok: return "fits";
    case reason::insufficient_cpu: return "insufficient CPU";
    case reason::insufficient_memory: return "insufficient memory";
    case reason::no_gpu: return "no GPU";
    case reason::gpu_model_not_allowed: return "GPU model not allowed";
    case reason::insufficient_gpu_count: return "too few GPUs of an allowed model";
    case reason::insufficient_gpu_share: return "insufficient GPU share";
    case reason::insufficient_gpu_memory: return "insufficient GPU memory";
    case reason::cpu_load_too_high: return "CPU load above threshold";
    case reason::memory_load_too_high: return "memory load above threshold";
    case reason::gpu_load_too_high: return "GPU load above threshold";
    case reason::custom: return "rejected by a custom check";
    case reason::node_unschedulable: return "unschedulable";
    case reason::untolerated_taint: return "untolerated taint";
    case reason::node_affinity_mismatch: return "node affinity/selector mismatch";
    case reason::too_many_pods: return "Too many pods";
    case reason::insufficient_named: return "insufficient named resource";
    case reason::count_: break;
  }
  return "?";
}

// How many nodes each reason rejected. Each rejected node counts once, under the first check
// (in profile order) that rejected it, so the counts add up to the nodes examined.
struct rejection_counts {
  std::array<std::uint32_t, reason_count> by_reason{};
  std::uint32_t examined = 0;

  void add(reason r) noexcept { ++by_reason[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint32_t operator[](reason r) const noexcept { return by_reason[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint32_t fits() const noexcept { return (*this)[reason::ok]; }

  // "0/1213 nodes fit: 804 insufficient GPU share, 409 GPU model not allowed" (largest first).
  [[nodiscard]] std::string to_string() const {
    std::string s = std::to_string(fits()) + "/" + std::to_string(examined) + " nodes fit";
    std::array<std::size_t, reason_count> order{};
    for (std::size_t i = 0; i < reason_count; ++i) order[i] = i;
    for (std::size_t i = 1; i < reason_count; ++i) {  // stable insertion sort by count, descending
      for (std::size_t j = i; j > 0 && by_reason[order[j]] > by_reason[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
    }
    bool first = true;
    for (std::size_t i : order) {
      if (i == 0 || by_reason[i] == 0) continue;
      s += first ? ": " : ", ";
      first = false;
      s += std::to_string(by_reason[i]) + " " + std::string(gpusched::to_string(static_cast<reason>(i)));
    }
    return s;
  }
};

// One rejection explained, with the quantities behind it where a check has them: Kubernetes'
// InsufficientResource{ResourceName, Reason, Requested, Used, Capacity}
// (pkg/scheduler/framework/plugins/noderesources/fit.go). A check may offer
//   k.explain(c, p, n) -> reason_detail
// (preflight/explain.hpp); a host's own check uses it to put its own text and numbers in front of
// the user (why == reason::custom, text = "Insufficient example.com/licences").
struct reason_detail {
  reason why = reason::ok;
  std::string text;              // the check's own reason text; empty: to_string(why)
  std::string resource;          // the resource the quantities are of ("cpu"), if any
  bool has_quantities = false;
  std::int64_t requested = 0;    // what the pod asks for
  std::int64_t used = 0;         // what the node has allocated already
  std::int64_t capacity = 0;     // the node's capacity (under any ceiling)

  [[nodiscard]] bool ok() const noexcept { return why == reason::ok; }
  // "Insufficient cpu (requested 3000, used 2000, capacity 4000)"; "untolerated taint".
  [[nodiscard]] std::string to_string() const {
    std::string s = text.empty() ? std::string(gpusched::to_string(why)) : text;
    if (has_quantities) {
      s += " (requested " + std::to_string(requested) + ", used " + std::to_string(used) + ", capacity " +
           std::to_string(capacity) + ")";
    }
    return s;
  }
};

// A reason with its quantities, as fit.go's InsufficientResource builds it ("Insufficient cpu").
inline reason_detail insufficient_resource(reason why, std::string_view resource, std::int64_t requested, std::int64_t used,
                                           std::int64_t capacity) {
  return {why, "Insufficient " + std::string(resource), std::string(resource), true, requested, used, capacity};
}

}  // namespace gpusched
