// Eviction plan for a node whose GPU memory leaks: which pods to evict, in which order.
//
// Candidates are the pods bound on the leaking devices. Order:
//   1. BestEffort before the other classes,
//   2. then lowest priority,
//   3. then largest measured GPU memory usage over request (the likeliest leaker first; a pod
//      using memory it never asked for ranks as infinite),
//   4. then the most recently started, then the lowest id.
// Prod Guaranteed pods are never candidates unless allow_prod_guaranteed. The plan evicts from the
// front of that order until, on every leaking device, the last free reading plus the measured usage
// of the pods evicted from it reaches target_free_fraction of the device's memory — and always at
// least one pod, since the leak goes on otherwise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/eviction/leak_detector.hpp"

namespace gpusched {

struct eviction_options {
  bool allow_prod_guaranteed = false;
  double target_free_fraction = 0.10;

  void validate() const {
    if (!std::isfinite(target_free_fraction) || target_free_fraction < 0.0 || target_free_fraction > 1.0) {
      throw invalid_argument_error("eviction_options.target_free_fraction", "must be within 0..1");
    }
  }
};

struct eviction_candidate {
  bound_pod record;
  std::string name;
  std::int64_t used_mib = 0;  // measured GPU memory per device (the request when unmeasured)
  double usage_over_request = 0.0;
};

struct eviction_plan {
  node_index node = 0;
  gpu_set devices = 0;                       // the leaking devices
  std::vector<eviction_candidate> order;     // every candidate, in eviction order
  std::size_t evict_count = 0;               // the first evict_count of order are to go
  std::size_t protected_count = 0;           // prod Guaranteed pods left out
  bool sufficient = false;                   // the targets are reached by evicting them

  [[nodiscard]] std::span<const eviction_candidate> evict() const noexcept {
    return std::span<const eviction_candidate>(order.data(), evict_count);
  }
  [[nodiscard]] std::string explain() const {
    std::string s = "evict " + std::to_string(evict_count) + " of " + std::to_string(order.size()) + " pod(s) on node #" +
                    std::to_string(node) + ":";
    for (std::size_t i = 0; i < evict_count; ++i) s += " " + order[i].name;
    if (!sufficient) s += " (not enough to reach the free-memory target)";
    if (protected_count > 0) s += "; " + std::to_string(protected_count) + " prod Guaranteed pod(s) kept";
    return s;
  }
};

// usage(const bound_pod&) -> std::int64_t: the pod's measured GPU memory per device in MiB, or a
// negative value when unknown (the request is used then).
template <PodsOnNodes C, class UsageFn>
eviction_plan plan_eviction(const C& c, const leak_report& leak, UsageFn&& usage, eviction_options opts = {}) {
  opts.validate();
  if (leak.node >= num_nodes(c)) throw invalid_argument_error("leak_report.node", "node index out of range");
  eviction_plan plan;
  plan.node = leak.node;
  plan.devices = leak.leaking_gpus;
  if (!leak.leaking) return plan;
  for (const bound_pod& bp : bound_traits_of<C>::bound_pods(c, leak.node)) {
    if ((bp.where.gpus & leak.leaking_gpus) == 0) continue;
    if (!opts.allow_prod_guaranteed && bp.tier_ == tier::prod && bp.qos == qos_class::guaranteed) {
      ++plan.protected_count;
      continue;
    }
    eviction_candidate e;
    e.record = bp;
    e.name = bound_traits_of<C>::bound_pod_spec(c, bp.id).name;
    const std::int64_t measured = usage(bp);
    e.used_mib = measured >= 0 ? measured : bp.where.gpu_mem_mib;
    const std::int64_t req = bp.where.gpu_mem_mib;
    e.usage_over_request = req > 0 ? static_cast<double>(e.used_mib) / static_cast<double>(req)
                                   : (e.used_mib > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    plan.order.push_back(std::move(e));
  }
  std::sort(plan.order.begin(), plan.order.end(), [](const eviction_candidate& a, const eviction_candidate& b) {
    const bool abe = a.record.qos == qos_class::best_effort, bbe = b.record.qos == qos_class::best_effort;
    if (abe != bbe) return abe;
    if (a.record.priority != b.record.priority) return a.record.priority < b.record.priority;
    if (a.usage_over_request != b.usage_over_request) return a.usage_over_request > b.usage_over_request;
    if (a.record.start_time != b.record.start_time) return a.record.start_time > b.record.start_time;
    return a.record.id < b.record.id;
  });

  // Deficit per leaking device: target * total - last free reading.
  std::vector<std::int64_t> deficit(leak.devices.size(), 0);
  for (const device_trend& d : leak.devices) {
    if (!d.leaking) continue;
    const auto total = static_cast<double>(gpu_device(traits_of<C>::node_gpu(c, leak.node, d.gpu)).mem_total_mib);
    deficit[static_cast<std::size_t>(d.gpu)] =
        std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil(opts.target_free_fraction * total)) - d.free_mib);
  }
  auto met = [&] { return std::all_of(deficit.begin(), deficit.end(), [](std::int64_t x) { return x <= 0; }); };
  while (plan.evict_count < plan.order.size() && (plan.evict_count == 0 || !met())) {
    const eviction_candidate& e = plan.order[plan.evict_count++];
    for_each_gpu(e.record.where.gpus & leak.leaking_gpus, [&](int g) {
      if (static_cast<std::size_t>(g) < deficit.size()) deficit[static_cast<std::size_t>(g)] -= e.used_mib;
    });
  }
  plan.sufficient = met() && plan.evict_count > 0;
  return plan;
}

}  // namespace gpusched
