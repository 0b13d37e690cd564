// The service-time model of one inference batch:
//   t = t_gpu(model, b) * share_factor(share) * alpha(co-tenants) + t_cpu(model, b) * cpu_slowdown
// t_gpu: gpu-let's profiled solo duration scaled to the target GPU by a cited per-model factor;
// alpha: gpu-let's interference model (interference.hpp); cpu_slowdown: processor sharing on an
// over-committed node. Every parameter, its source and the assumptions: docs/serving.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/serving/interference.hpp"
#include "gpusched/sim/serving/profile_table.hpp"

namespace gpusched::sim::serving {

// How a partition share (0 < share <= 1 of the GPU) stretches a batch's solo duration.
enum class share_scaling {
  none,       // the share is only a reservation; a batch runs at full speed
  linear,     // strict time slicing: t / share
  amdahl_sm,  // only the SM-bound part slows down: t * ((1 - u_sm) + u_sm / share)   (gpusched's default)
};

// Per served model: which profile row to use, the factor to the target GPU, and host CPU work.
struct model_latency_params {
  std::string name;             // model name as in UTIL.CSV ("resnet50", "bert")
  double gpu_scale = 1.0;       // target-GPU duration = profiled duration * gpu_scale (cited in docs)
  double cpu_s_per_item = 0.0;  // host CPU time per request of a batch (pre/post-processing), seconds
};

using model_id = std::uint32_t;

// Host CPU contention: when the CPU demand on a node exceeds its capacity, processor sharing gives
// each runnable thread capacity/demand of a core, so CPU-bound work stretches by demand/capacity.
inline double cpu_contention_slowdown(double demand_milli, double capacity_milli) {
  if (!(capacity_milli > 0.0) || !(demand_milli > capacity_milli)) return 1.0;
  return demand_milli / capacity_milli;
}

class latency_model {
 public:
  // Throws invalid_argument_error naming the field of the first bad parameter.
  latency_model(const util_table& table, interference_constants constants, std::vector<model_latency_params> models,
                share_scaling scaling = share_scaling::amdahl_sm)
      : constants_(constants), scaling_(scaling) {
    for (std::size_t i = 0; i < models.size(); ++i) {
      const auto& p = models[i];
      const std::string f = "latency_model.models[" + std::to_string(i) + "].";
      const model_profile* prof = table.find(p.name);
      if (prof == nullptr)
        throw invalid_argument_error(f + "name", "model '" + p.name + "' is not in the profile table");
      if (!(p.gpu_scale > 0.0) || !std::isfinite(p.gpu_scale))
        throw invalid_argument_error(f + "gpu_scale", "must be > 0");
      if (!(p.cpu_s_per_item >= 0.0) || !std::isfinite(p.cpu_s_per_item)) {
        throw invalid_argument_error(f + "cpu_s_per_item", "must be >= 0");
      }
      for (std::size_t j = 0; j < i; ++j) {
        if (models[j].name == p.name) throw invalid_argument_error(f + "name", "model '" + p.name + "' listed twice");
      }
      entry e;
      e.params = p;
      e.min_batch = prof->min_batch();
      for (int b = prof->min_batch(); b <= prof->max_batch(); ++b) {
        util_point u = prof->at(b);
        u.duration_s *= p.gpu_scale;
        e.by_batch.push_back(u);
      }
      entries_.push_back(std::move(e));
    }
  }

  [[nodiscard]] std::size_t model_count() const noexcept { return entries_.size(); }
  [[nodiscard]] const interference_constants& constants() const noexcept { return constants_; }
  [[nodiscard]] share_scaling scaling() const noexcept { return scaling_; }

  // Throws invalid_argument_error(field, ...) when the model is unknown.
  [[nodiscard]] model_id id(std::string_view name, const std::string& field = "model") const {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].params.name == name) return static_cast<model_id>(i);
    }
    throw invalid_argument_error(field, "model '" + std::string(name) + "' has no latency parameters");
  }
  [[nodiscard]] const std::string& name(model_id m) const { return entries_.at(m).params.name; }
  [[nodiscard]] int min_batch(model_id m) const { return entries_.at(m).min_batch; }
  [[nodiscard]] int max_batch(model_id m) const {
    const auto& e = entries_.at(m);
    return e.min_batch + static_cast<int>(e.by_batch.size()) - 1;
  }

  // The (scaled) profile at batch b; b must be within min_batch..max_batch (checked by callers at
  // setup: the hot path does no range check beyond the vector's).
  [[nodiscard]] const util_point& point(model_id m, int batch) const noexcept {
    const auto& e = entries_[m];
    return e.by_batch[static_cast<std::size_t>(batch - e.min_batch)];
  }

  [[nodiscard]] double solo_gpu_seconds(model_id m, int batch) const noexcept { return point(m, batch).duration_s; }

  [[nodiscard]] double cpu_seconds(model_id m, int batch) const noexcept {
    return entries_[m].params.cpu_s_per_item * batch;
  }

  [[nodiscard]] double share_factor(model_id m, int batch, double share) const noexcept {
    switch (scaling_) {
      case share_scaling::none:
        return 1.0;
      case share_scaling::linear:
        return 1.0 / share;
      case share_scaling::amdahl_sm: {
        const double u = point(m, batch).sm;
        return (1.0 - u) + u / share;
      }
    }
    return 1.0;
  }

  // The pressure this tenant puts on its neighbours while it runs a batch of size `batch`.
  [[nodiscard]] tenant_util tenant(model_id m, int batch, double share) const noexcept {
    const auto& u = point(m, batch);
    return scaled_util(u.l2, u.dram, share);
  }

  [[nodiscard]] double slowdown(model_id m, int batch, double share,
                                std::span<const tenant_util> cotenants) const noexcept {
    return multi_tenant_slowdown(constants_, tenant(m, batch, share), cotenants);
  }

  // Duration of one batch: GPU part stretched by the partition and the busy co-tenants, CPU part by
  // node CPU contention (cpu_contention_slowdown).
  [[nodiscard]] double service_seconds(model_id m, int batch, double share, std::span<const tenant_util> cotenants,
                                       double cpu_slowdown = 1.0) const noexcept {
    return solo_gpu_seconds(m, batch) * share_factor(m, batch, share) * slowdown(m, batch, share, cotenants) +
           cpu_seconds(m, batch) * cpu_slowdown;
  }

 private:
  struct entry {
    model_latency_params params;
    int min_batch = 1;
    std::vector<util_point> by_batch;  // dense, min_batch..max_batch, durations already scaled
  };
  std::vector<entry> entries_;
  interference_constants constants_;
  share_scaling scaling_;
};

}  // namespace gpusched::sim::serving
