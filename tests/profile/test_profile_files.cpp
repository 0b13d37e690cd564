// data/profiles/: every simulator policy as a profile file that decides exactly as the built-in
// static profile (sim/policies.hpp), and the serving profiles as files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "gpusched/profile/profile_file.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/policies.hpp"
#include "gpusched/sim/trace.hpp"

using namespace gpusched;

namespace {

std::string profile_path(std::string_view file) { return std::string(GPUSCHED_SOURCE_DIR) + "/data/profiles/" + std::string(file); }

// A slice of the openb default trace: its first 160 nodes, every 8th pod (about 1000 pods).
const sim::trace& slice() {
  static const sim::trace t = [] {
    const std::string dir = std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/";
    auto nodes = sim::read_openb_nodes(dir + "openb_node_list_gpu_node.csv");
    auto pods = sim::read_openb_pods(dir + "openb_pod_list_default.csv");
    nodes.resize(160);
    std::vector<sim::openb_pod> some;
    for (std::size_t i = 0; i < pods.size(); i += 8) some.push_back(pods[i]);
    return sim::trace::from(std::move(nodes), std::move(some));
  }();
  return t;
}

void check_same(const sim::paper_result& a, const sim::paper_result& b) {
  CHECK(a.pods_arrived == b.pods_arrived);
  CHECK(a.pods_failed == b.pods_failed);
  CHECK(a.failed_by_shape == b.failed_by_shape);
  REQUIRE(a.events.size() == b.events.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    differ += a.events[i].allocated_gpu_milli != b.events[i].allocated_gpu_milli ||
              a.events[i].frag_gpu_milli != b.events[i].frag_gpu_milli;
  }
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("profile files: every policy's file replays exactly as the built-in policy") {
  const sim::trace& t = slice();
  REQUIRE(t.pods.size() > 900);
  for (const auto& info : sim::policies) {
    CAPTURE(info.name);
    for (const std::uint64_t seed : {42, 43}) {
      sim::paper_options o;
      o.seed = seed;
      o.ties = sim::policy_ties(info.kind);
      const sim::paper_result built_in =
          sim::with_policy(info.kind, t.typical, seed, [&](auto prof) { return sim::run_paper(t, prof, o, "a"); });
      // counts_pods: the replay's context (gpusched-sim's), where FillAwareRefill counts as the policy does.
      auto fp = load_profile_file<sim::replay_cluster>(profile_path(info.profile_file), plugin_context{t.typical, seed, true});
      CHECK(fp.name == info.name);
      CHECK(fp.profile.preferred_ties().value_or(tie_break_rule::first_node) == o.ties);
      const sim::paper_result from_file = sim::run_paper(t, std::move(fp.profile), o, "b");
      CHECK(from_file.pods_failed > 0);  // the slice at 130% demand: some pods fail, so the order matters
      check_same(built_in, from_file);
    }
  }
}

TEST_CASE("profile files: the filter is the authors' (NodeResourcesFit, then GPUCheck), one score plugin") {
  const sim::trace& t = slice();
  for (const auto& info : sim::policies) {
    CAPTURE(info.name);
    const auto fp = load_profile_file<sim::replay_cluster>(profile_path(info.profile_file), plugin_context{t.typical, 0});
    REQUIRE(fp.profile.check_count() == 2);
    CHECK(fp.profile.check_name(0) == "NodeResourcesFit");
    CHECK(fp.profile.check_name(1) == "GPUCheck");
    CHECK(fp.profile.score_plugin_count() == 1);
    CHECK(fp.options.percentage_of_nodes_to_score == 100);
  }
}

TEST_CASE("profile files: the serving profiles, and no file without a policy or serving profile") {
  const auto kube = load_profile_file<in_memory_cluster>(profile_path("kube-default.yaml"));
  REQUIRE(kube.profile.score_plugin_count() == 2);
  CHECK(kube.profile.score_plugin_name(0) == "LeastAllocated");
  CHECK(kube.profile.score_plugin_name(1) == "NodeResourcesBalancedAllocation");
  {
    // Kubernetes' non-zero request defaults are on in kube-default: a pod without requests counts as
    // 100m CPU / 200 MiB for LeastAllocated, ((1000 - 100) * 100 / 1000 + (2000 - 200) * 100 / 2000) / 2
    // = 90 (100 without them), and as it is for BalancedAllocation (no use, no imbalance: 100).
    in_memory_cluster c;
    c.add_node(node_spec{"n", 1000, 2000, {}, ""});
    const node_index nodes[] = {0};
    std::int64_t raw[2];  // one per score plugin
    kube.profile.score(c, make_pod("p"), nodes, raw);
    CHECK(raw[0] == 90);
    CHECK(raw[1] == 100);
  }
  const auto seed = load_profile_file<in_memory_cluster>(profile_path("seed.yaml"));
  REQUIRE(seed.profile.score_plugin_count() == 2);
  CHECK(seed.profile.score_plugin_name(0) == "LoadAware");
  CHECK(seed.profile.score_plugin_weight(0) == 10);
  CHECK(seed.profile.score_plugin_name(1) == "ModelAffinity");
  CHECK(seed.profile.score_plugin_weight(1) == 5);

  std::vector<std::string> known = {"kube-default.yaml", "seed.yaml"};
  for (const auto& info : sim::policies) known.emplace_back(info.profile_file);
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUSCHED_SOURCE_DIR) + "/data/profiles")) {
    CAPTURE(e.path().filename().string());
    CHECK(std::find(known.begin(), known.end(), e.path().filename().string()) != known.end());
  }
}

TEST_CASE("profile files: FGD and FillAware without typicalPods need a workload, named in the error") {
  CHECK_THROWS_WITH_AS(load_profile_file<in_memory_cluster>(profile_path("fgd.yaml")),
                       (profile_path("fgd.yaml") +
                        ":20: FGDScore: needs pluginConfig args.typicalPods (the workload's pod shapes and shares), or a "
                        "workload from where it runs (the simulator's trace)")
                           .c_str(),
                       file_error);
}

TEST_CASE("policy names: each row by its name in any case, a former name, and no other") {
  for (const auto& info : sim::policies) {
    CAPTURE(info.name);
    std::string upper(info.name);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    CHECK(sim::find_policy(info.name) == info.kind);
    CHECK(sim::find_policy(upper) == info.kind);
  }
  // gpusched-refill became gpusched (ADR 0017, "Amendment 3"); scripts that name it still run it.
  CHECK(sim::find_policy("gpusched-refill") == sim::policy_kind::gpusched);
  CHECK(sim::policy_name(sim::policy_kind::gpusched) == "gpusched");
  CHECK_FALSE(sim::find_policy("gpusched-").has_value());
  CHECK_FALSE(sim::find_policy("").has_value());
}
