// engine_observer: the serving engine kept in step with the one bookkeeping decorator
// (core/bound_cluster.hpp, ADR 0009) instead of by the simulator's hand. A
// bound_cluster<C, ..., engine_observer> tells it of every reservation and release that the
// wrapped cluster accepted; once it follows an engine (follow_engine below) it
//   - puts a replica's pod, bound to (node n, first device i of the binding), on engine slot
//     e.slot(n, i) (place_replica: it starts, and serves after the engine's startup_s), and takes
//     it off again (remove_replica: its queued requests fail) when the pod is released;
//   - keeps each node's CPU demand, the sum of the CPU requests of the pods bound there, in the
//     engine (set_node_cpu_demand), which slows batches on a CPU-contended node.
// Pods that are not replicas (training workers, anything else) count only towards CPU demand.
// The cluster's nodes must be the engine's nodes, in the same order (serving::populate's).
//
// What it does not follow: a non-serving tenant (a training gang's proxy load) joins a GPU when its
// gang starts, which is the simulator's business, not a binding's; a planned restart of a leaking
// replica (remove + place on the same device, the pod staying bound) goes to the engine directly.
//
// Observer rules (ADR 0009): reserved / released must not throw. The node and device are checked
// when the engine is followed and when a node is added; place_replica may grow the engine's event
// heap and the device's replica list (amortised, both keep their storage; follow_engine reserves the
// replica lists), and under noexcept an out-of-memory there ends the program rather than leaving
// cluster and engine apart. A copy of the cluster follows the same engine: what-ifs run on overlays
// (preemption's node_overlay, the gang placer's transaction), never on copies.
#pragma once

#include <bit>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/sim/serving/engine.hpp"

namespace gpusched::sim::serving {

class engine_observer {
 public:
  // Pod name -> the engine replica it runs.
  using replica_map = std::unordered_map<std::string, replica_id>;

  [[nodiscard]] bool following() const noexcept { return e_ != nullptr; }
  // The CPU demand (sum of bound pods' CPU requests, milli) this observer set on node n.
  [[nodiscard]] milli cpu_demand(node_index n) const noexcept { return n < demand_.size() ? demand_[n] : 0; }
  // The replica the pod named `name` runs, or nullptr for a pod that is not a replica.
  [[nodiscard]] const replica_id* replica_of(const std::string& name) const noexcept {
    const auto it = replicas_.find(name);
    return it == replicas_.end() ? nullptr : &it->second;
  }

  template <class C>
  void reserved(const C&, const pod& p, const binding& b) noexcept {
    if (e_ == nullptr) return;
    demand_[b.node] += p.cpu_milli;
    e_->set_node_cpu_demand(b.node, demand_[b.node]);
    const replica_id* r = replica_of(p.name);
    if (r != nullptr && b.gpus != 0) e_->place_replica(*r, e_->slot(b.node, std::countr_zero(b.gpus)));
  }
  template <class C>
  void released(const C&, const pod& p, const binding& b) noexcept {
    if (e_ == nullptr) return;
    demand_[b.node] -= p.cpu_milli;
    e_->set_node_cpu_demand(b.node, demand_[b.node]);
    if (const replica_id* r = replica_of(p.name)) e_->remove_replica(*r);
  }
  // A node added to the cluster while following must be in the engine already (add it there first).
  template <class C>
  void node_added(const C& c, node_index n) {
    if (e_ == nullptr) return;
    check_node(c, n);
    if (demand_.size() <= n) demand_.resize(static_cast<std::size_t>(n) + 1, 0);
  }

 private:
  template <class C, class... O>
  friend void follow_engine(bound_cluster<C, O...>& c, serving_engine& e, replica_map replicas);

  template <class C>
  void check_node(const C& c, node_index n) const {
    if (n >= e_->node_count()) {
      throw invalid_argument_error("engine.nodes", "cluster node #" + std::to_string(n) + " has no engine node");
    }
    const int gpus = node_resources(c, n).gpu_count;
    if (gpus > 0 && e_->slot(n, gpus - 1) + 1 - e_->slot(n, 0) != static_cast<gpu_slot>(gpus)) {
      throw invalid_argument_error("engine.nodes", "cluster node #" + std::to_string(n) + " has " +
                                                       std::to_string(gpus) + " GPUs, its engine node fewer");
    }
  }

  serving_engine* e_ = nullptr;
  replica_map replicas_;
  std::vector<milli> demand_;  // per node
};

// Makes the cluster's engine_observer follow `e` from now on: the pods already bound are put into
// the engine as if bound now (CPU demand set on every node, replicas placed), and every later bind
// and unbind through `c` moves them. `replicas` names the pods that are engine replicas (each
// replica unplaced in the engine). Throws invalid_argument_error, and changes nothing, when a node
// of `c` is not the engine's node of the same index (an engine node with fewer GPUs), a named
// replica is unknown to the engine or already placed, or `c` is already following an engine.
template <class C, class... O>
void follow_engine(bound_cluster<C, O...>& c, serving_engine& e, engine_observer::replica_map replicas) {
  static_assert((std::is_same_v<O, engine_observer> || ...), "the bound_cluster has no engine_observer");
  engine_observer& o = c.template observer<engine_observer>();
  if (o.following()) throw invalid_argument_error("engine_observer", "already follows an engine");
  const std::size_t nodes = num_nodes(c);
  if (nodes > e.node_count()) {
    throw invalid_argument_error("engine.nodes", "the cluster has " + std::to_string(nodes) + " nodes, the engine " +
                                                     std::to_string(e.node_count()));
  }
  for (const auto& [name, r] : replicas) {
    if (r >= e.replica_count()) throw invalid_argument_error("replicas['" + name + "']", "no such engine replica");
    if (e.gpu_of(r) != no_gpu) throw invalid_argument_error("replicas['" + name + "']", "is already placed in the engine");
  }
  engine_observer next;
  next.e_ = &e;
  for (node_index n = 0; n < nodes; ++n) next.check_node(c, n);
  next.replicas_ = std::move(replicas);
  next.demand_.assign(e.node_count(), 0);
  e.reserve_replica_slots();
  // Nothing below throws for a valid state: the records are the cluster's own.
  o = std::move(next);
  for (node_index n = 0; n < nodes; ++n) {
    for (const bound_pod& bp : c.pods_on(n)) o.reserved(c.base(), c.spec(bp.id), bp.where);
  }
}

}  // namespace gpusched::sim::serving
