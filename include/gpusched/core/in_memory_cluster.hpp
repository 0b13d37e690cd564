// in_memory_cluster: the reference MutableCluster used by the tests, the simulator and Python.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched {

struct model_count {
  short_name model;
  int replicas = 0;
  friend bool operator==(const model_count&, const model_count&) = default;
};

// Memory per node: bytes_per_node(gpus) of fixed storage (440 bytes with 8 GPUs on x86-64 /
// libstdc++: a 96-byte record, 32 bytes per GPU, 32-byte name and rack strings, a 24-byte model
// list), plus heap for names and racks longer than 15 characters and 20 bytes per served model type.
class in_memory_cluster {
 public:
  in_memory_cluster() = default;

  // Adds a node (validated; throws invalid_argument_error and changes nothing). Returns its index.
  node_index add_node(const node_spec& spec) {
    validate(spec);
    const auto idx = static_cast<node_index>(nodes_.size());
    record r;
    r.res.cpu_capacity = spec.cpu_milli;
    r.res.mem_capacity = spec.memory_mib;
    r.res.gpu_count = static_cast<int>(spec.gpus.size());
    r.gpu_begin = static_cast<std::uint32_t>(gpus_.size());
    grow(gpus_, spec.gpus.size());
    grow(names_, 1);
    grow(racks_, 1);
    grow(models_, 1);
    grow(nodes_, 1);
    // Nothing below can throw once capacity is reserved, so a failed add leaves no partial node.
    gpus_.insert(gpus_.end(), spec.gpus.begin(), spec.gpus.end());
    names_.push_back(spec.name);
    racks_.push_back(spec.rack);
    models_.emplace_back();
    nodes_.push_back(r);
    return idx;
  }

  // Sets (or clears, with nullptr) a node's measured load. Validated; throws and changes nothing.
  // Reservations made afterwards accumulate in the reading's assigned_*_since fields until the
  // next reading replaces it.
  void set_load(node_index n, const node_metrics* m) {
    check_node(n, "node");
    if (m != nullptr) {
      validate(*m, names_[n]);
      nodes_[n].load = *m;
      nodes_[n].has_load = true;
    } else {
      nodes_[n].has_load = false;
      nodes_[n].load = node_metrics{};
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

  // Fixed bytes of storage per node with `gpus` devices (see the class comment).
  [[nodiscard]] static constexpr std::size_t bytes_per_node(std::size_t gpus) noexcept {
    return sizeof(record) + gpus * sizeof(gpu_device) + 2 * sizeof(std::string) + sizeof(std::vector<model_count>);
  }
  [[nodiscard]] const node_state& resources(node_index n) const noexcept { return nodes_[n].res; }
  [[nodiscard]] std::span<const gpu_device> gpus(node_index n) const noexcept {
    return {gpus_.data() + nodes_[n].gpu_begin, static_cast<std::size_t>(nodes_[n].res.gpu_count)};
  }
  [[nodiscard]] std::string_view name(node_index n) const noexcept { return names_[n]; }
  [[nodiscard]] std::string_view rack(node_index n) const noexcept { return racks_[n]; }
  [[nodiscard]] const node_metrics* load(node_index n) const noexcept {
    return nodes_[n].has_load ? &nodes_[n].load : nullptr;
  }
  [[nodiscard]] int replicas_of(node_index n, const short_name& m) const noexcept {
    for (const auto& mc : models_[n]) {
      if (mc.model == m) return mc.replicas;
    }
    return 0;
  }
  [[nodiscard]] std::span<const model_count> model_types(node_index n) const noexcept { return models_[n]; }

  // Takes b's resources. GPU shares are never overcommitted: throws (and changes nothing) when a
  // device in b lacks the share; CPU, memory and GPU memory ceilings are the preflight's business.
  void reserve(const pod& p, const binding& b) {
    check_binding(b);
    auto devs = mutable_gpus(b.node);
    for_each_gpu(b.gpus, [&](int g) {
      if (devs[static_cast<std::size_t>(g)].milli_free < b.gpu_milli) {
        throw invalid_argument_error("binding.gpus", "GPU " + std::to_string(g) + " of node '" + names_[b.node] +
                                                         "' has less free share than " + std::to_string(b.gpu_milli));
      }
    });
    if (!p.model_type.empty()) {
      auto& ms = models_[b.node];
      auto it = std::find_if(ms.begin(), ms.end(), [&](const model_count& mc) { return mc.model == p.model_type; });
      if (it == ms.end()) {
        ms.push_back(model_count{p.model_type, 1});  // may allocate; before any change below
      } else {
        ++it->replicas;
      }
    }
    apply(b, +1);
  }

  // Gives back exactly what reserve(p, b) took.
  void release(const pod& p, const binding& b) {
    check_binding(b);
    auto devs = mutable_gpus(b.node);
    for_each_gpu(b.gpus, [&](int g) {
      if (devs[static_cast<std::size_t>(g)].milli_free + b.gpu_milli > gpu_milli_whole) {
        throw invalid_argument_error("binding.gpus", "GPU " + std::to_string(g) + " of node '" + names_[b.node] +
                                                         "' would have more than a whole GPU free");
      }
    });
    if (!p.model_type.empty()) {
      auto& ms = models_[b.node];
      auto it = std::find_if(ms.begin(), ms.end(), [&](const model_count& mc) { return mc.model == p.model_type; });
      if (it != ms.end() && --it->replicas == 0) ms.erase(it);
    }
    apply(b, -1);
  }

  friend bool operator==(const in_memory_cluster& a, const in_memory_cluster& b) {
    return a.nodes_ == b.nodes_ && a.gpus_ == b.gpus_ && a.names_ == b.names_ && a.racks_ == b.racks_ &&
           a.models_ == b.models_;
  }

 private:
  struct record {
    node_state res;
    std::uint32_t gpu_begin = 0;
    bool has_load = false;
    node_metrics load;
    friend bool operator==(const record&, const record&) = default;
  };

  // Reserves room for `extra` more elements with geometric growth (an exact reserve per node
  // would make building a cluster quadratic).
  template <class V>
  static void grow(V& v, std::size_t extra) {
    if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
  }

  void check_node(node_index n, const char* field) const {
    if (n >= nodes_.size()) throw invalid_argument_error(field, "node index " + std::to_string(n) + " out of range");
  }
  void check_binding(const binding& b) const {
    check_node(b.node, "binding.node");
    const int count = nodes_[b.node].res.gpu_count;
    if (count < 64 && (b.gpus >> count) != 0) {
      throw invalid_argument_error("binding.gpus", "names a GPU index the node does not have");
    }
    if (b.gpu_milli < 0 || b.gpu_milli > gpu_milli_whole) throw invalid_argument_error("binding.gpu_milli", "must be within 0..1000");
    if (b.cpu_milli < 0) throw invalid_argument_error("binding.cpu_milli", "must be >= 0");
    if (b.memory_mib < 0) throw invalid_argument_error("binding.memory_mib", "must be >= 0");
    if (b.gpu_mem_mib < 0) throw invalid_argument_error("binding.gpu_mem_mib", "must be >= 0");
  }
  std::span<gpu_device> mutable_gpus(node_index n) noexcept {
    return {gpus_.data() + nodes_[n].gpu_begin, static_cast<std::size_t>(nodes_[n].res.gpu_count)};
  }
  void apply(const binding& b, int sign) noexcept {
    auto& rec = nodes_[b.node];
    auto& r = rec.res;
    r.cpu_allocated += sign * b.cpu_milli;
    r.mem_allocated += sign * b.memory_mib;
    if (rec.has_load) {
      rec.load.assigned_cpu_since = std::max<milli>(0, rec.load.assigned_cpu_since + sign * b.cpu_milli);
      rec.load.assigned_mem_since = std::max<mib>(0, rec.load.assigned_mem_since + sign * b.memory_mib);
      rec.load.assigned_gpu_milli_since =
          std::max<milli>(0, rec.load.assigned_gpu_milli_since + sign * milli{b.gpu_milli} * b.gpu_count());
    }
    auto devs = mutable_gpus(b.node);
    for_each_gpu(b.gpus, [&](int g) {
      devs[static_cast<std::size_t>(g)].milli_free -= sign * b.gpu_milli;
      devs[static_cast<std::size_t>(g)].mem_free_mib -= sign * b.gpu_mem_mib;
    });
  }

  std::vector<record> nodes_;
  std::vector<gpu_device> gpus_;
  std::vector<std::string> names_;
  std::vector<std::string> racks_;
  std::vector<std::vector<model_count>> models_;
};

// The Cluster customisation points, found by ADL.
inline std::size_t node_count(const in_memory_cluster& c) noexcept { return c.size(); }
inline node_state node_resources(const in_memory_cluster& c, node_index n) noexcept { return c.resources(n); }
inline const gpu_device& node_gpu(const in_memory_cluster& c, node_index n, int g) noexcept {
  return c.gpus(n)[static_cast<std::size_t>(g)];
}
inline std::string_view node_name(const in_memory_cluster& c, node_index n) noexcept { return c.name(n); }
inline const node_metrics* node_load(const in_memory_cluster& c, node_index n) noexcept { return c.load(n); }
inline int model_replicas(const in_memory_cluster& c, node_index n, const short_name& m) noexcept {
  return c.replicas_of(n, m);
}
inline std::span<const model_count> node_model_types(const in_memory_cluster& c, node_index n) noexcept {
  return c.model_types(n);
}
inline void reserve(in_memory_cluster& c, const pod& p, const binding& b) { c.reserve(p, b); }
inline void release(in_memory_cluster& c, const pod& p, const binding& b) { c.release(p, b); }

static_assert(MutableCluster<in_memory_cluster>);
static_assert(MeasuredLoad<in_memory_cluster> && ServedModels<in_memory_cluster> && NamedNodes<in_memory_cluster>);

}  // namespace gpusched
