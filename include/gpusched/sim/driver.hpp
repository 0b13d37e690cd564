// One simulation driver (issue 12, ADR 0010): the event loop every replay of the simulator runs.
// A replay is a configuration of it: a workload (which pod each job runs, when it arrives, how long
// it runs once placed, until when it waits), the library's queue (any QueueSort model,
// queue/queue_sort.hpp), Volcano-style actions (place: the scheduler's schedule_one; preempt: the
// library's preemptor, preemption/preemption.hpp), and an observer that keeps the metrics.
//
// The loop. Each step goes to the earliest of the next arrival, the next completion and the next
// waiting pod's deadline (time `now`) and then, in this order:
//   1. samples: observer.sample(d, t) for every sample time t <= now not yet taken (period
//      driver_options::sample_period from the first arrival), then observer.advance(d, last, now):
//      both see the state held since the previous step, before any event of `now`;
//   2. completions: jobs whose run ends at or before `now` leave (release), in end time order, then
//      job index;
//   3. withdrawals: waiting jobs whose deadline is at or before `now` leave the queue unplaced (a
//      queue without for_each / erase_if, such as the two-tier scheduling_queue, takes no deadline);
//   4. a scheduling cycle, when step 2 freed resources and the queue is not empty: the queue pops
//      units until it has none (one pass, queue/queue_sort.hpp), each placed or found unschedulable;
//      with skip_failed_shapes a pod shape that failed in this pass is not tried again (the pass only
//      takes resources away, so it would fail again);
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
// Not here yet (ADR 0010): a gang action (all or nothing), an evict action and acting samples,
// which the serving experiment's run_once needs before it can become a configuration.
// The driver allocates nothing per event once its vectors have grown (the queue and the actions
// keep their own promises; the skip_failed_shapes pass builds shape keys).
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
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preemption/preemption_budget.hpp"
#include "gpusched/queue/queue_sort.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/sim/metrics.hpp"
#include "gpusched/sim/trace.hpp"

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
  bool skip_failed_shapes = false; // within one cycle, a pod shape that failed is not tried again
};

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
  explicit preempt_action(Profile fit, preemption_options o = {}, preemption_budget* budget = nullptr)
      : pre_(std::move(fit), o), budget_(budget) {}

  // Plans for `p` (scheduled as such) and, when a plan is found, applies it with `bound_as` (the
  // same pod under the name the cluster records). Returns the applied plan, or one not found.
  preemption_result operator()(C& c, const pod& p, const pod& bound_as, double now) {
    preemption_result plan = pre_.plan(c, p, now, budget_);
    if (plan) pre_.apply(c, bound_as, plan, now, budget_);
    return plan;
  }

 private:
  preemptor<C, Profile> pre_;
  preemption_budget* budget_;
};

template <class C, DriverWorkload W, QueueSort Q, class Place, class Observer, class Preempt = no_preemption>
  requires PlaceAction<Place, C>
class driver {
 public:
  driver(C& c, W& w, Q& q, Place& place, Observer& obs, driver_options o = {}, Preempt preempt = {})
      : c_(c), w_(w), q_(q), place_(place), obs_(obs), preempt_(std::move(preempt)), o_(o) {
    if (!(o_.sample_period >= 0.0) || o_.sample_period == never) {
      throw invalid_argument_error("driver_options.sample_period", "must be a finite number >= 0");
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
  }

  // Runs the loop until no arrival, completion or (finite) deadline is left. Jobs that wait with no
  // deadline when nothing else can happen stay in the queue.
  void run() {
    const std::size_t n = w_.size();
    if (n == 0) return;
    last_ = arrive(0);
    next_sample_ = last_;
    while (next_ < n || !ends_.empty() || !q_.empty()) {
      drop_stale();
      double now = next_ < n ? arrive(next_) : never;
      if (!ends_.empty()) now = std::min(now, ends_.top().end);
      if constexpr (withdraws) {
        q_.for_each([&](const pod& p) { now = std::min(now, w_.job(w_.job_of(p)).deadline); });
      }
      if (now == never) break;
      now_ = now;
      if constexpr (requires { c_.set_time(now); }) {
        if constexpr (Preempt::enabled) c_.set_time(now);
      }
      if (o_.sample_period > 0.0) {
        while (next_sample_ <= now) {
          if constexpr (requires { obs_.sample(*this, next_sample_); }) obs_.sample(*this, next_sample_);
          next_sample_ += o_.sample_period;
        }
      }
      if constexpr (requires { obs_.advance(*this, last_, now); }) obs_.advance(*this, last_, now);
      last_ = now;

      bool freed = false;
      while (!ends_.empty() && ends_.top().end <= now) {
        const running_job r = ends_.top();
        ends_.pop();
        if (r.gen != gen_[r.job]) continue;  // preempted since
        release(r.job, false);
        freed = true;
      }
      if constexpr (withdraws) {
        q_.erase_if([&](const pod& p) {
          const std::uint32_t j = w_.job_of(p);
          if (w_.job(j).deadline > now) return false;
          if constexpr (requires { obs_.withdrawn(j); }) obs_.withdrawn(j);
          return true;
        });
      }
      if (freed && !q_.empty()) cycle(now);
      while (next_ < n && arrive(next_) == now) {
        const std::uint32_t j = order_[next_++];
        if constexpr (requires { obs_.arrived(j); }) obs_.arrived(j);
        if (!try_place(j, now, false)) {
          if (o_.requeue) {
            q_.push(w_.spec(j), now);
          } else if constexpr (requires { obs_.failed(j); }) {
            obs_.failed(j);
          }
        }
      }
      if constexpr (requires { obs_.step(*this, now); }) obs_.step(*this, now);
    }
  }

  [[nodiscard]] C& cluster() noexcept { return c_; }
  [[nodiscard]] const C& cluster() const noexcept { return c_; }
  [[nodiscard]] double now() const noexcept { return now_; }
  [[nodiscard]] std::size_t running() const noexcept { return running_; }  // placed and not yet gone
  [[nodiscard]] std::size_t pending() const noexcept { return q_.size(); }
  [[nodiscard]] std::size_t preemptions() const noexcept { return preemptions_; }  // victims, all told

 private:
  // Whether the queue can list and withdraw waiting pods (the sorted queues of queue/queue_sort.hpp
  // can; the two-tier scheduling_queue cannot, so its jobs wait with no deadline).
  static constexpr bool withdraws = requires(Q& q, const Q& cq) {
    cq.for_each([](const pod&) {});
    q.erase_if([](const pod&) { return false; });
  };

  struct running_job {
    double end;
    std::uint32_t job;
    std::uint32_t gen;
    bool operator>(const running_job& b) const noexcept { return end != b.end ? end > b.end : job > b.job; }
  };

  [[nodiscard]] double arrive(std::size_t k) const { return w_.job(order_[k]).arrive; }

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
      for (const preemption_victim& v : plan.victims) {  // already released by the plan's transaction
        const std::uint32_t vj = id_job_[v.record.id];
        victims_.push_back(vj);
        ++gen_[vj];
        --running_;
        ++preemptions_;
        if constexpr (requires { obs_.released(vj, v.record.where, true); }) obs_.released(vj, v.record.where, true);
      }
      track(c_.find(w_.bound_spec(j).name)->id, j);
      start(j, plan.preemptor_binding, now, waited);
      if (o_.requeue) {  // the preemptor may have taken a victim's pod id: jobs noted before
        for (const std::uint32_t vj : victims_) q_.push(w_.spec(vj), now);
      }
      return true;
    } else {
      return false;
    }
  }

  void track(pod_id id, std::uint32_t j) {
    if (id >= id_job_.size()) id_job_.resize(static_cast<std::size_t>(id) + 1);
    id_job_[id] = j;
  }

  void start(std::uint32_t j, const binding& b, double now, bool waited) {
    where_[j] = b;
    ++running_;
    const double d = w_.job(j).duration;
    if (d != never) ends_.push(running_job{now + d, j, gen_[j]});
    if constexpr (requires { obs_.placed(j, b, now, waited); }) obs_.placed(j, b, now, waited);
  }

  void release(std::uint32_t j, bool preempted) {
    c_.release(w_.bound_spec(j), where_[j]);
    --running_;
    if constexpr (requires { obs_.released(j, where_[j], preempted); }) obs_.released(j, where_[j], preempted);
  }

  // Completions of preempted runs are dropped before the loop looks at the next end time.
  void drop_stale() {
    while (!ends_.empty() && ends_.top().gen != gen_[ends_.top().job]) ends_.pop();
  }

  // One pass of the queue (queue/queue_sort.hpp): each unit popped once and resolved. A unit of
  // several pods (a gang in the two-tier queue) is tried member by member and stops at the first
  // that fails; members already placed stay (all-or-nothing needs a gang action, not here yet).
  void cycle(double now) {
    if constexpr (requires { q_.on_cluster_event(cluster_event::resources_released, now); }) {
      q_.on_cluster_event(cluster_event::resources_released, now);
    }
    failed_shapes_.clear();
    while (const auto u = q_.pop(now)) {
      bool ok = true;
      why_ = rejection_counts{};
      for (const pod* pp : u->pods) {
        const std::uint32_t j = w_.job_of(*pp);
        if (o_.skip_failed_shapes) {
          std::string key = shape_key(*pp);
          if (std::find(failed_shapes_.begin(), failed_shapes_.end(), key) != failed_shapes_.end()) {
            ok = false;
            break;
          }
          if (!try_place(j, now, true)) {
            failed_shapes_.push_back(std::move(key));
            ok = false;
            break;
          }
        } else if (!try_place(j, now, true)) {
          ok = false;
          break;
        }
      }
      if (ok) {
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
  driver_options o_;
  std::priority_queue<running_job, std::vector<running_job>, std::greater<>> ends_;
  std::vector<std::uint32_t> order_;  // jobs by arrival time, then job index
  std::vector<binding> where_;
  std::vector<std::uint32_t> gen_;     // placements of each job so far (a completion of an older one is stale)
  std::vector<std::uint32_t> id_job_;  // the cluster's pod id -> job (preempt action on)
  std::vector<std::uint32_t> victims_; // the jobs of the plan being applied
  std::vector<std::string> failed_shapes_;
  rejection_counts why_{};
  std::size_t next_ = 0, running_ = 0, preemptions_ = 0;
  double now_ = 0.0, last_ = 0.0, next_sample_ = 0.0;
};

// Runs the driver once: make_driver's shorthand.
template <class C, DriverWorkload W, QueueSort Q, class Place, class Observer, class Preempt = no_preemption>
void drive(C& c, W& w, Q& q, Place& place, Observer& obs, driver_options o = {}, Preempt preempt = {}) {
  driver<C, W, Q, Place, Observer, Preempt> d(c, w, q, place, obs, o, std::move(preempt));
  d.run();
}

}  // namespace gpusched::sim
