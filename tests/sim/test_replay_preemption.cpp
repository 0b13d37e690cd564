// The openb replays with preemption switched on (paper_options / dynamic_options::preemption,
// gpusched-sim --preemption): the counts in the result field lists, and priorities from the trace's
// QoS column (set_priorities_by_qos). One node with one GPU and whole-GPU pods, so that the
// timelines can be worked out by hand.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/sim/dynamic.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/replay_fields.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

using namespace gpusched;
using namespace gpusched::sim;

namespace {

openb_pod timed(const char* name, const char* qos, std::int64_t created, std::int64_t deleted) {
  openb_pod p;
  p.spec = make_pod(name).cpu(1000).memory(1000).gpus(1);
  p.qos = qos;
  p.has_times = true;
  p.creation_time = created;
  p.deletion_time = deleted;
  p.scheduled_time = created;
  return p;
}


template <class Fields, class R>
double field(const Fields& fields, std::string_view key, const R& r) {
  for (const auto& f : fields) {
    if (f.key == key) return f.get(r);
  }
  FAIL("no field " << key);
  return -1.0;
}

// A dynamic replay of t with priorities from its QoS column (set_priorities_by_qos), the fit-only
// profile and preemption on or off.
dynamic_result replay_by_qos(trace t, bool preemption) {
  set_priorities_by_qos(t);
  dynamic_options o;
  o.preemption = preemption;
  return run_dynamic(t, testing::fit_only_profile(), o);
}

// lo (BE) runs from 0 for 100 s; hi (LS) arrives at 10 for 20 s and gives up at 30.
trace one_gpu_trace() {
  return trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)}, {timed("lo", "BE", 0, 100), timed("hi", "LS", 10, 30)});
}

}  // namespace

TEST_CASE("set_priorities_by_qos: Koordinator's classes, LS/Guaranteed/Burstable 9000 and BE 5000") {
  trace t = trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)},
                        {timed("a", "LS", 0, 1), timed("b", "BE", 0, 1), timed("c", "Burstable", 0, 1),
                         timed("d", "Guaranteed", 0, 1)});
  set_priorities_by_qos(t);
  const std::vector<std::int32_t> want{9000, 5000, 9000, 9000};  // pods in name order a, b, c, d
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK(t.pods[i].spec.priority == want[i]);
    CHECK(t.requests[i].priority == want[i]);
  }
  // A pod without a QoS (the 5-column files) is refused by name, and nothing changes.
  trace u = trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)}, {timed("a", "LS", 0, 1), timed("z", "", 0, 1)});
  u.pods_file = "pods.csv";
  u.pods[1].line = 3;
  CHECK_THROWS_WITH_AS(set_priorities_by_qos(u), doctest::Contains("pods.csv:3: pod 'z' has no qos"),
                       invalid_argument_error);
  CHECK(u.requests[0].priority == 0);
}

TEST_CASE("dynamic replay with preemption: one preemption, the victim waits and runs after") {
  trace t = one_gpu_trace();
  set_priorities_by_qos(t);
  dynamic_options o;
  o.seed = 1;
  const dynamic_result off = run_dynamic(t, testing::fit_only_profile(), o);
  // Off: hi waits behind lo and is withdrawn at 30.
  CHECK(field(dynamic_fields, "preemptions", off) == 0.0);
  CHECK(field(dynamic_fields, "preempted_pods", off) == 0.0);
  CHECK(off.placed == 1);
  CHECK(off.withdrawn == 1);
  // By priority: one pod of each (BE 5000, LS 9000); the LS pod is the one withdrawn.
  const std::map<std::int32_t, std::size_t> one_each{{5000, 1}, {9000, 1}}, ls_withdrawn{{5000, 0}, {9000, 1}};
  CHECK(off.pods_by_priority == one_each);
  CHECK(off.withdrawn_by_priority == ls_withdrawn);
  o.preemption = true;
  o.sample_period = 20;
  const dynamic_result on = run_dynamic(t, testing::fit_only_profile(), o);
  // On: hi preempts lo at 10 and runs until 30; lo waits from 10 and is placed at 30 (30 s after its
  // arrival at 0), then runs its 100 s.
  CHECK(field(dynamic_fields, "preemptions", on) == 1.0);
  CHECK(field(dynamic_fields, "preempted_pods", on) == 1.0);
  CHECK(on.preempted_by_shape.at("cpu=1000m gpu=1x1000") == 1);
  CHECK(on.placed == 3);
  CHECK(on.placed_after_wait == 1);
  CHECK(on.withdrawn == 0);
  CHECK(on.withdrawn_by_priority == std::map<std::int32_t, std::size_t>{{5000, 0}, {9000, 0}});
  CHECK(on.max_delay == 30.0);
  CHECK(on.mean_delay == 10.0);  // (0 + 0 + 30) / 3
  CHECK(on.last_event == 130);
  // Samples every 20 s up to 130, each before the events of its second: the GPU is wholly free only
  // at 0; at 20 hi holds it and lo (one whole GPU) waits; from 40 lo holds it again.
  REQUIRE(on.samples.size() == 7);
  CHECK(on.samples[0].whole_free_gpu_milli == 1000);
  CHECK(on.samples[1].whole_free_gpu_milli == 0);
  CHECK(on.samples[1].waiting_one_gpu_milli == 1000);
  CHECK(on.samples[1].waiting_multi_gpu_milli == 0);
  CHECK(on.samples[2].whole_free_gpu_milli == 0);
  CHECK(on.samples[2].waiting_one_gpu_milli == 0);
}

TEST_CASE("dynamic replay with preemption: the allocation held by runs that preemption ended") {
  // One GPU. lo (BE, half a GPU) runs from 0; hi (LS, a whole GPU) arrives at 10, fits beside nothing
  // and preempts lo, whose 10 s of half a GPU are lost (lo waits and runs again from 30, after the
  // window); late (BE) arrives at 20, the window's end, and waits. Over the window [0, 20]: allocated
  // 500 milli for 10 s and 1000 for 10 s of 20 s x 1000, 75 %; lost 500 x 10 of it, 25 %.
  openb_pod lo = timed("lo", "BE", 0, 100);
  lo.spec.gpu_milli = 500;
  const trace t = trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)},
                              {lo, timed("hi", "LS", 10, 30), timed("late", "BE", 20, 25)});
  const dynamic_result r = replay_by_qos(t, true);
  REQUIRE(r.preempted == 1);
  CHECK(r.time_weighted_allocation_pct == doctest::Approx(75.0));
  CHECK(field(dynamic_fields, "time_weighted_preempted_allocation_pct", r) == doctest::Approx(25.0));
  // Without preemption hi waits, nothing is lost: lo's half GPU over the whole window, 50 %.
  const dynamic_result off = replay_by_qos(t, false);
  CHECK(off.time_weighted_allocation_pct == doctest::Approx(50.0));
  CHECK(off.time_weighted_preempted_allocation_pct == 0.0);
}

TEST_CASE("dynamic replay with preemption: a run ended after the window counts up to the window's end") {
  // Two GPUs. lo (BE) runs from 0 and x (LS) from 1 until 30, a GPU each; hi (LS, both GPUs) arrives
  // at 2 and cannot preempt x, so it waits; late (BE) arrives at 20, the window's end, and waits. At
  // 30 x leaves, and hi, retried, preempts lo. lo's run [0, 30) holds a GPU for the whole window
  // [0, 20]: 20 x 1000 of 20 x 2000 milli-GPU seconds, 50 % lost. Allocated: 1000 over [0, 1) and
  // 2000 over [1, 20), 39,000 of 40,000, 97.5 %.
  openb_pod hi = timed("hi", "LS", 2, 1000);
  hi.spec.num_gpu = 2;
  const dynamic_result r = replay_by_qos(
      trace::from({testing::gpu_node("n", 8000, 1 << 20, 2)},
                  {timed("lo", "BE", 0, 100), timed("x", "LS", 1, 30), hi, timed("late", "BE", 20, 25)}),
      true);
  REQUIRE(r.preempted == 1);
  CHECK(r.time_weighted_allocation_pct == doctest::Approx(97.5));
  CHECK(r.time_weighted_preempted_allocation_pct == doctest::Approx(50.0));
}

TEST_CASE("dynamic replay with preemption: equal priorities (the openb traces as read) never preempt") {
  const trace t = one_gpu_trace();  // every pod priority 0
  dynamic_options o;
  o.preemption = true;
  const dynamic_result r = run_dynamic(t, testing::fit_only_profile(), o);
  CHECK(r.preemptions == 0);
  CHECK(r.preempted == 0);
  CHECK(r.withdrawn == 1);
}

TEST_CASE("dynamic replay: the queue order, arrival (fifo) or priority (Kubernetes' PrioritySort)") {
  // x (LS, 9000) holds the GPU 0..10; b (BE, 5000) arrives at 1 (runs 100 s, waits until 101) and
  // c (LS, 9000) at 2 (runs 48 s, waits until 50); neither may preempt x. At 10 the GPU is free.
  trace t = trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)},
                        {timed("x", "LS", 0, 10), timed("b", "BE", 1, 101), timed("c", "LS", 2, 50)});
  set_priorities_by_qos(t);
  dynamic_options o;
  o.seed = 1;
  // Without preemption. fifo: b takes the GPU at 10 (until 110) and c gives up at 50.
  // priority: c takes it at 10 (until 58), then b at 58 (until 158).
  const dynamic_result fifo = run_dynamic(t, testing::fit_only_profile(), o);
  CHECK(fifo.placed == 2);
  CHECK(fifo.withdrawn == 1);
  CHECK(fifo.last_event == 110);
  o.queue = queue_order::priority;
  const dynamic_result prio = run_dynamic(t, testing::fit_only_profile(), o);
  CHECK(prio.placed == 3);
  CHECK(prio.withdrawn == 0);
  CHECK(prio.max_delay == 57.0);  // b: placed at 58, arrived at 1
  CHECK(prio.last_event == 158);
  // With preemption. fifo: the pass at 10 places b, then c preempts it; b runs again from 58.
  // priority: c first, so nothing is preempted; b at 58 as before.
  o.preemption = true;
  o.queue = queue_order::fifo;
  const dynamic_result fifo_pre = run_dynamic(t, testing::fit_only_profile(), o);
  CHECK(fifo_pre.preemptions == 1);
  CHECK(fifo_pre.preempted == 1);
  CHECK(fifo_pre.placed == 4);  // x, b, c, b again
  CHECK(fifo_pre.max_delay == 57.0);
  CHECK(fifo_pre.last_event == 158);
  o.queue = queue_order::priority;
  const dynamic_result prio_pre = run_dynamic(t, testing::fit_only_profile(), o);
  CHECK(prio_pre.preemptions == 0);
  CHECK(prio_pre.placed == 3);
  CHECK(prio_pre.last_event == 158);
}

TEST_CASE("paper replay with preemption: the counts in the field list") {
  trace t = one_gpu_trace();
  set_priorities_by_qos(t);
  paper_options o;
  o.tune = 0;          // the trace as it is
  o.shuffle = false;   // name order: hi, then lo
  SUBCASE("hi first: lo fits nowhere and is lower, so it fails; nothing to preempt") {
    o.preemption = true;
    const paper_result r = run_paper(t, testing::fit_only_profile(), o);
    const paper_run v = view(r, 0);
    CHECK(field(paper_fields, "preemptions", v) == 0.0);
    CHECK(field(paper_fields, "preempted_pods", v) == 0.0);
    CHECK(field(paper_fields, "failed_pods", v) == 1.0);
  }
  SUBCASE("lo first (priorities swapped by renaming): hi preempts it") {
    trace s = trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)},
                          {timed("a-lo", "BE", 0, 100), timed("b-hi", "LS", 10, 30)});
    set_priorities_by_qos(s);
    const paper_result off = run_paper(s, testing::fit_only_profile(), o);
    CHECK(field(paper_fields, "preemptions", view(off, 0)) == 0.0);
    CHECK(field(paper_fields, "failed_pods", view(off, 0)) == 1.0);  // b-hi
    o.preemption = true;
    const paper_result on = run_paper(s, testing::fit_only_profile(), o);
    const paper_run v = view(on, 0);
    CHECK(field(paper_fields, "preemptions", v) == 1.0);
    CHECK(field(paper_fields, "preempted_pods", v) == 1.0);
    CHECK(field(paper_fields, "failed_pods", v) == 0.0);  // the victim is gone, not failed
    CHECK(on.final.allocated_gpu_milli == 1000);           // b-hi holds the GPU
  }
}

TEST_CASE("replay fields: the preemption counts are table columns only with preemption on") {
  int paper = 0, dynamic = 0;
  for (const auto& f : paper_fields) paper += preemption_field(f.key) ? 1 : 0;
  for (const auto& f : dynamic_fields) dynamic += preemption_field(f.key) ? 1 : 0;
  CHECK(paper == 2);
  CHECK(dynamic == 3);  // and the allocation held by runs that preemption ended
  CHECK_FALSE(preemption_field("failed_pods"));
}

TEST_CASE("dynamic replay: the arrival window's sample points and time-weighted fragmentation by hand") {
  // One GPU. a (half a GPU) runs from 0; b and c (a whole GPU each) arrive at 4 and 8 and wait. The
  // window is [0, 8]; 4 points at 0, 8/3, 16/3 and 8 (seconds 0, 2, 5, 8), each just after the events
  // of its second.
  openb_pod a = timed("a", "LS", 0, 100), b = timed("b", "LS", 4, 300), c = timed("c", "LS", 8, 300);
  a.spec.gpu_milli = 500;
  const trace t = trace::from({testing::gpu_node("n", 8000, 1 << 20, 1)}, {a, b, c});
  dynamic_options o;
  o.window_samples = 4;
  const dynamic_result r = run_dynamic(t, testing::fit_only_profile(), o);
  REQUIRE(r.window.size() == 4);
  const std::vector<std::int64_t> times{0, 2, 5, 8};
  const std::vector<std::size_t> pending{0, 0, 1, 2};
  // FGD's fragmentation (Weng et al., ATC'23, section 3): typical pods 1/3 half-GPU, 2/3 whole-GPU;
  // the 500 idle milli fit the half-GPU shape (no fragment) and not the whole one (all 500 count):
  // 2/3 x 500 = 333.3 milli of the 1000.
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(r.window[i].time == times[i]);
    CHECK(r.window[i].pending == pending[i]);
    CHECK(r.window[i].running == 1);
    CHECK(r.window[i].allocated_gpu_milli == 500);
    CHECK(r.window[i].frag_gpu_milli == doctest::Approx(1000.0 / 3.0));
  }
  CHECK(r.time_weighted_pending == doctest::Approx(0.5));  // 1 pod over [4, 8) of [0, 8]
  CHECK(r.time_weighted_allocation_pct == doctest::Approx(50.0));
  CHECK(field(dynamic_fields, "time_weighted_frag_amount_pct", r) == doctest::Approx(100.0 / 3.0));
}
