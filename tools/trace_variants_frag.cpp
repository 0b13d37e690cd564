// gpusched-frag-kinds: where each policy leaves the unallocated GPU at the end of a paper-protocol
// replay (include/gpusched/sim/bound/frag_kinds.hpp; docs/quality.md "Diagnosis"). One CSV row per
// policy and seed, all shares in % of cluster GPU capacity.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/bound/frag_kinds.hpp"
#include "gpusched/sim/policies.hpp"
#include "gpusched/sim/trace.hpp"

namespace {

std::vector<std::uint64_t> parse_seeds(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t dash = item.find('-');
    try {
      std::size_t used = 0;
      const std::uint64_t a = std::stoull(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash)) throw std::invalid_argument("x");
      std::uint64_t b = a;
      if (dash != std::string::npos) {
        b = std::stoull(item.substr(dash + 1), &used);
        if (used != item.size() - dash - 1 || b < a || b - a > 10000) throw std::invalid_argument("x");
      }
      for (std::uint64_t s = a; s <= b; ++s) out.push_back(s);
    } catch (const std::exception&) {
      throw gpusched::invalid_argument_error("--seeds", "'" + item + "' is not a seed or a range like 42-51");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpusched;
  CLI::App app{"gpusched-frag-kinds: unallocated GPU by kind at the end of a paper-protocol replay"};
  std::string nodes_file = std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/openb_node_list_gpu_node.csv";
  std::string pods_file = std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/openb_pod_list_default.csv";
  std::string policies = "FGD,gpusched";
  std::string seeds = "42-51";
  double tune = 1.3;
  app.add_option("--nodes", nodes_file, "node list CSV")->check(CLI::ExistingFile);
  app.add_option("--pods", pods_file, "pod list CSV (openb format)")->check(CLI::ExistingFile);
  app.add_option("--policy", policies, "policies, comma-separated");
  app.add_option("--seeds", seeds, "seeds: 42-51 or 42,43");
  app.add_option("--tune", tune, "GPU demand as a multiple of cluster GPU capacity")->check(CLI::Range(0.01, 100.0));
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<std::uint64_t> seed_list = parse_seeds(seeds);
    // "gpusched-shape": FillAware with fill_aware_options::cpu_by_shape (the experiment of
    // docs/adr/0017-quality-method.md), otherwise as the gpusched-fillaware policy (FillAware).
    constexpr auto shape_variant = static_cast<sim::policy_kind>(255);
    constexpr auto shape_cpu_variant = static_cast<sim::policy_kind>(254);  // gpusched-shape-cpu
    std::vector<sim::policy_kind> kinds;
    for (std::size_t pos = 0; pos <= policies.size();) {
      const std::size_t comma = policies.find(',', pos);
      const std::string name = policies.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const auto k = name == "gpusched-shape"       ? std::optional<sim::policy_kind>(shape_variant)
                     : name == "gpusched-shape-cpu" ? std::optional<sim::policy_kind>(shape_cpu_variant)
                                                    : sim::find_policy(name);
      if (!k) throw invalid_argument_error("--policy", "'" + name + "' is not a policy (gpusched-sim --list-policies)");
      kinds.push_back(*k);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    const sim::trace t = sim::trace::load(nodes_file, pods_file);
    std::printf(
        "policy,seed,unalloc_pct,idle_cpu_stranded_pct,idle_mem_stranded_pct,idle_whole_gpus_pct,idle_partial_gpus_pct,"
        "fgd_frag_pct,fgd_q1_lack_both_pct,fgd_q2_lack_gpu_pct,fgd_q4_lack_cpu_pct,fgd_no_access_pct,fgd_cpu_only_"
        "shapes_pct,"
        "failed_share_gpu_pct,failed_whole_gpu_pct,failed_multi_gpu_pct,failed_cpu_only_pods,nodes_cpu_low,idle_on_cpu_"
        "low_pct\n");
    for (const auto k : kinds) {
      for (const std::uint64_t seed : seed_list) {
        sim::paper_options o;
        o.seed = seed;
        o.tune = tune;
        const bool shaped = k == shape_variant || k == shape_cpu_variant;
        o.ties = shaped ? tie_break_rule::first_node : sim::policy_ties(k);
        sim::frag_kinds_result r;
        if (shaped) {
          fill_aware_options fo;
          fo.cpu_by_shape = k == shape_variant;
          fo.cpu_by_shape_cpu_only = k == shape_cpu_variant;
          const fill_aware_scorer fill(*t.typical, fo);
          r = sim::run_paper_kinds(
              t, make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{fill, 1}), fill), o);
        } else {
          r = sim::with_policy(k, t.typical, seed,
                               [&](auto prof) { return sim::run_paper_kinds(t, std::move(prof), o); });
        }
        const auto& b = r.fgd.by_class;
        auto cls = [&](frag_class c) { return r.pct(b[static_cast<int>(c)]); };
        const auto fk = [&](sim::pod_kind pk) {
          return r.pct(static_cast<double>(r.failed_gpu_milli[static_cast<int>(pk)]));
        };
        std::printf("%s,%llu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%zu,%zu,%.4f\n",
                    k == shape_variant       ? "gpusched-shape"
                    : k == shape_cpu_variant ? "gpusched-shape-cpu"
                                             : std::string(sim::policy_name(k)).c_str(),
                    static_cast<unsigned long long>(seed), 100.0 - r.pct(static_cast<double>(r.allocated_gpu_milli)),
                    r.pct(static_cast<double>(r.idle_cpu_stranded)), r.pct(static_cast<double>(r.idle_mem_stranded)),
                    r.pct(static_cast<double>(r.idle_whole_gpus)), r.pct(static_cast<double>(r.idle_partial_gpus)),
                    r.pct(r.fgd.fragment()), cls(frag_class::q1_lack_both), cls(frag_class::q2_lack_gpu),
                    cls(frag_class::q4_lack_cpu), cls(frag_class::no_access),
                    cls(frag_class::xl_satisfied) + cls(frag_class::xr_lack_cpu), fk(sim::pod_kind::share),
                    fk(sim::pod_kind::whole), fk(sim::pod_kind::multi),
                    r.failed_pods[static_cast<int>(sim::pod_kind::cpu_only)], r.nodes_cpu_low,
                    r.pct(static_cast<double>(r.idle_on_cpu_low)));
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "gpusched-frag-kinds: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
