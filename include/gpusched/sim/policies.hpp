// The policies the simulator can drive, by name. Each is a static profile of library plugins — the
// same objects a host scheduler would use — with the filter of the authors' simulator (CPU and
// memory fit, GPU model, share and count: resource_fit + gpu_check) and one score plugin. Each is
// also a profile file, data/profiles/<profile_file>, built from the plugins' descriptors
// (profile/builtin_plugins.hpp), that decides identically (tests/profile/test_profile_files.cpp):
// `gpusched-sim --profile-file`, Python's Profile.from_file and the batch engine take those files
// (profile/profile_file.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "gpusched/schedule/random_gpus.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/fgd_paper/best_fit.hpp"
#include "gpusched/scoring/fgd_paper/dot_product.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"
#include "gpusched/scoring/fgd_paper/gpu_packing.hpp"
#include "gpusched/scoring/fgd_paper/random_score.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"
#include "gpusched/scoring/typical_pods.hpp"

namespace gpusched::sim {

// gpusched is FillAwareRefill (docs/adr/0017-quality-method.md, "Amendment 3"); the two steps that
// led to it stay as rows for the ablation: gpusched-fillaware (FillAware, the gpusched policy before)
// and gpusched-binding (its CPU term by shape where CPU binds).
enum class policy_kind : std::uint8_t { random, dot_product, gpu_clustering, gpu_packing, best_fit, fgd, gpusched, gpusched_fillaware, gpusched_binding };

struct policy_info {
  std::string_view name;
  policy_kind kind;
  std::string_view summary;
  double paper_allocation_pct;  // published GPU allocation %, openb default trace, 130% arrived, mean of
                                // seeds 42-51 (Weng et al. ATC'23 Fig. 9a; hkust-adsl/kubernetes-
                                // scheduler-simulator experiments/analysis/expected_results); 0: none
  std::string_view profile_file;  // the same profile as a KubeSchedulerConfiguration, under data/profiles/
};

inline constexpr std::array<policy_info, 9> policies = {{
    {"Random", policy_kind::random, "uniform among feasible nodes; random fitting GPU (paper baseline)", 87.47, "random.yaml"},
    {"DotProd", policy_kind::dot_product, "Tetris dot product of free and requested CPU/GPU (paper baseline)", 90.85, "dotprod.yaml"},
    {"GpuClustering", policy_kind::gpu_clustering, "co-locate pods of the same GPU shape (paper baseline)", 91.88, "gpuclustering.yaml"},
    {"GpuPacking", policy_kind::gpu_packing, "partly used GPUs first, then partly used nodes (paper baseline)", 92.00, "gpupacking.yaml"},
    {"BestFit", policy_kind::best_fit, "least CPU+GPU left after placement (paper baseline)", 93.08, "bestfit.yaml"},
    {"FGD", policy_kind::fgd, "fragmentation gradient descent, Weng et al. ATC'23", 95.39, "fgd.yaml"},
    {"gpusched", policy_kind::gpusched, "gpusched FillAwareRefill: hole waste with a refill chance per sharing pod, CPU term of the binding resource (ours)", 0.0, "gpusched.yaml"},
    {"gpusched-fillaware", policy_kind::gpusched_fillaware, "FillAware: eventual hole waste + CPU stranding at the mean CPU per GPU (ours, ablation)", 0.0, "gpusched-fillaware.yaml"},
    {"gpusched-binding", policy_kind::gpusched_binding, "FillAware, CPU term by shape when the workload's CPU binds (ours, ablation)", 0.0, "gpusched-binding.yaml"},
}};

// Names a policy had before: gpusched-refill became gpusched (ADR 0017, "Amendment 3").
inline constexpr std::array<std::pair<std::string_view, policy_kind>, 1> former_policy_names = {{
    {"gpusched-refill", policy_kind::gpusched},
}};

// Case-insensitive lookup by name.
inline std::optional<policy_kind> find_policy(std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string o(s);
    std::transform(o.begin(), o.end(), o.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return o;
  };
  for (const auto& p : policies) {
    if (lower(p.name) == lower(name)) return p.kind;
  }
  for (const auto& [former, kind] : former_policy_names) {
    if (lower(former) == lower(name)) return kind;
  }
  return std::nullopt;
}

inline const policy_info& info(policy_kind k) {
  for (const auto& p : policies) {
    if (p.kind == k) return p;
  }
  return policies.front();
}
inline std::string_view policy_name(policy_kind k) { return info(k).name; }

// How policy k breaks ties between equally scored nodes: the Random baseline scores every node
// alike and relies on a uniform draw; the others take the first best node in the (seeded) node order.
constexpr tie_break_rule policy_ties(policy_kind k) noexcept {
  return k == policy_kind::random ? tie_break_rule::reservoir : tie_break_rule::first_node;
}

// Calls f(profile) with the static profile of policy k. `typical` is the workload's typical pod
// shapes (FGD); `seed` seeds the random device choice of the Random baseline.
template <class F>
decltype(auto) with_policy(policy_kind k, const std::shared_ptr<const typical_workload>& typical, std::uint64_t seed,
                           F&& f) {
  const auto filter = checks(resource_fit{}, gpu_check{});
  switch (k) {
    case policy_kind::random:
      return f(make_profile(filter, scores(weighted{fgd_paper::random_score{}, 1}), random_gpus(seed)));
    case policy_kind::dot_product:
      return f(make_profile(filter, scores(weighted{fgd_paper::dot_product{}, 1}), best_fit_gpus{}));
    case policy_kind::gpu_clustering:
      return f(make_profile(filter, scores(weighted{fgd_paper::gpu_clustering{}, 1}), best_fit_gpus{}));
    case policy_kind::gpu_packing:
      return f(make_profile(filter, scores(weighted{fgd_paper::gpu_packing{}, 1}), best_fit_gpus{}));
    case policy_kind::best_fit:
      return f(make_profile(filter, scores(weighted{fgd_paper::best_fit{}, 1}), best_fit_gpus{}));
    case policy_kind::gpusched: {
      // The replay hands every pod to the profile once, in order, on one thread: the count is on
      // (observe_demand; docs/adr/0017-quality-method.md, "Amendment 7").
      fill_aware_options o = fill_aware_refill_scorer::defaults();
      o.observe_demand = true;
      const fill_aware_refill_scorer fill(*typical, o);
      return f(make_profile(filter, scores(weighted{fill, 1}), fill));
    }
    case policy_kind::gpusched_fillaware: {
      const fill_aware_scorer fill(*typical);
      return f(make_profile(filter, scores(weighted{fill, 1}), fill));
    }
    case policy_kind::gpusched_binding: {
      const fill_aware_binding_scorer fill(*typical);
      return f(make_profile(filter, scores(weighted{fill, 1}), fill));
    }
    case policy_kind::fgd:
      break;
  }
  const fgd_scorer fgd(typical);
  return f(make_profile(filter, scores(weighted{fgd, 1}), fgd));
}

}  // namespace gpusched::sim
