// Prod inference next to dev training on the same GPU nodes: the scheduling queue puts prod first
// (with a small guaranteed share for dev), prod preempts dev when it must — whole gangs, never the
// other way round — under a preemption budget (a job preempted twice in an hour is then protected
// for two hours of running, so that it can finish). Every decision is printed with its reasons.
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include <gpusched/core/bound_cluster.hpp>
#include <gpusched/gpusched.hpp>
#include <gpusched/preemption/preemption.hpp>
#include <gpusched/queue/scheduling_queue.hpp>

using namespace gpusched;

int main() {
  bound_cluster<> cluster;  // an in_memory_cluster that also records who runs where
  for (int i = 0; i < 2; ++i) {
    node_spec n{"v100-" + std::to_string(i), 96000, 384 * 1024, {}, ""};
    n.add_gpus(8, "V100M32", 32768);
    cluster.base().add_node(n);
  }
  auto profile = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{}, 1}));
  scheduler<bound_cluster<>, decltype(profile)> sched(profile, schedule_options{100, 1, false});
  preemptor<bound_cluster<>, decltype(profile)> pre(profile);
  preemption_budget budget(budget_options{2, 3600, 7200, true});
  queue_options qo;
  qo.dev_share_period = 8;
  scheduling_queue queue(qo);
  queue.set_capacity({192000, 768 * 1024, 16000});

  std::deque<pod> pods;
  auto submit = [&](pod p, double t) {
    pods.push_back(std::move(p));
    queue.push(pods.back(), t);
  };
  auto cycle = [&](double t) {
    cluster.set_time(t);
    while (auto unit = queue.pop(t)) {
      transaction<bound_cluster<>> tx(cluster);
      schedule_result last;
      for (const pod* p : unit->pods) {  // a gang: all members or none
        last = sched.schedule_one(cluster, *p);
        if (!last) break;
        tx.reserve(*p, last.where);
      }
      if (last) {
        tx.commit();
        queue.scheduled(unit->ticket, t);
        std::printf("t=%3.0f %-10s placed (%zu pod(s))\n", t, unit->pods[0]->name.c_str(), unit->pods.size());
        continue;
      }
      tx.rollback();
      const pod& p = *unit->pods[0];
      if (unit->pods.size() == 1) {
        const preemption_result plan = pre.plan(cluster, p, t, &budget);
        std::printf("t=%3.0f %-10s %s\n", t, p.name.c_str(), plan.explain(node_label(cluster, plan.node)).c_str());
        if (plan) {
          pre.apply(cluster, p, plan, t, &budget);
          queue.scheduled(unit->ticket, t);
          for (const auto& v : plan.victims) queue.released(v.spec);  // the host would requeue them
          continue;
        }
      }
      std::printf("t=%3.0f %-10s unschedulable: %s\n", t, p.name.c_str(), last.explain().c_str());
      queue.unschedulable(unit->ticket, t, last.rejections);
    }
  };

  // Two dev training gangs of 2 x 4 GPUs each, then a wave of prod inference.
  for (int g = 0; g < 2; ++g) {
    for (int m = 0; m < 2; ++m) {
      submit(make_pod("train" + std::to_string(g) + "-" + std::to_string(m)).cpu(16000).memory(65536).gpus(4)
                 .priority(2).dev().tenant("research").gang("train" + std::to_string(g), 2),
             0);
    }
  }
  cycle(0);
  for (int i = 0; i < 10; ++i) {
    submit(make_pod("infer-" + std::to_string(i)).cpu(4000).memory(16384).gpus(1).priority(9).prod()
               .qos(qos_class::guaranteed).tenant("serving"),
           10);
  }

  cycle(10);
  std::printf("\n%zu pods bound\n", cluster.bound_count());
  return 0;
}
