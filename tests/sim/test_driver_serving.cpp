// The simulation driver's serving-experiment order (sim/driver.hpp, ADR 0010): arrivals that only
// enter the queue, a horizon, samples as steps that can trigger a cycle, gangs that start and
// complete as a whole, the gang action (all or nothing) and the workload's queue order (seq).
// Event logs worked out by hand on one node with one or two GPUs, every pod taking a whole GPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/sim/driver.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

using namespace gpusched;
using namespace gpusched::sim;

namespace {
pod whole_gpu(const char* name, const char* gang = nullptr, std::int32_t size = 0) {
  auto b = make_pod(name).cpu(100).gpus(1);
  if (gang != nullptr) b.gang(gang, size);
  return b.build();
}

struct gang_workload {
  std::vector<pod> pods;
  std::vector<driver_job> jobs;
  std::vector<std::uint32_t> gangs;
  std::vector<std::uint64_t> seqs;

  void add(pod p, double arrive, double duration = never, std::uint32_t gang = no_gang_index) {
    pods.push_back(std::move(p));
    jobs.push_back(driver_job{arrive, duration, never});
    gangs.push_back(gang);
    seqs.push_back(seqs.size());
  }
  [[nodiscard]] std::size_t size() const noexcept { return jobs.size(); }
  [[nodiscard]] const driver_job& job(std::uint32_t j) const noexcept { return jobs[j]; }
  [[nodiscard]] const pod& spec(std::uint32_t j) const noexcept { return pods[j]; }
  [[nodiscard]] const pod& bound_spec(std::uint32_t j) const noexcept { return pods[j]; }
  [[nodiscard]] std::uint32_t job_of(const pod& p) const noexcept { return static_cast<std::uint32_t>(&p - pods.data()); }
  [[nodiscard]] std::uint32_t gang_of(std::uint32_t j) const noexcept { return gangs[j]; }
  [[nodiscard]] std::uint64_t seq(std::uint32_t j) const noexcept { return seqs[j]; }
};

struct gang_log_observer {
  const gang_workload* w;
  std::vector<std::string> log;
  double clock = 0.0;

  static std::string num(double t) { return std::to_string(static_cast<int>(t)); }
  std::string at(std::uint32_t j) const { return w->pods[j].name + "@" + num(clock); }
  template <class D>
  void sample(const D&, double t) {
    clock = t;
    log.push_back("sample@" + num(t));
  }
  template <class D>
  void advance(const D&, double, double to) {
    clock = to;
  }
  void arrived(std::uint32_t j) { log.push_back("arrive " + at(j)); }
  void placed(std::uint32_t j, const binding&, double, bool) { log.push_back("place " + at(j)); }
  void released(std::uint32_t j, const binding&, bool preempted) {
    log.push_back((preempted ? "preempted " : "complete ") + at(j));
  }
  void gang_started(std::uint32_t g, double now) { log.push_back("gang-start " + std::to_string(g) + "@" + num(now)); }
  void gang_stopped(std::uint32_t g) { log.push_back("gang-stop " + std::to_string(g) + "@" + num(clock)); }
  void gang_finished(std::uint32_t g, double now) { log.push_back("gang-end " + std::to_string(g) + "@" + num(now)); }
  template <class D>
  void step(const D& d, double now) {
    log.push_back("step@" + num(now) + " run=" + std::to_string(d.running()));
  }
};

replay_cluster gpus(int n) {
  const node_spec node = testing::gpu_node("n", 8000, 1 << 20, n);
  return make_replay_cluster(std::span<const node_spec>(&node, 1));
}


// The scheduler, refusing every pod before `open` (a cluster state that changes with time only, as
// the two-tier queue's backoffs do): only a cycle at or after `open` can place anything.
struct gated_place {
  const double* clock;
  double open;
  scheduler<replay_cluster, testing::fit_only_profile_t> s{testing::fit_only_profile()};
  schedule_result schedule_one(replay_cluster& c, const pod& p) {
    if (*clock < open) return schedule_result{};
    return s.schedule_one(c, p);
  }
};

using log_t = std::vector<std::string>;
std::string join_events(const log_t& log) {
  std::string s;
  for (const auto& e : log) s += (s.empty() ? "" : ", ") + e;
  return s;
}

template <class Q, class Gang = no_gang_action>
log_t run_gangs(gang_workload& w, Q& q, int n_gpus, driver_options o, Gang gang = {}) {
  replay_cluster c = gpus(n_gpus);
  scheduler<replay_cluster, testing::fit_only_profile_t> s(testing::fit_only_profile());
  gang_log_observer obs{&w, {}};
  drive(c, w, q, s, obs, o, no_preemption{}, std::move(gang));
  return obs.log;
}
}  // namespace

TEST_CASE("driver: queued arrivals wait for the step's cycle; the horizon stops the loop with pods running") {
  // One GPU. a (runs 10) and b (runs 10) arrive at 0 and are only pushed; the cycle at 0 places a;
  // b waits. At 10 a completes and the cycle places b (ends at 20, after the horizon 15). c arrives
  // at 12: pushed, the cycle finds no room. The loop stops after the step at 15 with b running and
  // c waiting; d, arriving at 15 (= the horizon), never comes.
  gang_workload w;
  w.add(whole_gpu("a"), 0, 10);
  w.add(whole_gpu("b"), 0, 10);
  w.add(whole_gpu("c"), 12, 1);
  w.add(whole_gpu("d"), 15, 1);
  fifo_queue q;
  driver_options o;
  o.queue_arrivals = true;
  o.horizon = 15;
  const log_t want = {"arrive a@0",  "arrive b@0",   "place a@0",  "step@0 run=1",
                      "complete a@10", "place b@10", "step@10 run=1", "arrive c@12",
                      "step@12 run=1", "step@15 run=1"};
  CHECK(join_events(run_gangs(w, q, 1, o)) == join_events(want));
  CHECK(q.size() == 1);  // c still waits
}

TEST_CASE("driver: samples are steps from first_sample, and cycle_after_sample retries the queue at them") {
  // One GPU; the place action refuses everything before 10. a arrives at 0 (refused at the cycle
  // at 0). Samples every 4 s from 4 are steps up to the horizon 16: 4, 8, 12, 16. Without
  // cycle_after_sample nothing else happens, so a is never placed; with it, the cycle at the sample
  // step 12 (the first at or after 10) places a.
  for (const bool cycle : {false, true}) {
    CAPTURE(cycle);
    gang_workload w;
    w.add(whole_gpu("a"), 0, never);
    fifo_queue q;
    driver_options o;
    o.queue_arrivals = true;
    o.horizon = 16;
    o.sample_period = 4;
    o.first_sample = 4;
    o.sample_steps = true;
    o.cycle_after_sample = cycle;
    replay_cluster c = gpus(1);
    gang_log_observer obs{&w, {}};
    gated_place place{&obs.clock, 10.0};
    drive(c, w, q, place, obs, o);
    const log_t off = {"arrive a@0", "step@0 run=0", "sample@4",  "step@4 run=0",  "sample@8",
                       "step@8 run=0", "sample@12", "step@12 run=0", "sample@16", "step@16 run=0"};
    const log_t on = {"arrive a@0", "step@0 run=0", "sample@4",     "step@4 run=0", "sample@8",
                      "step@8 run=0", "sample@12", "place a@12", "step@12 run=1", "sample@16", "step@16 run=1"};
    CHECK(join_events(obs.log) == join_events(cycle ? on : off));
  }
}

TEST_CASE("driver: a gang starts when its last member is placed and completes as a whole") {
  // Two GPUs, no gang action (members one by one). a holds one GPU 0..5. Gang 0 = {x, y}, run time
  // 10, arrives at 1: x takes the free GPU at 1, y waits (a partial gang holds x's GPU). At 5 a
  // completes and y is placed: the gang starts at 5 and ends at 15, when both members leave.
  gang_workload w;
  w.add(whole_gpu("a"), 0, 5);
  w.add(whole_gpu("x", "g", 2), 1, 10, 0);
  w.add(whole_gpu("y", "g", 2), 1, 10, 0);
  fifo_queue q;
  driver_options o;
  o.queue_arrivals = true;
  const log_t want = {"arrive a@0",    "place a@0",    "step@0 run=1",    "arrive x@1",  "arrive y@1",
                      "place x@1",     "step@1 run=2", "complete a@5",    "place y@5",   "gang-start 0@5",
                      "step@5 run=2",  "gang-end 0@15", "complete x@15", "complete y@15", "step@15 run=0"};
  CHECK(join_events(run_gangs(w, q, 2, o)) == join_events(want));
}

TEST_CASE("driver: the gang action places a whole gang or nothing, once per cycle") {
  // As above with the gang action on: at 1 the gang needs two GPUs and one is free, so nothing is
  // placed (x's try places nothing; y's pop in the same cycle does not try again). At 5 a completes
  // and the cycle places x and y together: the gang starts at 5. Switched off at run time
  // (active = false), the action leaves the members one by one (as in the test above).
  for (const bool active : {true, false}) {
    CAPTURE(active);
    gang_workload w;
    w.add(whole_gpu("a"), 0, 5);
    w.add(whole_gpu("x", "g", 2), 1, 10, 0);
    w.add(whole_gpu("y", "g", 2), 1, 10, 0);
    fifo_queue q;
    driver_options o;
    o.queue_arrivals = true;
    const testing::fit_only_profile_t prof = testing::fit_only_profile();
    const log_t all = {"arrive a@0",     "place a@0",    "step@0 run=1",   "arrive x@1",    "arrive y@1",
                       "step@1 run=1",   "complete a@5", "place x@5",      "place y@5",     "gang-start 0@5",
                       "step@5 run=2",   "gang-end 0@15", "complete x@15", "complete y@15", "step@15 run=0"};
    const log_t one = {"arrive a@0",    "place a@0",    "step@0 run=1",    "arrive x@1",  "arrive y@1",
                       "place x@1",     "step@1 run=2", "complete a@5",    "place y@5",   "gang-start 0@5",
                       "step@5 run=2",  "gang-end 0@15", "complete x@15", "complete y@15", "step@15 run=0"};
    CHECK(join_events(run_gangs(w, q, 2, o, gang_action<testing::fit_only_profile_t>(prof, active))) == join_events(active ? all : one));
  }
}

TEST_CASE("driver: a sorted queue takes the workload's seq as the order among equals") {
  // One GPU; a, b, c arrive together at 0 and each runs 1 s, with seq 1, 2, 0 (push order would
  // be a, b, c): the priority sort (all priority 0) places c at 0, a at 1, b at 2.
  gang_workload w;
  w.add(whole_gpu("a"), 0, 1);
  w.add(whole_gpu("b"), 0, 1);
  w.add(whole_gpu("c"), 0, 1);
  w.seqs = {1, 2, 0};
  priority_sort_queue q;
  driver_options o;
  o.queue_arrivals = true;
  const log_t got = run_gangs(w, q, 1, o);
  log_t places;
  for (const auto& e : got) {
    if (e.rfind("place ", 0) == 0) places.push_back(e);
  }
  CHECK(join_events(places) == join_events(log_t{"place c@0", "place a@1", "place b@2"}));
}

TEST_CASE("driver: a started gang that loses a member to preemption stops and starts over") {
  // Two GPUs. Gang 0 = {x, y} (priority 0, run time 10) starts at 0. h (priority 10, runs 5 s)
  // arrives at 2 and fits nowhere. Preempt action on: h preempts the gang (the gang stops at 2: its
  // completion at 10 is dropped); x and y wait; at 7 h completes and both are placed again: the gang
  // starts over at 7 and ends at 17. Switched off at run time: h waits until the gang ends at 10.
  for (const bool active : {true, false}) {
    CAPTURE(active);
    gang_workload w;
    w.add(whole_gpu("x", "g", 2), 0, 10, 0);
    w.add(whole_gpu("y", "g", 2), 0, 10, 0);
    pod h = whole_gpu("h");
    h.priority = 10;
    w.add(std::move(h), 2, 5);
    fifo_queue q;
    replay_cluster c = gpus(2);
    scheduler<replay_cluster, testing::fit_only_profile_t> s(testing::fit_only_profile());
    gang_log_observer obs{&w, {}};
    drive(c, w, q, s, obs, driver_options{}, replay_preempt_action(replay_fit_profile(), preemption_options{}, nullptr, active));
    log_t got;  // the gang's events and h's
    for (const auto& e : obs.log) {
      if (e.rfind("gang-", 0) == 0 || e.find(" h@") != std::string::npos) got.push_back(e);
    }
    const log_t on = {"gang-start 0@0", "arrive h@2", "gang-stop 0@2", "place h@2", "complete h@7", "gang-start 0@7", "gang-end 0@17"};
    const log_t off = {"gang-start 0@0", "arrive h@2", "gang-end 0@10", "place h@10", "complete h@15"};
    CHECK(join_events(got) == join_events(active ? on : off));
  }
}

TEST_CASE("driver: the new options are checked, naming the field") {
  gang_workload w;
  w.add(whole_gpu("a"), 0, 1);
  fifo_queue q;
  replay_cluster c = gpus(1);
  scheduler<replay_cluster, testing::fit_only_profile_t> s(testing::fit_only_profile());
  gang_log_observer obs{&w, {}};
  driver_options o;
  o.sample_steps = true;  // no sample period, no horizon
  o.sample_period = 4;
  CHECK_THROWS_WITH_AS((driver<replay_cluster, gang_workload, fifo_queue, decltype(s), gang_log_observer>(c, w, q, s, obs, o)),
                       doctest::Contains("driver_options.sample_steps"), invalid_argument_error);
  driver_options h;
  h.horizon = -1;
  CHECK_THROWS_WITH_AS((driver<replay_cluster, gang_workload, fifo_queue, decltype(s), gang_log_observer>(c, w, q, s, obs, h)),
                       doctest::Contains("driver_options.horizon"), invalid_argument_error);
  gang_workload bad;  // members of one gang with different run times
  bad.add(whole_gpu("x", "g", 2), 0, 10, 0);
  bad.add(whole_gpu("y", "g", 2), 0, 20, 0);
  gang_log_observer obs2{&bad, {}};
  CHECK_THROWS_WITH_AS((driver<replay_cluster, gang_workload, fifo_queue, decltype(s), gang_log_observer>(c, bad, q, s, obs2, {})),
                       doctest::Contains("driver.jobs[1].duration"), invalid_argument_error);
}
