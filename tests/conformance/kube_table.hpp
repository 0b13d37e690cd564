// Kubernetes' unit-test tables as gpusched clusters: a node with cpu, memory and an extended
// resource count, and pods already placed on nodes, built on in_memory_cluster (the reference host).
//
// Units. cpu: a table's "4000" parses as 4000 CPUs (Kubernetes scores its MilliValue); every score
// is a ratio requested / capacity, so the numbers go into cpu_milli as given (a uniform exact scale
// of all CPU values by 1/1000; "250m" is stored as 250). memory: the tables give bytes; gpusched
// stores memory in the memory_mib field, and every NodeResources
// score depends on memory only through requested / capacity, so the byte counts are stored there
// unchanged (a uniform scale of all memory values, exact: no value is rounded). The one extended
// resource of a table ("intel.com/foo", extendedRes) becomes nvidia.com/gpu: 1 unit = 1 whole GPU =
// 1000 GPU milli, again a uniform exact scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/in_memory_cluster.hpp"

namespace conformance {

struct knode {
  std::int64_t cpu = 0, mem = 0;
  int ext = 0;  // extended resource units (GPUs)
};
struct kpod {
  std::int64_t cpu = 0, mem = 0;
  int ext = 0;
};
// Req(cpu 1000, memory 2000) + Req(cpu 2000, memory 3000): a pod of both the upstream tables.
inline const kpod p3000_5000{3000, 5000};
struct placed {
  int node = 0;
  kpod pod;
};

inline gpusched::pod make(const kpod& k, const std::string& name = "pod") {
  auto b = gpusched::make_pod(name).cpu(k.cpu).memory(k.mem);
  if (k.ext > 0) b.gpus(k.ext);
  return b;
}

// node1, node2, ... with the existing pods reserved (extended units on the lowest free devices).
inline gpusched::in_memory_cluster cluster(const std::vector<knode>& nodes, const std::vector<placed>& existing = {}) {
  gpusched::in_memory_cluster c;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    gpusched::node_spec s{"node" + std::to_string(i + 1), nodes[i].cpu, nodes[i].mem, {}, ""};
    s.add_gpus(nodes[i].ext, "ext", 0);
    c.add_node(s);
  }
  std::vector<int> next_device(nodes.size(), 0);
  int k = 0;
  for (const placed& e : existing) {
    const auto p = make(e.pod, "existing-" + std::to_string(k++));
    gpusched::gpu_set g = 0;
    for (int d = 0; d < e.pod.ext; ++d) g |= gpusched::gpu_set{1} << next_device[static_cast<std::size_t>(e.node)]++;
    c.reserve(p, gpusched::make_binding(p, static_cast<gpusched::node_index>(e.node), g));
  }
  return c;
}

}  // namespace conformance

namespace conformance {

// The scorer's score on every node of c, in node order (the tables' expectedScores).
template <class S>
std::vector<std::int64_t> scores(const S& s, const gpusched::in_memory_cluster& c, const gpusched::pod& p) {
  std::vector<std::int64_t> out;
  for (gpusched::node_index n = 0; n < c.size(); ++n) out.push_back(s.score(c, p, n));
  return out;
}
using expected = std::vector<std::int64_t>;

}  // namespace conformance
