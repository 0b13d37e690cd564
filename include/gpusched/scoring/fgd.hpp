// FGD: fragmentation gradient descent (Weng et al., "Beware of Fragmentation: Scheduling
// GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23).
//
// A node's score is how little placing the pod there grows the node's expected fragmentation over
// the workload's typical pod shapes (gpusched/scoring/fragmentation.hpp): int(100 * sigmoid((F_before
// - F_after) / 1000)), as the authors' simulator computes it (hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/fgd_score.go, calculateGpuShareFragExtendScore). A GPU-share pod is tried on
// every device that fits and the node scores its best device; FGD then places the pod on the first
// device reaching that best score. Other pods take the devices NodeResource.Sub would (the fitting
// devices with the least free share, lowest index first), i.e. the lowest-index free GPUs.
//
// fgd_scorer models Scorer (score) and GpuSelector (select), so one object serves a static profile
// as its score plugin and as its device policy:
//   auto fgd = gpusched::fgd_scorer(gpusched::typical_workload::from_pods(pods));
//   auto prof = gpusched::make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{fgd, 1}), fgd);
//
// Speed: scores are cached per (pod shape, node) and a node's F_n is cached; a node's entry is
// recomputed only when its CPU or device state differs from the one cached (checked on every call,
// so the cache is always exact; on a NodeVersioned cluster, schedule/node_versions.hpp, a node whose
// stamp has not moved since it was last checked is not re-read). Memory: 40 bytes + 4 bytes per GPU per node, plus 12 bytes per
// cached (pod shape, node) pair, at most `fgd_options::max_cached_scores` pairs (least recently used
// shapes are evicted). The cache makes a scorer object unsafe to share between threads: copy it
// (a copy starts with an empty cache).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/schedule/node_versions.hpp"
#include "gpusched/scoring/fragmentation.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "gpusched/scoring/typical_pods.hpp"

namespace gpusched {

// The result of evaluating one pod on one node: its score and the devices FGD would give it.
struct fgd_pick {
  std::int64_t score = 0;
  gpu_set gpus = 0;
  double frag_after = 0.0;
  bool fits = false;
};

// FGD's evaluation of a pod (cpu, per-GPU share, GPU count) on a node given as plain arrays:
// free_milli[g] per device, cpu_left, device_ok (devices of a model the pod accepts), the typical
// shapes with their accessibility for this node's model, and the node's current F_n. `fine`
// selects fgd_fine_score over the authors' truncated integer score.
GPUSCHED_HD fgd_pick fgd_evaluate(const std::int32_t* free_milli, int gpus, milli cpu_left, gpu_set device_ok,
                                  milli pod_cpu, std::int32_t pod_milli, std::int32_t pod_num, const frag_shape* shapes,
                                  const std::uint8_t* accessible, int count, double frag_before, bool fine) noexcept {
  fgd_pick best;
  std::int32_t tmp[max_gpus_per_node];
  for (int g = 0; g < gpus; ++g) tmp[g] = free_milli[g];
  const milli cpu_after = cpu_left - pod_cpu;
  if (pod_num == 1 && pod_milli < gpu_milli_whole) {
    // fgd_score.go: every device with enough share; the node takes the best, the first device wins ties.
    for (int i = 0; i < gpus; ++i) {
      if (((device_ok >> i) & 1U) == 0 || free_milli[i] < pod_milli) continue;
      if (same_free_as_earlier(free_milli, device_ok, i)) continue;
      tmp[i] = free_milli[i] - pod_milli;
      const double after = node_fragmentation(tmp, gpus, cpu_after, shapes, accessible, count);
      tmp[i] = free_milli[i];
      const std::int64_t s = fine ? fgd_fine_score(frag_before, after) : fgd_paper_score(frag_before, after);
      if (!best.fits || s > best.score) {
        best.fits = true;
        best.score = s;
        best.gpus = gpu_set{1} << i;
        best.frag_after = after;
      }
    }
    return best;
  }
  // resource.go NodeResource.Sub: devices sorted by free share ascending (stable), each taken
  // when it has the share, until num_gpu are taken.
  gpu_set taken = 0;
  for (std::int32_t k = 0; k < pod_num; ++k) {
    const int pick = sub_next_device(free_milli, gpus, device_ok, taken, pod_milli);
    if (pick < 0) return best;  // does not fit
    taken |= gpu_set{1} << pick;
    tmp[pick] -= pod_milli;
  }
  best.frag_after = node_fragmentation(tmp, gpus, cpu_after, shapes, accessible, count);
  best.score = fine ? fgd_fine_score(frag_before, best.frag_after) : fgd_paper_score(frag_before, best.frag_after);
  best.gpus = taken;
  best.fits = true;
  return best;
}

struct fgd_options {
  bool fine_score = false;  // false: the authors' int 0..100; true: micro-points (fgd_fine_score)
  std::size_t max_cached_scores = std::size_t{1} << 22;  // (pod shape, node) pairs kept, 12 bytes each
};

namespace detail {

// A node read from a Cluster into plain arrays.
struct node_view {
  milli cpu_left = 0;
  int gpus = 0;
  short_name model;  // the model of device 0: a node has one GPU type, as in the authors' model
  std::array<std::int32_t, max_gpus_per_node> free{};
};

template <Cluster C>
void read_node(const C& c, node_index n, node_view& v) {
  const node_state s = traits_of<C>::node_resources(c, n);
  v.cpu_left = s.cpu_capacity - s.cpu_allocated;
  v.gpus = std::min(s.gpu_count, max_gpus_per_node);
  for (int g = 0; g < v.gpus; ++g) v.free[static_cast<std::size_t>(g)] = traits_of<C>::node_gpu(c, n, g).milli_free;
  v.model = v.gpus > 0 ? short_name(traits_of<C>::node_gpu(c, n, 0).model) : short_name{};
}

template <Cluster C>
gpu_set allowed_devices(const C& c, const pod& p, node_index n, int gpus) {
  if (p.allowed_models.empty()) return gpus >= 64 ? ~gpu_set{0} : (gpu_set{1} << gpus) - 1;
  gpu_set m = 0;
  for (int g = 0; g < gpus; ++g) {
    if (p.model_allowed(traits_of<C>::node_gpu(c, n, g).model)) m |= gpu_set{1} << g;
  }
  return m;
}

}  // namespace detail

class fgd_scorer {
 public:
  explicit fgd_scorer(std::shared_ptr<const typical_workload> w, fgd_options o = {})
      : workload_(std::move(w)), opts_(o) {
    if (!workload_) throw invalid_argument_error("fgd_scorer.workload", "must not be null");
  }
  explicit fgd_scorer(typical_workload w, fgd_options o = {})
      : fgd_scorer(std::make_shared<const typical_workload>(std::move(w)), o) {}

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FGDScore"; }
  [[nodiscard]] const typical_workload& workload() const noexcept { return *workload_; }
  [[nodiscard]] const fgd_options& options() const noexcept { return opts_; }

  // 0..100 (or micro-points with fine_score); 0 where the pod does not fit the node's devices.
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    cache& k = cache_;
    const auto& rec = k.refresh(c, n, *workload_);
    shape_slot* slot = k.slot_for(p, num_nodes(c), opts_.max_cached_scores);
    if (slot != nullptr && slot->version[n] == rec.version) return slot->score[n];
    const fgd_pick pick = evaluate(c, p, n, rec);
    if (slot != nullptr) {
      slot->version[n] = rec.version;
      slot->score[n] = pick.score;
    }
    return pick.score;
  }

  // SpanScorer: score(c, p, n) for each of nodes. On a NodeVersioned cluster a node whose stamp
  // and cached score are current is answered without the per-node refresh and shape lookup.
  template <Cluster C>
  void score_nodes(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const {
    if constexpr (NodeVersioned<C>) {
      cache& k = cache_;
      if (shape_slot* slot = k.slot_for(p, num_nodes(c), opts_.max_cached_scores); slot != nullptr) {
        for (std::size_t j = 0; j < nodes.size(); ++j) {
          const node_index n = nodes[j];
          const node_rec* rec = k.current(n, adl::call_node_state_version(c, n));
          out[j] = rec != nullptr && slot->version[n] == rec->version ? slot->score[n] : score(c, p, n);
        }
        return;
      }
    }
    for (std::size_t j = 0; j < nodes.size(); ++j) out[j] = score(c, p, nodes[j]);
  }

  // GpuSelector: the devices FGD gives p on node n (0 when it does not fit).
  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    if (!p.wants_gpu()) return 0;
    const auto& rec = cache_.refresh(c, n, *workload_);
    const fgd_pick pick = evaluate(c, p, n, rec);
    return pick.fits ? pick.gpus : 0;
  }

  // F_n of node n in its current state (milli-GPU).
  template <Cluster C>
  [[nodiscard]] double node_fragmentation(const C& c, node_index n) const {
    return cache_.refresh(c, n, *workload_).frag;
  }

 private:
  struct node_rec {
    milli cpu_left = 0;
    double frag = 0.0;
    std::uint64_t stamp = 0;    // the cluster's node_state_version when last checked (0: none)
    std::uint32_t version = 0;  // 0: never seen
    std::int32_t gpus = -1;
    std::int32_t model = -1;
    std::uint32_t offset = 0;
  };
  struct shape_slot {
    milli cpu = 0;
    std::int32_t gpu_milli = 0;
    std::int32_t num_gpu = 0;
    std::vector<short_name> models;
    std::uint64_t last_use = 0;
    std::vector<std::uint32_t> version;
    std::vector<std::int64_t> score;
    [[nodiscard]] bool matches(const pod& p) const noexcept {
      return cpu == p.cpu_milli && gpu_milli == p.gpu_milli && num_gpu == p.num_gpu && models == p.allowed_models;
    }
  };

  class cache {
   public:
    cache() = default;
    cache(const cache&) {}  // a copy starts empty
    cache& operator=(const cache&) {
      *this = cache();
      return *this;
    }
    cache(cache&&) noexcept = default;
    cache& operator=(cache&&) noexcept = default;
    ~cache() = default;

    template <Cluster C>
    const node_rec& refresh(const C& c, node_index n, const typical_workload& w) {
      if (n >= nodes_.size()) nodes_.resize(static_cast<std::size_t>(n) + 1);
      node_rec& r = nodes_[n];
      std::uint64_t stamp = 0;  // 0: the cluster gives no stamps (r.stamp 0 never matches a real one)
      if constexpr (NodeVersioned<C>) {
        // Same stamp as when r was last checked: the node is unchanged (schedule/node_versions.hpp).
        stamp = adl::call_node_state_version(c, n);
        if (r.version != 0 && r.stamp == stamp) return r;
      }
      r.stamp = stamp;
      detail::read_node(c, n, view_);
      bool changed = r.version == 0 || r.cpu_left != view_.cpu_left;
      if (r.gpus != view_.gpus) {
        r.offset = static_cast<std::uint32_t>(free_.size());
        free_.resize(free_.size() + static_cast<std::size_t>(view_.gpus));
        r.gpus = view_.gpus;
        changed = true;
      }
      std::int32_t* f = free_.data() + r.offset;
      for (int g = 0; g < view_.gpus; ++g) {
        if (f[g] != view_.free[static_cast<std::size_t>(g)]) {
          f[g] = view_.free[static_cast<std::size_t>(g)];
          changed = true;
        }
      }
      if (r.model < 0 || !(models_[static_cast<std::size_t>(r.model)] == view_.model)) {
        r.model = model_index(view_.model, w);
        changed = true;
      }
      if (changed) {
        r.cpu_left = view_.cpu_left;
        r.version = next_version();
        const auto sh = w.shapes();
        r.frag = gpusched::node_fragmentation(f, r.gpus, r.cpu_left, sh.data(), accessible(r.model).data(),
                                              static_cast<int>(sh.size()));
      }
      return r;
    }

    // Node n's record when it was checked at this stamp (so it is current), else null.
    [[nodiscard]] const node_rec* current(node_index n, std::uint64_t stamp) const noexcept {
      if (n >= nodes_.size()) return nullptr;
      const node_rec& r = nodes_[n];
      return r.version != 0 && r.stamp == stamp ? &r : nullptr;
    }
    [[nodiscard]] const std::int32_t* free_of(const node_rec& r) const noexcept { return free_.data() + r.offset; }
    [[nodiscard]] const std::vector<std::uint8_t>& accessible(std::int32_t model) const noexcept {
      return accessible_[static_cast<std::size_t>(model)];
    }

    shape_slot* slot_for(const pod& p, std::size_t node_count, std::size_t max_entries) {
      if (last_ < slots_.size() && slots_[last_].matches(p) && slots_[last_].version.size() == node_count) {
        return &slots_[last_];
      }
      if (node_count == 0 || max_entries / node_count == 0) return nullptr;
      ++use_clock_;
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].matches(p)) {
          if (slots_[i].version.size() != node_count) reset(slots_[i], node_count);
          slots_[i].last_use = use_clock_;
          last_ = i;
          return &slots_[i];
        }
      }
      std::size_t i = slots_.size();
      if (slots_.size() < max_entries / node_count) {
        slots_.emplace_back();
      } else {  // evict the least recently used shape
        i = 0;
        for (std::size_t j = 1; j < slots_.size(); ++j) {
          if (slots_[j].last_use < slots_[i].last_use) i = j;
        }
      }
      shape_slot& s = slots_[i];
      s.cpu = p.cpu_milli;
      s.gpu_milli = p.gpu_milli;
      s.num_gpu = p.num_gpu;
      s.models = p.allowed_models;
      s.last_use = use_clock_;
      reset(s, node_count);
      last_ = i;
      return &s;
    }

   private:
    static void reset(shape_slot& s, std::size_t node_count) {
      s.version.assign(node_count, 0);
      s.score.assign(node_count, 0);
    }
    std::uint32_t next_version() {
      if (++clock_ == 0) {  // wrapped: forget every cached score
        for (auto& s : slots_) std::fill(s.version.begin(), s.version.end(), 0U);
        for (auto& r : nodes_) r.version = 0;
        clock_ = 1;
      }
      return clock_;
    }
    std::int32_t model_index(const short_name& m, const typical_workload& w) {
      for (std::size_t i = 0; i < models_.size(); ++i) {
        if (models_[i] == m) return static_cast<std::int32_t>(i);
      }
      models_.push_back(m);
      accessible_.emplace_back();
      w.accessible_for(m, accessible_.back());
      return static_cast<std::int32_t>(models_.size() - 1);
    }

    std::vector<node_rec> nodes_;
    std::vector<std::int32_t> free_;
    std::vector<short_name> models_;
    std::vector<std::vector<std::uint8_t>> accessible_;
    std::vector<shape_slot> slots_;
    std::size_t last_ = std::numeric_limits<std::size_t>::max();
    std::uint32_t clock_ = 0;
    std::uint64_t use_clock_ = 0;
    detail::node_view view_;
  };

  template <Cluster C>
  fgd_pick evaluate(const C& c, const pod& p, node_index n, const node_rec& rec) const {
    const auto sh = workload_->shapes();
    const gpu_set ok = detail::allowed_devices(c, p, n, rec.gpus);
    return fgd_evaluate(cache_.free_of(rec), rec.gpus, rec.cpu_left, ok, p.cpu_milli, p.gpu_milli, p.num_gpu, sh.data(),
                        cache_.accessible(rec.model).data(), static_cast<int>(sh.size()), rec.frag, opts_.fine_score);
  }

  std::shared_ptr<const typical_workload> workload_;
  fgd_options opts_;
  mutable cache cache_;
};

}  // namespace gpusched
