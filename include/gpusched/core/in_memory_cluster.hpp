// in_memory_cluster: the reference MutableCluster used by the tests, the simulator and Python.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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

// Invariants, kept by every mutating operation (each validates first and either applies whole or
// throws invalid_argument_error naming the field and changes nothing):
//   - node names are non-empty and unique;
//   - every device's free share stays within 0..1000 and its free GPU memory at most mem_total
//     and representable; with a GPU memory ceiling set (set_gpu_memory_ceiling), at least
//     mem_total - mem_total * ceiling / 1000 (0 with a ceiling of 1000). Without one (the default)
//     GPU memory is, like CPU and memory, the preflight's business: FGD and FillAware choose
//     devices by share alone, as their papers do, and may leave a device's free memory negative;
//   - CPU and memory allocations stay within 0..max_quantity (above capacity only by an overcommit
//     policy's decision: CPU and memory ceilings are the preflight's business);
//   - served-model counts stay >= 1 (a model leaves the list when its last replica is released).
// It does not record which pod holds what: releasing a pod that was never reserved is refused only
// when it would break an invariant above. bound_cluster (core/bound_cluster.hpp) adds that
// bookkeeping and refuses a pod bound twice or released without being bound.
//
// Memory per node: bytes_per_node(gpus) of fixed storage (548 bytes with 8 GPUs on x86-64 /
// libstdc++: a 144-byte record, 32 bytes per GPU, 32-byte name and rack strings, a 24-byte model
// list, a 56-byte node_constraints, the 4-byte index of a named-resources record), plus heap for names and racks longer than 15 characters, 20
// bytes per served model type, 16 bytes per label and 24 per taint (their texts interned once per
// distinct text, process-wide), and one entry of the name index (about 64 bytes plus a copy of the
// name when over 15 characters).
class in_memory_cluster {
 public:
  in_memory_cluster() = default;

  // Adds a node (validated, its name unused; throws invalid_argument_error and changes nothing).
  // Returns its index.
  node_index add_node(const node_spec& spec) {
    validate(spec);
    if (const auto other = find(spec.name)) {
      throw invalid_argument_error("node '" + spec.name + "'.name", "is already node #" + std::to_string(*other));
    }
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
    grow(constraints_, 1);
    grow(named_index_, 1);
    grow(nodes_, 1);
    named_resources_state named;
    const bool has_named = spec.pods != no_pod_limit || !spec.scalars.empty();
    if (has_named) {
      named.allowed_pods = spec.pods;
      for (const named_quantity& q : spec.scalars) named.scalars.push_back({q.name, q.amount, 0});
      grow(named_, 1);
    }
    std::string name = spec.name;
    std::string rack = spec.rack;
    node_constraints constraints = spec.constraints;
    index_.emplace(spec.name, idx);  // the last step that may throw
    // Nothing below can throw once capacity is reserved, so a failed add leaves no partial node.
    gpus_.insert(gpus_.end(), spec.gpus.begin(), spec.gpus.end());
    names_.push_back(std::move(name));
    racks_.push_back(std::move(rack));
    models_.emplace_back();
    constraints_.push_back(std::move(constraints));
    named_index_.push_back(has_named ? static_cast<std::uint32_t>(named_.size()) : no_named);
    if (has_named) named_.push_back(std::move(named));
    nodes_.push_back(r);
    return idx;
  }

  // Sets (or clears, with nullptr) a node's measured load. Validated; throws and changes nothing.
  // Reservations made afterwards accumulate in the reading's assigned_*_since fields until the
  // next reading replaces it: each field is max(0, the reading's value + the net CPU / memory / GPU
  // share reserved since), so a release and the reservation that undoes it (a rolled-back
  // transaction) leave it exactly as it was.
  void set_load(node_index n, const node_metrics* m) {
    check_node(n, "node");
    record& r = nodes_[n];
    if (m != nullptr) {
      validate(*m, names_[n]);
      r.load = *m;
      r.has_load = true;
    } else {
      r.has_load = false;
      r.load = node_metrics{};
    }
    r.since_base = {r.load.assigned_cpu_since, r.load.assigned_mem_since, r.load.assigned_gpu_milli_since};
    r.since_net = {};
  }

  // Replaces a node's labels, taints and cordon (a host's node update). Validated; throws and
  // changes nothing.
  void set_constraints(node_index n, node_constraints k) {
    check_node(n, "node");
    validate(k, "node '" + names_[n] + "'.");
    constraints_[n] = std::move(k);
  }
  [[nodiscard]] const node_constraints& constraints(node_index n) const noexcept { return constraints_[n]; }

  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

  // The node of that name, if any.
  [[nodiscard]] std::optional<node_index> find(std::string_view name) const {
    const auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  // A hard ceiling on GPU memory: from now on a device may be reserved up to mem_total * permille /
  // 1000 (1000: never beyond its memory; an overcommit policy's largest gpu_memory_permille when it
  // allows GPU memory overcommit). no_gpu_memory_ceiling (0, the default) lifts it. Throws (and
  // changes nothing) when permille is neither 0 nor within 1000..10000, or below what a device
  // already holds.
  void set_gpu_memory_ceiling(std::int64_t permille) {
    if (permille != no_gpu_memory_ceiling && (permille < 1000 || permille > max_gpu_memory_ceiling)) {
      throw invalid_argument_error("gpu_memory_ceiling",
                                   "must be 0 (none) or within 1000..10000 permille, got " + std::to_string(permille));
    }
    if (permille == no_gpu_memory_ceiling) {
      gpu_memory_ceiling_ = permille;
      return;
    }
    for (node_index n = 0; n < nodes_.size(); ++n) {
      for (const gpu_device& d : gpus(n)) {
        if (std::int64_t{d.mem_total_mib} - d.mem_free_mib > std::int64_t{d.mem_total_mib} * permille / 1000) {
          throw invalid_argument_error("gpu_memory_ceiling", "a device of node '" + names_[n] + "' already holds more");
        }
      }
    }
    gpu_memory_ceiling_ = permille;
  }
  [[nodiscard]] std::int64_t gpu_memory_ceiling() const noexcept { return gpu_memory_ceiling_; }

  // Fixed bytes of storage per node with `gpus` devices (see the class comment).
  [[nodiscard]] static constexpr std::size_t bytes_per_node(std::size_t gpus) noexcept {
    return sizeof(record) + gpus * sizeof(gpu_device) + 2 * sizeof(std::string) + sizeof(std::vector<model_count>) +
           sizeof(node_constraints) + sizeof(std::uint32_t);
  }
  // What a node with a pod limit or named resources adds to bytes_per_node (docs/concepts.md).
  [[nodiscard]] static constexpr std::size_t named_bytes_per_node(std::size_t named) noexcept {
    return sizeof(named_resources_state) + named * sizeof(named_resources_state::scalar);
  }
  // The node's pod limit and named resources; nullptr when it has neither.
  [[nodiscard]] const named_resources_state* named(node_index n) const noexcept {
    if (named_.empty()) return nullptr;  // the common cluster: no per-node load on the filter's path
    const std::uint32_t i = named_index_[n];
    return i == no_named ? nullptr : &named_[i];
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

  // Takes b's resources for p. Throws (and changes nothing) for an invalid pod or binding, a device
  // in b that lacks the share or (when a GPU memory ceiling is set) the memory, or an allocation
  // that would pass max_quantity; CPU and memory ceilings are the preflight's business. Allocates
  // only when p brings a model type the node does not serve yet.
  void reserve(const pod& p, const binding& b) {
    validate(p);
    check_binding(b);
    const node_state& r = nodes_[b.node].res;
    if (b.cpu_milli > max_quantity - r.cpu_allocated) refuse_total(b, "cpu_milli", "allocated CPU");
    if (b.memory_mib > max_quantity - r.mem_allocated) refuse_total(b, "memory_mib", "allocated memory");
    auto devs = mutable_gpus(b.node);
    for_each_gpu(b.gpus, [&](int g) {
      const gpu_device& d = devs[static_cast<std::size_t>(g)];
      if (d.milli_free < b.gpu_milli) refuse_gpu(b, g, "gpus", "has less free share than " + std::to_string(b.gpu_milli));
      const std::int64_t used = std::int64_t{d.mem_total_mib} - d.mem_free_mib;
      if (gpu_memory_ceiling_ != no_gpu_memory_ceiling &&
          used + b.gpu_mem_mib > std::int64_t{d.mem_total_mib} * gpu_memory_ceiling_ / 1000) {
        refuse_gpu(b, g, "gpu_mem_mib",
                   "has " + std::to_string(d.mem_free_mib) + " MiB free, less than " + std::to_string(b.gpu_mem_mib) +
                       (gpu_memory_ceiling_ == 1000 ? std::string() : " within the GPU memory ceiling"));
      }
      if (std::int64_t{d.mem_free_mib} - b.gpu_mem_mib < std::numeric_limits<std::int32_t>::min()) {
        refuse_gpu(b, g, "gpu_mem_mib", "would have its free memory below the int32 range");
      }
    });
    named_resources_state* named = prepare_named(p, b.node);  // may allocate (a pod with named resources only)
    if (!p.model_type.empty()) {
      auto& ms = models_[b.node];
      auto it = std::find_if(ms.begin(), ms.end(), [&](const model_count& mc) { return mc.model == p.model_type; });
      if (it == ms.end()) {
        ms.push_back(model_count{p.model_type, 1});  // may allocate; the last step that may throw
      } else {
        ++it->replicas;
      }
    }
    if (named != nullptr) named->count(p, +1);
    apply(b, +1);
  }

  // Gives back exactly what reserve(p, b) took. Throws (and changes nothing) for an invalid pod or
  // binding, or when giving b back would leave a negative allocation, a device with more than a
  // whole GPU or more than its memory free, or a served-model count below zero: b was not reserved.
  void release(const pod& p, const binding& b) {
    validate(p);
    check_binding(b);
    const node_state& r = nodes_[b.node].res;
    if (b.cpu_milli > r.cpu_allocated) refuse_release(b, "cpu_milli", "CPU", r.cpu_allocated);
    if (b.memory_mib > r.mem_allocated) refuse_release(b, "memory_mib", "memory", r.mem_allocated);
    auto devs = mutable_gpus(b.node);
    for_each_gpu(b.gpus, [&](int g) {
      const gpu_device& d = devs[static_cast<std::size_t>(g)];
      if (d.milli_free + b.gpu_milli > gpu_milli_whole) refuse_gpu(b, g, "gpus", "would have more than a whole GPU free");
      if (std::int64_t{d.mem_free_mib} + b.gpu_mem_mib > d.mem_total_mib) {
        refuse_gpu(b, g, "gpu_mem_mib", "would have more than its " + std::to_string(d.mem_total_mib) + " MiB free");
      }
    });
    named_resources_state* named = named_index_[b.node] == no_named ? nullptr : &named_[named_index_[b.node]];
    if (named != nullptr) check_named_release(*named, p, b);
    if (!p.model_type.empty()) {
      auto& ms = models_[b.node];
      auto it = std::find_if(ms.begin(), ms.end(), [&](const model_count& mc) { return mc.model == p.model_type; });
      if (it == ms.end()) {
        throw invalid_argument_error("pod '" + p.name + "'.model_type", "node '" + names_[b.node] + "' serves no replica of '" +
                                                                          p.model_type.str() + "' to release");
      }
      if (--it->replicas == 0) ms.erase(it);  // erase does not throw for a trivially copyable element
    }
    if (named != nullptr) named->count(p, -1);
    apply(b, -1);
  }

  // The name index is derived from names_, so it takes no part.
  friend bool operator==(const in_memory_cluster& a, const in_memory_cluster& b) {
    return a.nodes_ == b.nodes_ && a.gpus_ == b.gpus_ && a.names_ == b.names_ && a.racks_ == b.racks_ &&
           a.models_ == b.models_ && a.constraints_ == b.constraints_ && a.named_index_ == b.named_index_ &&
           a.named_ == b.named_ && a.gpu_memory_ceiling_ == b.gpu_memory_ceiling_;
  }

  static constexpr std::int64_t no_gpu_memory_ceiling = 0;
  static constexpr std::int64_t max_gpu_memory_ceiling = 10000;  // as overcommit's max_overcommit_permille

 private:
  // Heterogeneous lookup: find(std::string_view) without building a std::string.
  struct name_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct record {
    node_state res;
    std::uint32_t gpu_begin = 0;
    bool has_load = false;
    node_metrics load;
    std::array<std::int64_t, 3> since_base{};  // the reading's assigned CPU, memory, GPU share since
    std::array<std::int64_t, 3> since_net{};   // net reservations after the reading (within +-2^50)
    friend bool operator==(const record&, const record&) = default;
  };

  // Reserves room for `extra` more elements with geometric growth (an exact reserve per node
  // would make building a cluster quadratic).
  template <class V>
  static void grow(V& v, std::size_t extra) {
    if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
  }

  static constexpr std::uint32_t no_named = 0xFFFFFFFFu;

  // The node's named-resource record, made (with a zero-allocatable slot per named resource the pod
  // asks for and the node lacks, as Kubernetes' Requested.ScalarResources) when the pod needs one;
  // nullptr when neither the node nor the pod has any. Allocates only for a pod with named resources.
  named_resources_state* prepare_named(const pod& p, node_index n) {
    if (named_index_[n] == no_named) {
      if (p.scalars.empty()) return nullptr;
      grow(named_, 1);
      named_index_[n] = static_cast<std::uint32_t>(named_.size());
      named_.emplace_back();
    }
    named_resources_state& s = named_[named_index_[n]];
    for (const named_quantity& q : p.scalars) {
      const auto* slot = s.find(q.name);
      if (slot == nullptr) {
        s.scalars.push_back({q.name, 0, 0});
      } else if (q.amount > max_quantity - slot->requested) {
        throw invalid_argument_error("pod '" + p.name + "'.scalars",
                                     "would take node '" + names_[n] + "''s requested " + std::string(q.name.str()) + " beyond 2^50");
      }
    }
    return &s;
  }
  void check_named_release(const named_resources_state& s, const pod& p, const binding& b) const {
    if (s.allowed_pods != no_pod_limit && s.pod_count == 0) {
      throw invalid_argument_error("binding.node", "node '" + names_[b.node] + "' has no pod to release: it was not reserved");
    }
    for (const named_quantity& q : p.scalars) {
      const auto* slot = s.find(q.name);
      if (slot == nullptr || slot->requested < q.amount) {
        throw invalid_argument_error("pod '" + p.name + "'.scalars", "gives back more " + std::string(q.name.str()) + " than node '" +
                                                                       names_[b.node] + "' has requested: it was not reserved");
      }
    }
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
    if (b.cpu_milli < 0 || b.cpu_milli > max_quantity) throw invalid_argument_error("binding.cpu_milli", "must be within 0..2^50");
    if (b.memory_mib < 0 || b.memory_mib > max_quantity) throw invalid_argument_error("binding.memory_mib", "must be within 0..2^50");
    if (b.gpu_mem_mib < 0) throw invalid_argument_error("binding.gpu_mem_mib", "must be >= 0");
  }
  [[noreturn]] void refuse_gpu(const binding& b, int g, const char* field, const std::string& why) const {
    throw invalid_argument_error(std::string("binding.") + field,
                                 "GPU " + std::to_string(g) + " of node '" + names_[b.node] + "' " + why);
  }
  [[noreturn]] void refuse_total(const binding& b, const char* field, const char* what) const {
    throw invalid_argument_error(std::string("binding.") + field,
                                 std::string("would take node '") + names_[b.node] + "''s " + what + " beyond 2^50");
  }
  [[noreturn]] void refuse_release(const binding& b, const char* field, const char* what, std::int64_t allocated) const {
    throw invalid_argument_error(std::string("binding.") + field, std::string("gives back more ") + what + " than node '" +
                                                                     names_[b.node] + "' has allocated (" +
                                                                     std::to_string(allocated) + "): it was not reserved");
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
      rec.since_net[0] += sign * b.cpu_milli;
      rec.since_net[1] += sign * b.memory_mib;
      rec.since_net[2] += sign * milli{b.gpu_milli} * b.gpu_count();
      rec.load.assigned_cpu_since = std::max<milli>(0, rec.since_base[0] + rec.since_net[0]);
      rec.load.assigned_mem_since = std::max<mib>(0, rec.since_base[1] + rec.since_net[1]);
      rec.load.assigned_gpu_milli_since = std::max<milli>(0, rec.since_base[2] + rec.since_net[2]);
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
  std::vector<node_constraints> constraints_;
  std::vector<std::uint32_t> named_index_;      // per node: index into named_, or no_named
  std::vector<named_resources_state> named_;   // nodes with a pod limit or named resources only
  std::unordered_map<std::string, node_index, name_hash, std::equal_to<>> index_;
  std::int64_t gpu_memory_ceiling_ = no_gpu_memory_ceiling;
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
inline std::span<const label> node_labels(const in_memory_cluster& c, node_index n) noexcept {
  return c.constraints(n).labels;
}
inline std::span<const node_taint> node_taints(const in_memory_cluster& c, node_index n) noexcept {
  return c.constraints(n).taints;
}
inline bool node_unschedulable(const in_memory_cluster& c, node_index n) noexcept { return c.constraints(n).unschedulable; }
inline const named_resources_state* node_named_resources(const in_memory_cluster& c, node_index n) noexcept { return c.named(n); }
inline void reserve(in_memory_cluster& c, const pod& p, const binding& b) { c.reserve(p, b); }
inline void release(in_memory_cluster& c, const pod& p, const binding& b) { c.release(p, b); }

static_assert(MutableCluster<in_memory_cluster>);
static_assert(MeasuredLoad<in_memory_cluster> && ServedModels<in_memory_cluster> && NamedNodes<in_memory_cluster>);
static_assert(LabelledNodes<in_memory_cluster> && TaintedNodes<in_memory_cluster> && CordonableNodes<in_memory_cluster>);
static_assert(NamedResources<in_memory_cluster>);

}  // namespace gpusched
