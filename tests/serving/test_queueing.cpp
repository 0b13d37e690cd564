// Queueing theory and statistics: M/D/1 against Pollaczek-Khinchine, Poisson counts, determinism.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "gpusched/sim/serving/engine.hpp"
#include "support/data_paths.hpp"

using namespace gpusched;
using namespace gpusched::sim::serving;

namespace {


struct v100_model {
  util_table table = util_table::load(test_data::glet_2080ti_dir + "UTIL.CSV", duration_unit::seconds);
  interference_constants constants = interference_constants::load(test_data::glet_2080ti_dir + "INT_MODEL_CONSTANT.CSV");
  latency_model lm{table, constants, {{"resnet50", 0.2085, 0.0}, {"bert", 0.73, 0.0}}, share_scaling::amdahl_sm};
};
const v100_model& model() {
  static const v100_model m;
  return m;
}

// One replica of ResNet-50 with batch size 1 on a whole V100: Poisson arrivals, deterministic
// service time D = 22.7549 ms * 0.2085 (UTIL.CSV resnet50 batch 1, scaled): an M/D/1 queue.
service_metrics run_md1(double lambda, double horizon_s, std::uint64_t seed) {
  serving_engine e(model().lm);
  e.add_node(1, 32768, 80000);
  service_spec sp;
  sp.name = "resnet50";
  sp.model = 0;
  sp.max_batch = 1;
  sp.max_wait_s = 0.0;
  sp.slo_s = 1.0;
  arrival_params ap;
  ap.rate_qps = lambda;
  const service_id s = e.add_service(sp, arrival_process(ap, seed, horizon_s));
  e.place_replica(e.add_replica(s), 0);
  e.run_until(horizon_s + 10.0);
  return e.metrics(s);
}

}  // namespace

TEST_CASE("serving.queueing.M/D/1 mean wait matches Pollaczek-Khinchine") {
  const double d = 0.0227549 * 0.2085;
  const double rho = 0.6;
  const double mu = 1.0 / d;
  const double lambda = rho * mu;
  // Pollaczek-Khinchine for deterministic service: Wq = rho / (2 mu (1 - rho)) (Kleinrock, Queueing
  // Systems Vol. 1, 1975, eq. 5.75 with C_b^2 = 0).
  const double wq = rho / (2.0 * mu * (1.0 - rho));
  const double horizon = 25000.0 / lambda;  // ~25,000 requests per replication
  constexpr int replications = 16;
  std::vector<double> means;
  for (int k = 0; k < replications; ++k) {
    const service_metrics m = run_md1(lambda, horizon, 1000 + static_cast<std::uint64_t>(k));
    CHECK(m.completed == m.arrived);
    CHECK(m.mean_latency_s() - m.mean_queueing_s() == doctest::Approx(d).epsilon(1e-9));  // service is D
    means.push_back(m.mean_queueing_s());
  }
  // Independent replications (Law and Kelton, Simulation Modeling and Analysis, §9.4.1): the grand
  // mean is normal to a good approximation; its standard error comes from the replication means.
  double mean = 0.0;
  for (double x : means) mean += x;
  mean /= replications;
  double var = 0.0;
  for (double x : means) var += (x - mean) * (x - mean);
  var /= replications - 1;
  const double se = std::sqrt(var / replications);
  INFO("simulated Wq = " << mean << " s, theory " << wq << " s, standard error " << se);
  CHECK(se < 0.05 * wq);  // the test can tell M/D/1 (0.75 D here) from M/M/1 (1.5 D)
  CHECK(std::abs(mean - wq) < 4.0 * se);
}

TEST_CASE("serving.arrivals.Poisson count with diurnal swing and a burst matches the integral of the rate") {
  arrival_params p;
  p.rate_qps = 20.0;
  p.diurnal_amplitude = 0.5;
  p.diurnal_period_s = 1000.0;
  p.diurnal_peak_s = 0.0;
  p.bursts = {burst_window{2000.0, 100.0, 3.0}};
  const double horizon = 10000.0;  // ten whole periods: the cosine integrates to 0
  // Burst extra = (3 - 1) * integral of rate over [2000, 2100]
  //             = 2 * (20*100 + 20*0.5*(1000/2pi)*(sin(2pi*2.1) - sin(2pi*2))).
  const double burst_integral =
      20.0 * 100.0 + 10.0 * (1000.0 / (2 * std::numbers::pi)) * std::sin(2 * std::numbers::pi * 0.1);
  const double expected = 20.0 * horizon + 2.0 * burst_integral;  // ~205,871
  arrival_process a(p, 7, horizon);
  double count = 0.0;
  double in_burst = 0.0;
  double prev = 0.0;
  bool sorted = true;
  for (double t = a.next(); t < arrival_process::never; t = a.next()) {
    sorted = sorted && t >= prev;
    prev = t;
    count += 1.0;
    if (t >= 2000.0 && t < 2100.0) in_burst += 1.0;
  }
  CHECK(sorted);
  // Poisson: standard deviation sqrt(mean).
  CHECK(std::abs(count - expected) < 4.0 * std::sqrt(expected));
  CHECK(std::abs(in_burst - 3.0 * burst_integral) < 4.0 * std::sqrt(3.0 * burst_integral));
  CHECK(a.rate(0.0) == doctest::Approx(30.0));    // peak
  CHECK(a.rate(500.0) == doctest::Approx(10.0));  // trough
  CHECK(a.rate(2050.0) == doctest::Approx(3.0 * 20.0 * (1 + 0.5 * std::cos(2 * std::numbers::pi * 0.05))));
}

TEST_CASE("serving.arrivals.random bursts come from the seed; overlapping bursts take the largest multiplier") {
  arrival_params p;
  p.rate_qps = 1.0;
  p.random_bursts_per_day = 24.0;
  p.random_burst_duration_s = 600.0;
  p.random_burst_multiplier = 4.0;
  p.bursts = {burst_window{100.0, 100.0, 2.0}, burst_window{150.0, 100.0, 5.0}};
  const arrival_process a(p, 42, 86400.0);
  const arrival_process b(p, 42, 86400.0);
  const arrival_process c(p, 43, 86400.0);
  REQUIRE(a.burst_segments().size() >= 3);
  CHECK(a.burst_segments().size() == b.burst_segments().size());
  for (std::size_t i = 0; i < a.burst_segments().size(); ++i) {
    CHECK(a.burst_segments()[i].start_s == b.burst_segments()[i].start_s);
  }
  bool differs = a.burst_segments().size() != c.burst_segments().size();
  for (std::size_t i = 0; !differs && i < a.burst_segments().size(); ++i) {
    differs = a.burst_segments()[i].start_s != c.burst_segments()[i].start_s;
  }
  CHECK(differs);
  arrival_params q;
  q.rate_qps = 1.0;
  q.bursts = {burst_window{100.0, 100.0, 2.0}, burst_window{150.0, 100.0, 5.0}};
  const arrival_process d(q, 1, 1000.0);
  CHECK(d.rate(120.0) == 2.0);
  CHECK(d.rate(160.0) == 5.0);  // overlap: max, not product
  CHECK(d.rate(220.0) == 5.0);
  CHECK(d.rate(250.0) == 1.0);
  arrival_params bad;
  bad.diurnal_amplitude = 1.5;
  CHECK_THROWS_WITH_AS(arrival_process(bad, 1, 10.0), "arrivals.diurnal.amplitude: must be within 0..1",
                       invalid_argument_error);
}

TEST_CASE("serving.engine.same seed, same results; the arrival sequence does not depend on placement") {
  auto run = [](std::uint64_t seed, std::int32_t share) {
    serving_engine e(model().lm);
    const node_index n = e.add_node(2, 32768, 80000);
    arrival_params ap;
    ap.rate_qps = 150.0;
    ap.diurnal_amplitude = 0.3;
    ap.diurnal_period_s = 60.0;
    ap.random_bursts_per_day = 8640.0;  // one every 10 s
    ap.random_burst_duration_s = 2.0;
    ap.random_burst_multiplier = 3.0;
    std::vector<service_id> ids;
    for (int k = 0; k < 2; ++k) {
      service_spec sp;
      sp.name = k == 0 ? "resnet50" : "bert";
      sp.model = static_cast<model_id>(k);
      sp.max_batch = 8;
      sp.max_wait_s = 0.004;
      sp.gpu_share_milli = share;
      sp.routing = routing_policy::least_outstanding;
      ids.push_back(e.add_service(sp, arrival_process(ap, derive_seed(seed, static_cast<std::uint64_t>(k)), 120.0)));
      for (int r = 0; r < 2; ++r) e.place_replica(e.add_replica(ids.back()), e.slot(n, r));
    }
    e.run_until(130.0);
    std::vector<double> out;
    for (auto s : ids) {
      const auto& m = e.metrics(s);
      out.insert(out.end(), {static_cast<double>(m.arrived), static_cast<double>(m.completed), m.latency_sum_s,
                             m.p99_s(), static_cast<double>(m.batches)});
    }
    out.push_back(e.gpu_busy_seconds(0));
    return out;
  };
  const auto a = run(5, 500);
  const auto b = run(5, 500);
  CHECK(a == b);  // bit for bit
  const auto c = run(6, 500);
  CHECK(a != c);
  const auto d = run(5, 1000);  // another "placement": same arrivals, other latencies
  CHECK(d[0] == a[0]);
  CHECK(d[5] == a[5]);
  CHECK(d[2] != a[2]);
}

TEST_CASE("serving.metrics.histogram quantiles are within 1/128 above the exact nearest rank") {
  // Bucket layout by hand: 10 us is the first value of bucket 1, whose upper edge is 10 us * (1 + 1/128).
  CHECK(latency_histogram::bucket_of(0.0) == 0);
  CHECK(latency_histogram::bucket_of(1e-5) == 1);
  CHECK(latency_histogram::upper_edge(1) == doctest::Approx(1e-5 * (1 + 1.0 / 128)));
  CHECK(latency_histogram::bucket_of(2e-5) == 1 + 128);  // next power of two, first sub-bucket
  CHECK(latency_histogram::bucket_of(1e9) == latency_histogram::buckets - 1);

  rng g(99);
  std::vector<double> xs;
  latency_histogram h;
  for (int i = 0; i < 20000; ++i) {
    const double x = 0.002 + g.exponential(1.0 / 0.05);  // 2 ms + Exp(mean 50 ms)
    xs.push_back(x);
    h.add(x);
  }
  CHECK(h.count() == 20000);
  for (const double q : {0.01, 0.5, 0.95, 0.99, 0.999, 1.0}) {
    const double exact = exact_quantile(xs, q);
    INFO("q = " << q);
    CHECK(h.quantile(q) >= exact);
    CHECK(h.quantile(q) <= exact * (1 + 1.0 / 128));
  }
  // Nearest rank by hand: {1, 2, 3, 4} ms -> P50 = rank 2 = 2 ms, P95 = rank 4 = 4 ms.
  CHECK(exact_quantile({0.004, 0.001, 0.003, 0.002}, 0.5) == 0.002);
  CHECK(exact_quantile({0.004, 0.001, 0.003, 0.002}, 0.95) == 0.004);
}
