// Racks: the optional RackedNodes hook and the cluster's rack tree as a Boost.Graph.
//
// A host that knows which rack (or zone, or top-of-rack switch) holds each node provides, for
// `const C& c`, `node_index n`:
//   node_rack(c, n) -> std::string_view     found by ADL; an empty name means "unknown"
// in_memory_cluster gets it here from node_spec::rack. Without the hook, every node counts as one
// rack and gang placement simply ignores racks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"

namespace gpusched {

namespace rack_adl {
void node_rack() = delete;  // poison pill: only ADL-found overloads are candidates
template <class C>
auto call_node_rack(const C& c, node_index n) -> decltype(node_rack(c, n)) {
  return node_rack(c, n);
}
}  // namespace rack_adl

// Optional hook: the rack (or zone) of a node.
template <class C>
concept RackedNodes = Cluster<C> && requires(const C& c, node_index n) {
  { rack_adl::call_node_rack(c, n) } -> std::convertible_to<std::string_view>;
};

// The reference cluster reports node_spec::rack.
inline std::string_view node_rack(const in_memory_cluster& c, node_index n) noexcept { return c.rack(n); }

static_assert(RackedNodes<in_memory_cluster>);

// The rack of node n, or "" when the cluster does not say.
template <Cluster C>
std::string_view rack_name_of(const C& c, node_index n) {
  if constexpr (RackedNodes<C>) {
    return std::string_view(rack_adl::call_node_rack(c, n));
  } else {
    (void)c;
    (void)n;
    return {};
  }
}

// The cluster as a tree of switches: a spine vertex, one vertex per rack below it and one per node
// below its rack. Nodes of unknown rack share one rack vertex (rack 0 when present). Built once per
// cluster shape; rack_of() is what packing reads, hops() walks the graph (breadth-first).
// Memory: about 100 bytes per node (adjacency lists) plus 4 bytes of rack index.
class rack_topology {
 public:
  using graph_type = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;

  rack_topology() = default;
  template <Cluster C>
  explicit rack_topology(const C& c) {
    rebuild(c);
  }

  template <Cluster C>
  void rebuild(const C& c) {
    const std::size_t n = num_nodes(c);
    std::unordered_map<std::string, std::uint32_t> ids;  // rack ids by first appearance: deterministic
    std::vector<std::string> names;
    std::vector<std::uint32_t> rack_of_node(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::string name(rack_name_of(c, static_cast<node_index>(i)));
      auto [it, fresh] = ids.try_emplace(name, static_cast<std::uint32_t>(names.size()));
      if (fresh) names.push_back(std::move(name));
      rack_of_node[i] = it->second;
    }
    // Built in place: Boost 1.74's adjacency_list copies on assignment and swap.
    graph_type& g = graph_;
    g.clear();
    for (std::size_t v = 0; v < 1 + names.size() + n; ++v) boost::add_vertex(g);
    for (std::size_t r = 0; r < names.size(); ++r) boost::add_edge(0, 1 + r, g);
    for (std::size_t i = 0; i < n; ++i) boost::add_edge(1 + rack_of_node[i], 1 + names.size() + i, g);
    // What packing reads comes from the graph: a node vertex's only neighbour is its rack.
    rack_of_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      auto [a, b] = boost::adjacent_vertices(1 + names.size() + i, g);
      rack_of_[i] = static_cast<std::uint32_t>(*a - 1);
      (void)b;
    }
    names_ = std::move(names);
  }

  [[nodiscard]] std::size_t node_count() const noexcept { return rack_of_.size(); }
  [[nodiscard]] std::size_t rack_count() const noexcept { return names_.size(); }
  [[nodiscard]] std::uint32_t rack_of(node_index n) const noexcept { return rack_of_[n]; }
  [[nodiscard]] std::string_view rack_name(std::uint32_t r) const noexcept { return names_[r]; }
  [[nodiscard]] const graph_type& graph() const noexcept { return graph_; }

  // Switch hops between two nodes: 0 the same node, 2 the same rack, 4 through the spine.
  [[nodiscard]] int hops(node_index a, node_index b) const {
    if (a >= node_count() || b >= node_count()) throw invalid_argument_error("node", "node index out of range");
    std::vector<int> dist(boost::num_vertices(graph_), 0);
    const std::size_t va = 1 + names_.size() + a, vb = 1 + names_.size() + b;
    boost::breadth_first_search(graph_, va,
                                boost::visitor(boost::make_bfs_visitor(boost::record_distances(
                                    boost::make_iterator_property_map(dist.begin(),
                                                                      boost::get(boost::vertex_index, graph_)),
                                    boost::on_tree_edge()))));
    return dist[vb];
  }

 private:
  graph_type graph_;
  std::vector<std::uint32_t> rack_of_;
  std::vector<std::string> names_;
};

}  // namespace gpusched
