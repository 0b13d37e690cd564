// serving_engine: batching, co-location, CPU contention, leaks, against hand-worked timelines.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/sim/serving/engine.hpp"

using namespace gpusched;
using namespace gpusched::sim::serving;

namespace {

// A made-up model "m" with round numbers: batch b takes 6 + 4b ms solo, SM 50%, L2 40%, DRAM 60%.
util_table toy_table() {
  return util_table::parse(
      "bench,batch,avg_duration(ms),SM_util(%),l2_util(%),mem_util(%)\n"
      "m,1,10,50,40,60\n"
      "m,2,14,50,40,60\n"
      "m,3,18,50,40,60\n"
      "m,4,22,50,40,60\n",
      "toy.csv", duration_unit::milliseconds);
}
const interference_constants toy_constants{0.1, 0.7, 0.35, 0.09, 0.9};

service_spec toy_service(std::string name, int max_batch, double max_wait_s, std::int32_t share = 1000) {
  service_spec s;
  s.name = std::move(name);
  s.model = 0;
  s.max_batch = max_batch;
  s.max_wait_s = max_wait_s;
  s.slo_s = 0.0215;
  s.gpu_share_milli = share;
  s.gpu_memory_mib = 400;
  return s;
}

}  // namespace

TEST_CASE("serving.engine.dynamic batching timeline worked by hand") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  serving_engine e(lm, engine_options{0.0, 10.0, true, true});
  const node_index n = e.add_node(1, 1000, 8000);
  const service_id s =
      e.add_service(toy_service("svc", 4, 0.005), arrival_process::from_times({0.000, 0.001, 0.002, 0.020, 0.100}));
  const replica_id r = e.add_replica(s);
  e.place_replica(r, e.slot(n, 0));
  CHECK(e.state(r) == replica_state::ready);
  e.run_until(1.0);
  // 0.005: the oldest has waited max_wait -> batch of 3 (18 ms) until 0.023.
  // 0.020 arrives while busy; at 0.023 it has waited 3 ms < 5 ms -> timer at 0.025, batch of 1 until 0.035.
  // 0.100 waits 5 ms -> batch of 1 from 0.105 until 0.115.
  const auto& m = e.metrics(s);
  CHECK(m.arrived == 5);
  CHECK(m.completed == 5);
  CHECK(m.batches == 3);
  CHECK(m.mean_batch_size() == doctest::Approx(5.0 / 3.0));
  REQUIRE(m.samples.size() == 5);
  const std::vector<double> expected{0.023, 0.022, 0.021, 0.015, 0.015};
  for (std::size_t i = 0; i < 5; ++i) CHECK(m.samples[i] == doctest::Approx(expected[i]).epsilon(1e-9));
  CHECK(m.mean_latency_s() == doctest::Approx(0.096 / 5));
  CHECK(m.mean_queueing_s() == doctest::Approx((0.005 + 0.004 + 0.003 + 0.005 + 0.005) / 5));
  CHECK(exact_quantile(m.samples, 0.5) == doctest::Approx(0.021));  // nearest rank 3 of 5
  CHECK(m.p50_s() >= 0.021 * (1 - 1e-9));
  CHECK(m.p50_s() <= 0.021 * (1 + 1.0 / 128));
  CHECK(m.p99_s() >= 0.023 * (1 - 1e-9));
  CHECK(m.p99_s() <= 0.023 * (1 + 1.0 / 128));
  CHECK(m.completed_within_slo == 3);  // SLO 21.5 ms: 23 and 22 ms miss
  CHECK(m.slo_attainment() == doctest::Approx(0.6));
  CHECK(m.throughput_qps(1.0) == doctest::Approx(5.0));
  // Busy: [0.005, 0.023] + [0.025, 0.035] + [0.105, 0.115] = 38 ms.
  CHECK(e.gpu_busy_seconds(e.slot(n, 0)) == doctest::Approx(0.038));
}

TEST_CASE("serving.engine.a full queue starts a batch at once and timeouts drop stale requests") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  serving_engine e(lm, engine_options{0.0, 10.0, true, true});
  e.add_node(1, 1000, 8000);
  service_spec sp = toy_service("svc", 2, 1.0);
  sp.timeout_s = 0.030;
  const service_id s = e.add_service(sp, arrival_process::from_times({0.0, 0.001, 0.002, 0.003, 0.004, 0.005}));
  e.place_replica(e.add_replica(s), 0);
  e.run_until(2.0);
  // 0.001: two queued = max_batch -> batch (14 ms) until 0.015; 0.002..0.005 queue.
  // 0.015: two queued -> batch until 0.029; 0.029: 0.004 and 0.005 waited < 30 ms -> batch until 0.043.
  const auto& m = e.metrics(s);
  CHECK(m.completed == 6);
  CHECK(m.batches == 3);
  CHECK(m.timed_out == 0);
  CHECK(m.samples.back() == doctest::Approx(0.043 - 0.005));

  serving_engine e2(lm, engine_options{0.0, 10.0, true, true});
  e2.add_node(1, 1000, 8000);
  sp.timeout_s = 0.0125;
  const service_id s2 = e2.add_service(sp, arrival_process::from_times({0.0, 0.001, 0.002, 0.003, 0.004, 0.005}));
  e2.place_replica(e2.add_replica(s2), 0);
  e2.run_until(2.0);
  // At 0.015 the request of 0.002 (13 ms) is stale; 0.003 and 0.004 form the batch until 0.029;
  // at 0.029 the request of 0.005 waited 24 ms > 12.5 ms and is dropped.
  const auto& m2 = e2.metrics(s2);
  CHECK(m2.timed_out == 2);
  CHECK(m2.completed == 4);
  CHECK(m2.completed_within_slo == 2);                       // 15 and 14 ms; 26 and 25 ms miss the 21.5 ms SLO
  CHECK(m2.slo_attainment() == doctest::Approx(2.0 / 6.0));  // dropped requests count as misses
}

TEST_CASE("serving.engine.co-tenants that are running slow a batch down, idle ones do not") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.002}}, share_scaling::amdahl_sm);
  serving_engine e(lm, engine_options{0.0, 10.0, true, true});
  const node_index n = e.add_node(2, 1000, 8000);
  const service_id a = e.add_service(toy_service("a", 1, 0.0, 500), arrival_process::from_times({0.0}));
  const service_id b = e.add_service(toy_service("b", 1, 0.0, 500), arrival_process::from_times({0.001}));
  e.place_replica(e.add_replica(a), e.slot(n, 0));
  e.place_replica(e.add_replica(b), e.slot(n, 0));
  e.run_until(1.0);
  // a alone: 10 ms * ((1 - 0.5) + 0.5 / 0.5) = 15 ms GPU + 2 ms CPU.
  CHECK(e.metrics(a).samples.at(0) == doctest::Approx(0.017));
  // b next to a's running batch (l2 0.4*0.5, dram 0.6*0.5 for both):
  // alpha = 0.1*0.2 + 0.7*0.2 + 0.35*0.3 + 0.09*0.3 + 0.9 = 1.192.
  CHECK(e.metrics(b).samples.at(0) == doctest::Approx(0.015 * 1.192 + 0.002));

  // A training worker as a permanent neighbour (proxy m batch 1, whole GPU: l2 0.4, dram 0.6) and an
  // over-committed node CPU (demand 2x capacity).
  serving_engine e2(lm, engine_options{0.0, 10.0, true, true});
  const node_index n2 = e2.add_node(1, 1000, 8000);
  const service_id c = e2.add_service(toy_service("c", 1, 0.0, 500), arrival_process::from_times({0.0, 1.0}));
  e2.place_replica(e2.add_replica(c), 0);
  const external_id x = e2.add_external(0, 0, 1, 1000, 100);
  e2.set_node_cpu_demand(n2, 16000);
  e2.run_until(0.5);
  const double alpha = 0.1 * 0.2 + 0.7 * 0.4 + 0.35 * 0.3 + 0.09 * 0.6 + 0.9;  // 1.359
  CHECK(e2.metrics(c).samples.at(0) == doctest::Approx(0.015 * alpha + 0.002 * 2.0));
  CHECK(e2.gpu_busy_seconds(0) == doctest::Approx(0.5));  // the training worker runs all the time
  e2.remove_external(x);
  e2.set_node_cpu_demand(n2, 0);
  e2.run_until(2.0);
  CHECK(e2.metrics(c).samples.at(1) == doctest::Approx(0.017));
  CHECK(e2.gpu_busy_seconds(0) == doctest::Approx(0.5 + 0.017));
}

TEST_CASE("serving.engine.a leak runs the GPU out of memory; the leaking replica crashes and restarts") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  serving_engine e(lm, engine_options{0.0, 10.0, true, true});
  e.add_node(1, 1000, 8000);
  const service_id s = e.add_service(toy_service("svc", 1, 0.0, 500), arrival_process::from_times({}));
  const replica_id r0 = e.add_replica(s);
  const replica_id r1 = e.add_replica(s);
  e.place_replica(r0, 0);
  e.place_replica(r1, 0);
  (void)e.take_notifications();
  e.schedule_leak(r1, 5.0, 10.0);  // 10 MiB/s from t = 5; 200 MiB free -> OOM at 25
  e.run_until(15.0);
  CHECK(e.gpu_memory_used_mib(0) == doctest::Approx(900.0));
  CHECK(e.replica_memory_mib(r1) == doctest::Approx(500.0));
  e.run_until(24.999);
  CHECK(e.state(r1) == replica_state::ready);
  e.run_until(25.0);
  CHECK(e.state(r1) == replica_state::crashed);
  CHECK(e.state(r0) == replica_state::ready);
  CHECK(e.gpu_memory_used_mib(0) == doctest::Approx(400.0));
  auto notes = e.take_notifications();
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].what == notification::kind::leak_started);
  CHECK(notes[0].time == 5.0);
  CHECK(notes[1].what == notification::kind::replica_oom);
  CHECK(notes[1].replica == r1);
  CHECK(notes[1].time == doctest::Approx(25.0));
  e.run_until(40.0);  // restarted in place at 35 without the leak
  CHECK(e.state(r1) == replica_state::ready);
  CHECK(e.gpu_memory_used_mib(0) == doctest::Approx(800.0));
  notes = e.take_notifications();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].what == notification::kind::replica_ready);
  CHECK(notes[0].time == doctest::Approx(35.0));
}

TEST_CASE("serving.engine.a placement that does not fit in GPU memory crashes the newcomer") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  serving_engine e(lm, engine_options{0.0, 10.0, false, false});
  e.add_node(1, 1000, 8000);
  const service_id s = e.add_service(toy_service("svc", 1, 0.0, 300), arrival_process::from_times({}));
  const replica_id r0 = e.add_replica(s);
  const replica_id r1 = e.add_replica(s);
  const replica_id r2 = e.add_replica(s);
  e.place_replica(r0, 0);
  e.place_replica(r1, 0);
  e.place_replica(r2, 0);  // 3 x 400 MiB > 1000 MiB
  CHECK(e.state(r0) == replica_state::ready);
  CHECK(e.state(r1) == replica_state::ready);
  CHECK(e.state(r2) == replica_state::crashed);
  CHECK(e.gpu_memory_used_mib(0) == 800.0);
  e.run_until(100.0);
  CHECK(e.state(r2) == replica_state::crashed);  // auto_restart off: the cluster simulator decides
  e.remove_replica(r2);
  CHECK(e.state(r2) == replica_state::removed);
  CHECK(e.replicas_on(0).size() == 2);
}

TEST_CASE("serving.engine.removal fails the replica's requests; no ready replica rejects") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  serving_engine e(lm, engine_options{0.0, 10.0, true, true});
  e.add_node(1, 1000, 8000);
  const service_id s = e.add_service(toy_service("svc", 1, 0.0), arrival_process::from_times({0.0, 0.001, 0.002, 0.5}));
  const replica_id r = e.add_replica(s);
  e.place_replica(r, 0);
  e.run_until(0.003);  // one running (0.000), two queued
  CHECK(e.queue_length(r) == 2);
  CHECK(e.running_batch(r) == 1);
  e.remove_replica(r);
  CHECK(e.state(r) == replica_state::removed);
  CHECK(e.gpu_memory_used_mib(0) == 0.0);
  e.run_until(1.0);
  const auto& m = e.metrics(s);
  CHECK(m.failed == 3);
  CHECK(m.rejected == 1);
  CHECK(m.completed == 0);
  CHECK(m.slo_attainment() == 0.0);
  CHECK(e.gpu_busy_seconds(0) == doctest::Approx(0.003));
  CHECK_THROWS_AS(e.place_replica(r, 5), invalid_argument_error);
  e.place_replica(r, 0);
  CHECK(e.state(r) == replica_state::ready);
}

TEST_CASE("serving.engine.round robin and least outstanding routing") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  for (const auto policy : {routing_policy::round_robin, routing_policy::least_outstanding}) {
    serving_engine e(lm, engine_options{0.0, 10.0, true, true});
    e.add_node(2, 1000, 8000);
    service_spec sp = toy_service("svc", 1, 0.0);
    sp.routing = policy;
    // Four requests 1 ms apart; 10 ms each.
    const service_id s = e.add_service(sp, arrival_process::from_times({0.0, 0.001, 0.002, 0.003}));
    const replica_id r0 = e.add_replica(s);
    const replica_id r1 = e.add_replica(s);
    e.place_replica(r0, 0);
    e.place_replica(r1, 1);
    e.run_until(0.0035);
    // Both policies alternate here: r0 gets 0.000 and 0.002, r1 gets 0.001 and 0.003.
    CHECK(e.running_batch(r0) == 1);
    CHECK(e.queue_length(r0) == 1);
    CHECK(e.running_batch(r1) == 1);
    CHECK(e.queue_length(r1) == 1);
  }
}

TEST_CASE("serving.engine.invalid set-up names the field and changes nothing") {
  const util_table t = toy_table();
  const latency_model lm(t, toy_constants, {{"m", 1.0, 0.0}}, share_scaling::none);
  serving_engine e(lm);
  e.add_node(1, 1000, 8000);
  CHECK_THROWS_WITH_AS(e.add_service(toy_service("x", 5, 0.0), {}),
                       "service 'x'.max_batch: must be within the profiled batch sizes 1..4", invalid_argument_error);
  CHECK_THROWS_WITH_AS(e.add_service(toy_service("x", 1, 0.0, 0), {}),
                       "service 'x'.gpu_share_milli: must be within 1..1000", invalid_argument_error);
  CHECK(e.service_count() == 0);
  CHECK_THROWS_AS(e.add_node(65, 1, 1), invalid_argument_error);
  CHECK(e.node_count() == 1);
  CHECK_THROWS_AS(e.add_external(0, 0, 9, 500, 0), invalid_argument_error);
  CHECK_THROWS_AS((void)e.slot(0, 1), invalid_argument_error);
  CHECK_THROWS_AS(e.run_until(-1.0), invalid_argument_error);
}
