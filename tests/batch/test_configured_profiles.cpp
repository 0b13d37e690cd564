// Configured (dynamic) profiles in the CPU batch engine (batch/configured.hpp): the same totals as
// the per-pod path of the same dynamic profile, and as the static profile with the same plugins;
// plugins without a batch form refused by name.
#include <doctest/doctest.h>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/batch/configured.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/profile/profile_file.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"
#include "random_workload.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {

using dyn = dynamic_profile<in_memory_cluster>;

// The per-pod path's weighted totals of pod p on every node, -1 where a check rejects it (a cycle:
// PreFilter, Filter, then the scorers).
std::vector<std::int64_t> per_pod_row(const dyn& prof, const in_memory_cluster& c, const pod& p) {
  prof.pre_filter(c, p);
  std::vector<std::int64_t> row(c.size(), -1);
  std::vector<node_index> feasible;
  for (node_index n = 0; n < c.size(); ++n) {
    reason r = reason::ok;
    prof.filter(c, p, n, 1, &r);
    if (r == reason::ok) feasible.push_back(n);
  }
  std::vector<std::int64_t> raw(prof.score_plugin_count() * feasible.size());
  if (!feasible.empty() && !raw.empty()) prof.score(c, p, std::span<const node_index>(feasible), raw.data());
  for (std::size_t j = 0; j < feasible.size(); ++j) {
    std::int64_t total = 0;
    for (std::size_t k = 0; k < prof.score_plugin_count(); ++k) total += raw[k * feasible.size() + j] * prof.score_plugin_weight(k);
    row[feasible[j]] = total;
  }
  return row;
}

// Mismatches between the batch engine on configured(prof) and the per-pod path of prof.
int mismatches(const dyn& prof, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const in_memory_cluster c = testing::random_cluster(rng, 120);
  const std::vector<pod> ps = testing::random_pods(rng, 30);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto engine = batch::make_batch_scorer(batch::configured(prof), {2, seed, 64, 3});
  engine.prepare(t);
  batch::score_matrix m;
  engine.scores(pt, m);
  int bad = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const auto row = per_pod_row(prof, c, ps[i]);
    for (std::size_t n = 0; n < c.size(); ++n) {
      if (m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(n)) != row[n] && ++bad < 4) {
        FAIL_CHECK("pod " << i << " node " << n << ": batch " << m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(n))
                          << " per-pod " << row[n]);
      }
    }
  }
  return bad;
}

const std::string head =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: p\n"
    "  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n    filter:\n      enabled:\n"
    "      - name: NodeResourcesFit\n      - name: GPUCheck\n    score:\n      enabled:\n";

dyn from_yaml(const std::string& scores, plugin_context ctx = {}) {
  return parse_profile_file<in_memory_cluster>(head + scores, "cfg.yaml", std::move(ctx)).profile;
}

std::shared_ptr<const typical_workload> workload() {
  std::mt19937_64 rng(77);
  return std::make_shared<const typical_workload>(typical_workload::from_pods(testing::random_pods(rng, 200)));
}

}  // namespace

TEST_CASE("batch.configured: a configured profile scores as its per-pod path") {
  SUBCASE("Kubernetes' scores and the seed's plugins") {
    CHECK(mismatches(from_yaml("      - name: NodeResourcesFit\n        weight: 3\n"
                               "      - name: NodeResourcesBalancedAllocation\n        weight: 2\n"
                               "      - name: LoadAware\n        weight: 10\n      - name: ModelAffinity\n        weight: 5\n"
                               "      - name: QoSAware\n"),
                     1) == 0);
  }
  SUBCASE("FGD from a workload (the simulator's context)") {
    CHECK(mismatches(from_yaml("      - name: FGDScore\n        weight: 2\n", {workload(), 0}), 2) == 0);
  }
  SUBCASE("the FGD paper's baselines (host forms)") {
    for (const char* s : {"RandomScore", "DotProductScore", "GpuPackingScore"}) {
      const std::string plugin = s;
      CAPTURE(plugin);
      CHECK(mismatches(from_yaml(std::string("      - name: ") + s + "\n"), 3) == 0);
    }
  }
  SUBCASE("FillAware alone, weight 1") {
    CHECK(mismatches(from_yaml("      - name: FillAware\n", {workload(), 0}), 4) == 0);
  }
  SUBCASE("FillAwareBinding and FillAwareRefill alone, with CPU binding and not") {
    // random_cluster's nodes have 4-63 CPUs and 0-8 GPUs. Heavy: whole-GPU shapes of 4 and 40 CPUs per
    // GPU and a CPU-only shape of 60 CPUs, equally likely: d = (4 + 40 + 60) / 2 = 52 CPUs per GPU,
    // above the cluster's, so CPU binds and the PreScore takes the CPU term by shape (ratios 4 and 40),
    // which differs from the mean form (22). Light: 1 and 4 CPUs per GPU, d = 2.5: the mean form. The
    // batch form must follow the PreScore (the cluster is the one mismatches(.., 5) builds).
    std::mt19937_64 rng(5);
    const in_memory_cluster c = testing::random_cluster(rng, 120);
    auto shapes = [](std::vector<pod> ps) {
      return std::make_shared<const typical_workload>(typical_workload::from_pods(ps));
    };
    const auto heavy = shapes({make_pod("a").cpu(4000).gpus(1), make_pod("b").cpu(40000).gpus(1), make_pod("c").cpu(60000)});
    const auto light = shapes({make_pod("a").cpu(1000).gpus(1), make_pod("b").cpu(4000).gpus(1)});
    REQUIRE(fill_aware_binding_scorer(*heavy).by_shape(c));
    REQUIRE_FALSE(fill_aware_binding_scorer(*light).by_shape(c));
    for (const char* plugin : {"FillAwareBinding", "FillAwareRefill"}) {
      CAPTURE(plugin);
      for (const auto& w : {heavy, light, workload()}) {
        CHECK(mismatches(from_yaml(std::string("      - name: ") + plugin + "\n", {w, 0}), 5) == 0);
      }
    }
  }
}

TEST_CASE("batch.configured: FillAwareRefill's count (observeDemand) is read by the batch engine, never added to") {
  // scoring/fill_aware_binding.hpp: where the host counts pods (plugin_context::counts_pods, the
  // simulator) FillAwareRefill counts each pod its PreFilter sees on the per-pod path; the batch
  // engine scores pods in threads, before any check, in no arrival order, and adds nothing. The
  // configured workload is "heavy" (d = 52 CPUs per GPU: by shape); the random pods ask about 6
  // CPUs per GPU against the cluster's 8, so once counted they settle the mean form.
  std::mt19937_64 rng(5);
  const in_memory_cluster c = testing::random_cluster(rng, 120);
  const std::vector<pod> ps = testing::random_pods(rng, 60);
  const auto heavy = std::make_shared<const typical_workload>(typical_workload::from_pods(
      std::vector<pod>{make_pod("a").cpu(4000).gpus(1), make_pod("b").cpu(40000).gpus(1), make_pod("c").cpu(60000)}));
  const std::string refill = "      - name: FillAwareRefill\n";
  const dyn counting = from_yaml(refill, {heavy, 0, true});
  const dyn batch_side = from_yaml(refill, {heavy, 0, true});
  const dyn uncounted = from_yaml(refill, {heavy, 0, false});
  batch::node_table t(c);
  auto engine = batch::make_batch_scorer(batch::configured(batch_side), {2, 5, 64, 3});
  engine.prepare(t);
  // The whole table, then each pod in a table of its own: the scores of a profile that counts nothing.
  batch::pod_table all(ps, t);
  batch::score_matrix whole;
  engine.scores(all, whole);
  int differ = 0, counted_differ = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    CAPTURE(i);
    const std::vector<pod> one{ps[i]};
    batch::pod_table pt(one, t);
    batch::score_matrix m;
    engine.scores(pt, m);
    const auto plain = per_pod_row(uncounted, c, ps[i]);
    const auto counted = per_pod_row(counting, c, ps[i]);
    for (std::size_t n = 0; n < c.size(); ++n) {
      const auto col = static_cast<Eigen::Index>(n);
      differ += (m(0, col) != plain[n] ? 1 : 0) + (whole(static_cast<Eigen::Index>(i), col) != plain[n] ? 1 : 0);
      counted_differ += counted[n] != plain[n] ? 1 : 0;
    }
  }
  CHECK(differ == 0);
  CHECK(counted_differ > 0);  // the per-pod path's count did change the CPU term: the batch's would have

  // observeDemand: true where the host does not count pods (an extender, Python) is refused by name.
  const std::string asks = refill + "  pluginConfig:\n  - name: FillAwareRefill\n    args: {observeDemand: true}\n";
  try {
    (void)from_yaml(asks, {heavy, 0, false});
    FAIL("observeDemand: true was accepted without counts_pods");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("cfg.yaml:") == 0);
    CHECK(std::string(e.what()).find("observeDemand: true needs a host that hands every pod to the profile once") !=
          std::string::npos);
  }
  CHECK_NOTHROW((void)from_yaml(asks, {heavy, 0, true}));
}

TEST_CASE("batch.configured: the devices chosen are the profile's selector's") {
  const dyn prof = from_yaml("      - name: FGDScore\n", {workload(), 0});
  const auto cp = batch::configured(prof);
  CHECK(cp.gpu_selector().name() == "FGDScore");
  CHECK(batch::configured(from_yaml("      - name: NodeResourcesFit\n")).gpu_selector().name() == "BestFit");
}

TEST_CASE("batch.configured: plugins without a batch form are refused by name") {
  dyn p;
  p.add_check(gpu_check{});
  struct my_score {
    static constexpr std::string_view name() noexcept { return "MyScore"; }
    std::int64_t score(const in_memory_cluster&, const pod&, node_index) const { return 1; }
  };
  p.add_score(my_score{}, 1);
  CHECK_THROWS_WITH_AS(batch::configured(p),
                       "profile.score.MyScore: has no batch form (a batch_plugin specialisation, batch/plugin.hpp): the "
                       "batch engine cannot run this profile",
                       invalid_argument_error);
  // BestFit's NormalizeScore is a min-max (plugin_utils.go), not one of the engines' forms.
  CHECK_THROWS_WITH_AS(batch::configured(from_yaml("      - name: BestFitScore\n")),
                       "profile.score.BestFitScore: has no batch form (a batch_plugin specialisation, batch/plugin.hpp): "
                       "the batch engine cannot run this profile",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(batch::configured(from_yaml("      - name: FillAware\n        weight: 2\n", {workload(), 0})),
                       "profile.score.FillAware: scores about 10^9, which fills the batch engine's 32-bit totals: give "
                       "it alone, weight 1",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(batch::configured(from_yaml("      - name: FillAwareRefill\n        weight: 2\n", {workload(), 0})),
                       "profile.score.FillAwareRefill: scores about 10^9, which fills the batch engine's 32-bit totals: "
                       "give it alone, weight 1",
                       invalid_argument_error);
}

TEST_CASE("batch.configured: score_range gives a pod's totals on any run of nodes") {
  // The totals of score_range over a range are those of the full row (scores) on the same nodes,
  // whatever the range's start and length (tile boundaries, lane tails, a single node).
  const dyn prof = from_yaml("      - name: LoadAware\n        weight: 10\n      - name: ModelAffinity\n        weight: 5\n");
  std::mt19937_64 rng(11);
  const in_memory_cluster c = testing::random_cluster(rng, 150);
  const std::vector<pod> ps = testing::random_pods(rng, 6);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto engine = batch::make_batch_scorer(batch::configured(prof), {1, 0, 64, 1});
  engine.prepare(t);
  batch::score_matrix m;
  engine.scores(pt, m);
  const std::pair<node_index, std::uint32_t> ranges[] = {{0, 150}, {0, 1}, {149, 1}, {3, 7}, {63, 2}, {61, 70}, {100, 50}};
  for (std::size_t i = 0; i < ps.size(); ++i) {
    for (const auto& [first, count] : ranges) {
      std::vector<std::int32_t> out(count, -7);
      const std::uint32_t fits = engine.score_range(engine.make_check_args(pt, i), engine.make_score_args(pt, i), first, count, out.data());
      std::uint32_t expect_fits = 0;
      for (std::uint32_t j = 0; j < count; ++j) {
        const auto want = m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(first + j));
        expect_fits += want >= 0 ? 1 : 0;
        CHECK(out[j] == want);
      }
      CHECK(fits == expect_fits);
    }
  }
  CHECK_THROWS_AS(engine.score_range(engine.make_check_args(pt, 0), engine.make_score_args(pt, 0), 149, 2, nullptr), std::out_of_range);
}

TEST_CASE("batch.configured: an engine's prepared memory counts the erased plugins' own columns") {
  // The seed's plugins: GPUCheck and ModelAffinity read the node table only, NodeResourcesFit keeps
  // two 8-byte ceilings per node and LoadAware its prepared columns (docs/batch.md, "Tables and
  // their memory"): the configured form holds exactly what the static profile's engine holds.
  const dyn prof = from_yaml("      - name: LoadAware\n        weight: 10\n      - name: ModelAffinity\n        weight: 5\n");
  std::mt19937_64 rng(5);
  const in_memory_cluster c = testing::random_cluster(rng, 40);
  batch::node_table t(c);
  auto configured = batch::make_batch_scorer(batch::configured(prof));
  configured.prepare(t);
  auto fixed = batch::make_batch_scorer(
      make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{model_affinity{}, 5})));
  fixed.prepare(t);
  CHECK(configured.prepared_bytes() == fixed.prepared_bytes());
  CHECK(configured.prepared_bytes() >= 16 * 40);  // NodeResourcesFit's ceilings at least
}

TEST_CASE("batch.configured: configured_split leaves the plugins without a batch form to the caller") {
  // head's filters are NodeResourcesFit and GPUCheck (indices 0, 1); TaintToleration is added as
  // filter 2 and as scorer 1, beside LoadAware (scorer 0). Neither has a batch form.
  const std::string yaml = head + "      - name: LoadAware\n        weight: 10\n      - name: TaintToleration\n        weight: 3\n";
  const std::string with_filter = [&] {
    std::string y = yaml;
    y.insert(y.find("    score:"), "      - name: TaintToleration\n");
    return y;
  }();
  const dyn prof = parse_profile_file<in_memory_cluster>(with_filter, "cfg.yaml").profile;
  REQUIRE(prof.check_count() == 3);
  CHECK(prof.check_name(2) == "TaintToleration");
  CHECK_THROWS_AS(batch::configured(prof), invalid_argument_error);
  batch::per_node_plugins rest;
  const auto cp = batch::configured_split(prof, rest);
  CHECK(rest.checks == std::vector<std::size_t>{2});
  CHECK(rest.scores == std::vector<std::size_t>{1});
  // The engine holds the other three: a node the two checks pass scores LoadAware x 10 alone.
  std::mt19937_64 rng(9);
  const in_memory_cluster c = testing::random_cluster(rng, 30);
  const std::vector<pod> ps = testing::random_pods(rng, 5);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto engine = batch::make_batch_scorer(cp);
  engine.prepare(t);
  batch::score_matrix m;
  engine.scores(pt, m);
  const dyn load_only = from_yaml("      - name: LoadAware\n        weight: 10\n");
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const auto row = per_pod_row(load_only, c, ps[i]);
    for (std::size_t n = 0; n < c.size(); ++n) CHECK(m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(n)) == row[n]);
  }
}

TEST_CASE("batch.pod_table: over a const node table a new model type is refused, not given a bit") {
  in_memory_cluster c;
  node_spec n{"n", 8000, 16384, {}, ""};
  n.add_gpus(1, "T4", 16384);
  c.add_node(n);
  const pod run = make_pod("run").cpu(1000).memory(1024).gpus(1).model("bert");  // node n serves bert
  c.reserve(run, make_binding(run, 0, 1));
  batch::node_table t(c);
  const std::size_t known = t.model_types().size();
  const std::vector<pod> bert = {make_pod("a").cpu(100).memory(100).model("bert")};
  const std::vector<pod> gpt = {make_pod("b").cpu(100).memory(100).model("gpt2")};
  batch::pod_table pt;
  pt.assign(bert, std::as_const(t));  // known: read only
  CHECK(pt.model_type_bit()[0] == t.model_types().bit_of(short_name("bert", "m")));
  CHECK_THROWS_WITH_AS(pt.assign(gpt, std::as_const(t)),
                       "pod 'b'.model_type: 'gpt2' has no bit in the node table, which may not change here", invalid_argument_error);
  CHECK(t.model_types().size() == known);
  CHECK(pt.size() == 1);  // unchanged by the refused call
  CHECK(pt.model_type_bit()[0] == t.model_types().bit_of(short_name("bert", "m")));
  pt.assign(gpt, t);  // a table that may change gives it a bit
  CHECK(t.model_types().size() == known + 1);
}
