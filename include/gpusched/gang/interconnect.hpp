// A node's GPU interconnect as a weighted graph (Boost.Graph), and the choice of a device subset by
// bandwidth.
//
// Devices are vertices; an edge's weight is the bandwidth between two devices in GB/s. The island
// model of gpu_device::nvlink_island is the common case (NVLink inside an island, PCIe between),
// but any topology can be described link by link (e.g. a DGX-1's hybrid cube-mesh), and its NVLink
// islands recovered as connected components.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <boost/graph/adjacency_matrix.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// Bandwidth weights in GB/s; only their ratio matters to the choice. NVIDIA Tesla V100 (SXM2)
// datasheet, "Interconnect Bandwidth, bi-directional": NVLink 300 GB/s, PCIe 32 GB/s.
inline constexpr std::uint32_t nvlink_gbps = 300;
inline constexpr std::uint32_t pcie_gbps = 32;

class gpu_interconnect {
 public:
  using graph_type = boost::adjacency_matrix<boost::undirectedS, boost::no_property,
                                             boost::property<boost::edge_weight_t, std::uint32_t>>;

  // `gpus` devices, every pair linked at `default_gbps` (PCIe through the host by default).
  explicit gpu_interconnect(int gpus, std::uint32_t default_gbps = pcie_gbps)
      : graph_(static_cast<std::size_t>(check_count(gpus))) {
    for (int a = 0; a < gpus; ++a) {
      for (int b = a + 1; b < gpus; ++b) boost::add_edge(vertex(a), vertex(b), default_gbps, graph_);
    }
  }

  // The island model: devices with the same island id talk over NVLink, others over PCIe.
  static gpu_interconnect from_islands(std::span<const std::int16_t> island, std::uint32_t nvlink = nvlink_gbps,
                                       std::uint32_t pcie = pcie_gbps) {
    gpu_interconnect t(static_cast<int>(island.size()), pcie);
    for (std::size_t a = 0; a < island.size(); ++a) {
      for (std::size_t b = a + 1; b < island.size(); ++b) {
        if (island[a] == island[b]) t.set_link(static_cast<int>(a), static_cast<int>(b), nvlink);
      }
    }
    return t;
  }

  // Sets the bandwidth between devices a and b (replacing the previous link). Throws naming the field.
  void set_link(int a, int b, std::uint32_t gbps) {
    if (a < 0 || a >= size()) throw invalid_argument_error("gpu_interconnect.link.a", "device " + std::to_string(a) + " out of range");
    if (b < 0 || b >= size()) throw invalid_argument_error("gpu_interconnect.link.b", "device " + std::to_string(b) + " out of range");
    if (a == b) throw invalid_argument_error("gpu_interconnect.link.b", "a device has no link to itself");
    auto [e, found] = boost::edge(vertex(a), vertex(b), graph_);
    if (found) {
      boost::put(boost::edge_weight, graph_, e, gbps);
    } else {
      boost::add_edge(vertex(a), vertex(b), gbps, graph_);
    }
  }

  [[nodiscard]] int size() const noexcept { return static_cast<int>(boost::num_vertices(graph_)); }

  // GB/s between a and b; 0 for a == b or when no link was described.
  [[nodiscard]] std::uint32_t bandwidth(int a, int b) const {
    if (a == b) return 0;
    auto [e, found] = boost::edge(vertex(a), vertex(b), graph_);
    return found ? boost::get(boost::edge_weight, graph_, e) : 0;
  }

  // Islands: connected components of the links of at least min_gbps (NVLink by default), numbered
  // in order of their lowest device.
  [[nodiscard]] std::vector<int> islands(std::uint32_t min_gbps = nvlink_gbps) const {
    boost::filtered_graph<graph_type, at_least> links(graph_, at_least{&graph_, min_gbps});
    std::vector<int> comp(static_cast<std::size_t>(size()), 0);
    boost::connected_components(links, comp.data());
    return comp;
  }

  [[nodiscard]] const graph_type& graph() const noexcept { return graph_; }

 private:
  // Edge filter of islands(); Boost.Graph needs it default-constructible and assignable.
  struct at_least {
    const graph_type* g = nullptr;
    std::uint32_t min_gbps = 0;
    bool operator()(const graph_type::edge_descriptor& e) const { return boost::get(boost::edge_weight, *g, e) >= min_gbps; }
  };

  static int check_count(int gpus) {
    if (gpus < 0 || gpus > max_gpus_per_node) throw invalid_argument_error("gpu_interconnect.gpus", "must be within 0..64");
    return gpus;
  }
  static graph_type::vertex_descriptor vertex(int g) noexcept { return static_cast<graph_type::vertex_descriptor>(g); }

  graph_type graph_;
};

// Chooses k devices among `fitting` (a set over devices 0..count-1). The order of preference:
//   1. the largest bandwidth inside the set (sum over its pairs): the pod's devices on one island;
//   2. the least free share (best fit, as the FGD simulator does for GPU shares);
//   3. the smallest cut, i.e. bandwidth from the set to the fitting devices left out: take the
//      devices whose neighbours are already busy, keeping whole islands free for larger pods;
//   4. the numerically smallest set.
// Exact when C(|fitting|, k) <= 1024 (any 8-GPU node); otherwise a greedy growth from every seed.
// `share_free[g]` is device g's free share; `bw(a, b)` the bandwidth. Allocates nothing.
template <class Bandwidth>
gpu_set choose_gpu_subset(int count, gpu_set fitting, int k, const std::int32_t* share_free, Bandwidth&& bw) {
  if (k <= 0) return 0;
  int idx[max_gpus_per_node];
  int f = 0;
  for_each_gpu(fitting, [&](int g) {
    if (g < count) idx[f++] = g;
  });
  if (f < k) return 0;
  if (f == k) {
    gpu_set s = 0;
    for (int i = 0; i < f; ++i) s |= gpu_set{1} << idx[i];
    return s;
  }
  std::uint32_t m[max_gpus_per_node][max_gpus_per_node];  // bandwidth among fitting devices
  std::uint64_t row[max_gpus_per_node];                   // bandwidth of each to the other fitting ones
  for (int i = 0; i < f; ++i) {
    m[i][i] = 0;
    for (int j = i + 1; j < f; ++j) m[i][j] = m[j][i] = static_cast<std::uint32_t>(bw(idx[i], idx[j]));
  }
  for (int i = 0; i < f; ++i) {
    row[i] = 0;
    for (int j = 0; j < f; ++j) row[i] += m[i][j];
  }
  struct objective {
    std::uint64_t inside = 0, share = 0, cut = 0;
    gpu_set mask = 0;
    bool better_than(const objective& o) const noexcept {
      if (inside != o.inside) return inside > o.inside;
      if (share != o.share) return share < o.share;
      if (cut != o.cut) return cut < o.cut;
      return mask < o.mask;
    }
  };
  auto evaluate = [&](const int* pos, int n) {
    objective o;
    std::uint64_t rows = 0;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) o.inside += m[pos[a]][pos[b]];
      rows += row[pos[a]];
      o.share += static_cast<std::uint64_t>(share_free[idx[pos[a]]]);
      o.mask |= gpu_set{1} << idx[pos[a]];
    }
    o.cut = rows - 2 * o.inside;  // row sums count inside pairs twice and the cut once
    return o;
  };

  // C(f, k), saturating at 1025.
  std::uint64_t combos = 1;
  for (int i = 1; i <= k && combos <= 1024; ++i) combos = combos * static_cast<std::uint64_t>(f - k + i) / static_cast<std::uint64_t>(i);

  objective best;
  bool have = false;
  int pos[max_gpus_per_node];
  if (combos <= 1024) {
    for (int i = 0; i < k; ++i) pos[i] = i;
    while (true) {
      const objective o = evaluate(pos, k);
      if (!have || o.better_than(best)) {
        best = o;
        have = true;
      }
      int i = k - 1;
      while (i >= 0 && pos[i] == f - k + i) --i;
      if (i < 0) break;
      ++pos[i];
      for (int j = i + 1; j < k; ++j) pos[j] = pos[j - 1] + 1;
    }
    return best.mask;
  }
  for (int seed = 0; seed < f; ++seed) {
    std::uint64_t gain[max_gpus_per_node];
    bool in[max_gpus_per_node] = {};
    for (int j = 0; j < f; ++j) gain[j] = m[seed][j];
    pos[0] = seed;
    in[seed] = true;
    for (int n = 1; n < k; ++n) {
      int pick = -1;
      for (int j = 0; j < f; ++j) {
        if (in[j]) continue;
        if (pick < 0 || gain[j] > gain[pick] ||
            (gain[j] == gain[pick] && (share_free[idx[j]] < share_free[idx[pick]] ||
                                       (share_free[idx[j]] == share_free[idx[pick]] && row[j] < row[pick])))) {
          pick = j;
        }
      }
      pos[n] = pick;
      in[pick] = true;
      for (int j = 0; j < f; ++j) gain[j] += m[pick][j];
    }
    const objective o = evaluate(pos, k);
    if (!have || o.better_than(best)) {
      best = o;
      have = true;
    }
  }
  return best.mask;
}

}  // namespace gpusched
