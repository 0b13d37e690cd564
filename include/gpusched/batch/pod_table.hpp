// pod_table: a structure-of-arrays copy of a batch of pending pods, resolved against a node_table
// (allowed GPU models and model types become bits of the table's dictionaries).
//
// Memory: 57 bytes per pod.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "gpusched/batch/node_table.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/scoring/formulas.hpp"

namespace gpusched::batch {

class pod_table {
 public:
  pod_table() = default;

  // Validates every pod (gpusched::validate) and its requests against the batch engines' exact
  // domain, and gives the pods' model types bits in `nodes` (so that placing them needs no new
  // bit). Throws invalid_argument_error naming the pod and field; then neither table changes.
  pod_table(std::span<const pod> pods, node_table& nodes) { assign(pods, nodes); }

  // The same, into this table: refilling a table of the same size allocates nothing (the per-pod
  // table path of schedule_one refills a one-pod table for every pod). On a throw nothing changes.
  void assign(std::span<const pod> pods, node_table& nodes) { assign_impl(pods, nodes, &nodes); }
  // The same over a node table that must not change (read by other threads at the same time): a
  // model type the table has no bit for is refused, invalid_argument_error naming the pod's
  // model_type, instead of given one.
  void assign(std::span<const pod> pods, const node_table& nodes) { assign_impl(pods, nodes, nullptr); }

  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(cpu_.size()); }
  // The pods the table was built from (the caller's; they must outlive the table where this is
  // read: the host forms of batch/host_forms.hpp call the plugins on them).
  [[nodiscard]] std::span<const pod> source() const noexcept { return source_; }

  [[nodiscard]] const column<std::int64_t>& cpu_milli() const noexcept { return cpu_; }
  [[nodiscard]] const column<std::int64_t>& memory_mib() const noexcept { return mem_; }
  [[nodiscard]] const column<std::int32_t>& num_gpu() const noexcept { return num_gpu_; }
  [[nodiscard]] const column<std::int32_t>& gpu_milli() const noexcept { return gpu_milli_; }
  [[nodiscard]] const column<std::int32_t>& gpu_mem_mib() const noexcept { return gpu_mem_; }
  // Bits of the node table's GPU models the pod accepts (all ones: any model).
  [[nodiscard]] const column<std::uint64_t>& allowed_gpu_models() const noexcept { return allowed_; }
  // The bit of the pod's model type in the node table's model types (0: none).
  [[nodiscard]] const column<std::uint64_t>& model_type_bit() const noexcept { return model_; }
  [[nodiscard]] const column<std::int32_t>& priority() const noexcept { return priority_; }
  [[nodiscard]] const column<std::uint8_t>& qos() const noexcept { return qos_; }
  // pod_tie_key(name): the pod's identity in tie-breaking.
  [[nodiscard]] const column<std::uint64_t>& tie_keys() const noexcept { return key_; }

  [[nodiscard]] qos_class qos_of(std::size_t i) const noexcept { return static_cast<qos_class>(qos_[static_cast<Eigen::Index>(i)]); }
  [[nodiscard]] std::int64_t gpu_milli_total(std::size_t i) const noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    return std::int64_t{num_gpu_[k]} * gpu_milli_[k];
  }

  // How many GPU models the node table knew when this table was built: the allowed-model bits
  // are only valid while that has not grown.
  [[nodiscard]] std::size_t gpu_models_seen() const noexcept { return gpu_models_seen_; }

  [[nodiscard]] std::size_t bytes() const noexcept { return size() * 57; }

 private:
  void assign_impl(std::span<const pod> pods, const node_table& nodes, node_table* interning) {
    for (const pod& p : pods) {
      validate(p);
      if (!p.scalars.empty()) {  // docs/adr/0015-resources-by-name.md: not in the pod table yet
        throw invalid_argument_error("pod '" + p.name + "'.scalars",
                                     "named resources are not supported by the batch engines; use the per-pod scheduler (schedule_one)");
      }
      if (p.cpu_milli > formula::reciprocal_domain_limit || p.memory_mib > formula::reciprocal_domain_limit) {
        throw invalid_argument_error("pod '" + p.name + "'." + (p.cpu_milli > formula::reciprocal_domain_limit ? "cpu_milli" : "memory_mib"),
                                     "must be within 0..2^40 for the batch engines");
      }
    }
    bool new_model = false;
    for (const pod& p : pods) {
      const bool unknown = !p.model_type.empty() && nodes.model_types().find(p.model_type) < 0;
      if (unknown && interning == nullptr) {
        throw invalid_argument_error("pod '" + p.name + "'.model_type",
                                     "'" + p.model_type.str() + "' has no bit in the node table, which may not change here");
      }
      new_model = new_model || unknown;
    }
    if (new_model) {  // all or nothing for the model-type dictionary
      name_bits probe = nodes.model_types();
      for (const pod& p : pods) {
        if (!p.model_type.empty()) probe.intern(p.model_type, "pod '" + p.name + "'.model_type");
      }
    }
    const auto n = static_cast<Eigen::Index>(pods.size());
    cpu_.resize(n);
    mem_.resize(n);
    num_gpu_.resize(n);
    gpu_milli_.resize(n);
    gpu_mem_.resize(n);
    allowed_.resize(n);
    model_.resize(n);
    priority_.resize(n);
    qos_.resize(n);
    key_.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const pod& p = pods[static_cast<std::size_t>(i)];
      cpu_[i] = p.cpu_milli;
      mem_[i] = p.memory_mib;
      num_gpu_[i] = p.num_gpu;
      gpu_milli_[i] = p.gpu_milli;
      gpu_mem_[i] = p.gpu_mem_mib;
      std::uint64_t allowed = ~std::uint64_t{0};
      if (!p.allowed_models.empty()) {
        allowed = 0;
        for (const auto& m : p.allowed_models) allowed |= nodes.gpu_models().bit_of(m);
      }
      allowed_[i] = allowed;
      const std::uint64_t known = p.model_type.empty() ? 0 : nodes.model_types().bit_of(p.model_type);
      model_[i] = p.model_type.empty() ? 0
                  : known != 0          ? known
                                        : interning->intern_model_type(p.model_type, "pod '" + p.name + "'.model_type");
      priority_[i] = p.priority;
      qos_[i] = static_cast<std::uint8_t>(p.qos);
      key_[i] = pod_tie_key(p.name);
    }
    gpu_models_seen_ = nodes.gpu_models().size();
    source_ = pods;
  }

  column<std::int64_t> cpu_, mem_;
  column<std::int32_t> num_gpu_, gpu_milli_, gpu_mem_;
  column<std::uint64_t> allowed_, model_;
  column<std::int32_t> priority_;
  column<std::uint8_t> qos_;
  column<std::uint64_t> key_;
  std::size_t gpu_models_seen_ = 0;
  std::span<const pod> source_;
};

}  // namespace gpusched::batch
