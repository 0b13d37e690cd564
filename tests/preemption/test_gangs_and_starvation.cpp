// The two scenarios: ten scattered gangs against one whole gang, and a dev job that must
// finish beside a stream of prod pods (queue + preemption + budget together).
#include <doctest/doctest.h>

#include <deque>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "gpusched/queue/scheduling_queue.hpp"
#include "gpusched/schedule/schedule_one.hpp"

using namespace gpusched;

TEST_CASE("preemption.ten gangs each hold a pod on a different node: exactly one whole gang is evicted") {
  // n0..n9 (10 GPUs each): gangs g0..g9 of 10 one-GPU members, member j of gang i on node (i+j)%10,
  // so every one of these nodes holds one pod of each of the ten gangs. Gang h (10 members) has 9
  // members on n10 and 1 on n11; n10's tenth GPU runs the single pod s0 (p0); n11's other 9 GPUs
  // are free. All victims are dev; gangs and h have priority 1. The prod p9 preemptor needs 10
  // GPUs of one node. Costs, whole gangs counted:
  //   n0..n9: all ten gangs, 100 pods;  n10: h + s0, 11 pods;  n11: h alone, 10 pods  -> n11.
  // Counting one pod per gang (Kubernetes) would see 10 victims on n0..n9 as on n11.
  fx::cluster c;
  for (int n = 0; n < 12; ++n) fx::add_node(c, "n" + std::to_string(n), 10);
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      const pod m = make_pod("g" + std::to_string(i) + "-" + std::to_string(j)).cpu(100).gpus(1).priority(1).gang(
          "g" + std::to_string(i), 10);
      fx::run(c, m, static_cast<node_index>((i + j) % 10), gpu_set{1} << i, 10.0 * i);
    }
  }
  for (int j = 0; j < 9; ++j) {
    fx::run(c, make_pod("h-" + std::to_string(j)).cpu(100).gpus(1).priority(1).gang("h", 10), 10,
            gpu_set{1} << j, 50.0);
  }
  fx::run(c, make_pod("h-9").cpu(100).gpus(1).priority(1).gang("h", 10), 11, 0b1, 50.0);
  fx::run(c, make_pod("s0").cpu(100).gpus(1).priority(0), 10, gpu_set{1} << 9, 50.0);
  REQUIRE(c.bound_count() == 111);

  const pod p = fx::gpu_pod("serve", 9, 10, true);
  for (std::uint64_t seed : {0ULL, 1ULL, 2ULL, 99ULL}) {
    preemption_options o;
    o.seed = seed;
    fx::preemptor pre(fx::fit_profile(), o);
    const fx::cluster before = c;
    const auto r = pre.plan(c, p, 100.0);
    REQUIRE(r.found);
    CHECK(r.node == 11);
    CHECK(r.gangs == 1);
    CHECK(r.cost.count == 10);
    REQUIRE(r.victims.size() == 10);
    for (const auto& v : r.victims) CHECK(v.spec.gang == "h");
    CHECK(c == before);
  }
  fx::preemptor pre(fx::fit_profile());
  const auto r = pre.plan(c, p, 100.0);
  pre.apply(c, p, r, 100.0);
  CHECK(c.bound_count() == 111 - 10 + 1);
  CHECK(c.gang(c.gang_of("h")).empty());
  for (int i = 0; i < 10; ++i) CHECK(c.gang(c.gang_of("g" + std::to_string(i))).size() == 10);
  CHECK(c.find("s0") != nullptr);
  CHECK(c.find("serve")->where.gpus == 0x3FF);
}

namespace {

// One 8-GPU node. A dev training job (p1, 4 GPUs, 100 s of uninterrupted work) starts at t = 0.
// From t = 30, every 30 s a burst of 8 prod inference pods (p9, 1 GPU, 10 s each) arrives; the
// 5th to 8th of each burst need the job's GPUs. Each second: completions, arrivals, then the queue
// is drained; a prod pod that does not fit tries preemption. Returns when the job completed, or
// -1 if not by `horizon`.
double run_stream(bool with_budget, double horizon, bool& prod_waited_behind_dev) {
  fx::cluster c;
  fx::add_node(c, "v100-0", 8);
  queue_options qo;  // prod strictly first (dev_share_period 0), backoff 1 s -> 10 s
  scheduling_queue q(qo);
  auto prof = fx::fit_profile();
  scheduler<fx::cluster, fx::profile> sched(prof);
  fx::preemptor pre(prof);
  budget_options bo;
  bo.max_preemptions = 2;
  bo.window_s = 3600;
  bo.cooldown_s = 120;
  preemption_budget budget(bo);

  const pod job = fx::gpu_pod("train", 1, 4);
  std::deque<pod> prods;
  struct running {
    const pod* p;
    double end;
  };
  std::vector<running> run;
  prod_waited_behind_dev = false;

  for (int ti = 0; ti <= static_cast<int>(horizon); ++ti) {
    const double t = ti;
    c.set_time(t);
    bool released = false;
    for (std::size_t i = 0; i < run.size();) {
      if (run[i].end <= t) {
        c.unbind(c.find(run[i].p->name)->id);
        q.released(*run[i].p);
        if (run[i].p == &job) return t;
        run[i] = run.back();
        run.pop_back();
        released = true;
      } else {
        ++i;
      }
    }
    if (released) q.on_cluster_event(cluster_event::resources_released, t);
    if (ti == 0) q.push(job, t);
    if (ti >= 30 && ti % 30 == 0) {
      for (int k = 0; k < 8; ++k) {
        prods.push_back(fx::gpu_pod("infer-" + std::to_string(ti) + "-" + std::to_string(k), 9, 1, true));
        q.push(prods.back(), t);
      }
    }
    while (auto u = q.pop(t)) {
      const pod& p = *u->pods[0];
      if (p.tier_ == tier::dev && q.ready_count(tier::prod) > 0) prod_waited_behind_dev = true;
      const schedule_result res = sched.place_one(c, p);
      if (res) {
        q.scheduled(u->ticket, t);
        run.push_back({&p, t + (&p == &job ? 100.0 : 10.0)});
        continue;
      }
      if (p.tier_ == tier::prod) {
        const preemption_result plan = pre.plan(c, p, t, with_budget ? &budget : nullptr);
        if (plan) {
          pre.apply(c, p, plan, t, with_budget ? &budget : nullptr);
          q.scheduled(u->ticket, t);
          run.push_back({&p, t + 10.0});
          for (const auto& v : plan.victims) {
            for (std::size_t i = 0; i < run.size(); ++i) {
              if (run[i].p->name == v.spec.name) {
                q.released(*run[i].p);
                q.push(*run[i].p, t);  // back to the queue, from scratch
                run[i] = run.back();
                run.pop_back();
                break;
              }
            }
          }
          continue;
        }
      }
      q.unschedulable(u->ticket, t, res.rejections);
    }
  }
  return -1.0;
}

}  // namespace

TEST_CASE("preemption.a dev job beside a steady prod stream completes within the budget's bound") {
  // Timeline with the budget (k = 2, W = 3600 s, C = 120 s):
  //   t=0 start; t=30 preempted (1st); t=40 restart; t=60 preempted (2nd); t=70 restart, now
  //   protected until 70 + 120 = 190 since both preemptions lie in (70 - 3600, 70]; the bursts at
  //   90, 120, 150 wait for the other four GPUs; t=170 = 70 + 100 the job completes.
  // Bound (docs/preemption.md): first start + k (R + D) + D = 0 + 2 (10 + 100) + 100 = 320, with
  // R = 10 s from a preemption to the restart here, D = 100 s.
  bool behind = true;
  const double done = run_stream(true, 1000, behind);
  CHECK(done == 170.0);
  CHECK(done <= 0 + 2 * (10 + 100) + 100);
  CHECK_FALSE(behind);  // no dev unit was popped while a prod unit was ready
  // Without the budget every burst preempts it again: it never runs 100 s in a row.
  CHECK(run_stream(false, 1000, behind) == -1.0);
}
