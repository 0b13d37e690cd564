// One simulation driver (issue 12, ADR 0010): the event loop every replay of the simulator runs.
// A replay is a configuration of it: a workload (which pod each job runs, when it arrives, how long
// it runs once placed, until when it waits), the library's queue (any QueueSort model,
// queue/queue_sort.hpp), Volcano-style actions (place: the scheduler's schedule_one; preempt: the
// library's preemptor, preemption/preemption.hpp), and an observer that keeps the metrics.
//
// The loop. Each step goes to the earliest of the next arrival, the next completion and the next
// waiting pod's deadline (time `now`) and then, in this order:
//   1. samples: observer.sample(d, t) for every sample time t <= now not yet taken (period
//      driver_options::sample_period from first_sample, or from the first arrival), then
//      observer.advance(d, last, now):
//      both see the state held since the previous step, before any event of `now`;
//   2. completions: jobs whose run ends at or before `now` leave (release), in end time order, then
//      job index; after each, a queue with on_cluster_event hears resources_released;
//   3. withdrawals: waiting jobs whose deadline is at or before `now` leave the queue unplaced (a
//      queue without for_each / erase_if, such as the two-tier scheduling_queue, takes no deadline);
//   4. a scheduling cycle, when step 2 freed resources (or step 1 sampled, with cycle_after_sample)
//      and the queue is not empty: the queue pops units until it has none (one pass,
//      queue/queue_sort.hpp), each placed or found unschedulable;
//      with skip_failed_shapes a pod that asks exactly what one that failed in this pass asked
//      (every resource, QoS, tenant, no placement constraints; with preemption, also priority and
//      tier: what it may evict) is not tried (the pass only takes resources away, so it would fail
//      again); a preemption, whose victims may free more than the preemptor takes, lets every pod be
//      tried again;
//   5. arrivals at `now`, in job index order (jobs may be listed in any order): each is tried at
//      once; one that fits nowhere tries the preempt action, then waits in the queue (requeue) or
//      fails for good (the FGD paper's rule);
//   6. observer.step(d, now).
// A placed job runs for its duration (never: it stays) and then completes. A job preempted by
// another is released; with requeue it waits again (from `now`), else it is gone.
//
// Observer hooks, each optional (a struct without a hook compiles to nothing there):
//   sample(const driver&, double t)           advance(const driver&, double from, double to)
//   arrived(std::uint32_t j)                  placed(std::uint32_t j, const binding&, double now, bool waited)
//   failed(std::uint32_t j)                   withdrawn(std::uint32_t j)
//   released(std::uint32_t j, const binding&, bool preempted)
//   step(const driver&, double now)
//   gang_started(std::uint32_t g, double now)   gang_stopped(std::uint32_t g)   gang_finished(std::uint32_t g, double now)
//
// Gangs (a workload with gang_of(j)): the jobs of one gang run together; the gang starts when its
// last member is placed, runs for its members' duration (all equal) and then completes as a whole
// (gang_finished, then every member is released in job order). A started gang that loses a member
// to preemption stops (gang_stopped; no checkpoint: it starts over once all are placed again). With
// a gang action that is active, a queued gang member places its whole gang, all or nothing, once
// per cycle; without one, members are placed one by one (a partial gang holds what it got).
//
// The serving experiment's order (driver_options): with queue_arrivals, a step pushes its arrivals
// to the queue first (none is tried outside a cycle), then completions, then one cycle when anything
// arrived or completed; with sample_steps every sample time is a step, and with cycle_after_sample
// a step that took a sample runs a cycle too (the two-tier queue's backoffs resolve with time); with
// a finite horizon, arrivals at or after it never come and the loop stops after the step at it,
// with pods still running. Samples may act (set node loads, restart leaking replicas): the
// observer holds what it acts on; the driver only calls it. A job waits in the queue at most once
// (a victim already queued is not pushed again); a workload with seq(j) gives a sorted queue its
// order among equals.
// The driver allocates nothing per event once its vectors have grown (the queue and the actions
// keep their own promises).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preemption/preemption_budget.hpp"
#include "gpusched/queue/queue_sort.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/sim/metrics.hpp"

namespace gpusched::sim {

inline constexpr double never = std::numeric_limits<double>::infinity();

// When a job arrives, how long it runs once placed, and until when it waits unplaced (times in the
// driver's clock, seconds).
struct driver_job {
  double arrive = 0.0;
  double duration = never;  // never: it stays once placed
  double deadline = never;  // never: it waits as long as it takes
};

struct driver_options {
  double sample_period = 0.0;      // seconds between observer.sample calls; 0: none
  bool requeue = true;             // a job that fits nowhere waits in the queue; false: it fails for good
  bool skip_failed_shapes = false; // within one cycle, a pod like one that failed is not tried (step 4 above)
  double first_sample = -1.0;      // time of the first sample; < 0: the first arrival
  bool sample_steps = false;       // every sample time up to the horizon is a step (needs a finite horizon)
  bool cycle_after_sample = false; // a step that took a sample runs a cycle
  bool queue_arrivals = false;     // arrivals only enter the queue; a cycle when anything arrived or completed
  double horizon = never;          // finite: the loop stops after the step at this time
};

inline constexpr std::uint32_t no_gang_index = std::numeric_limits<std::uint32_t>::max();

// The jobs of a replay and the pods they run. spec(j) is what the scheduler sees; bound_spec(j) is
// the pod as the cluster records it (its own name; a clone of a trace pod has a name of its own).
// job_of(p) gives the job of a pod that spec() returned, for pods the queue hands back.
template <class W>
concept DriverWorkload = requires(W& w, const W& cw, std::uint32_t j, const pod& p) {
  { cw.size() } -> std::convertible_to<std::size_t>;
  { cw.job(j) } -> std::convertible_to<const driver_job&>;
  { cw.spec(j) } -> std::convertible_to<const pod&>;
  { w.bound_spec(j) } -> std::convertible_to<const pod&>;
  { cw.job_of(p) } -> std::convertible_to<std::uint32_t>;
};

// Optional workload members: gang_of(j) (the job's gang, or no_gang_index) and seq(j) (the order among
// equals in a sorted queue; without it, push order).
template <class W>
concept GangWorkload = requires(const W& cw, std::uint32_t j) {
  { cw.gang_of(j) } -> std::convertible_to<std::uint32_t>;
};

// The place action: the library's scheduler (anything with schedule_one(C&, const pod&)).
template <class S, class C>
concept PlaceAction = requires(S& s, C& c, const pod& p) {
  { s.schedule_one(c, p) } -> std::convertible_to<schedule_result>;
};

// The preempt action switched off (the default).
struct no_preemption {
  static constexpr bool enabled = false;
};

// The preempt action: Kubernetes' DefaultPreemption as the library's preemptor computes and applies
// it (preemption/preemption.hpp), with an optional preemption budget. The budget, when given, must
// outlive the action.
template <class C, class Profile>
class preempt_action {
 public:
  static constexpr bool enabled = true;
  // `active` false: the action finds no plan (a configuration that switches preemption at run time).
  explicit preempt_action(Profile fit, preemption_options o = {}, preemption_budget* budget = nullptr, bool active = true)
      : pre_(std::move(fit), o), budget_(budget), active_(active) {}
  [[nodiscard]] bool active() const noexcept { return active_; }

  // Plans for `p` (scheduled as such) and, when a plan is found, applies it with `bound_as` (the
  // same pod under the name the cluster records). Returns the applied plan, or one not found.
  preemption_result operator()(C& c, const pod& p, const pod& bound_as, double now) {
    if (!active_) return preemption_result{};
    preemption_result plan = pre_.plan(c, p, now, budget_);
    if (plan) pre_.apply(c, bound_as, plan, now, budget_);
    return plan;
  }

 private:
  preemptor<C, Profile> pre_;
  preemption_budget* budget_;
  bool active_;
};

// The gang action switched off (the default): gang members are placed one by one.
struct no_gang_action {
  static constexpr bool enabled = false;
};

// The gang action: the library's gang_placer (gang/placement.hpp) over a profile; every member
// reserved, or the cluster as before. The gang is named by its first member's pod (pod::gang), has
// one role per member (each keeps its own pod and name in the cluster's records), the first
// member's priority and its arrival time as submission. `active` switches it at run time.
template <class Profile>
class gang_action {
 public:
  static constexpr bool enabled = true;
  explicit gang_action(const Profile& prof, bool active = true) : placer_(prof), active_(active) {}
  [[nodiscard]] bool active() const noexcept { return active_; }

  template <class C, class W>
  gang_result operator()(C& c, W& w, const std::vector<std::uint32_t>& members) {
    const pod& first = w.spec(members.front());
    auto gb = make_gang(first.gang);
    for (const std::uint32_t j : members) gb.role(w.bound_spec(j).name, w.bound_spec(j), 1);
    const gang_spec g = gb.priority(first.priority).submitted(w.job(members.front()).arrive);
    return placer_.place(c, g);
  }

 private:
  gang_placer<Profile> placer_;
  bool active_;
};

template <class C, DriverWorkload W, QueueSort Q, class Place, class Observer, class Preempt = no_preemption,
          class Gang = no_gang_action>
  requires PlaceAction<Place, C>
class driver {
 public:
  driver(C& c, W& w, Q& q, Place& place, Observer& obs, driver_options o = {}, Preempt preempt = {}, Gang gang = {})
      : c_(c), w_(w), q_(q), place_(place), obs_(obs), preempt_(std::move(preempt)), gang_(std::move(gang)), o_(o) {
    if (!(o_.sample_period >= 0.0) || o_.sample_period == never) {
      throw invalid_argument_error("driver_options.sample_period", "must be a finite number >= 0");
    }
    if (!(o_.horizon >= 0.0)) throw invalid_argument_error("driver_options.horizon", "must be >= 0 (never: none)");
    if (o_.first_sample == never || o_.first_sample != o_.first_sample) {
      throw invalid_argument_error("driver_options.first_sample", "must be a finite number (< 0: the first arrival)");
    }
    if (o_.sample_steps && (o_.sample_period == 0.0 || o_.horizon == never)) {
      throw invalid_argument_error("driver_options.sample_steps", "needs a sample_period > 0 and a finite horizon");
    }
    const std::size_t n = w_.size();
    if (n > std::numeric_limits<std::uint32_t>::max()) {
      throw invalid_argument_error("driver.jobs", "more than 2^32 - 1 jobs");
    }
    for (std::uint32_t j = 0; j < n; ++j) {
      const driver_job& x = w_.job(j);
      if (!(x.arrive >= 0.0) || x.arrive == never || !(x.duration >= 0.0) || !(x.deadline >= x.arrive)) {
        throw invalid_argument_error("driver.jobs[" + std::to_string(j) + "]",
                                     "needs a finite arrive >= 0, duration >= 0 and deadline >= arrive");
      }
      if (!withdraws && x.deadline != never) {
        throw invalid_argument_error("driver.jobs[" + std::to_string(j) + "].deadline",
                                     "this queue cannot withdraw a waiting pod (no for_each / erase_if): must be never");
      }
    }
    order_.resize(n);
    for (std::uint32_t j = 0; j < n; ++j) order_[j] = j;
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return w_.job(a).arrive < w_.job(b).arrive; });
    where_.resize(n);
    gen_.assign(n, 0);
    bound_.assign(n, 0);
    queued_.assign(n, 0);
    if constexpr (GangWorkload<W>) {
      gang_of_.assign(n, no_gang_index);
      for (std::uint32_t j = 0; j < n; ++j) {
        const std::uint32_t g = w_.gang_of(j);
        gang_of_[j] = g;
        if (g == no_gang_index) continue;
        if (g >= n) throw invalid_argument_error("driver.jobs[" + std::to_string(j) + "].gang", "must be < the number of jobs, or no_gang_index");
        if (g >= members_.size()) members_.resize(static_cast<std::size_t>(g) + 1);
        if (!members_[g].empty() && w_.job(members_[g].front()).duration != w_.job(j).duration) {
          throw invalid_argument_error("driver.jobs[" + std::to_string(j) + "].duration", "must equal its gang's other members'");
        }
        members_[g].push_back(j);
      }
      gang_placed_.assign(members_.size(), 0);
      gang_started_.assign(members_.size(), 0);
      gang_gen_.assign(members_.size(), 0);
      gang_tried_.assign(members_.size(), 0);
    }
  }

  // Runs the loop until no arrival, completion or (finite) deadline is left, or until the step at
  // the horizon. Jobs that wait with no deadline when nothing else can happen stay in the queue.
  void run() {
    const std::size_t n = w_.size();
    const bool bounded = o_.horizon != never;
    if (n == 0 && !bounded) return;
    last_ = n > 0 ? arrive(0) : 0.0;
    if (bounded) last_ = std::min(last_, o_.horizon);
    next_sample_ = o_.first_sample >= 0.0 ? o_.first_sample : last_;
    while (bounded || next_ < n || !ends_.empty() || !q_.empty()) {
      drop_stale();
      double now = arrivals_left() ? arrive(next_) : never;
      if (!ends_.empty()) now = std::min(now, ends_.top().end);
      if constexpr (withdraws) {
        q_.for_each([&](const pod& p) { now = std::min(now, w_.job(w_.job_of(p)).deadline); });
      }
      if (o_.sample_steps) now = std::min(now, next_sample_);
      now = std::min(now, o_.horizon);
      if (now == never) break;
      now_ = now;
      if constexpr (requires { c_.set_time(now); }) {
        if constexpr (Preempt::enabled) c_.set_time(now);
      }
      bool sampled = false;
      if (o_.sample_period > 0.0) {
        while (next_sample_ <= now) {
          if constexpr (requires { obs_.sample(*this, next_sample_); }) obs_.sample(*this, next_sample_);
          next_sample_ += o_.sample_period;
          sampled = true;
        }
      }
      if constexpr (requires { obs_.advance(*this, last_, now); }) obs_.advance(*this, last_, now);
      last_ = now;

      bool arrived = false;
      if (o_.queue_arrivals) {
        while (arrivals_left() && arrive(next_) == now) {
          const std::uint32_t j = order_[next_++];
          if constexpr (requires { obs_.arrived(j); }) obs_.arrived(j);
          push(j, now);
          arrived = true;
        }
      }
      bool freed = false;
      while (!ends_.empty() && ends_.top().end <= now) {
        const running_job r = ends_.top();
        ends_.pop();
        if (stale(r)) continue;  // preempted since
        complete(r.job, now);
        freed = true;
      }
      if constexpr (withdraws) {
        q_.erase_if([&](const pod& p) {
          const std::uint32_t j = w_.job_of(p);
          if (w_.job(j).deadline > now) return false;
          queued_[j] = 0;
          if constexpr (requires { obs_.withdrawn(j); }) obs_.withdrawn(j);
          return true;
        });
      }
      const bool sample_cycle = sampled && o_.cycle_after_sample;
      if (o_.queue_arrivals) {
        if (arrived || freed || sample_cycle) cycle(now);
      } else {
        if ((freed || sample_cycle) && !q_.empty()) cycle(now);
        while (arrivals_left() && arrive(next_) == now) {
          const std::uint32_t j = order_[next_++];
          if constexpr (requires { obs_.arrived(j); }) obs_.arrived(j);
          if (!try_place(j, now, false)) {
            if (o_.requeue) {
              push(j, now);
            } else if constexpr (requires { obs_.failed(j); }) {
              obs_.failed(j);
            }
          }
        }
      }
      if constexpr (requires { obs_.step(*this, now); }) obs_.step(*this, now);
      if (bounded && now >= o_.horizon) break;
    }
  }

  [[nodiscard]] C& cluster() noexcept { return c_; }
  [[nodiscard]] const C& cluster() const noexcept { return c_; }
  [[nodiscard]] double now() const noexcept { return now_; }
  [[nodiscard]] std::size_t running() const noexcept { return running_; }  // placed and not yet gone
  [[nodiscard]] std::size_t pending() const noexcept { return q_.size(); }
  // Calls f(const pod&) for each waiting pod (queues that list their pods: the sorted queues of
  // queue/queue_sort.hpp).
  template <class F>
    requires requires(const Q& q, F f) { q.for_each(f); }
  void for_each_waiting(F f) const {
    q_.for_each(f);
  }
  [[nodiscard]] std::size_t preemptions() const noexcept { return preemptions_; }  // victims, all told
  [[nodiscard]] std::size_t preemptors() const noexcept { return preemptors_; }    // pods placed by preempting
  [[nodiscard]] bool placed(std::uint32_t j) const noexcept { return bound_[j] != 0; }
  [[nodiscard]] bool gang_started(std::uint32_t g) const noexcept { return gang_started_[g] != 0; }

 private:
  // Whether the queue can list and withdraw waiting pods (the sorted queues of queue/queue_sort.hpp
  // can; the two-tier scheduling_queue cannot, so its jobs wait with no deadline).
  static constexpr bool withdraws = requires(Q& q, const Q& cq) {
    cq.for_each([](const pod&) {});
    q.erase_if([](const pod&) { return false; });
  };
  static constexpr bool has_gangs = GangWorkload<W>;

  struct running_job {
    double end;
    std::uint32_t job;  // for a gang: its first member
    std::uint32_t gen;
    bool operator>(const running_job& b) const noexcept { return end != b.end ? end > b.end : job > b.job; }
  };

  [[nodiscard]] double arrive(std::size_t k) const { return w_.job(order_[k]).arrive; }
  [[nodiscard]] bool arrivals_left() const { return next_ < order_.size() && arrive(next_) < o_.horizon; }
  [[nodiscard]] std::uint32_t gang_of(std::uint32_t j) const noexcept {
    if constexpr (has_gangs) {
      return gang_of_[j];
    } else {
      return no_gang_index;
    }
  }
  [[nodiscard]] bool stale(const running_job& r) const noexcept {
    const std::uint32_t g = gang_of(r.job);
    return g == no_gang_index ? r.gen != gen_[r.job] : r.gen != gang_gen_[g];
  }

  // Queues j unless it waits already (a sorted queue takes the workload's seq(j) when it has one).
  void push(std::uint32_t j, double now) {
    if (queued_[j]) return;
    queued_[j] = 1;
    if constexpr (requires { w_.seq(j); q_.push(w_.spec(j), now, w_.seq(j)); }) {
      q_.push(w_.spec(j), now, w_.seq(j));
    } else {
      q_.push(w_.spec(j), now);
    }
  }

  // Tries j: the place action, then (when on) the preempt action. Records the placement.
  bool try_place(std::uint32_t j, double now, bool waited) {
    const pod& p = w_.spec(j);
    const schedule_result d = place_.schedule_one(c_, p);
    if (d.scheduled) {
      const pod& as = w_.bound_spec(j);
      if constexpr (Preempt::enabled) {
        track(c_.bind(as, d.where), j);
      } else {
        c_.reserve(as, d.where);
      }
      start(j, d.where, now, waited);
      return true;
    }
    why_ = d.rejections;
    if constexpr (Preempt::enabled) {
      const preemption_result plan = preempt_(c_, p, w_.bound_spec(j), now);
      if (!plan) return false;
      victims_.clear();
      released_ = released_ || !plan.victims.empty();
      for (const preemption_victim& v : plan.victims) {  // already released by the plan's transaction
        const std::uint32_t vj = id_job_[v.record.id];
        victims_.push_back(vj);
        ++gen_[vj];
        --running_;
        ++preemptions_;
        bound_[vj] = 0;
        const std::uint32_t g = gang_of(vj);
        if (g != no_gang_index) --gang_placed_[g];
        if constexpr (requires { obs_.released(vj, v.record.where, true); }) obs_.released(vj, v.record.where, true);
        if (g != no_gang_index && gang_started_[g]) {  // no checkpoint: the gang starts over
          gang_started_[g] = 0;
          ++gang_gen_[g];
          if constexpr (requires { obs_.gang_stopped(g); }) obs_.gang_stopped(g);
        }
      }
      ++preemptors_;
      track(c_.find(w_.bound_spec(j).name)->id, j);
      start(j, plan.preemptor_binding, now, waited);
      if (o_.requeue) {  // the preemptor may have taken a victim's pod id: jobs noted before
        for (const std::uint32_t vj : victims_) push(vj, now);
      }
      return true;
    } else {
      return false;
    }
  }

  // Places j's whole gang with the gang action; records every member's placement.
  bool try_gang(std::uint32_t g, double now) {
    if constexpr (Gang::enabled) {
      const gang_result gr = gang_(c_, w_, members_[g]);
      if (!gr.placed) {
        why_ = gr.failure.rejections;
        return false;
      }
      for (const member_binding& mb : gr.members) {
        const std::uint32_t mj = members_[g][mb.role];
        if constexpr (Preempt::enabled) track(c_.find(w_.bound_spec(mj).name)->id, mj);
        start(mj, mb.where, now, true);
      }
      return true;
    } else {
      (void)g;
      (void)now;
      return false;
    }
  }

  void track(pod_id id, std::uint32_t j) {
    if (id >= id_job_.size()) id_job_.resize(static_cast<std::size_t>(id) + 1);
    id_job_[id] = j;
  }

  void start(std::uint32_t j, const binding& b, double now, bool waited) {
    where_[j] = b;
    bound_[j] = 1;
    ++running_;
    if constexpr (requires { obs_.placed(j, b, now, waited); }) obs_.placed(j, b, now, waited);
    const std::uint32_t g = gang_of(j);
    if (g == no_gang_index) {
      const double d = w_.job(j).duration;
      if (d != never) ends_.push(running_job{now + d, j, gen_[j]});
      return;
    }
    if (++gang_placed_[g] != members_[g].size() || gang_started_[g]) return;
    gang_started_[g] = 1;
    if constexpr (requires { obs_.gang_started(g, now); }) obs_.gang_started(g, now);
    const double d = w_.job(j).duration;
    if (d != never) ends_.push(running_job{now + d, members_[g].front(), gang_gen_[g]});
  }

  void release(std::uint32_t j, bool preempted) {
    c_.release(w_.bound_spec(j), where_[j]);
    bound_[j] = 0;
    --running_;
    if constexpr (requires { obs_.released(j, where_[j], preempted); }) obs_.released(j, where_[j], preempted);
  }

  // A run that ended: the job leaves, or its whole gang (gang_finished first, then each member).
  void complete(std::uint32_t j, double now) {
    const std::uint32_t g = gang_of(j);
    if (g == no_gang_index) {
      release(j, false);
    } else {
      ++gang_gen_[g];  // the gang is done: no restart
      if constexpr (requires { obs_.gang_finished(g, now); }) obs_.gang_finished(g, now);
      for (const std::uint32_t m : members_[g]) {
        release(m, false);
        --gang_placed_[g];
      }
    }
    if constexpr (requires { q_.on_cluster_event(cluster_event::resources_released, now); }) {
      q_.on_cluster_event(cluster_event::resources_released, now);
    }
  }

  // Completions of preempted runs are dropped before the loop looks at the next end time.
  void drop_stale() {
    while (!ends_.empty() && stale(ends_.top())) ends_.pop();
  }

  // skip_failed_shapes: whether b is sure to fail where a failed in this pass (which only takes
  // resources away): the same shape (core/pod.hpp: CPU, memory, GPUs, models, QoS), the same named
  // resources and tenant, no placement constraints, and with preemption on, the same priority and
  // tier (what it may evict).
  bool fails_alike(const pod& a, const pod& b) const noexcept {
    if (!same_shape(a, b) || a.scalars != b.scalars || a.tenant != b.tenant || a.placement.has_value() ||
        b.placement.has_value()) {
      return false;
    }
    if constexpr (Preempt::enabled) {
      if (preempt_.active() && (a.priority != b.priority || a.tier_ != b.tier_)) return false;
    }
    return true;
  }

  // One pass of the queue (queue/queue_sort.hpp): each unit popped once and resolved. The pods of a
  // unit (a gang in the two-tier queue) are tried one by one, all of them (members placed stay);
  // with an active gang action a gang member places its whole gang, once per cycle, and the unit
  // stops at the first failure. A pod already placed (by its gang) counts as placed.
  void cycle(double now) {
    failed_.clear();
    if constexpr (Gang::enabled) std::fill(gang_tried_.begin(), gang_tried_.end(), 0);
    while (const auto u = q_.pop(now)) {
      bool ok = true;
      for (const pod* pp : u->pods) {
        const std::uint32_t j = w_.job_of(*pp);
        why_ = rejection_counts{};
        if (bound_[j]) continue;
        const std::uint32_t g = gang_of(j);
        bool aon = false;
        if constexpr (Gang::enabled) aon = g != no_gang_index && gang_.active();
        if (aon) {
          if (gang_tried_[g] || !try_gang((gang_tried_[g] = 1, g), now)) {
            ok = false;
            break;
          }
        } else if (o_.skip_failed_shapes) {
          if (std::any_of(failed_.begin(), failed_.end(), [&](const pod* f) { return fails_alike(*f, *pp); })) {
            ok = false;
            break;
          }
          released_ = false;
          if (!try_place(j, now, true)) {
            failed_.push_back(pp);
            ok = false;
            break;
          }
          // A preemption released its victims, which may leave room beyond the preemptor's: the
          // pass no longer only takes resources away, so a pod like a failed one may fit now.
          if (released_) failed_.clear();
        } else if (!try_place(j, now, true)) {
          ok = false;
        }
      }
      if (ok) {
        for (const pod* pp : u->pods) queued_[w_.job_of(*pp)] = 0;
        q_.scheduled(u->ticket, now);
      } else {
        q_.unschedulable(u->ticket, now, why_);
      }
    }
  }

  C& c_;
  W& w_;
  Q& q_;
  Place& place_;
  Observer& obs_;
  Preempt preempt_;
  Gang gang_;
  driver_options o_;
  std::priority_queue<running_job, std::vector<running_job>, std::greater<>> ends_;
  std::vector<std::uint32_t> order_;  // jobs by arrival time, then job index
  std::vector<binding> where_;
  std::vector<std::uint32_t> gen_;     // placements of each job so far (a completion of an older one is stale)
  std::vector<char> bound_, queued_;   // per job: placed now; waiting in the queue
  std::vector<std::uint32_t> gang_of_; // per job (gang workloads)
  std::vector<std::vector<std::uint32_t>> members_;  // per gang, in job order
  std::vector<std::uint32_t> gang_placed_, gang_gen_;
  std::vector<char> gang_started_, gang_tried_;
  std::vector<std::uint32_t> id_job_;  // the cluster's pod id -> job (preempt action on)
  std::vector<std::uint32_t> victims_; // the jobs of the plan being applied
  std::vector<const pod*> failed_;  // skip_failed_shapes: the pods that failed in this pass
  bool released_ = false;           // the last try_place released victims
  rejection_counts why_{};
  std::size_t next_ = 0, running_ = 0, preemptions_ = 0, preemptors_ = 0;
  double now_ = 0.0, last_ = 0.0, next_sample_ = 0.0;
};

// Runs the driver once: make_driver's shorthand.
template <class C, DriverWorkload W, QueueSort Q, class Place, class Observer, class Preempt = no_preemption,
          class Gang = no_gang_action>
void drive(C& c, W& w, Q& q, Place& place, Observer& obs, driver_options o = {}, Preempt preempt = {}, Gang gang = {}) {
  driver<C, W, Q, Place, Observer, Preempt, Gang> d(c, w, q, place, obs, o, std::move(preempt), std::move(gang));
  d.run();
}

}  // namespace gpusched::sim
