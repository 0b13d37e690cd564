// The benchmark workload: a GPU cluster like the seed's (8 GPUs per node of three models, partly
// used, measured load on every node, served model types) and a mixed queue of inference shares,
// whole-GPU training and CPU pods.
//
// The cluster is a plain struct of vectors adapted to the Cluster concept (with measured load and
// served models), built in linear time, so that 100,000 nodes take well under a second.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/core/binding.hpp>
#include <gpusched/core/cluster.hpp>
#include <gpusched/core/pod.hpp>

namespace bench {

struct served {
  gpusched::short_name model;
  int replicas = 0;
};

struct vector_cluster {
  static constexpr int gpus_per_node = 8;
  std::vector<gpusched::node_state> nodes;
  std::vector<gpusched::gpu_device> gpus;  // gpus_per_node per node
  std::vector<gpusched::node_metrics> load;
  std::vector<std::vector<served>> models;
};

inline std::size_t node_count(const vector_cluster& c) noexcept { return c.nodes.size(); }
inline gpusched::node_state node_resources(const vector_cluster& c, gpusched::node_index n) noexcept { return c.nodes[n]; }
inline const gpusched::gpu_device& node_gpu(const vector_cluster& c, gpusched::node_index n, int g) noexcept {
  return c.gpus[static_cast<std::size_t>(n) * vector_cluster::gpus_per_node + static_cast<std::size_t>(g)];
}
inline const gpusched::node_metrics* node_load(const vector_cluster& c, gpusched::node_index n) noexcept { return &c.load[n]; }
inline int model_replicas(const vector_cluster& c, gpusched::node_index n, const gpusched::short_name& m) noexcept {
  for (const served& s : c.models[n]) {
    if (s.model == m) return s.replicas;
  }
  return 0;
}
inline std::span<const served> node_model_types(const vector_cluster& c, gpusched::node_index n) noexcept { return c.models[n]; }
static_assert(gpusched::Cluster<vector_cluster> && gpusched::MeasuredLoad<vector_cluster> && gpusched::ServedModels<vector_cluster>);

inline vector_cluster make_gpu_cluster(int nodes, std::uint64_t seed) {
  using namespace gpusched;
  std::mt19937_64 rng(seed);
  vector_cluster c;
  const std::array<const char*, 3> models{"V100M32", "A100", "T4"};
  const std::array<const char*, 4> types{"resnet50", "bert", "llama", "whisper"};
  c.nodes.reserve(static_cast<std::size_t>(nodes));
  c.gpus.reserve(static_cast<std::size_t>(nodes) * vector_cluster::gpus_per_node);
  c.load.reserve(static_cast<std::size_t>(nodes));
  c.models.reserve(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) {
    node_state r{96000, 0, 384 * 1024, 0, vector_cluster::gpus_per_node};
    const short_name model(models[rng() % 3]);
    const std::size_t first = c.gpus.size();
    for (int g = 0; g < vector_cluster::gpus_per_node; ++g) c.gpus.push_back(gpu_device{model, gpu_milli_whole, 32768, 32768, 0, 0});
    std::vector<served> running;
    const int pods = static_cast<int>(rng() % 6);
    for (int p = 0; p < pods; ++p) {  // inference shares already placed
      gpu_device& d = c.gpus[first + rng() % vector_cluster::gpus_per_node];
      if (d.milli_free < 500) continue;
      const auto share = static_cast<std::int32_t>(100 + rng() % 400);
      d.milli_free -= share;
      d.mem_free_mib -= 4096;
      r.cpu_allocated += static_cast<milli>(1000 + rng() % 8000);
      r.mem_allocated += static_cast<mib>(4096 + rng() % 16384);
      const short_name t(types[rng() % 4]);
      bool found = false;
      for (served& s : running) {
        if (s.model == t) {
          ++s.replicas;
          found = true;
        }
      }
      if (!found) running.push_back(served{t, 1});
    }
    c.nodes.push_back(r);
    c.load.push_back(node_metrics{static_cast<double>(rng() % 700) / 1000.0, static_cast<double>(rng() % 800) / 1000.0,
                                  static_cast<double>(rng() % 900) / 1000.0});
    c.models.push_back(std::move(running));
  }
  return c;
}

// Built once per size and reused across benchmarks.
inline const vector_cluster& gpu_cluster(int nodes, std::uint64_t seed) {
  static std::map<std::pair<int, std::uint64_t>, vector_cluster> cache;
  auto it = cache.find({nodes, seed});
  if (it == cache.end()) it = cache.emplace(std::make_pair(nodes, seed), make_gpu_cluster(nodes, seed)).first;
  return it->second;
}

// A mixed queue; with `distinct`, every pod's CPU and memory request differs slightly, so that no
// two pods are alike (scoring cannot share work between them).
inline std::vector<gpusched::pod> pending_pods(int count, std::uint64_t seed, bool distinct = false) {
  using namespace gpusched;
  std::mt19937_64 rng(seed);
  const std::array<const char*, 4> types{"resnet50", "bert", "llama", "whisper"};
  std::vector<pod> pods;
  pods.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    pod_builder b = make_pod("pending-" + std::to_string(i));
    b.priority(static_cast<std::int32_t>(rng() % 11)).model(types[rng() % 4]);
    const milli jitter = distinct ? static_cast<milli>(i % 997) : 0;
    switch (rng() % 4) {
      case 0: b.cpu(4000 + jitter).memory(16384 + jitter).gpu_share(250).gpu_memory(6144); break;
      case 1: b.cpu(8000 + jitter).memory(32768 + jitter).gpu_share(500).gpu_memory(12288); break;
      case 2: b.cpu(16000 + jitter).memory(65536 + jitter).gpus(static_cast<std::int32_t>(1 + rng() % 4)).gpu_memory(30000); break;
      default: b.cpu(2000 + jitter).memory(8192 + jitter); break;
    }
    pods.push_back(b);
  }
  return pods;
}

}  // namespace bench
