// Cluster-level metrics of the FGD paper: GPU allocation and fragmentation against arrived GPU
// demand (hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/analysis.go ClusterGpuFragReport,
// and experiments/analysis/merge_alloc_discrete_0920.py for the per-percent buckets).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/scoring/fragmentation.hpp"
#include "gpusched/scoring/typical_pods.hpp"

namespace gpusched::sim {

// Sum over nodes of the per-class fragment amounts, kept up to date one changed node at a time
// (only the node a pod lands on or leaves changes, so an event costs one node's evaluation).
class frag_tracker {
 public:
  template <Cluster C>
  frag_tracker(const typical_workload& w, const C& c) : w_(&w) {
    const std::size_t n = num_nodes(c);
    per_node_.resize(n);
    for (node_index i = 0; i < n; ++i) update(c, i);
  }

  template <Cluster C>
  void update(const C& c, node_index n) {
    const node_state s = traits_of<C>::node_resources(c, n);
    const int gpus = std::min(s.gpu_count, max_gpus_per_node);
    std::int32_t free[max_gpus_per_node];
    for (int g = 0; g < gpus; ++g) free[g] = traits_of<C>::node_gpu(c, n, g).milli_free;
    const short_name model = gpus > 0 ? short_name(traits_of<C>::node_gpu(c, n, 0).model) : short_name{};
    const auto& acc = accessible(model);
    const auto sh = w_->shapes();
    const frag_amount fa = node_frag_amount(free, gpus, s.cpu_capacity - s.cpu_allocated, sh.data(), acc.data(),
                                            static_cast<int>(sh.size()));
    for (int k = 0; k < frag_class_count; ++k) total_.by_class[k] += fa.by_class[k] - per_node_[n].by_class[k];
    per_node_[n] = fa;
  }

  [[nodiscard]] const frag_amount& total() const noexcept { return total_; }
  [[nodiscard]] const frag_amount& node(node_index n) const noexcept { return per_node_[n]; }

 private:
  const std::vector<std::uint8_t>& accessible(const short_name& m) {
    for (std::size_t i = 0; i < models_.size(); ++i) {
      if (models_[i] == m) return acc_[i];
    }
    models_.push_back(m);
    acc_.emplace_back();
    w_->accessible_for(m, acc_.back());
    return acc_.back();
  }

  const typical_workload* w_;
  std::vector<frag_amount> per_node_;
  frag_amount total_;
  std::vector<short_name> models_;
  std::vector<std::vector<std::uint8_t>> acc_;
};

// One arrival (paper mode) or one event (dynamic mode), as analysis.go logs it after each pod.
struct event_sample {
  milli arrived_gpu_milli = 0;    // GPU share requested by every pod tried so far, failed ones included
  milli allocated_gpu_milli = 0;  // GPU share held by placed pods
  double frag_gpu_milli = 0.0;    // sum over nodes of F_n (FragAmountSumExceptQ3)
  double idle_gpu_milli = 0.0;    // sum over nodes of all fragment classes (free GPU share)
};

// One point of a curve against arrived GPU demand, in percent of cluster GPU capacity.
struct bucket_point {
  int arrived_pct = 0;
  double allocation_pct = 0.0;
  double frag_amount_pct = 0.0;  // fragment GPU share, % of capacity
  double frag_ratio_pct = 0.0;   // fragment / idle GPU share, %
};

// merge_alloc_discrete_0920.py: each event's arrived % (of capacity) rounded to an integer; for each
// integer 0..max_pct, the mean over the events in that bucket, or, when a bucket is empty, over the
// events within +-1 of it. Buckets with no event near them are left out, so the buckets past the
// largest arrived % + 1 are not visited: the work is bounded by the events, whatever max_pct.
inline std::vector<bucket_point> bucket_by_arrived(const std::vector<event_sample>& events, milli capacity,
                                                   int max_pct) {
  std::vector<bucket_point> out;
  if (capacity <= 0 || events.empty()) return out;
  const double cap = static_cast<double>(capacity);
  std::vector<double> arrived(events.size());
  double highest = 0.0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    arrived[i] = static_cast<double>(events[i].arrived_gpu_milli) / cap * 100.0;
    highest = std::max(highest, arrived[i]);
  }
  const double last = std::min(static_cast<double>(max_pct), std::ceil(highest) + 1.0);
  for (int b = 0; b <= last; ++b) {
    double alloc = 0, frag = 0, ratio = 0;
    std::size_t k = 0;
    for (int pass = 0; pass < 2 && k == 0; ++pass) {
      for (std::size_t i = 0; i < events.size(); ++i) {
        const double a = arrived[i];
        const bool in = pass == 0 ? std::nearbyint(a) == b : (a >= b - 1 && a <= b + 1);
        if (!in) continue;
        const event_sample& e = events[i];
        alloc += static_cast<double>(e.allocated_gpu_milli) / cap * 100.0;
        frag += e.frag_gpu_milli / cap * 100.0;
        ratio += e.idle_gpu_milli > 0 ? e.frag_gpu_milli / e.idle_gpu_milli * 100.0 : 0.0;
        ++k;
      }
    }
    if (k == 0) continue;
    const double dk = static_cast<double>(k);
    out.push_back(bucket_point{b, alloc / dk, frag / dk, ratio / dk});
  }
  return out;
}

}  // namespace gpusched::sim
