// Latency model: gpu-let's tables and interference model against hand-computed values.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/sim/serving/latency_model.hpp"
#include "support/data_paths.hpp"

using namespace gpusched;
using namespace gpusched::sim::serving;

namespace {


const util_table& table_2080ti() {
  static const util_table t = util_table::load(test_data::glet_2080ti_dir + "UTIL.CSV", duration_unit::seconds);
  return t;
}
const interference_constants& constants_2080ti() {
  static const interference_constants c = interference_constants::load(test_data::glet_2080ti_dir + "INT_MODEL_CONSTANT.CSV");
  return c;
}

// Literal values of the published files (UTIL.CSV rows resnet50/bert, INT_MODEL_CONSTANT.CSV).
constexpr double c0 = 0.11290838746224496, c1 = 0.7159598718755424, c2 = 0.35486591956022895, c3 = 0.0882038259888065,
                 c4 = 0.8953693917277343;
constexpr double r16_l2 = 0.26780005182643528, r16_dram = 0.5842497335853165, r16_sm = 0.47682975739867;
constexpr double b16_l2 = 0.18009285815675376, b16_dram = 0.3440628233174757;
constexpr double r32_l2 = 0.281903444258127, r32_dram = 0.6227229222750162;

}  // namespace

TEST_CASE("serving.profile.reads gpu-let's 2080 Ti files") {
  const auto& t = table_2080ti();
  CHECK(t.models().size() == 9);  // bert densenet161 googlenet lenet mnasnet1_0 mobilenet_v2 resnet50 ssd vgg16
  const model_profile* r = t.find("resnet50");
  REQUIRE(r != nullptr);
  CHECK(r->min_batch() == 1);
  CHECK(r->max_batch() == 32);
  CHECK(r->points.size() == 10);
  const util_point p = r->at(16);
  CHECK(p.duration_s == doctest::Approx(0.08446188679245287));
  CHECK(p.l2 == doctest::Approx(r16_l2));
  CHECK(p.dram == doctest::Approx(r16_dram));
  CHECK(p.sm == doctest::Approx(r16_sm));
  const auto& c = constants_2080ti();  // CRLF file
  CHECK(c.l2_self == c0);
  CHECK(c.l2_other == c1);
  CHECK(c.dram_self == c2);
  CHECK(c.dram_other == c3);
  CHECK(c.constant == c4);
}

TEST_CASE("serving.profile.linear interpolation between neighbouring profiled batches") {
  const model_profile* r = table_2080ti().find("resnet50");
  REQUIRE(r != nullptr);
  // batch 10 lies halfway between the profiled 8 (0.05678154867256637 s) and 12 (0.07352048387096773 s)
  const util_point p = r->at(10);
  CHECK(p.duration_s == doctest::Approx((0.05678154867256637 + 0.07352048387096773) / 2));
  CHECK(p.l2 == doctest::Approx((0.25804610379945494 + 0.25166019065347164) / 2));
  // batch 3: halfway between the profiled 2 and 4
  CHECK(r->at(3).duration_s == doctest::Approx((0.026184930875576037 + 0.03603710407239818) / 2));
  CHECK_THROWS_AS((void)r->at(0), invalid_argument_error);
  CHECK_THROWS_AS((void)r->at(33), invalid_argument_error);
}

TEST_CASE("serving.interference.gpu-let worked examples (2080 Ti)") {
  const auto& c = constants_2080ti();
  const auto& t = table_2080ti();
  const util_point r16 = t.find("resnet50")->at(16);
  const util_point b16 = t.find("bert")->at(16);
  const util_point r32 = t.find("resnet50")->at(32);

  // ResNet-50 batch 16 at 50% next to BERT batch 16 at 50%: published alpha ~= 1.094.
  const double by_hand_1 = c0 * r16_l2 * 0.5 + c1 * b16_l2 * 0.5 + c2 * r16_dram * 0.5 + c3 * b16_dram * 0.5 + c4;
  const double a1 = pairwise_slowdown(c, scaled_util(r16.l2, r16.dram, 0.5), scaled_util(b16.l2, b16.dram, 0.5));
  CHECK(a1 == doctest::Approx(by_hand_1).epsilon(1e-12));
  CHECK(a1 == doctest::Approx(1.094).epsilon(0.0005));

  // ResNet-50 batch 32 at 100% next to another copy: published alpha ~= 1.405.
  const double by_hand_2 = (c0 + c1) * r32_l2 + (c2 + c3) * r32_dram + c4;
  const tenant_util u32 = scaled_util(r32.l2, r32.dram, 1.0);
  const double a2 = pairwise_slowdown(c, u32, u32);
  CHECK(a2 == doctest::Approx(by_hand_2).epsilon(1e-12));
  CHECK(a2 == doctest::Approx(1.405).epsilon(0.0005));
}

TEST_CASE("serving.interference.clamp and the multi-tenant rule") {
  // Constants whose fit gives alpha < 1 for light pairs (like gpu-let's 3080 file): clamped to 1.
  interference_constants light{-0.18, 0.04, 0.13, -0.06, 0.9};
  CHECK(pairwise_slowdown(light, {0.1, 0.1}, {0.1, 0.1}) == 1.0);

  interference_constants c{0.1, 0.7, 0.35, 0.09, 0.9};
  const tenant_util self{0.2, 0.4};
  const tenant_util a{0.3, 0.5};
  const tenant_util b{0.1, 0.2};
  const double pa = 0.1 * 0.2 + 0.7 * 0.3 + 0.35 * 0.4 + 0.09 * 0.5 + 0.9;  // 1.315
  const double pb = 0.1 * 0.2 + 0.7 * 0.1 + 0.35 * 0.4 + 0.09 * 0.2 + 0.9;  // 1.148
  const std::vector<tenant_util> none;
  const std::vector<tenant_util> one{a};
  const std::vector<tenant_util> two{a, b};
  CHECK(multi_tenant_slowdown(c, self, none) == 1.0);
  CHECK(multi_tenant_slowdown(c, self, one) == doctest::Approx(pa));
  CHECK(multi_tenant_slowdown(c, self, two) == doctest::Approx(1.0 + (pa - 1.0) + (pb - 1.0)));
  CHECK(multi_tenant_slowdown(c, self, two) == doctest::Approx(1.463));
}

TEST_CASE("serving.latency_model.service time = solo * share * alpha + cpu * contention") {
  const auto& t = table_2080ti();
  const latency_model lm(t, constants_2080ti(), {{"resnet50", 0.2085, 0.001}, {"bert", 0.73, 0.0002}},
                         share_scaling::amdahl_sm);
  const model_id res = lm.id("resnet50");
  const model_id bert = lm.id("bert");
  CHECK(lm.solo_gpu_seconds(res, 16) == doctest::Approx(0.08446188679245287 * 0.2085));
  CHECK(lm.solo_gpu_seconds(bert, 1) == doctest::Approx(0.009175484764542942 * 0.73));
  // Amdahl on the SM-bound part: (1 - u_sm) + u_sm / share = 1 + u_sm at share 0.5.
  CHECK(lm.share_factor(res, 16, 0.5) == doctest::Approx(1.0 + r16_sm));
  CHECK(lm.share_factor(res, 16, 1.0) == doctest::Approx(1.0));

  const std::vector<tenant_util> neighbours{lm.tenant(bert, 16, 0.5)};
  const double alpha = c0 * r16_l2 * 0.5 + c1 * b16_l2 * 0.5 + c2 * r16_dram * 0.5 + c3 * b16_dram * 0.5 + c4;
  const double expected = 0.08446188679245287 * 0.2085 * (1.0 + r16_sm) * alpha + 16 * 0.001 * 1.5;
  CHECK(lm.service_seconds(res, 16, 0.5, neighbours, 1.5) == doctest::Approx(expected).epsilon(1e-12));
  CHECK(lm.service_seconds(res, 1, 1.0, {}, 1.0) == doctest::Approx(0.0227549 * 0.2085 + 0.001));

  const latency_model linear(t, constants_2080ti(), {{"resnet50", 1.0, 0.0}}, share_scaling::linear);
  CHECK(linear.share_factor(0, 8, 0.25) == doctest::Approx(4.0));
  const latency_model none(t, constants_2080ti(), {{"resnet50", 1.0, 0.0}}, share_scaling::none);
  CHECK(none.share_factor(0, 8, 0.25) == 1.0);
}

TEST_CASE("serving.latency_model.cpu contention is processor sharing above capacity") {
  CHECK(cpu_contention_slowdown(40000, 80000) == 1.0);
  CHECK(cpu_contention_slowdown(80000, 80000) == 1.0);
  CHECK(cpu_contention_slowdown(120000, 80000) == doctest::Approx(1.5));
  CHECK(cpu_contention_slowdown(100, 0) == 1.0);
}

TEST_CASE("serving.latency_model.bad parameters name the field") {
  const auto& t = table_2080ti();
  CHECK_THROWS_WITH_AS(latency_model(t, constants_2080ti(), {{"resnet-50", 1.0, 0.0}}),
                       "latency_model.models[0].name: model 'resnet-50' is not in the profile table",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(latency_model(t, constants_2080ti(), {{"bert", 1.0, 0.0}, {"resnet50", 0.0, 0.0}}),
                       "latency_model.models[1].gpu_scale: must be > 0", invalid_argument_error);
  CHECK_THROWS_WITH_AS(latency_model(t, constants_2080ti(), {{"bert", 1.0, -1.0}}),
                       "latency_model.models[0].cpu_s_per_item: must be >= 0", invalid_argument_error);
  const latency_model lm(t, constants_2080ti(), {{"bert", 1.0, 0.0}});
  CHECK_THROWS_WITH_AS((void)lm.id("gpt2", "services[0].model"),
                       "services[0].model: model 'gpt2' has no latency parameters", invalid_argument_error);
}

TEST_CASE("serving.csv.malformed rows are file_error with file:line") {
  const std::string header = "bench,batch,avg_duration(ms),SM_util(%),l2_util(%),mem_util(%),a,b\n";
  auto error_of = [](const std::string& text) -> std::string {
    try {
      (void)util_table::parse(text, "UTIL.CSV", duration_unit::seconds);
    } catch (const file_error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string ok_row = "resnet50,1,0.02,19,15,27,24,80,\n";
  CHECK(error_of(header + ok_row) == "no error");
  CHECK(error_of(header + ok_row + "resnet50,x,0.02,19,15,27,24,80,\n") == "UTIL.CSV:3: batch: 'x' is not an integer");
  CHECK(error_of(header + "\n" + ok_row + "bert,2,0.01,19,15,27,24\n") == "UTIL.CSV:4: expected 8 columns, got 7");
  CHECK(error_of(header + "bert,2,abc,19,15,27,24,80,\n") == "UTIL.CSV:2: avg_duration: 'abc' is not a finite number");
  CHECK(error_of(header + "bert,2,0.01,19,150,27,24,80,\n") == "UTIL.CSV:2: l2_util: must be within 0..100 %");
  CHECK(error_of(header + "bert,2,-0.01,19,15,27,24,80,\n") == "UTIL.CSV:2: avg_duration: must be > 0");
  CHECK(error_of(header + ok_row + ok_row) == "UTIL.CSV:3: duplicate row for resnet50 batch 1");
  CHECK(error_of("model,batch,avg_duration,SM_util,l2_util,mem_util\n") ==
        "UTIL.CSV:1: header column 1 is 'model', expected 'bench...'");
  CHECK(error_of(header) == "UTIL.CSV:1: no data rows");

  auto const_error = [](const std::string& text) -> std::string {
    try {
      (void)interference_constants::parse(text, "C.CSV");
    } catch (const file_error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string ch = "l2_util_m1,l2_util_m2,dram_util_m1,dram_util_m2,constant\r\n";
  CHECK(const_error(ch + "0.1,0.7,0.3,0.08,0.9\r\n") == "no error");
  CHECK(const_error(ch + "0.1,0.7,0.3,nan,0.9\r\n") == "C.CSV:2: dram_util_m2: 'nan' is not a finite number");
  CHECK(const_error(ch + "0.1,0.7,0.3,0.9\r\n") == "C.CSV:2: expected 5 columns, got 4");
  CHECK(const_error(ch + "0.1,0.7,0.3,0.08,0.9\r\n0.1,0.7,0.3,0.08,0.9\r\n") ==
        "C.CSV:3: expected a header row and exactly one row of constants, got 3 rows");
  CHECK_THROWS_WITH_AS((void)util_table::load("/nonexistent/UTIL.CSV", duration_unit::seconds),
                       "/nonexistent/UTIL.CSV:0: cannot open file", file_error);
}
