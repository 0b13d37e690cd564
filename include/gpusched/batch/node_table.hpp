// node_table: a structure-of-arrays copy of a cluster's nodes for the batch engines.
//
// Built once from any Cluster (through cluster_traits), then kept current one node at a time:
// apply(p, b) records a reservation the way in_memory_cluster::reserve does, refresh(c, n) re-reads
// node n from the host's cluster after the host changed it. Nothing is rebuilt after a placement.
//
// Memory: 97 bytes per node (CPU / memory capacity and allocation 32, GPU count 4, measured load
// 48 + 1, served model types 8, change stamp 4) plus 16 bytes per GPU slot (free share 4, free
// memory 4, model bit 8). Slots per node = the largest GPU count in the table; a node with fewer
// GPUs pads the rest (free share -1, which no request fits).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/scoring/formulas.hpp"

namespace gpusched::batch {

template <class T>
using column = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using slot_columns = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic>;  // (node, slot), column-major: slot-major

// Up to 64 distinct names, each given a bit (GPU models; served model types). Batch kernels test
// membership with one AND instead of comparing names.
class name_bits {
 public:
  static constexpr int capacity = 64;

  [[nodiscard]] int find(const short_name& s) const noexcept {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == s) return static_cast<int>(i);
    }
    return -1;
  }
  // The bit of s, adding s when new. Throws invalid_argument_error naming `field` (and changes
  // nothing) when the 65th distinct name would be added.
  std::uint64_t intern(const short_name& s, const std::string& field) {
    const int i = find(s);
    if (i >= 0) return std::uint64_t{1} << i;
    if (names_.size() >= static_cast<std::size_t>(capacity)) {
      throw invalid_argument_error(field, "the batch engines support at most 64 distinct names here; '" + s.str() +
                                              "' would be the 65th");
    }
    names_.push_back(s);
    return std::uint64_t{1} << (names_.size() - 1);
  }
  [[nodiscard]] std::uint64_t bit_of(const short_name& s) const noexcept {
    const int i = find(s);
    return i < 0 ? 0 : std::uint64_t{1} << i;
  }
  [[nodiscard]] const short_name& name(int i) const noexcept { return names_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }

 private:
  std::vector<short_name> names_;
};

class node_table {
 public:
  node_table() = default;

  // Reads every node of c. Throws invalid_argument_error naming the node and field when a value is
  // outside the batch engines' exact domain (formula::reciprocal_domain_limit) or when more than 64
  // GPU models or served model types appear.
  template <Cluster C>
  explicit node_table(const C& c) {
    const std::size_t n = num_nodes(c);
    int slots = 0;
    for (std::size_t i = 0; i < n; ++i) {
      slots = std::max(slots, traits_of<C>::node_resources(c, static_cast<node_index>(i)).gpu_count);
    }
    resize(n, slots);
    for (std::size_t i = 0; i < n; ++i) {
      const auto idx = static_cast<node_index>(i);
      store(idx, read(c, idx));
    }
  }

  // Re-reads node n from c (after the host reserved, released or measured on it). Throws, and
  // changes nothing, on the errors the constructor reports.
  template <Cluster C>
  void refresh(const C& c, node_index n) {
    check_node(n, "node_table.refresh");
    row r = read(c, n);
    if (r.gpu_count > slots_) grow_slots(r.gpu_count);
    store(n, r);
  }

  // Records that p was reserved as b: the same bookkeeping as in_memory_cluster::reserve (CPU and
  // memory allocation, each device's share and memory, the pod's model type, and the
  // assigned-since-reading amounts of a measured node). Throws, and changes nothing, when b names a
  // node or device that does not exist or a device without the share.
  void apply(const pod& p, const binding& b) {
    check_node(b.node, "binding.node");
    const int count = gpu_count_[b.node];
    if (count < 64 && (b.gpus >> count) != 0) throw invalid_argument_error("binding.gpus", "names a GPU index the node does not have");
    for_each_gpu(b.gpus, [&](int g) {
      if (milli_free_(b.node, g) < b.gpu_milli) {
        throw invalid_argument_error("binding.gpus", "GPU " + std::to_string(g) + " of node #" + std::to_string(b.node) +
                                                         " has less free share than " + std::to_string(b.gpu_milli));
      }
    });
    std::uint64_t model = p.model_type.empty() ? 0 : models_.bit_of(p.model_type);
    if (!p.model_type.empty() && model == 0) model = models_.intern(p.model_type, "pod '" + p.name + "'.model_type");
    check_domain(b.node, cpu_allocated_[b.node] + b.cpu_milli, "cpu_allocated");
    check_domain(b.node, mem_allocated_[b.node] + b.memory_mib, "mem_allocated");
    cpu_allocated_[b.node] += b.cpu_milli;
    mem_allocated_[b.node] += b.memory_mib;
    model_mask_[b.node] |= model;
    if (has_load_[b.node] != 0) {
      node_metrics& m = load_[b.node];
      m.assigned_cpu_since += b.cpu_milli;
      m.assigned_mem_since += b.memory_mib;
      m.assigned_gpu_milli_since += milli{b.gpu_milli} * b.gpu_count();
    }
    for_each_gpu(b.gpus, [&](int g) {
      milli_free_(b.node, g) -= b.gpu_milli;
      mem_free_(b.node, g) -= b.gpu_mem_mib;
    });
    touch(b.node);
  }

  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(cpu_capacity_.size()); }
  [[nodiscard]] int gpu_slots() const noexcept { return slots_; }

  // Columns (index = node). Read-only: change the table through apply() and refresh().
  [[nodiscard]] const column<std::int64_t>& cpu_capacity() const noexcept { return cpu_capacity_; }
  [[nodiscard]] const column<std::int64_t>& cpu_allocated() const noexcept { return cpu_allocated_; }
  [[nodiscard]] const column<std::int64_t>& mem_capacity() const noexcept { return mem_capacity_; }
  [[nodiscard]] const column<std::int64_t>& mem_allocated() const noexcept { return mem_allocated_; }
  [[nodiscard]] const column<std::int32_t>& gpu_count() const noexcept { return gpu_count_; }
  [[nodiscard]] const column<std::uint64_t>& model_mask() const noexcept { return model_mask_; }
  [[nodiscard]] const column<std::uint32_t>& stamps() const noexcept { return stamp_; }
  // Devices: (node, slot) with slot < gpu_slots(); slot-major, so slot g of all nodes is contiguous.
  [[nodiscard]] const slot_columns<std::int32_t>& milli_free() const noexcept { return milli_free_; }
  [[nodiscard]] const slot_columns<std::int32_t>& mem_free() const noexcept { return mem_free_; }
  [[nodiscard]] const slot_columns<std::uint64_t>& model_bit() const noexcept { return model_bit_; }
  // GPU milli reserved on node n: sum over its devices of 1000 - free share.
  [[nodiscard]] std::int64_t gpu_milli_allocated(node_index n) const noexcept {
    std::int64_t used = 0;
    for (int g = 0; g < gpu_count_[n]; ++g) used += gpu_milli_whole - milli_free_(n, g);
    return used;
  }
  // Measured load: nullptr where the node reports none.
  [[nodiscard]] const node_metrics* load(node_index n) const noexcept { return has_load_[n] != 0 ? &load_[n] : nullptr; }

  [[nodiscard]] const name_bits& gpu_models() const noexcept { return gpu_models_; }
  [[nodiscard]] const name_bits& model_types() const noexcept { return models_; }
  // Gives a served model type a bit without any node serving it yet (pod tables do this for their
  // pods' model types, so that placements never need a new bit).
  std::uint64_t intern_model_type(const short_name& m, const std::string& field) { return models_.intern(m, field); }

  // Increases with every change; stamps()[n] is the revision of node n's last change, so an engine
  // that remembers the revision it last read can find the nodes changed since.
  [[nodiscard]] std::uint32_t revision() const noexcept { return revision_; }

  // Whether p is the data of one of the table's own columns (engines count their memory without them).
  [[nodiscard]] bool owns(const void* p) const noexcept {
    const void* own[] = {cpu_capacity().data(), cpu_allocated().data(), mem_capacity().data(), mem_allocated().data(),
                         gpu_count().data(),    model_mask().data(),    milli_free().data(),   mem_free().data(),
                         model_bit().data()};
    for (const void* o : own) {
      if (o == p) return true;
    }
    return false;
  }
  // Memory held by the table, for the documentation's claim (bytes per node and per GPU slot).
  [[nodiscard]] std::size_t bytes() const noexcept {
    const std::size_t n = size();
    return n * (4 * sizeof(std::int64_t) + sizeof(std::int32_t) + sizeof(node_metrics) + 1 + sizeof(std::uint64_t) +
                sizeof(std::uint32_t)) +
           n * static_cast<std::size_t>(slots_) * (2 * sizeof(std::int32_t) + sizeof(std::uint64_t));
  }

 private:
  struct row {
    node_state res;
    std::array<std::int32_t, max_gpus_per_node> milli{};
    std::array<std::int32_t, max_gpus_per_node> mem{};
    std::array<std::uint64_t, max_gpus_per_node> model{};
    int gpu_count = 0;
    bool has_load = false;
    node_metrics load;
    std::uint64_t models = 0;
  };

  template <Cluster C>
  row read(const C& c, node_index n) {
    row r;
    r.res = traits_of<C>::node_resources(c, n);
    r.gpu_count = r.res.gpu_count;
    if (r.gpu_count < 0 || r.gpu_count > max_gpus_per_node) {
      throw invalid_argument_error(where(c, n) + ".gpu_count", "must be within 0..64");
    }
    check_domain(c, n, r.res.cpu_capacity, "cpu_capacity");
    check_domain(c, n, r.res.cpu_allocated, "cpu_allocated");
    check_domain(c, n, r.res.mem_capacity, "mem_capacity");
    check_domain(c, n, r.res.mem_allocated, "mem_allocated");
    if (named_resources_of(c, n) != nullptr) {  // docs/adr/0015-resources-by-name.md: not in the node table yet
      throw invalid_argument_error(where(c, n) + ".pods",
                                   "a node with a pod limit or named resources (scalars) is not supported by the batch engines; "
                                   "use the per-pod scheduler (schedule_one)");
    }
    // Names are interned only once the whole row is known to be valid, so a throw changes nothing.
    std::array<short_name, max_gpus_per_node> gpu_names;
    for (int g = 0; g < r.gpu_count; ++g) {
      const gpu_device d = traits_of<C>::node_gpu(c, n, g);
      r.milli[static_cast<std::size_t>(g)] = d.milli_free;
      r.mem[static_cast<std::size_t>(g)] = d.mem_free_mib;
      gpu_names[static_cast<std::size_t>(g)] = d.model;
    }
    if constexpr (MeasuredLoad<C>) {
      if (const node_metrics* m = traits_of<C>::node_load(c, n)) {
        r.has_load = true;
        r.load = *m;
        check_domain(c, n, m->assigned_cpu_since, "metrics.assigned_cpu_since");
        check_domain(c, n, m->assigned_mem_since, "metrics.assigned_mem_since");
        check_domain(c, n, m->assigned_gpu_milli_since, "metrics.assigned_gpu_milli_since");
      }
    }
    std::array<short_name, name_bits::capacity> served{};
    std::size_t served_count = 0;
    if constexpr (ServedModels<C>) {
      for (const auto& mc : traits_of<C>::node_model_types(c, n)) {
        if (mc.replicas <= 0) continue;
        if (served_count == served.size()) {
          throw invalid_argument_error(where(c, n) + ".model_types", "more than 64 served model types on one node");
        }
        served[served_count++] = mc.model;
      }
    }
    // (The field names are only spelt out on an error: refresh runs after every reservation of a
    // bound_cluster observed by node_table_observer and must not allocate.)
    if (!has_room(gpu_models_, std::span<const short_name>(gpu_names.data(), static_cast<std::size_t>(r.gpu_count)))) {
      throw invalid_argument_error(where(c, n) + ".gpus.model", "the batch engines support at most 64 distinct names here");
    }
    if (!has_room(models_, std::span<const short_name>(served.data(), served_count))) {
      throw invalid_argument_error(where(c, n) + ".model_types", "the batch engines support at most 64 distinct names here");
    }
    for (int g = 0; g < r.gpu_count; ++g) {
      const short_name& m = gpu_names[static_cast<std::size_t>(g)];
      const std::uint64_t bit = gpu_models_.bit_of(m);
      r.model[static_cast<std::size_t>(g)] = bit != 0 ? bit : gpu_models_.intern(m, "gpus.model");
    }
    for (std::size_t i = 0; i < served_count; ++i) {
      const std::uint64_t bit = models_.bit_of(served[i]);
      r.models |= bit != 0 ? bit : models_.intern(served[i], "model_types");
    }
    return r;
  }

  // Whether every name in `names` fits into `dict` (64 bits at most).
  static bool has_room(const name_bits& dict, std::span<const short_name> names) noexcept {
    std::size_t added = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (dict.find(names[i]) >= 0) continue;
      bool seen = false;
      for (std::size_t j = 0; j < i; ++j) seen = seen || names[j] == names[i];
      added += seen ? 0 : 1;
    }
    return dict.size() + added <= static_cast<std::size_t>(name_bits::capacity);
  }

  void store(node_index n, const row& r) noexcept {
    cpu_capacity_[n] = r.res.cpu_capacity;
    cpu_allocated_[n] = r.res.cpu_allocated;
    mem_capacity_[n] = r.res.mem_capacity;
    mem_allocated_[n] = r.res.mem_allocated;
    gpu_count_[n] = r.gpu_count;
    for (int g = 0; g < slots_; ++g) {
      const bool real = g < r.gpu_count;
      milli_free_(n, g) = real ? r.milli[static_cast<std::size_t>(g)] : -1;
      mem_free_(n, g) = real ? r.mem[static_cast<std::size_t>(g)] : -1;
      model_bit_(n, g) = real ? r.model[static_cast<std::size_t>(g)] : 0;
    }
    has_load_[n] = r.has_load ? 1 : 0;
    load_[n] = r.load;
    model_mask_[n] = r.models;
    touch(n);
  }

  void resize(std::size_t n, int slots) {
    const auto rows = static_cast<Eigen::Index>(n);
    cpu_capacity_.resize(rows);
    cpu_allocated_.resize(rows);
    mem_capacity_.resize(rows);
    mem_allocated_.resize(rows);
    gpu_count_.resize(rows);
    model_mask_.resize(rows);
    stamp_.setZero(rows);
    has_load_.assign(n, 0);
    load_.assign(n, node_metrics{});
    slots_ = slots;
    milli_free_.resize(rows, slots);
    mem_free_.resize(rows, slots);
    model_bit_.resize(rows, slots);
  }

  void grow_slots(int slots) {
    const Eigen::Index rows = static_cast<Eigen::Index>(size());
    slot_columns<std::int32_t> milli = slot_columns<std::int32_t>::Constant(rows, slots, -1);
    slot_columns<std::int32_t> mem = slot_columns<std::int32_t>::Constant(rows, slots, -1);
    slot_columns<std::uint64_t> model = slot_columns<std::uint64_t>::Zero(rows, slots);
    milli.leftCols(slots_) = milli_free_;
    mem.leftCols(slots_) = mem_free_;
    model.leftCols(slots_) = model_bit_;
    milli_free_.swap(milli);
    mem_free_.swap(mem);
    model_bit_.swap(model);
    slots_ = slots;
  }

  // Stamps are 32 bits (4 bytes per node). At the wrap, after 2^32 - 1 changes, every stamp restarts
  // at 0 and the revision at 1: an engine that read a later revision sees an earlier one and
  // prepares again (batch_scorer::sync), rather than missing the nodes changed after the wrap.
  void touch(node_index n) noexcept {
    if (++revision_ == 0) {
      stamp_.setZero();
      revision_ = 1;
    }
    stamp_[n] = revision_;
  }

  void check_node(node_index n, const char* field) const {
    if (n >= size()) throw invalid_argument_error(field, "node index " + std::to_string(n) + " out of range");
  }
  template <class C>
  static std::string where(const C& c, node_index n) {
    return "node '" + node_label(c, n) + "'";
  }
  template <class C>
  static void check_domain(const C& c, node_index n, std::int64_t v, const char* field) {
    if (v < 0 || v > formula::reciprocal_domain_limit) {
      throw invalid_argument_error(where(c, n) + "." + field,
                                   "must be within 0..2^40 for the batch engines, got " + std::to_string(v));
    }
  }
  static void check_domain(node_index n, std::int64_t v, const char* field) {
    if (v < 0 || v > formula::reciprocal_domain_limit) {
      throw invalid_argument_error("node #" + std::to_string(n) + "." + field,
                                   "would leave 0..2^40, the batch engines' exact domain");
    }
  }

  column<std::int64_t> cpu_capacity_, cpu_allocated_, mem_capacity_, mem_allocated_;
  column<std::int32_t> gpu_count_;
  column<std::uint64_t> model_mask_;
  column<std::uint32_t> stamp_;
  std::vector<std::uint8_t> has_load_;
  std::vector<node_metrics> load_;
  int slots_ = 0;
  slot_columns<std::int32_t> milli_free_, mem_free_;
  slot_columns<std::uint64_t> model_bit_;
  name_bits gpu_models_, models_;
  std::uint32_t revision_ = 0;
};

// node_table models Cluster (read-only), with measured load and served model types, so that the
// per-pod plugins, GPU selectors and schedule_one run on it unchanged. Served model types are kept
// as presence only: model_replicas reports 1 for a served type.
inline std::size_t node_count(const node_table& t) noexcept { return t.size(); }
inline node_state node_resources(const node_table& t, node_index n) noexcept {
  return node_state{t.cpu_capacity()[n], t.cpu_allocated()[n], t.mem_capacity()[n], t.mem_allocated()[n], t.gpu_count()[n]};
}
inline gpu_device node_gpu(const node_table& t, node_index n, int g) noexcept {
  const std::uint64_t bit = t.model_bit()(n, g);
  const std::int32_t mem = t.mem_free()(n, g);
  // The table keeps free memory only; total is reported as free (no foundation plugin reads it).
  return gpu_device{bit == 0 ? short_name() : t.gpu_models().name(std::countr_zero(bit)), t.milli_free()(n, g), mem, mem,
                    0, 0};
}
inline const node_metrics* node_load(const node_table& t, node_index n) noexcept { return t.load(n); }
inline int model_replicas(const node_table& t, node_index n, const short_name& m) noexcept {
  return (t.model_mask()[n] & t.model_types().bit_of(m)) != 0 ? 1 : 0;
}

struct served_model {
  short_name model;
  int replicas = 0;
};
// A small range over the model types node n serves (each with replicas 1).
class served_models_range {
 public:
  served_models_range(const name_bits& names, std::uint64_t mask) noexcept : names_(&names), mask_(mask) {}
  class iterator {
   public:
    iterator(const name_bits* names, std::uint64_t mask) noexcept : names_(names), mask_(mask) {}
    served_model operator*() const noexcept { return served_model{names_->name(std::countr_zero(mask_)), 1}; }
    iterator& operator++() noexcept {
      mask_ &= mask_ - 1;
      return *this;
    }
    bool operator!=(const iterator& o) const noexcept { return mask_ != o.mask_; }

   private:
    const name_bits* names_;
    std::uint64_t mask_;
  };
  [[nodiscard]] iterator begin() const noexcept { return {names_, mask_}; }
  [[nodiscard]] iterator end() const noexcept { return {names_, 0}; }

 private:
  const name_bits* names_;
  std::uint64_t mask_;
};
inline served_models_range node_model_types(const node_table& t, node_index n) noexcept {
  return served_models_range(t.model_types(), t.model_mask()[n]);
}

static_assert(Cluster<node_table> && MeasuredLoad<node_table> && ServedModels<node_table>);

}  // namespace gpusched::batch
