#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/scoring/fragmentation.hpp"
#include "gpusched/scoring/typical_pods.hpp"

using namespace gpusched;

namespace {

// Evaluates F_n for a node of model `node_model` with the shapes of `w`.
double frag_of(const typical_workload& w, std::vector<std::int32_t> free, milli cpu_left, const char* node_model) {
  std::vector<std::uint8_t> acc;
  w.accessible_for(short_name(node_model), acc);
  return node_fragmentation(free.data(), static_cast<int>(free.size()), cpu_left, w.shapes().data(), acc.data(),
                            static_cast<int>(acc.size()));
}

typical_pod shape(milli cpu, std::int32_t gpu_milli, std::int32_t num, const char* type, double pct) {
  typical_pod t;
  t.cpu_milli = cpu;
  t.gpu_milli = gpu_milli;
  t.num_gpu = num;
  t.gpu_type = type;
  if (*type != '\0') t.models.emplace_back(type);
  t.probability = pct / 100;
  return t;
}

// pkg/utils/frag_test.go TestingGenerateGetTypicalPods (hkust-adsl/kubernetes-scheduler-simulator).
typical_workload authors_typical_pods() {
  return typical_workload({
      shape(6000, 465, 1, "", 9.33),          shape(8000, 440, 1, "2080", 9.15),
      shape(8000, 475, 1, "T4", 8.76),        shape(8000, 440, 1, "P100", 8.72),
      shape(2000, 465, 1, "", 8.68),          shape(12000, 900, 1, "", 8.65),
      shape(4000, 900, 1, "", 8.43),          shape(16000, 678, 1, "T4", 8.36),
      shape(8000, 500, 1, "", 8.29),          shape(6000, 511, 1, "", 8.11),
      shape(14000, 1000, 2, "2080", 0.54),    shape(4000, 1000, 1, "2080", 0.43),
      shape(32000, 1000, 2, "T4", 0.43),      shape(16000, 1000, 1, "V100M16", 0.40),
      shape(64000, 1000, 2, "", 0.40),        shape(10000, 1000, 2, "", 0.40),
      shape(11400, 1000, 1, "T4", 0.36),      shape(16000, 1000, 1, "T4", 0.36),
      shape(4000, 1000, 2, "", 0.36),         shape(14000, 1000, 2, "V100M16", 0.36),
      shape(8000, 1000, 4, "", 0.36),         shape(16000, 1000, 2, "", 0.32),
      shape(2000, 1000, 1, "T4", 0.32),       shape(6000, 1000, 1, "", 0.32),
      shape(4000, 1000, 1, "", 0.32),         shape(5000, 1000, 1, "", 0.32),
      shape(32000, 1000, 4, "V100M16", 0.32), shape(32000, 1000, 2, "", 0.32),
      shape(24000, 1000, 8, "2080", 0.32),    shape(40000, 1000, 4, "", 0.29),
      shape(32000, 1000, 8, "", 0.29),        shape(32000, 1000, 1, "T4", 0.29),
      shape(16000, 1000, 1, "", 0.25),        shape(7000, 1000, 1, "V100M16", 0.25),
      shape(24000, 1000, 1, "T4", 0.25),
  });
}

// pkg/utils/frag_test.go TestingGenerateGetTypicalPodsWithNonGpu.
typical_workload authors_typical_pods_with_cpu() {
  return typical_workload({
      shape(15700, 1000, 1, "", 28.69), shape(11900, 1000, 1, "", 18.93), shape(11400, 1000, 1, "", 12.27),
      shape(1000, 0, 0, "", 7.36),      shape(18710, 1000, 1, "", 4.85),  shape(8200, 1000, 1, "", 3.79),
      shape(16400, 1000, 1, "", 3.31),  shape(9810, 1000, 1, "", 1.97),   shape(15200, 1000, 1, "", 1.87),
      shape(11200, 1000, 1, "", 1.81),  shape(14200, 1000, 1, "", 1.76),  shape(12000, 0, 0, "", 1.65),
      shape(14900, 1000, 1, "", 1.39),  shape(60200, 1000, 4, "", 1.23),  shape(64200, 1000, 8, "", 1.07),
      shape(32200, 1000, 4, "", 1.01),  shape(17400, 1000, 2, "", 0.91),  shape(30200, 1000, 2, "", 0.69),
      shape(16000, 1000, 1, "", 0.64),  shape(15000, 1000, 1, "", 0.59),  shape(64000, 1000, 8, "", 0.53),
      shape(15000, 0, 0, "", 0.53),     shape(11910, 1000, 1, "", 0.53),  shape(120200, 1000, 8, "", 0.48),
      shape(11300, 1000, 1, "", 0.37),  shape(30000, 1000, 2, "", 0.32),  shape(9800, 1000, 1, "", 0.32),
      shape(8000, 1000, 1, "", 0.32),   shape(2000, 1000, 1, "", 0.27),   shape(2000, 80, 1, "", 0.27),
      shape(1000, 1000, 1, "", 0.27),
  });
}

}  // namespace

TEST_CASE("fragmentation.classes of frag.go GetNodePodFrag") {
  const std::int32_t free[] = {200, 1000, 1000, 500};
  const frag_shape share{6000, 465, 1, 0.1}, two_whole{100, 1000, 2, 0.1}, three_whole{100, 1000, 3, 0.1},
      cpu_only{500, 0, 0, 0.1};
  CHECK(node_frag_class(free, 4, 1000, true, share) == frag_class::q4_lack_cpu);  // frag_test.go: Q4LackCpu
  CHECK(node_frag_class(free, 4, 8000, true, share) == frag_class::q3_satisfied);
  CHECK(node_frag_class(free, 4, 8000, false, share) == frag_class::no_access);
  CHECK(node_frag_class(free, 4, 1000, true, two_whole) == frag_class::q3_satisfied);
  CHECK(node_frag_class(free, 4, 1000, true, three_whole) == frag_class::q2_lack_gpu);
  CHECK(node_frag_class(free, 4, 50, true, three_whole) == frag_class::q1_lack_both);
  CHECK(node_frag_class(free, 4, 1000, true, cpu_only) == frag_class::xl_satisfied);
  CHECK(node_frag_class(free, 4, 100, false, cpu_only) == frag_class::xr_lack_cpu);  // no model check for CPU pods
  CHECK(gpu_milli_idle(free, 4) == 2700);                                            // frag_test.go
}

TEST_CASE("fragmentation.gpu_frag_milli matches frag_test.go TestGetGpuFragMilliByNodeResAndPodRes") {
  const std::int32_t used[] = {200, 1000, 1000, 500};
  const std::int32_t full4[] = {1000, 1000, 1000, 1000};
  CHECK(gpu_frag_milli(used, 4, 1000) == 700);
  CHECK(gpu_frag_milli(full4, 4, 1000) == 0);
  CHECK(gpu_frag_milli(used, 4, 200) == 0);
}

TEST_CASE("fragmentation.hand-computed node fragmentation") {
  // Shapes: s1 = 1000m CPU + 500 milli of one GPU (p 0.5), s2 = CPU only (p 0.5).
  const frag_shape shapes[] = {{1000, 500, 1, 0.5}, {0, 0, 0, 0.5}};
  const std::uint8_t acc[] = {1, 1};
  const std::int32_t free[] = {1000, 300};
  // s1 fits: the 300 device is too small for it -> 0.5 * 300 fragment; s2 sees all 1300 idle as fragment.
  CHECK(node_fragmentation(free, 2, 4000, shapes, acc, 2) == doctest::Approx(0.5 * 300 + 0.5 * 1300));
  // CPU left 500 < 1000: s1 lacks CPU, all idle GPU is fragment for both shapes.
  CHECK(node_fragmentation(free, 2, 500, shapes, acc, 2) == doctest::Approx(1300));
  const frag_amount fa = node_frag_amount(free, 2, 4000, shapes, acc, 2);
  CHECK(fa.by_class[static_cast<int>(frag_class::q2_lack_gpu)] == doctest::Approx(150));
  CHECK(fa.by_class[static_cast<int>(frag_class::q3_satisfied)] == doctest::Approx(500));
  CHECK(fa.by_class[static_cast<int>(frag_class::xl_satisfied)] == doctest::Approx(650));
  CHECK(fa.idle() == doctest::Approx(1300));
  // A model the shape may not use: NoAccess, everything is fragment for s1 too.
  const std::uint8_t no[] = {0, 1};
  CHECK(node_fragmentation(free, 2, 4000, shapes, no, 2) == doctest::Approx(1300));
  // No GPU left: nothing to fragment.
  const std::int32_t none[] = {0, 0};
  CHECK(node_fragmentation(none, 2, 4000, shapes, acc, 2) == 0.0);
}

TEST_CASE("fragmentation.matches the authors' frag_test.go values") {
  const typical_workload w = authors_typical_pods();
  // TestNodeGpuShareFragAmountScore / TestNodeGpuShareFragAmount
  CHECK(frag_of(w, {200, 1000, 1000, 500}, 1000, "1080") == doctest::Approx(2566.62).epsilon(1e-6));
  CHECK(frag_of(w, {1000, 1000, 1000, 1000}, 1000, "1080") == doctest::Approx(3802.40).epsilon(1e-6));
  CHECK(frag_of(w, {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 1000, "1080") ==
        doctest::Approx(7604.80).epsilon(1e-6));
  const typical_workload one({shape(6000, 465, 1, "", 9.33)});
  CHECK(frag_of(one, {200, 1000, 1000, 500}, 1000, "1080") == doctest::Approx(251.91));

  // TestNodeGpuShareFragAmountWithNonGpu
  const typical_workload cw = authors_typical_pods_with_cpu();
  CHECK(frag_of(cw, std::vector<std::int32_t>(8, 1000), 64000, "P100") == doctest::Approx(887.20));
  CHECK(frag_of(cw, {1000, 1000, 1000, 1000, 0, 0, 0, 0}, 32000, "P100") == doctest::Approx(554.4));
  CHECK(frag_of(cw, {1000, 1000, 1000, 1000, 0, 0, 0, 0}, 0, "P100") == doctest::Approx(4000));
}

TEST_CASE("fragmentation.FGD score arithmetic") {
  CHECK(fgd_paper_score(800, 800) == 50);
  CHECK(fgd_paper_score(800, 650) == 53);  // 100 / (1 + e^-0.15) = 53.74
  CHECK(fgd_paper_score(800, 500) == 57);  // 57.44
  CHECK(fgd_paper_score(800, 300) == 62);  // 62.25
  CHECK(fgd_paper_score(0, 1000) == 26);   // 26.89
  CHECK(fgd_paper_score(800, 839) == 49);  // 49.03: growths of 1..40 milli fall in the same bucket
  CHECK(fgd_paper_score(800, 801) == 49);  // 49.98
  CHECK(fgd_paper_score(800, 761) == 50);  // 50.97
  CHECK(fgd_fine_score(800, 800) == 50'000'000);
  CHECK(fgd_fine_score(800, 650) == 53'742'985);
}

TEST_CASE("typical_pods.from_pods keeps the popular shapes and renormalises") {
  std::vector<pod> pods;
  auto add = [&](int n, pod p) {
    for (int i = 0; i < n; ++i) pods.push_back(p);
  };
  add(5, make_pod("a").cpu(1000).gpu_share(500));
  add(3, make_pod("b").cpu(2000).gpus(1));
  add(1, make_pod("c").cpu(500));
  add(1, make_pod("d").cpu(100).gpus(2).allow_model("T4"));

  SUBCASE("95% keeps every shape, in count order, ties by descending CPU") {
    const auto w = typical_workload::from_pods(pods);
    REQUIRE(w.size() == 4);
    CHECK(w.pods()[0].cpu_milli == 1000);
    CHECK(w.pods()[0].probability == doctest::Approx(0.5));
    CHECK(w.pods()[1].probability == doctest::Approx(0.3));
    CHECK(w.pods()[2].cpu_milli == 500);  // tie at one pod: the larger CPU first
    CHECK(w.pods()[3].gpu_type == "T4");
    CHECK(w.pods()[3].probability == doctest::Approx(0.1));
  }
  SUBCASE("80% stops at 8 of 10 pods and renormalises") {
    const auto w = typical_workload::from_pods(pods, {80.0, 1, true});
    REQUIRE(w.size() == 2);
    CHECK(w.pods()[0].probability == doctest::Approx(0.625));
    CHECK(w.pods()[1].probability == doctest::Approx(0.375));
  }
  SUBCASE("step 3 adds three shapes per round") {
    const auto w = typical_workload::from_pods(pods, {80.0, 3, true});
    REQUIRE(w.size() == 3);
    CHECK(w.pods()[0].probability == doctest::Approx(5.0 / 9));
    CHECK(w.pods()[2].probability == doctest::Approx(1.0 / 9));
  }
  SUBCASE("without CPU pods") {
    const auto w = typical_workload::from_pods(pods, {95.0, 1, false});
    REQUIRE(w.size() == 3);
    CHECK(w.pods()[2].gpu_type == "T4");
    CHECK(w.pods()[2].probability == doctest::Approx(1.0 / 9));
  }
  SUBCASE("bad options and shapes name the field") {
    CHECK_THROWS_WITH_AS(typical_workload::from_pods(pods, {0.0, 1, true}),
                         "typical_pod_options.popularity_threshold_pct: must be within (0, 100]",
                         invalid_argument_error);
    CHECK_THROWS_AS(typical_workload::from_pods(pods, {95.0, 0, true}), invalid_argument_error);
    CHECK_THROWS_WITH_AS(typical_workload({shape(1, 500, 1, "", 150)}),
                         "typical_pods[0].probability: must be within 0..1", invalid_argument_error);
  }
}
