// gpusched-extender's /filter and /prioritize through the batch engine (options::batch, the default:
// a node table kept beside the state and the profile's configured batch form) answer with exactly
// the bytes of the profile's per-node plugins (options::batch = false): over random clusters,
// running pods, pending pods and lists of names (in order, shuffled, repeated, unknown), with
// prioritize after filter (the kept verdicts and totals), and after binds and node changes (the table
// kept in step), also for a v1 file whose Kubernetes defaults (node constraints) run node by node.
#include <doctest/doctest.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "../../tools/extender/extender.hpp"
#include "seed_state.hpp"

using gpusched::extender::extender;
using namespace gpusched::kube;

namespace {

using gpusched::extender::testing::seed_config;

// Kubernetes' own scores beside the seed's, with NodeResourcesFit as an explicit filter (and
// Kubernetes' default plugins off: NodeUnschedulable, TaintToleration and NodeAffinity have no batch form).
const char* const wide_config = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ai-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: '*'
    filter:
      enabled:
      - name: NodeResourcesFit
      - name: GPUCheck
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 3
      - name: NodeResourcesBalancedAllocation
        weight: 2
      - name: LoadAware
        weight: 10
      - name: ModelAffinity
        weight: 5
      - name: QoSAware
)";

const std::string& v1_config = gpusched::extender::testing::seed_v1_config;

const char* const gpu_models[] = {"V100-SXM2-32GB", "T4", "A100-SXM4-40GB"};
const int gpu_mem[] = {32768, 16384, 40960};
const char* const model_types[] = {"resnet50", "bert", "gpt2"};

std::vector<kube_node> random_nodes(std::mt19937_64& rng, int count) {
  std::vector<kube_node> out;
  for (int i = 0; i < count; ++i) {
    kube_node n;
    n.spec = gpusched::node_spec{"node-" + std::to_string(i), static_cast<std::int64_t>(4000 + 4000 * (rng() % 16)),
                                 static_cast<std::int64_t>(8192 * (1 + rng() % 32)), {}, ""};
    const int kind = static_cast<int>(rng() % 4);  // one in four without GPUs
    if (kind < 3) n.spec.add_gpus(1 + static_cast<int>(rng() % 8), gpu_models[kind], gpu_mem[kind], 0);
    // Node constraints (NodeUnschedulable, TaintToleration, NodeAffinity read them): cordoned nodes,
    // NoSchedule and PreferNoSchedule taints the pending pods do not tolerate, labels.
    switch (rng() % 8) {
      case 0: n.spec.constraints.unschedulable = true; break;
      case 1: n.spec.constraints.taints.push_back({gpusched::label_name("dedicated"), gpusched::label_name("infer"), gpusched::taint_effect::no_schedule}); break;
      case 2: n.spec.constraints.taints.push_back({gpusched::label_name("spot"), gpusched::label_name("true"), gpusched::taint_effect::prefer_no_schedule}); break;
      case 3: n.spec.constraints.labels.push_back({gpusched::label_name("zone"), gpusched::label_name("a")}); break;
      default: break;
    }
    out.push_back(std::move(n));
  }
  return out;
}

// Running pods on random nodes, placed by the profile's device selector (no GPU annotation).
std::vector<kube_pod> random_running(std::mt19937_64& rng, const std::vector<kube_node>& nodes, int count) {
  std::vector<kube_pod> out;
  for (int i = 0; i < count; ++i) {
    kube_pod p;
    p.uid = "run-" + std::to_string(i);
    p.name = p.uid;
    p.namespace_ = "default";
    p.node_name = nodes[rng() % nodes.size()].spec.name;
    p.phase = "Running";
    auto b = gpusched::make_pod("default/" + p.name).cpu(500 + static_cast<std::int64_t>(rng() % 8) * 500).memory(1024 * (1 + static_cast<std::int64_t>(rng() % 8)));
    switch (rng() % 4) {
      case 0: b.gpus(1 + static_cast<std::int32_t>(rng() % 2)); break;
      case 1: b.gpu_share(100 * (1 + static_cast<std::int32_t>(rng() % 9))).gpu_memory(2048 * (1 + static_cast<std::int32_t>(rng() % 6))); break;
      default: break;
    }
    if (rng() % 2 == 0) b.model(model_types[rng() % 2]);  // gpt2 is served by no running pod
    p.spec = b;
    out.push_back(std::move(p));
  }
  return out;
}

// A pending Pod as the API server writes it: limits (requests default to them), HAMi's GPU share
// and memory, the seed's model-type label, HAMi's allowed GPU models.
std::string random_pending(std::mt19937_64& rng, int i) {
  json limits = {{"cpu", std::to_string(250 * (1 + rng() % 24)) + "m"}, {"memory", std::to_string(512 * (1 + rng() % 32)) + "Mi"}};
  switch (rng() % 4) {
    case 0: limits["nvidia.com/gpu"] = std::to_string(1 + rng() % 4); break;
    case 1:
      limits["nvidia.com/gpu"] = "1";
      limits["nvidia.com/gpucores"] = std::to_string(10 * (1 + rng() % 9));
      limits["nvidia.com/gpumem"] = std::to_string(1024 * (1 + rng() % 24));
      break;
    default: break;
  }
  json meta = {{"name", "p" + std::to_string(i)}, {"namespace", "default"}, {"uid", "u-" + std::to_string(i)}};
  if (rng() % 2 == 0) meta["labels"] = {{"ai.tencent.com/model-type", model_types[rng() % 3]}};
  if (rng() % 5 == 0) meta["annotations"] = {{"nvidia.com/use-gputype", rng() % 4 == 0 ? "H100-SXM5-80GB" : gpu_models[rng() % 3]}};  // H100: on no node
  const json pod = {{"metadata", meta}, {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"limits", limits}}}}})}}}};
  return pod.dump();
}

// Names to ask about: all in order, a shuffled part with repeats, or runs with unknown names between.
std::string random_names(std::mt19937_64& rng, int nodes) {
  std::vector<std::string> names;
  switch (rng() % 3) {
    case 0:
      for (int i = 0; i < nodes; ++i) names.push_back("node-" + std::to_string(i));
      break;
    case 1:
      for (int i = 0; i < nodes; ++i) names.push_back("node-" + std::to_string(rng() % static_cast<unsigned>(nodes)));
      break;
    default:
      for (int i = 0; i < nodes; ++i) {
        if (rng() % 7 == 0) names.push_back("ghost-" + std::to_string(i));
        if (rng() % 3 != 0) names.push_back("node-" + std::to_string(i));
      }
      break;
  }
  return json(names).dump();
}

struct pair_of_extenders {
  extender batched, plain;
  pair_of_extenders(const std::string& config, const std::vector<kube_node>& nodes, const std::vector<kube_pod>& running)
      : batched(config, "test.yaml"), plain(config, "test.yaml", [] {
          gpusched::extender::options o;
          o.batch = false;
          return o;
        }()) {
    for (extender* e : {&batched, &plain}) {
      e->replace_nodes(nodes);
      e->replace_pods(running);
    }
  }
};

// Filter then prioritize for `pods` pending pods, the answers of both compared; prioritize asks for
// the same names, for the names filter passed (as kube-scheduler does), or without a filter before
// it (its own checks and scores, no kept verdicts); every third pod is bound to the first node
// filter passed (both extenders), every tenth a node changes.
int compare(const std::string& config, std::uint64_t seed, int nodes_count, int pods) {
  std::mt19937_64 rng(seed);
  auto nodes = random_nodes(rng, nodes_count);
  pair_of_extenders x(config, nodes, random_running(rng, nodes, nodes_count));
  int bad = 0;
  for (int i = 0; i < pods; ++i) {
    const std::string pod = random_pending(rng, i);
    const std::string body = R"({"Pod":)" + pod + R"(,"NodeNames":)" + random_names(rng, nodes_count) + "}";
    const int mode = static_cast<int>(rng() % 3);
    const auto pb0 = mode == 2 ? x.batched.prioritize(body) : gpusched::extender::answer{};
    const auto pp0 = mode == 2 ? x.plain.prioritize(body) : gpusched::extender::answer{};
    CHECK(pb0.body == pp0.body);
    const auto fb = x.batched.filter(body), fp = x.plain.filter(body);
    const std::string second = mode == 1 ? R"({"Pod":)" + pod + R"(,"NodeNames":)" + json::parse(fb.body)["NodeNames"].dump() + "}" : body;
    const auto pb = x.batched.prioritize(second), pp = x.plain.prioritize(second);
    CAPTURE(body);
    if (fb.status != 200 || fb.body != fp.body) {
      ++bad;
      CHECK(fb.body == fp.body);
    }
    if (pb.status != 200 || pb.body != pp.body) {
      ++bad;
      CHECK(pb.body == pp.body);
    }
    const auto passed = json::parse(fb.body)["NodeNames"];
    if (i % 3 == 0 && !passed.empty()) {
      const std::string bind = json{{"PodName", "p" + std::to_string(i)}, {"PodNamespace", "default"},
                                    {"PodUID", "u-" + std::to_string(i)}, {"Node", passed[0]}}.dump();
      const auto bb = x.batched.bind(bind), bp = x.plain.bind(bind);
      CHECK(bb.body == bp.body);
    }
    if (i % 10 == 9) {  // a node grows: the state (and the table) is built again
      auto& n = nodes[rng() % nodes.size()];
      n.spec.cpu_milli += 8000;
      x.batched.upsert_node(n);
      x.plain.upsert_node(n);
    }
  }
  CHECK(x.plain.batched_decisions() == 0);
  CHECK(x.batched.batched_decisions() > 0);
  CHECK(x.batched.batch_disagreements() == 0);  // no answer above came from a fallback
  return bad;
}

}  // namespace

TEST_CASE("extender/batch: the batch engine answers filter and prioritize as the per-node plugins do") {
  SUBCASE("the seed's profile") { CHECK(compare(seed_config, 1, 40, 60) == 0); }
  SUBCASE("Kubernetes' scores beside the seed's") { CHECK(compare(wide_config, 2, 40, 60) == 0); }
  SUBCASE("more nodes than a tile (512), names in runs") { CHECK(compare(seed_config, 3, 1100, 12) == 0); }
  SUBCASE("a v1 file: Kubernetes' node-constraint plugins node by node beside the engine") {
    CHECK(compare(v1_config, 4, 40, 60) == 0);
    CHECK(compare(v1_config, 5, 600, 10) == 0);
  }
}

TEST_CASE("extender/batch: the batch engine is used where it can be, and says why not where it cannot") {
  extender ext(seed_config, "test.yaml");
  CHECK(ext.batch_refusal().empty());
  gpusched::extender::testing::seed_two_nodes(ext);  // serves resnet50 on "a"
  const auto ask = [&](const std::string& labels) {
    const std::string pod = R"({"metadata":{"name":"g","namespace":"default","uid":"u-g")" + labels +
                            R"(},"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1","nvidia.com/gpu":"1"}}}]}})";
    return ext.filter(R"({"Pod":)" + pod + R"(,"NodeNames":["a","b"]})");
  };
  REQUIRE(ask("").status == 200);
  CHECK(ext.batched_decisions() == 1);
  REQUIRE(ask(R"(,"labels":{"ai.tencent.com/model-type":"resnet50"})").status == 200);
  CHECK(ext.batched_decisions() == 2);
  // A model type no node serves would need a new bit in the shared table: the plugins decide.
  REQUIRE(ask(R"(,"labels":{"ai.tencent.com/model-type":"never-seen"})").status == 200);
  CHECK(ext.batched_decisions() == 2);

  // TaintToleration has no batch form: it runs node by node beside the engine.
  const std::string taints = std::string(seed_config) + "    filter:\n      enabled:\n      - name: TaintToleration\n";
  extender tainted(taints, "test.yaml");
  CHECK(tainted.batch_refusal().empty());
  CHECK(tainted.per_node_plugins() == std::vector<std::string>{"TaintToleration"});
  gpusched::extender::testing::seed_two_nodes(tainted);
  REQUIRE(tainted.filter(R"({"Pod":{"metadata":{"name":"p","uid":"u"},"spec":{"containers":[]}},"NodeNames":["a"]})").status == 200);
  CHECK(tainted.batched_decisions() == 1);

  // A v1 file: the defaults' node-constraint filters and scorers.
  extender v1(v1_config, "test.yaml");
  CHECK(v1.batch_refusal().empty());
  CHECK(v1.per_node_plugins() == std::vector<std::string>{"NodeUnschedulable", "TaintToleration", "NodeAffinity", "TaintToleration", "NodeAffinity"});

  // Turned off: the plugins decide, and say so.
  gpusched::extender::options off;
  off.batch = false;
  extender plain(seed_config, "test.yaml", off);
  CHECK(plain.batch_refusal() == "turned off (options.batch)");
  CHECK(plain.per_node_plugins().empty());
}

TEST_CASE("extender/scale: the extender score of a weighted sum, by division and by thresholds") {
  // The seed's weights, 10 + 5: den = 1500, score = (10 * weighted + 750) / 1500, at most 10.
  // 1425 = LoadAware 100 x 10 + ModelAffinity 85 x 5: (14250 + 750) / 1500 = 10; one less: 14990 / 1500 = 9.
  // 75: 1500 / 1500 = 1; 74: 1490 / 1500 = 0. 1500 (every score 100): 10.
  const std::pair<std::int64_t, std::int64_t> cases[] = {{0, 0}, {74, 0}, {75, 1}, {224, 1}, {225, 2}, {1424, 9}, {1425, 10}, {1500, 10}, {-5, 0}};
  const gpusched::extender::extender_scale scale(15);
  // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda (P1091, clang 16).
  for (const auto& c : cases) {
    const std::int64_t weighted = c.first, score = c.second;
    CAPTURE(weighted);
    CHECK(gpusched::extender::extender_score(weighted, 15) == score);
    CHECK(scale(weighted) == score);
  }
  // Weight 1 (den 100): 5 -> (50 + 50) / 100 = 1, 4 -> 0, 95 -> 10, 94 -> 9; no weights: 0.
  const gpusched::extender::extender_scale one(1);
  CHECK(one(4) == 0);
  CHECK(one(5) == 1);
  CHECK(one(94) == 9);
  CHECK(one(95) == 10);
  CHECK(gpusched::extender::extender_scale(0)(1000) == 0);
  CHECK(gpusched::extender::extender_scale(0)(INT64_MAX) == gpusched::extender::extender_score(INT64_MAX, 0));
  for (std::int64_t w : {1, 2, 7, 15, 100, 800}) {
    for (std::int64_t x = -10; x <= 100 * w + 10; ++x) CHECK(gpusched::extender::extender_scale(w)(x) == gpusched::extender::extender_score(x, w));
  }
}

#endif
