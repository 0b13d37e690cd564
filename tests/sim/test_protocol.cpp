#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "gpusched/sim/dynamic.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/policies.hpp"
#include "support/builders.hpp"

using namespace gpusched;
using namespace gpusched::sim;

namespace {
std::vector<pod> copies(int n, const pod& p) { return std::vector<pod>(static_cast<std::size_t>(n), p); }

openb_pod timed(const char* name, pod p, std::int64_t created, std::int64_t deleted,
                std::optional<std::int64_t> started) {
  openb_pod o;
  p.name = name;
  o.spec = p;
  o.has_times = true;
  o.creation_time = created;
  o.deletion_time = deleted;
  o.scheduled_time = started;
  return o;
}
}  // namespace

TEST_CASE("paper.tuning: clones until the next one's per-GPU share would pass the target") {
  rng r(1);
  paper_options o;
  // One whole GPU of 1000 against capacity 2000, target 1.3 x 2000 = 2600: one clone (2000), the next
  // would reach 3000.
  CHECK(paper_arrivals(copies(1, make_pod("w").cpu(1).gpus(1)), 2000, o, r).size() == 2);
  // A 2-GPU pod (2000) and target 2600: the stop test adds the per-GPU 1000 -> 3000 > 2600, no clone.
  CHECK(paper_arrivals(copies(1, make_pod("w").cpu(1).gpus(2)), 2000, o, r).size() == 1);
  // Target 3000: 2000 + 1000 <= 3000, so one clone is added and the demand overshoots to 4000
  // (the authors' quirk), then 4000 + 1000 > 3000 stops.
  o.tune = 1.5;
  CHECK(paper_arrivals(copies(1, make_pod("w").cpu(1).gpus(2)), 2000, o, r).size() == 2);
  // Above the target, random pods are removed until the demand fits: 3 x 1000 -> 2000.
  o.tune = 1.0;
  const auto down = paper_arrivals(copies(3, make_pod("w").cpu(1).gpus(1)), 2000, o, r);
  CHECK(down.size() == 2);
  // tune <= 0: the trace as it is, shuffled.
  o.tune = 0;
  auto all = paper_arrivals(copies(5, make_pod("w").cpu(1).gpus(1)), 2000, o, r);
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::uint32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("paper.buckets by rounded arrived percent, neighbours when empty") {
  // Capacity 1000: arrived 40.0%, 40.4%, 41.6%; allocated 40.0%, 40.4%, 40.4%.
  const std::vector<event_sample> ev = {{400, 400, 0, 0}, {404, 404, 0, 0}, {416, 404, 0, 0}};
  const auto b = bucket_by_arrived(ev, 1000, 42);
  REQUIRE(b.size() == 4);
  CHECK(b[0].arrived_pct == 39);  // empty: the events within 38..40
  CHECK(b[0].allocation_pct == doctest::Approx(40.0));
  CHECK(b[1].arrived_pct == 40);
  CHECK(b[1].allocation_pct == doctest::Approx(40.2));
  CHECK(b[2].arrived_pct == 41);  // empty: the events within 40..42
  CHECK(b[2].allocation_pct == doctest::Approx((40.0 + 40.4 + 40.4) / 3));
  CHECK(b[3].arrived_pct == 42);
  CHECK(b[3].allocation_pct == doctest::Approx(40.4));
}

TEST_CASE("paper.a small replay, hand-checked") {
  // Two nodes of 1 GPU; pods: two 600-milli shares, one whole GPU, one CPU-only. The shares cannot
  // share a device (1200 > 1000), so they take both GPUs and the whole-GPU pod fails, whatever the order.
  std::vector<node_spec> nodes = {testing::gpu_node("a", 8000, 1 << 20, 1), testing::gpu_node("b", 8000, 1 << 20, 1)};
  std::vector<openb_pod> pods = {timed("s1", make_pod("x").cpu(100).gpu_share(600), 0, 1, 0),
                                 timed("s2", make_pod("x").cpu(100).gpu_share(600), 0, 1, 0),
                                 timed("w", make_pod("x").cpu(100).gpus(1), 0, 1, 0),
                                 timed("c", make_pod("x").cpu(100), 0, 1, 0)};
  trace t = trace::from(nodes, pods);
  paper_options o;
  o.tune = 0;
  for (std::uint64_t seed : {1, 2, 3}) {
    o.seed = seed;
    // Order matters only for which pod fails: if the whole GPU comes before both shares, a share fails.
    const paper_result r =
        with_policy(policy_kind::fgd, t.typical, seed, [&](auto prof) { return run_paper(t, prof, o, "FGD"); });
    CHECK(r.pods_arrived == 4);
    CHECK(r.pods_failed == 1);
    CHECK(r.final.arrived_gpu_milli == 2200);
    CHECK(r.final_arrived_pct() == doctest::Approx(110));
    CHECK((r.final.allocated_gpu_milli == 1200 || r.final.allocated_gpu_milli == 1600));
    CHECK(r.events.size() == 4);
  }
}

namespace {
const trace& default_trace() {
  static const trace t = trace::load(std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/openb_node_list_gpu_node.csv",
                                     std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/openb_pod_list_default.csv");
  return t;
}
paper_result run_default(policy_kind k, std::uint64_t seed, double tune) {
  paper_options o;
  o.seed = seed;
  o.tune = tune;
  o.ties = policy_ties(k);
  return with_policy(k, default_trace().typical, seed,
                     [&](auto prof) { return run_paper(default_trace(), prof, o, ""); });
}
#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
}  // namespace

TEST_CASE("paper.same seed, same run") {
  CHECK(default_trace().typical->size() == 35);  // shapes covering 95% of the 8152 pods
  const paper_result a = run_default(policy_kind::fgd, 42, 0.6), b = run_default(policy_kind::fgd, 42, 0.6);
  CHECK(a.final.allocated_gpu_milli == b.final.allocated_gpu_milli);
  CHECK(a.failed_by_shape == b.failed_by_shape);
  CHECK(a.events.size() == b.events.size());
  CHECK(a.pods_arrived < 8152);  // tuned down to 60% of capacity
  rng r42(42), r43(43);
  CHECK(paper_arrivals(default_trace().requests, default_trace().gpu_milli_capacity, paper_options{}, r42) !=
        paper_arrivals(default_trace().requests, default_trace().gpu_milli_capacity, paper_options{}, r43));
}

// Five full replays of about 10,800 pods: seconds in Release, minutes under the sanitizers.
TEST_CASE("paper.the ports match the paper on the default trace" * doctest::skip(sanitized) *
          doctest::description("skipped under ASan: full-trace replays are too slow there")) {
  // Published means (seeds 42-51): FGD 95.39, BestFit 93.08. One seed stays within +-0.5 of the mean
  // (the authors' per-seed spread is about 0.2 for both).
  const paper_result fgd = run_default(policy_kind::fgd, 42, 1.3);
  CHECK(fgd.final_arrived_pct() == doctest::Approx(130).epsilon(0.001));
  const double fgd_alloc = fgd.curve(130).back().allocation_pct;
  CHECK(fgd_alloc == doctest::Approx(95.39).epsilon(0.5 / 95.39));
  CHECK(run_default(policy_kind::best_fit, 42, 1.3).curve(130).back().allocation_pct ==
        doctest::Approx(93.08).epsilon(0.5 / 93.08));
  // gpusched's policy leaves at least 15% less GPU unallocated than FGD on this seed.
  const double ours = run_default(policy_kind::gpusched, 42, 1.3).curve(130).back().allocation_pct;
  CHECK(100 - ours <= 0.85 * (100 - fgd_alloc));
}

TEST_CASE("dynamic.departures, waiting and withdrawal, hand-checked") {
  // One node with one GPU. a runs 0..100; b arrives at 10, waits until a leaves, then runs its trace
  // duration 300 - 50 = 250 (until 350); c arrives at 20, never ran in the real cluster, and is
  // withdrawn at its deletion time 60; d arrives at 400 and runs 100 seconds.
  std::vector<node_spec> nodes = {testing::gpu_node("n", 8000, 1 << 20, 1)};
  std::vector<openb_pod> pods = {timed("a", make_pod("x").cpu(1000).gpus(1), 0, 100, 0),
                                 timed("b", make_pod("x").cpu(1000).gpus(1), 10, 300, 50),
                                 timed("c", make_pod("x").cpu(1000).gpus(1), 20, 60, std::nullopt),
                                 timed("d", make_pod("x").cpu(1000).gpu_share(500), 400, 500, 400)};
  const trace t = trace::from(nodes, pods);
  dynamic_options o;
  o.sample_period = 100;
  const dynamic_result r =
      with_policy(policy_kind::gpusched, t.typical, 1, [&](auto prof) { return run_dynamic(t, prof, o, "x"); });
  CHECK(r.placed == 3);
  CHECK(r.placed_after_wait == 1);
  CHECK(r.withdrawn == 1);
  CHECK(r.max_pending == 2);
  CHECK(r.start == 0);
  CHECK(r.end == 400);
  CHECK(r.last_event == 500);
  // One GPU busy over 0..350 of the window 0..400.
  CHECK(r.time_weighted_allocation_pct == doctest::Approx(87.5));
  // b waits 10..100 (90 s), c 20..60 (40 s): 130 / 400.
  CHECK(r.time_weighted_pending == doctest::Approx(0.325));
  CHECK(r.mean_delay == doctest::Approx(30));  // 0, 90, 0
  CHECK(r.max_delay == doctest::Approx(90));
  // Samples every 100 s, each taken just before the events of its second.
  REQUIRE(r.samples.size() == 6);                // t = 0, 100, ..., 500
  CHECK(r.samples[0].allocated_gpu_milli == 0);  // before a arrives
  CHECK(r.samples[1].time == 100);
  CHECK(r.samples[1].allocated_gpu_milli == 1000);  // a, until it leaves at 100
  CHECK(r.samples[1].pending == 1);                 // b (c was withdrawn at 60)
  CHECK(r.samples[4].allocated_gpu_milli == 0);     // t = 400, before d arrives
  CHECK(r.samples[5].allocated_gpu_milli == 500);   // t = 500, d until it leaves
  CHECK_THROWS_AS(run_dynamic(t, make_profile(checks(resource_fit{}), scores(weighted{fgd_paper::random_score{}, 1})),
                              dynamic_options{1, tie_break_rule::reservoir, 0, 1.0}),
                  invalid_argument_error);
}

TEST_CASE("dynamic.where the unallocated GPU is and what waits, hand-checked") {
  // One node with two GPUs and 8 CPUs. a (half a GPU, 1 CPU) runs 0..200. b asks for both GPUs from
  // 10; it fits only once a has left, and runs 200..900 (its trace duration 1000 - 300). e asks for
  // one whole GPU and 8 CPUs from 20; a's CPU leaves 7 free, so e waits until its deadline, 20 + 130.
  // f (CPU only) runs 950..1050, so a sample sees the node after b's departure.
  std::vector<node_spec> nodes = {testing::gpu_node("n", 8000, 1 << 20, 2)};
  std::vector<openb_pod> pods = {timed("a", make_pod("x").cpu(1000).gpu_share(500), 0, 200, 0),
                                 timed("b", make_pod("x").cpu(1000).gpus(2), 10, 1000, 300),
                                 timed("e", make_pod("x").cpu(8000).gpus(1), 20, 150, std::nullopt),
                                 timed("f", make_pod("x").cpu(1000), 950, 1050, 950)};
  const trace t = trace::from(nodes, pods);
  dynamic_options o;
  o.sample_period = 100;
  o.window_samples = 2;  // the first and the last arrival: 0 and 950
  const dynamic_result r =
      with_policy(policy_kind::gpusched, t.typical, 1, [&](auto prof) { return run_dynamic(t, prof, o, "x"); });
  CHECK(r.placed == 3);
  CHECK(r.withdrawn == 1);
  REQUIRE(r.samples.size() == 11);  // t = 0, 100, ..., 1000
  const auto at = [&](std::size_t k) { return r.samples[k]; };
  const milli capacity = 2000;
  // t = 0, before a: both GPUs wholly free, nothing waits.
  CHECK(at(0).whole_free_gpu_milli == 2000);
  CHECK(at(0).partly_free_gpu_milli(capacity) == 0);
  CHECK(at(0).waiting_one_gpu_milli == 0);
  CHECK(at(0).waiting_multi_gpu_milli == 0);
  // t = 100: a holds half of one GPU (500 free there, the other GPU wholly free); b and e wait.
  CHECK(at(1).allocated_gpu_milli == 500);
  CHECK(at(1).whole_free_gpu_milli == 1000);
  CHECK(at(1).partly_free_gpu_milli(capacity) == 500);
  CHECK(at(1).waiting_one_gpu_milli == 1000);
  CHECK(at(1).waiting_multi_gpu_milli == 2000);
  // t = 200, before a leaves: e withdrew at 150, b still waits.
  CHECK(at(2).whole_free_gpu_milli == 1000);
  CHECK(at(2).waiting_one_gpu_milli == 0);
  CHECK(at(2).waiting_multi_gpu_milli == 2000);
  // t = 300: b holds both GPUs.
  CHECK(at(3).allocated_gpu_milli == 2000);
  CHECK(at(3).whole_free_gpu_milli == 0);
  CHECK(at(3).partly_free_gpu_milli(capacity) == 0);
  CHECK(at(3).waiting_multi_gpu_milli == 0);
  // t = 1000: b left at 900 and nothing took a GPU since: both wholly free again.
  CHECK(at(10).allocated_gpu_milli == 0);
  CHECK(at(10).whole_free_gpu_milli == 2000);
  // Window points, just after the events of their second: at 0 a runs; at 950 f runs, the GPUs free.
  REQUIRE(r.window.size() == 2);
  CHECK(r.window[0].whole_free_gpu_milli == 1000);
  CHECK(r.window[0].partly_free_gpu_milli(capacity) == 500);
  CHECK(r.window[1].time == 950);
  CHECK(r.window[1].whole_free_gpu_milli == 2000);
  CHECK(r.window[1].waiting_one_gpu_milli == 0);
}
