// The target workload of fragmentation-aware scheduling: the pod shapes that make up most of a
// workload, with their probabilities (the FGD paper's "typical pods").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/scoring/fragmentation.hpp"

namespace gpusched {

// One typical pod shape. The key is the authors' whole PodResource: CPU, per-GPU share, GPU count
// and the GPU type string (the '|'-joined allowed models, empty for any model).
struct typical_pod {
  milli cpu_milli = 0;
  std::int32_t gpu_milli = 0;
  std::int32_t num_gpu = 0;
  std::string gpu_type;            // e.g. "V100M16|V100M32"; empty: any model
  std::vector<short_name> models;  // gpu_type split on '|'
  std::size_t count = 0;           // pods of this shape in the source workload
  double probability = 0.0;        // share of the kept shapes, sums to 1
};

// typicalPodsConfig of the authors' experiments (scripts/generate_config_and_run.py):
// isInvolvedCpuPods true, podPopularityThreshold 95, podIncreaseStep 1.
struct typical_pod_options {
  double popularity_threshold_pct = 95.0;  // keep the most frequent shapes until they cover this % of pods
  int increase_step = 1;                   // shapes added per round
  bool include_cpu_pods = true;            // CPU-only pods are part of the workload
};

// '|'-joined model list, the key the authors use for a pod's GPU type.
inline std::string gpu_type_key(std::span<const short_name> models) {
  std::string s;
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (i) s += '|';
    s += models[i].view();
  }
  return s;
}

// IsNodeAccessibleToPodByType (pkg/utils/utils.go): no model list means any node with GPUs.
inline bool shape_accepts_model(std::span<const short_name> models, const short_name& node_model) noexcept {
  if (models.empty()) return true;
  if (node_model.empty()) return false;
  return std::find(models.begin(), models.end(), node_model) != models.end();
}

class typical_workload {
 public:
  typical_workload() = default;

  // Takes shapes as given; probabilities must be within 0..1 (throws invalid_argument_error naming
  // the shape otherwise) and are used as they are.
  explicit typical_workload(std::vector<typical_pod> pods) : pods_(std::move(pods)) {
    shapes_.reserve(pods_.size());
    for (std::size_t i = 0; i < pods_.size(); ++i) {
      const typical_pod& t = pods_[i];
      const std::string f = "typical_pods[" + std::to_string(i) + "].";
      if (!(t.probability >= 0.0 && t.probability <= 1.0))
        throw invalid_argument_error(f + "probability", "must be within 0..1");
      if (t.num_gpu < 0 || t.num_gpu > max_gpus_per_node)
        throw invalid_argument_error(f + "num_gpu", "must be within 0..64");
      if (t.gpu_milli < 0 || t.gpu_milli > gpu_milli_whole)
        throw invalid_argument_error(f + "gpu_milli", "must be within 0..1000");
      if ((t.num_gpu == 0) != (t.gpu_milli == 0))
        throw invalid_argument_error(f + "gpu_milli", "must be 0 exactly when num_gpu is 0");
      if (t.cpu_milli < 0) throw invalid_argument_error(f + "cpu_milli", "must be >= 0");
      shapes_.push_back(frag_shape{t.cpu_milli, t.gpu_milli, t.num_gpu, t.probability});
    }
  }

  // GetTypicalPods (pkg/utils/frag.go): count pods per shape, sort by count (descending; ties by
  // descending cpu, gpu_milli, num_gpu, gpu_type as the authors' sort.Reverse does), add shapes
  // `increase_step` at a time until they cover popularity_threshold_pct of the pods, then
  // renormalise the kept shapes' shares to sum to 1.
  static typical_workload from_pods(std::span<const pod> pods, typical_pod_options o = {}) {
    if (!(o.popularity_threshold_pct > 0.0 && o.popularity_threshold_pct <= 100.0)) {
      throw invalid_argument_error("typical_pod_options.popularity_threshold_pct", "must be within (0, 100]");
    }
    if (o.increase_step < 1) throw invalid_argument_error("typical_pod_options.increase_step", "must be >= 1");
    using key = std::tuple<milli, std::int32_t, std::int32_t, std::string>;
    std::map<key, std::pair<std::size_t, const pod*>> counts;
    double total = 0.0;
    for (const pod& p : pods) {
      if (!o.include_cpu_pods && p.num_gpu == 0) continue;
      auto& e = counts[key{p.cpu_milli, p.gpu_milli, p.num_gpu, gpu_type_key(p.allowed_models)}];
      if (e.first++ == 0) e.second = &p;
      total += 1.0;
    }
    std::vector<typical_pod> list;
    list.reserve(counts.size());
    for (const auto& [k, v] : counts) {
      typical_pod t;
      std::tie(t.cpu_milli, t.gpu_milli, t.num_gpu, t.gpu_type) = k;
      t.models = v.second->allowed_models;
      t.count = v.first;
      list.push_back(std::move(t));
    }
    std::sort(list.begin(), list.end(), [](const typical_pod& a, const typical_pod& b) {
      return std::tie(b.count, b.cpu_milli, b.gpu_milli, b.num_gpu, b.gpu_type) <
             std::tie(a.count, a.cpu_milli, a.gpu_milli, a.num_gpu, a.gpu_type);
    });
    const double expected = o.popularity_threshold_pct * total / 100.0;
    std::size_t i = 0, kept = 0;
    double cum = 0.0;
    while (cum < expected) {
      kept += static_cast<std::size_t>(o.increase_step);
      for (; i < kept && i < list.size(); ++i) {
        cum += static_cast<double>(list[i].count);
        list[i].probability = static_cast<double>(list[i].count) / total;
      }
      if (i >= list.size()) break;
    }
    if (i < list.size()) {
      list.resize(i);
      for (auto& t : list) t.probability /= cum / total;
    }
    return typical_workload(std::move(list));
  }

  [[nodiscard]] std::span<const typical_pod> pods() const noexcept { return pods_; }
  [[nodiscard]] std::span<const frag_shape> shapes() const noexcept { return shapes_; }
  [[nodiscard]] std::size_t size() const noexcept { return pods_.size(); }

  // accessible[i] = whether shape i may use a node whose GPUs are of `node_model`.
  void accessible_for(const short_name& node_model, std::vector<std::uint8_t>& out) const {
    out.resize(pods_.size());
    for (std::size_t i = 0; i < pods_.size(); ++i) out[i] = shape_accepts_model(pods_[i].models, node_model) ? 1 : 0;
  }

 private:
  std::vector<typical_pod> pods_;
  std::vector<frag_shape> shapes_;
};

}  // namespace gpusched
