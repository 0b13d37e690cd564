// Where the unallocated GPU is at the end of a paper-protocol replay, by kind (issue 18, docs/quality.md
// "Diagnosis"): GPU share stranded because the node's CPU or memory is used up, versus share left on
// partly used GPUs, versus whole GPUs left idle; and the FGD fragment measure split by its cases
// (scoring/fragmentation.hpp frag_class: Q4 GPUs fit but CPU does not, Q2 CPU fits but GPUs do not,
// Q1 neither). The replay is run_paper's (sim/paper.hpp) step for step, so the allocation equals
// gpusched-sim's; it keeps the final cluster to classify it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "gpusched/sim/metrics.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "gpusched/sim/trace.hpp"

namespace gpusched::sim {

// Pod kinds of the openb traces (the knobs of python/tools/trace_variants.py).
enum class pod_kind : std::uint8_t { cpu_only = 0, share = 1, whole = 2, multi = 3 };
inline constexpr int pod_kind_count = 4;
constexpr pod_kind kind_of(const pod& p) noexcept {
  if (p.num_gpu == 0) return pod_kind::cpu_only;
  if (p.num_gpu >= 2) return pod_kind::multi;
  return p.gpu_milli < gpu_milli_whole ? pod_kind::share : pod_kind::whole;
}

struct frag_kinds_result {
  milli gpu_capacity = 0;
  milli arrived_gpu_milli = 0;
  milli allocated_gpu_milli = 0;
  // Idle GPU milli at the end, each node's idle share counted once, under the first that applies:
  milli idle_cpu_stranded = 0;  // free CPU below the least CPU any GPU pod of the trace asks
  milli idle_mem_stranded = 0;  // else free memory below the least memory any GPU pod of the trace asks
  milli idle_whole_gpus = 0;    // else GPUs wholly free
  milli idle_partial_gpus = 0;  // else the free share of partly used GPUs
  // The FGD fragment measure at the end (frag_tracker), per frag_class, milli-GPU.
  frag_amount fgd{};
  // Pods that found no node, and the GPU milli they asked, by pod_kind.
  std::array<std::size_t, pod_kind_count> failed_pods{};
  std::array<milli, pod_kind_count> failed_gpu_milli{};
  // Nodes at the end whose free CPU is below 1/8 of capacity, and GPUs they leave idle.
  std::size_t nodes_cpu_low = 0;
  milli idle_on_cpu_low = 0;
  std::size_t pods_arrived = 0;

  [[nodiscard]] double pct(double v) const noexcept {
    return gpu_capacity > 0 ? v / static_cast<double>(gpu_capacity) * 100.0 : 0.0;
  }
};

// Classifies the final cluster (see frag_kinds_result).
inline void classify_idle(const replay_cluster& c, const trace& t, frag_kinds_result& r) {
  milli cpu_min = std::numeric_limits<milli>::max();
  mib mem_min = std::numeric_limits<mib>::max();
  for (const pod& p : t.requests) {
    if (p.num_gpu == 0) continue;
    cpu_min = std::min(cpu_min, p.cpu_milli);
    mem_min = std::min(mem_min, p.memory_mib);
  }
  using tr = traits_of<replay_cluster>;
  for (node_index n = 0; n < num_nodes(c); ++n) {
    const node_state s = tr::node_resources(c, n);
    milli idle = 0;
    milli whole = 0;
    for (int g = 0; g < s.gpu_count; ++g) {
      const std::int32_t f = tr::node_gpu(c, n, g).milli_free;
      idle += f;
      if (f == gpu_milli_whole) whole += f;
    }
    const milli cpu_free = s.cpu_capacity - s.cpu_allocated;
    if (cpu_free * 8 < s.cpu_capacity) {
      ++r.nodes_cpu_low;
      r.idle_on_cpu_low += idle;
    }
    if (idle == 0) continue;
    if (cpu_free < cpu_min) {
      r.idle_cpu_stranded += idle;
    } else if (s.mem_capacity - s.mem_allocated < mem_min) {
      r.idle_mem_stranded += idle;
    } else {
      r.idle_whole_gpus += whole;
      r.idle_partial_gpus += idle - whole;
    }
  }
}

namespace detail {
// The paper protocol's driver observer (sim/paper.hpp) reduced to what the classification needs:
// arrived GPU, failed pods by kind, fragmentation kept up to date.
struct frag_kinds_observer {
  const replay_cluster* c;
  const paper_workload* w;
  frag_tracker* frag;
  frag_kinds_result* res;

  void arrived(std::uint32_t j) noexcept { res->arrived_gpu_milli += w->spec(j).gpu_milli_total(); }
  void placed(std::uint32_t, const binding& b, double, bool) { frag->update(*c, b.node); }
  void failed(std::uint32_t j) {
    const pod& p = w->spec(j);
    const auto k = static_cast<std::size_t>(kind_of(p));
    ++res->failed_pods[k];
    res->failed_gpu_milli[k] += p.gpu_milli_total();
  }
  void released(std::uint32_t, const binding& b, bool) { frag->update(*c, b.node); }
};
}  // namespace detail

// run_paper (sim/paper.hpp) with the final cluster classified: the same driver configuration (same
// arrivals, node order, scheduler and protocol), another observer.
template <class Profile>
requires SchedulingProfile<Profile, replay_cluster> frag_kinds_result run_paper_kinds(const trace& t, Profile profile,
                                                                                      const paper_options& o) {
  frag_kinds_result res;
  detail::with_paper_replay(t, std::move(profile), o, [&](replay_cluster& c, detail::paper_workload& w, auto& drive) {
    frag_tracker frag(*t.typical, c);
    res.gpu_capacity = totals(c).gpu_milli_capacity();
    detail::frag_kinds_observer obs{&c, &w, &frag, &res};
    drive(obs);
    res.pods_arrived = w.size();
    res.allocated_gpu_milli = totals(c).gpu_milli_allocated();
    res.fgd = frag.total();
    classify_idle(c, t, res);
  });
  return res;
}

}  // namespace gpusched::sim
