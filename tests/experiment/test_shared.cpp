// seed-shared.yaml (GPUs shared through a GPU-share device plugin): its load derivation by hand,
// gpushare's best-fit device choice putting a dev-share job next to a replica, determinism per seed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/sim/experiment/report.hpp"
#include "gpusched/sim/serving/scenario_yaml.hpp"

using namespace gpusched;
using namespace gpusched::sim;
using namespace gpusched::sim::experiment;

namespace {

const std::string shared_file = std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed-shared.yaml";

const serving::service_config& service(const serving::scenario& sc, const std::string& name) {
  for (const auto& s : sc.services)
    if (s.name == name) return s;
  FAIL("no service " << name);
  return sc.services.front();
}

}  // namespace

TEST_CASE("seed-shared.yaml: each service's diurnal peak is 90% of its 4 replicas' solo capacity") {
  const serving::scenario sc = serving::load_scenario(shared_file);
  const serving::latency_model lm = serving::make_latency_model(sc);
  // By hand from gpu-let's UTIL.CSV batch-16 rows (duration s, SM util) and seed.yaml's V100 factors:
  // ResNet-50: 0.2085 x 0.0844619 s x (1 - 0.476830 + 0.476830 / 0.5) + 16 x 1.0 ms = 42.007 ms.
  // BERT:      0.73 x 0.0246302 s x (1 - 0.474042 + 0.474042 / 0.5) + 16 x 0.2 ms = 29.703 ms.
  const double t_resnet = lm.service_seconds(lm.id("resnet50"), 16, 0.5, {});
  const double t_bert = lm.service_seconds(lm.id("bert"), 16, 0.5, {});
  CHECK(t_resnet == doctest::Approx(0.042007).epsilon(1e-4));
  CHECK(t_bert == doctest::Approx(0.029703).epsilon(1e-4));
  // Peak = mean x (1 + amplitude 0.5) = 0.9 x 4 x 16 / t, the file's rates rounded to whole QPS.
  const auto& r = service(sc, "resnet50-infer");
  const auto& b = service(sc, "bert-infer");
  CHECK(r.replicas == 4);
  CHECK(b.replicas == 4);
  CHECK(r.gpu_share_milli == 500);
  CHECK(r.arrivals.rate_qps * 1.5 == doctest::Approx(0.9 * 4 * 16 / 0.042007).epsilon(1e-3));  // 1371.2
  CHECK(b.arrivals.rate_qps * 1.5 == doctest::Approx(0.9 * 4 * 16 / 0.029703).epsilon(1e-3));  // 1939.2
  // Next to a dev-share job (ResNet-50 b32 proxy on half a GPU), gpu-let's pair model (Choi et al.,
  // ATC'22, INT_MODEL_CONSTANT.CSV): alpha = c0 l2_A + c1 l2_B + c2 dram_A + c3 dram_B + c4 with
  // l2_A = 0.26780 x 0.5, dram_A = 0.58425 x 0.5 (b16), l2_B = 0.28190 x 0.5, dram_B = 0.62272 x 0.5 (b32)
  // = 0.015118 + 0.100916 + 0.103665 + 0.027463 + 0.895369 = 1.14253.
  const serving::model_id rn = lm.id("resnet50");
  const std::vector<serving::tenant_util> job{lm.tenant(rn, 32, 0.5)};
  CHECK(lm.slowdown(rn, 16, 0.5, job) == doctest::Approx(1.14253).epsilon(1e-4));
}

TEST_CASE("gpushare best fit: a dev-share job goes onto the replica's half-used GPU, under both profiles") {
  // One node, one ResNet-50 replica (half a GPU), one dev-share job (half a GPU) running all along.
  // Best fit (gpushare's allocateGPUID: the fitting device with the least free capacity) puts the
  // second pod on the device the first half-fills, so GPU 0 is busy all the time (the job always runs)
  // and the other 7 never: the cluster's busy share is 1/8 = 12.5% in every sample. Had the two
  // landed on separate devices, the replica's busy time would add to it.
  serving::scenario sc = serving::load_scenario(shared_file);
  sc.nodes.count = 1;
  sc.services.resize(1);  // resnet50-infer
  sc.services[0].replicas = 1;
  sc.services[0].arrivals.rate_qps = 200.0;  // busy about 200 / 381 of the time: clearly visible
  std::vector<serving::training_config> keep;
  for (const auto& t : sc.training)
    if (t.name == "dev-share") keep.push_back(t);
  REQUIRE(keep.size() == 1);
  keep[0].count = 1;
  keep[0].submit_s = 0.0;
  sc.training = keep;
  sc.leaks.clear();
  const auto ab = run_ab(sc, {"kube-default", "gpusched"}, {1}, 600.0);
  for (std::size_t p = 0; p < 2; ++p) {
    CAPTURE(p);
    CHECK(ab.runs[p][0].gpu_util_mean_pct == doctest::Approx(12.5).epsilon(1e-6));
    CHECK(ab.runs[p][0].sched_success_pct == doctest::Approx(100.0));
  }
}

TEST_CASE("seed-shared.yaml: same seed, identical table") {
  const serving::scenario sc = serving::load_scenario(shared_file);
  const auto a = run_ab(sc, {"kube-default", "gpusched"}, {2}, 600.0);
  const auto b = run_ab(sc, {"kube-default", "gpusched"}, {2}, 600.0);
  CHECK(format_table(a) == format_table(b));
  CHECK(format_json(a) == format_json(b));
}
