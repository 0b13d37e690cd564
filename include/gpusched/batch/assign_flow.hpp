// A global assignment of a batch by min-cost flow (in the spirit of Quincy, Isard et al., SOSP 2009,
// and Firmament, Gog et al., OSDI 2016), for comparison with the greedy rounds.
//
// Network: source -> each pod (capacity 1); pod -> each of its `candidates` best nodes at the
// batch's start (capacity 1, cost max_total - score); pod -> "unscheduled" (capacity 1, cost
// (max_total + 1) * (1 + priority), so placing a pod always beats leaving it and a pod of higher
// priority is placed before any of lower priority); node -> sink (capacity: the node's slots);
// unscheduled -> sink. Boost.Graph's successive_shortest_path_nonnegative_weights gives the
// minimum-cost maximum flow, i.e. the placement that first places the most pods by priority and
// then maximises the sum of start-of-batch scores.
//
// A flow network counts pods, not resources: a node's slots are estimated by packing its candidate
// pods (priority first) into its free CPU, memory, GPU share and whole GPUs. The flow's placements
// are then applied in (priority, score) order, each checked against the node's current state; a
// pod that no longer fits there, or that the flow left unscheduled, goes through greedy rounds
// (assign_greedy) afterwards. So the result is always feasible; its quality against the greedy
// rounds is measured by BM_AssignFlow (placed pods, total score).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>

#include "gpusched/batch/assign_greedy.hpp"
#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched::batch {

struct flow_options {
  std::uint32_t candidates = 16;  // node arcs per pod (its best nodes), >= 1
  greedy_options fallback{};      // for the pods the flow could not place
};

struct flow_assignment : assignment {
  std::uint32_t flow_placed = 0;       // placements taken from the flow as they were
  std::int64_t flow_objective = 0;     // minimum cost found
  std::size_t graph_vertices = 0, graph_arcs = 0;
};

template <class Profile>
flow_assignment assign_min_cost_flow(batch_scorer<Profile>& engine, node_table& nodes, std::span<const pod> pods,
                                     const pod_table& pods_table, flow_options opts = {}) {
  using engine_t = batch_scorer<Profile>;
  static_assert(!engine_t::normalizes, "assign_min_cost_flow needs a profile without normalising scorers");
  if (engine.table() != &nodes) throw std::logic_error("assign_min_cost_flow: the engine was prepared on another node table");
  if (pods.size() != pods_table.size()) throw invalid_argument_error("pods", "must be the pods the pod table was built from");
  if (opts.candidates == 0) throw invalid_argument_error("flow_options.candidates", "must be >= 1");

  const std::size_t n_pods = pods.size();
  top_k_result cand;
  engine.top_k(pods_table, opts.candidates, cand);

  // Nodes that are somebody's candidate, and the largest score (costs are max_total - score >= 0).
  std::vector<std::int32_t> vertex_of(nodes.size(), -1);
  std::vector<node_index> used_nodes;
  std::int64_t max_total = 0;
  for (std::size_t p = 0; p < n_pods; ++p) {
    for (const candidate& c : cand.candidates(p)) {
      max_total = std::max<std::int64_t>(max_total, c.score);
      if (vertex_of[c.node] < 0) {
        vertex_of[c.node] = static_cast<std::int32_t>(used_nodes.size());
        used_nodes.push_back(c.node);
      }
    }
  }

  // Slots: the node's candidate pods, best first by (priority, score), packed into its free
  // resources as aggregates.
  std::vector<std::vector<std::pair<std::uint32_t, std::int32_t>>> wanting(used_nodes.size());
  for (std::size_t p = 0; p < n_pods; ++p) {
    for (const candidate& c : cand.candidates(p)) wanting[static_cast<std::size_t>(vertex_of[c.node])].emplace_back(static_cast<std::uint32_t>(p), c.score);
  }
  const auto& prio = pods_table.priority();
  std::vector<std::int64_t> slots(used_nodes.size(), 0);
  for (std::size_t v = 0; v < used_nodes.size(); ++v) {
    const node_index n = used_nodes[v];
    auto& w = wanting[v];
    std::sort(w.begin(), w.end(), [&](const auto& a, const auto& b) {
      const auto pa = prio[static_cast<Eigen::Index>(a.first)], pb = prio[static_cast<Eigen::Index>(b.first)];
      return pa != pb ? pa > pb : (a.second != b.second ? a.second > b.second : a.first < b.first);
    });
    std::int64_t cpu = nodes.cpu_capacity()[n] - nodes.cpu_allocated()[n];
    std::int64_t mem = nodes.mem_capacity()[n] - nodes.mem_allocated()[n];
    std::int64_t share = 0, whole = 0;
    for (int g = 0; g < nodes.gpu_count()[n]; ++g) {
      share += nodes.milli_free()(n, g);
      whole += nodes.milli_free()(n, g) == gpu_milli_whole ? 1 : 0;
    }
    for (const auto& [p, score] : w) {
      const auto i = static_cast<Eigen::Index>(p);
      const std::int64_t c = pods_table.cpu_milli()[i], m = pods_table.memory_mib()[i];
      const std::int64_t gs = pods_table.gpu_milli_total(p);
      const std::int64_t gw = pods_table.gpu_milli()[i] == gpu_milli_whole ? pods_table.num_gpu()[i] : 0;
      if (c > cpu || m > mem || gs > share || gw > whole) continue;
      cpu -= c;
      mem -= m;
      share -= gs;
      whole -= gw;
      ++slots[v];
    }
    slots[v] = std::max<std::int64_t>(slots[v], 1);  // a candidate node fits at least its first pod
  }

  using traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, traits::edge_descriptor,
                                                      boost::property<boost::edge_weight_t, std::int64_t>>>>>;
  const std::size_t source = 0, sink = 1, unscheduled = 2, first_pod = 3, first_node = first_pod + n_pods;
  graph g(first_node + used_nodes.size());
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  auto weight = boost::get(boost::edge_weight, g);
  auto residual = boost::get(boost::edge_residual_capacity, g);
  auto add_arc = [&](std::size_t from, std::size_t to, std::int64_t cap, std::int64_t cost) {
    const auto e = boost::add_edge(from, to, g).first;
    const auto r = boost::add_edge(to, from, g).first;
    capacity[e] = cap;
    capacity[r] = 0;
    weight[e] = cost;
    weight[r] = -cost;
    reverse[e] = r;
    reverse[r] = e;
    return e;
  };
  std::vector<std::vector<std::pair<traits::edge_descriptor, std::int32_t>>> pod_arcs(n_pods);
  for (std::size_t p = 0; p < n_pods; ++p) {
    add_arc(source, first_pod + p, 1, 0);
    for (const candidate& c : cand.candidates(p)) {
      pod_arcs[p].emplace_back(add_arc(first_pod + p, first_node + static_cast<std::size_t>(vertex_of[c.node]), 1, max_total - c.score),
                               c.score);
    }
    add_arc(first_pod + p, unscheduled, 1, (max_total + 1) * (1 + prio[static_cast<Eigen::Index>(p)]));
  }
  for (std::size_t v = 0; v < used_nodes.size(); ++v) add_arc(first_node + v, sink, slots[v], 0);
  add_arc(unscheduled, sink, static_cast<std::int64_t>(n_pods), 0);
  boost::successive_shortest_path_nonnegative_weights(g, source, sink);

  flow_assignment out;
  out.graph_vertices = boost::num_vertices(g);
  out.graph_arcs = boost::num_edges(g) / 2;
  // The flow's choice per pod (-1: unscheduled), applied by (priority, score).
  std::vector<std::pair<std::uint32_t, std::int32_t>> chosen;  // pod, score
  std::vector<node_index> chosen_node(n_pods, 0);
  for (std::size_t p = 0; p < n_pods; ++p) {
    for (const auto& [e, score] : pod_arcs[p]) {
      if (capacity[e] - residual[e] == 1) {
        chosen.emplace_back(static_cast<std::uint32_t>(p), score);
        chosen_node[p] = static_cast<node_index>(boost::target(e, g) - first_node);
        chosen_node[p] = used_nodes[chosen_node[p]];
        out.flow_objective += max_total - score;
      }
    }
  }
  std::sort(chosen.begin(), chosen.end(), [&](const auto& a, const auto& b) {
    const auto pa = prio[static_cast<Eigen::Index>(a.first)], pb = prio[static_cast<Eigen::Index>(b.first)];
    return pa != pb ? pa > pb : (a.second != b.second ? a.second > b.second : a.first < b.first);
  });

  out.node.assign(n_pods, assignment::unplaced);
  out.bindings.assign(n_pods, binding{});
  out.score.assign(n_pods, 0);
  std::vector<std::uint8_t> placed(n_pods, 0);
  std::int32_t now = 0;
  for (const auto& [p, flow_score] : chosen) {
    const node_index n = chosen_node[p];
    const node_index one[] = {n};
    engine.score_nodes(pods_table, p, std::span<const node_index>(one), &now);
    if (now < 0) continue;  // the node filled up with pods placed before it
    const pod& q = pods[p];
    const gpu_set gpus = engine.profile().select_gpus(nodes, q, n);
    if (q.wants_gpu() && gpus == 0) continue;
    const binding b = make_binding(q, n, gpus);
    nodes.apply(q, b);
    engine.sync_node(n);
    out.node[p] = static_cast<std::int32_t>(n);
    out.bindings[p] = b;
    out.score[p] = now;
    out.order.push_back(p);
    placed[p] = 1;
    ++out.flow_placed;
  }
  std::vector<std::uint32_t> rest;
  for (std::size_t p = 0; p < n_pods; ++p) {
    if (placed[p] == 0) rest.push_back(static_cast<std::uint32_t>(p));
  }
  if (!rest.empty()) {
    const assignment more = assign_greedy(engine, nodes, pods, pods_table, opts.fallback, rest);
    for (std::uint32_t p : more.order) {
      out.node[p] = more.node[p];
      out.bindings[p] = more.bindings[p];
      out.score[p] = more.score[p];
      out.order.push_back(p);
    }
    out.rounds = more.rounds;
    out.rescored_pairs = more.rescored_pairs;
    out.full_rescans = more.full_rescans;
  }
  return out;
}

}  // namespace gpusched::batch
