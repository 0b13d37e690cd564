// The benchmark workload: a GPU cluster like the seed's (8 GPUs per node of three models, partly
// used, measured load on every node, served model types) and a mixed queue of inference shares,
// whole-GPU training and CPU pods.
#pragma once

#include <array>
#include <map>
#include <utility>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gpusched/core/in_memory_cluster.hpp>

namespace bench {

inline gpusched::in_memory_cluster make_gpu_cluster(int nodes, std::uint64_t seed) {
  using namespace gpusched;
  std::mt19937_64 rng(seed);
  in_memory_cluster c;
  const std::array<const char*, 3> models{"V100M32", "A100", "T4"};
  const std::array<const char*, 4> served{"resnet50", "bert", "llama", "whisper"};
  for (int i = 0; i < nodes; ++i) {
    node_spec n{"node-" + std::to_string(i), 96000, 384 * 1024, {}, ""};
    n.add_gpus(8, models[rng() % 3], 32768);
    const node_index idx = c.add_node(n);
    const int running = static_cast<int>(rng() % 6);
    for (int r = 0; r < running; ++r) {
      const int g = static_cast<int>(rng() % 8);
      if (c.gpus(idx)[static_cast<std::size_t>(g)].milli_free < 500) continue;
      const pod p = make_pod("run").cpu(static_cast<milli>(1000 + rng() % 8000)).memory(static_cast<mib>(4096 + rng() % 16384))
                        .gpu_share(static_cast<std::int32_t>(100 + rng() % 400)).gpu_memory(4096).model(served[rng() % 4]);
      c.reserve(p, make_binding(p, idx, gpu_set{1} << g));
    }
    const node_metrics m{static_cast<double>(rng() % 700) / 1000.0, static_cast<double>(rng() % 800) / 1000.0,
                         static_cast<double>(rng() % 900) / 1000.0};
    c.set_load(idx, &m);
  }
  return c;
}

// Built once per size and reused: in_memory_cluster::add_node reserves one slot at a time, so
// building 100,000 nodes takes a while.
inline const gpusched::in_memory_cluster& gpu_cluster(int nodes, std::uint64_t seed) {
  static std::map<std::pair<int, std::uint64_t>, gpusched::in_memory_cluster> cache;
  auto it = cache.find({nodes, seed});
  if (it == cache.end()) it = cache.emplace(std::make_pair(nodes, seed), make_gpu_cluster(nodes, seed)).first;
  return it->second;
}

inline std::vector<gpusched::pod> pending_pods(int count, std::uint64_t seed) {
  using namespace gpusched;
  std::mt19937_64 rng(seed);
  const std::array<const char*, 4> served{"resnet50", "bert", "llama", "whisper"};
  std::vector<pod> pods;
  for (int i = 0; i < count; ++i) {
    pod_builder b = make_pod("pending-" + std::to_string(i));
    b.priority(static_cast<std::int32_t>(rng() % 11)).model(served[rng() % 4]);
    switch (rng() % 4) {
      case 0: b.cpu(4000).memory(16384).gpu_share(250).gpu_memory(6144); break;
      case 1: b.cpu(8000).memory(32768).gpu_share(500).gpu_memory(12288); break;
      case 2: b.cpu(16000).memory(65536).gpus(static_cast<std::int32_t>(1 + rng() % 4)).gpu_memory(30000); break;
      default: b.cpu(2000).memory(8192); break;
    }
    pods.push_back(b);
  }
  return pods;
}

}  // namespace bench
