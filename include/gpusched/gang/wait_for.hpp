// The wait-for graph of gangs holding partial reservations, its cycles (deadlocks) and the order in
// which a cycle is broken.
//
// Vertex = a waiting gang; edge a -> b = a cannot complete, and capacity b holds would let it place
// more members. A cycle is a deadlock: each gang holds what another needs. Cycles are found as the
// strongly connected components of more than one vertex (Boost.Graph's strong_components, Tarjan)
// and each is broken by releasing the hold of the member that gives way first (gives_way_first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

namespace gpusched {

struct waiting_gang_key {
  std::int32_t priority = 0;
  double submit_time = 0.0;
  std::uint64_t sequence = 0;  // submission order, unique
};

// The documented breaking order: the lowest priority gives way first; among equal priority the
// youngest (latest submit_time); then the one submitted last. Higher-priority and older gangs keep
// their holds and complete.
constexpr bool gives_way_first(const waiting_gang_key& a, const waiting_gang_key& b) noexcept {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.submit_time != b.submit_time) return a.submit_time > b.submit_time;
  return a.sequence > b.sequence;
}

class wait_for_graph {
 public:
  using graph_type = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

  // Boost 1.74's adjacency_list copies on assignment and swap, so the graph is cleared in place.
  void reset(std::size_t gangs) {
    graph_.clear();
    for (std::size_t i = 0; i < gangs; ++i) boost::add_vertex(graph_);
  }
  [[nodiscard]] std::size_t size() const noexcept { return boost::num_vertices(graph_); }

  // `waiter` waits for capacity `holder` holds.
  void add_wait(std::size_t waiter, std::size_t holder) {
    if (waiter == holder) return;
    if (!boost::edge(waiter, holder, graph_).second) boost::add_edge(waiter, holder, graph_);
  }
  [[nodiscard]] bool waits(std::size_t waiter, std::size_t holder) const { return boost::edge(waiter, holder, graph_).second; }

  [[nodiscard]] bool has_cycle() const {
    std::vector<std::size_t> comp;
    return cyclic_components(comp) > 0;
  }

  // Breaks every cycle: repeatedly, in each cyclic component, the gang that gives way first loses
  // its edges (its hold is to be released). Returns those gangs in the order chosen; `keys[v]` is
  // vertex v's ordering key.
  [[nodiscard]] std::vector<std::size_t> break_cycles(std::span<const waiting_gang_key> keys) {
    std::vector<std::size_t> victims;
    std::vector<std::size_t> comp;
    while (cyclic_components(comp) > 0) {
      const std::size_t n = size();
      std::vector<std::size_t> members(n, 0), pick(n, n);
      for (std::size_t v = 0; v < n; ++v) ++members[comp[v]];
      for (std::size_t v = 0; v < n; ++v) {
        const std::size_t k = comp[v];
        if (members[k] < 2) continue;
        if (pick[k] == n || gives_way_first(keys[v], keys[pick[k]])) pick[k] = v;
      }
      for (std::size_t k = 0; k < n; ++k) {
        if (pick[k] == n) continue;
        victims.push_back(pick[k]);
        drop_edges(pick[k]);
      }
    }
    return victims;
  }

  [[nodiscard]] const graph_type& graph() const noexcept { return graph_; }

 private:
  // Removes every edge into and out of v (what clear_vertex does, without walking the edge list).
  void drop_edges(std::size_t v) {
    boost::clear_out_edges(v, graph_);
    for (std::size_t u = 0; u < size(); ++u) boost::remove_edge(u, v, graph_);
  }

  // Fills comp (component of each vertex) and returns how many components have two or more vertices.
  std::size_t cyclic_components(std::vector<std::size_t>& comp) const {
    const std::size_t n = size();
    comp.assign(n, 0);
    if (n == 0) return 0;
    const std::size_t count = boost::strong_components(graph_, comp.data());
    std::vector<std::size_t> members(count, 0);
    for (std::size_t v = 0; v < n; ++v) ++members[comp[v]];
    std::size_t cyclic = 0;
    for (std::size_t k = 0; k < count; ++k) cyclic += members[k] >= 2 ? 1 : 0;
    return cyclic;
  }

  graph_type graph_;
};

}  // namespace gpusched
