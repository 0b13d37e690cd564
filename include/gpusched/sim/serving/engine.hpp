// serving_engine: a discrete-event simulation of inference serving on a set of GPUs. It owns the
// request path (arrivals, routing, per-replica queues, dynamic batching, service times from the
// latency model, memory leaks and out-of-memory crashes) and nothing about scheduling: a cluster-level
// simulator places and removes replicas and non-serving tenants, sets node CPU demand, advances the
// engine's clock between its own events, and reads metrics and notifications. See docs/serving.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/sim/serving/arrivals.hpp"
#include "gpusched/sim/serving/engine_types.hpp"
#include "gpusched/sim/serving/interference.hpp"
#include "gpusched/sim/serving/latency_model.hpp"
#include "gpusched/sim/serving/metrics.hpp"

namespace gpusched::sim::serving {

class serving_engine {
 public:
  static constexpr double never = std::numeric_limits<double>::infinity();

  // The engine keeps a reference to `model`, which must outlive it.
  explicit serving_engine(const latency_model& model, engine_options opt = {}) : lm_(&model), opt_(opt) {
    if (!(opt.startup_s >= 0.0) || !(opt.restart_delay_s >= 0.0)) {
      throw invalid_argument_error("engine_options", "startup_s and restart_delay_s must be >= 0");
    }
    heap_.reserve(1024);
  }

  // ---- topology and workload (set-up; also allowed while running) --------------------------------

  // Adds a node with `gpus` devices of `gpu_memory_mib` each; returns its index (0, 1, ...).
  node_index add_node(int gpus, std::int32_t gpu_memory_mib, milli cpu_capacity_milli) {
    if (gpus < 0 || gpus > max_gpus_per_node) throw invalid_argument_error("node.gpus", "must be within 0..64");
    if (gpu_memory_mib < 0) throw invalid_argument_error("node.gpu_memory_mib", "must be >= 0");
    if (cpu_capacity_milli < 0) throw invalid_argument_error("node.cpu_milli", "must be >= 0");
    node n;
    n.first_gpu = static_cast<gpu_slot>(gpus_.size());
    n.gpu_count = gpus;
    n.cpu_capacity = static_cast<double>(cpu_capacity_milli);
    const auto idx = static_cast<node_index>(nodes_.size());
    nodes_.push_back(n);
    for (int g = 0; g < gpus; ++g) {
      gpu_ d;
      d.node = idx;
      d.mem_total_mib = gpu_memory_mib;
      gpus_.push_back(std::move(d));
    }
    return idx;
  }

  // The dense slot of GPU `gpu` of node `n`.
  [[nodiscard]] gpu_slot slot(node_index n, int gpu) const {
    if (n >= nodes_.size() || gpu < 0 || gpu >= nodes_[n].gpu_count) {
      throw invalid_argument_error("gpu", "node " + std::to_string(n) + " has no GPU " + std::to_string(gpu));
    }
    return nodes_[n].first_gpu + static_cast<gpu_slot>(gpu);
  }

  // Adds a service; its first arrival is scheduled at once.
  service_id add_service(service_spec spec, arrival_process arrivals) {
    const std::string f = "service '" + spec.name + "'.";
    if (spec.name.empty()) throw invalid_argument_error("service.name", "must not be empty");
    if (spec.model >= lm_->model_count()) throw invalid_argument_error(f + "model", "unknown model id");
    if (spec.max_batch < lm_->min_batch(spec.model) || spec.max_batch > lm_->max_batch(spec.model)) {
      throw invalid_argument_error(f + "max_batch", "must be within the profiled batch sizes " +
                                                        std::to_string(lm_->min_batch(spec.model)) + ".." +
                                                        std::to_string(lm_->max_batch(spec.model)));
    }
    if (lm_->min_batch(spec.model) != 1) throw invalid_argument_error(f + "model", "profile must start at batch 1");
    if (!(spec.max_wait_s >= 0.0) || !std::isfinite(spec.max_wait_s))
      throw invalid_argument_error(f + "max_wait_s", "must be >= 0");
    if (!(spec.slo_s > 0.0)) throw invalid_argument_error(f + "slo_s", "must be > 0");
    if (!(spec.timeout_s > 0.0)) throw invalid_argument_error(f + "timeout_s", "must be > 0");
    if (spec.gpu_share_milli < 1 || spec.gpu_share_milli > gpu_milli_whole) {
      throw invalid_argument_error(f + "gpu_share_milli", "must be within 1..1000");
    }
    if (spec.gpu_memory_mib < 0) throw invalid_argument_error(f + "gpu_memory_mib", "must be >= 0");
    service s;
    s.spec = std::move(spec);
    s.arrivals = std::move(arrivals);
    s.metrics.slo_s = s.spec.slo_s;
    s.metrics.keep_samples = opt_.keep_samples;
    const auto id = static_cast<service_id>(services_.size());
    services_.push_back(std::move(s));
    const double t = services_.back().arrivals.next();
    if (t < never) push(t, ev::arrival, id, 0);
    return id;
  }

  // A new replica of `s`, not yet on a GPU (it takes no requests until placed and ready).
  replica_id add_replica(service_id s) {
    check_service(s);
    replica r;
    r.svc = s;
    r.in_batch.reserve(static_cast<std::size_t>(services_[s].spec.max_batch));
    replicas_.push_back(std::move(r));
    return static_cast<replica_id>(replicas_.size() - 1);
  }

  // Puts an unplaced or removed replica on GPU `g`; it becomes ready after startup_s.
  void place_replica(replica_id r, gpu_slot g) {
    check_replica(r);
    check_gpu(g);
    auto& rep = replicas_[r];
    if (rep.state != replica_state::unplaced && rep.state != replica_state::removed) {
      throw invalid_argument_error("replica", "replica " + std::to_string(r) + " is " +
                                                  std::string(to_string(rep.state)) + ", not unplaced or removed");
    }
    rep.gpu = g;
    gpus_[g].replicas.push_back(r);
    begin_start(r, opt_.startup_s);
  }

  // Takes a replica off its GPU (eviction, preemption, scale-down): the requests queued in it and its
  // running batch fail (the serving process is gone), its memory is freed.
  void remove_replica(replica_id r) {
    check_replica(r);
    auto& rep = replicas_[r];
    if (rep.gpu == no_gpu) return;
    const gpu_slot g = rep.gpu;
    stop_replica(r);
    rep.state = replica_state::removed;
    auto& list = gpus_[g].replicas;
    list.erase(std::find(list.begin(), list.end(), r));
    rep.gpu = no_gpu;
    update_memory(g);
  }

  // A non-serving tenant on GPU `g` (a training worker): it runs all the time, pressing on its
  // neighbours like `proxy` at `proxy_batch` with its share, and holds `memory_mib`.
  external_id add_external(gpu_slot g, model_id proxy, int proxy_batch, std::int32_t share_milli,
                           std::int32_t memory_mib) {
    check_gpu(g);
    if (proxy >= lm_->model_count()) throw invalid_argument_error("external.proxy", "unknown model id");
    if (proxy_batch < lm_->min_batch(proxy) || proxy_batch > lm_->max_batch(proxy)) {
      throw invalid_argument_error("external.proxy_batch", "outside the proxy model's profiled batch sizes");
    }
    if (share_milli < 1 || share_milli > gpu_milli_whole)
      throw invalid_argument_error("external.share_milli", "must be within 1..1000");
    if (memory_mib < 0) throw invalid_argument_error("external.memory_mib", "must be >= 0");
    external e;
    e.gpu = g;
    e.util = lm_->tenant(proxy, proxy_batch, share_milli / 1000.0);
    e.memory_mib = memory_mib;
    externals_.push_back(e);
    const auto id = static_cast<external_id>(externals_.size() - 1);
    gpus_[g].externals.push_back(id);
    busy_inc(g);
    update_memory(g);
    return id;
  }

  void remove_external(external_id e) {
    if (e >= externals_.size() || !externals_[e].alive)
      throw invalid_argument_error("external", "no such live external tenant");
    auto& x = externals_[e];
    x.alive = false;
    auto& list = gpus_[x.gpu].externals;
    list.erase(std::find(list.begin(), list.end(), e));
    busy_dec(x.gpu);
    update_memory(x.gpu);
  }

  // CPU demand on node `n` (milli-cores of runnable work, as the cluster simulator accounts it);
  // above the node's capacity, CPU parts of service times stretch by demand / capacity.
  void set_node_cpu_demand(node_index n, milli demand_milli) {
    if (n >= nodes_.size()) throw invalid_argument_error("node", "no node " + std::to_string(n));
    if (demand_milli < 0) throw invalid_argument_error("node.cpu_demand", "must be >= 0");
    nodes_[n].cpu_demand = static_cast<double>(demand_milli);
  }

  // The CPU demand last set on node n (milli; set_node_cpu_demand).
  [[nodiscard]] double node_cpu_demand(node_index n) const {
    if (n >= nodes_.size()) throw invalid_argument_error("node", "no node " + std::to_string(n));
    return nodes_[n].cpu_demand;
  }

  // Gives every GPU's replica list room for all replicas added so far, so that place_replica grows
  // no list (sim/serving/engine_observer.hpp places replicas where nothing may throw).
  void reserve_replica_slots() {
    for (auto& g : gpus_) g.replicas.reserve(replicas_.size());
  }

  // From time `at` on, replica `r` leaks `mib_per_s` of GPU memory until it crashes or is removed.
  void schedule_leak(replica_id r, double at, double mib_per_s) {
    check_replica(r);
    if (!(at >= now_) || !std::isfinite(at)) throw invalid_argument_error("leak.at", "must be a finite time >= now");
    if (!(mib_per_s > 0.0) || !std::isfinite(mib_per_s)) throw invalid_argument_error("leak.rate", "must be > 0");
    leaks_.push_back(leak{r, mib_per_s});
    push(at, ev::leak_start, static_cast<std::uint32_t>(leaks_.size() - 1), 0);
  }

  // ---- running -------------------------------------------------------------------------------------

  [[nodiscard]] double now() const noexcept { return now_; }
  [[nodiscard]] double next_event_time() const noexcept { return heap_.empty() ? never : heap_.front().time; }

  // Processes the next event; false when there is none.
  bool step() {
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), later{});
    const event e = heap_.back();
    heap_.pop_back();
    now_ = e.time;
    dispatch(e);
    return true;
  }

  // Processes every event at or before `t`, then sets the clock to `t` (t >= now()).
  void run_until(double t) {
    if (!(t >= now_)) throw invalid_argument_error("run_until.t", "must be >= now()");
    while (!heap_.empty() && heap_.front().time <= t) step();
    now_ = t;
  }

  // Notifications since the last call (replica ready, OOM crash, leaks).
  std::vector<notification> take_notifications() {
    std::vector<notification> out;
    out.swap(notes_);
    return out;
  }

  // ---- queries -------------------------------------------------------------------------------------

  [[nodiscard]] std::size_t service_count() const noexcept { return services_.size(); }
  [[nodiscard]] std::size_t replica_count() const noexcept { return replicas_.size(); }
  [[nodiscard]] std::size_t gpu_count() const noexcept { return gpus_.size(); }
  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }
  [[nodiscard]] const service_spec& spec(service_id s) const {
    check_service(s);
    return services_[s].spec;
  }
  [[nodiscard]] const service_metrics& metrics(service_id s) const {
    check_service(s);
    return services_[s].metrics;
  }
  [[nodiscard]] service_id service_of(replica_id r) const {
    check_replica(r);
    return replicas_[r].svc;
  }
  [[nodiscard]] replica_state state(replica_id r) const {
    check_replica(r);
    return replicas_[r].state;
  }
  [[nodiscard]] gpu_slot gpu_of(replica_id r) const {
    check_replica(r);
    return replicas_[r].gpu;
  }
  [[nodiscard]] std::size_t queue_length(replica_id r) const {
    check_replica(r);
    return replicas_[r].queue.size();
  }
  [[nodiscard]] int running_batch(replica_id r) const {
    check_replica(r);
    return replicas_[r].busy ? replicas_[r].batch : 0;
  }
  [[nodiscard]] node_index node_of(gpu_slot g) const {
    check_gpu(g);
    return gpus_[g].node;
  }
  [[nodiscard]] const std::vector<replica_id>& replicas_on(gpu_slot g) const {
    check_gpu(g);
    return gpus_[g].replicas;
  }

  // GPU memory held by replica r now (its model plus what it leaked since it started).
  [[nodiscard]] double replica_memory_mib(replica_id r) const {
    check_replica(r);
    return holds_memory(replicas_[r]) ? memory_of(replicas_[r], now_) : 0.0;
  }
  [[nodiscard]] double gpu_memory_used_mib(gpu_slot g) const {
    check_gpu(g);
    return memory_used(g, now_);
  }
  [[nodiscard]] double gpu_memory_total_mib(gpu_slot g) const {
    check_gpu(g);
    return gpus_[g].mem_total_mib;
  }
  // MiB/s by which GPU g's used memory grows now: the leaks of the replicas holding memory on it.
  [[nodiscard]] double gpu_leak_rate_mib_per_s(gpu_slot g) const {
    check_gpu(g);
    double rate = 0.0;
    for (const replica_id r : gpus_[g].replicas) {
      if (holds_memory(replicas_[r])) rate += replicas_[r].leak_rate;
    }
    return rate;
  }

  // Seconds, up to now, during which at least one tenant of GPU g ran a kernel (a serving batch, or a
  // non-serving tenant, which always runs): NVML's "utilization.gpu" definition, accumulated.
  [[nodiscard]] double gpu_busy_seconds(gpu_slot g) const {
    check_gpu(g);
    const auto& d = gpus_[g];
    return d.busy_accum + (d.busy_count > 0 ? now_ - d.busy_since : 0.0);
  }

  // The slowdown a batch of `batch` on replica r would see now from its GPU's busy neighbours.
  [[nodiscard]] double current_slowdown(replica_id r, int batch) {
    check_replica(r);
    const auto& rep = replicas_[r];
    if (rep.gpu == no_gpu) return 1.0;
    const auto& sp = services_[rep.svc].spec;
    collect_cotenants(r);
    return lm_->slowdown(sp.model, batch, sp.gpu_share_milli / 1000.0, scratch_);
  }

 private:
  enum class ev : std::uint8_t { arrival, batch_timer, batch_done, ready, leak_start, oom, restart };
  struct event {
    double time;
    std::uint64_t seq;  // insertion order: equal times are processed first-in, first-out
    ev kind;
    std::uint32_t target;
    std::uint32_t token;  // invalidates stale timers and completions
  };
  struct later {  // a function object, so that the heap algorithms inline it
    bool operator()(const event& a, const event& b) const noexcept {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };

  struct service {
    service_spec spec;
    arrival_process arrivals;
    service_metrics metrics;
    std::vector<replica_id> ready;  // ready replicas, in id order
    std::size_t rr_cursor = 0;
  };
  struct replica {
    service_id svc = 0;
    replica_state state = replica_state::unplaced;
    gpu_slot gpu = no_gpu;
    std::uint32_t life = 0;   // bumped when the replica stops: its pending events become stale
    std::uint32_t timer = 0;  // bumped when a batch timer is re-armed or cancelled
    bool timer_armed = false;
    double timer_deadline = 0.0;
    time_fifo queue;
    std::vector<double> in_batch;  // arrival times of the running batch
    bool busy = false;
    int batch = 0;
    double batch_start = 0.0;
    tenant_util util;         // pressure on neighbours while busy
    double leaked_mib = 0.0;  // leaked up to leak_since
    double leak_rate = 0.0;   // MiB/s
    double leak_since = 0.0;
  };
  struct gpu_ {
    node_index node = 0;
    double mem_total_mib = 0.0;
    std::vector<replica_id> replicas;
    std::vector<external_id> externals;
    int busy_count = 0;
    double busy_since = 0.0;
    double busy_accum = 0.0;
    std::uint32_t oom_token = 0;
  };
  struct node {
    gpu_slot first_gpu = 0;
    int gpu_count = 0;
    double cpu_capacity = 0.0;
    double cpu_demand = 0.0;
  };
  struct external {
    gpu_slot gpu = 0;
    tenant_util util;
    double memory_mib = 0.0;
    bool alive = true;
  };
  struct leak {
    replica_id replica;
    double rate;
  };

  void check_service(service_id s) const {
    if (s >= services_.size()) throw invalid_argument_error("service", "no service " + std::to_string(s));
  }
  void check_replica(replica_id r) const {
    if (r >= replicas_.size()) throw invalid_argument_error("replica", "no replica " + std::to_string(r));
  }
  void check_gpu(gpu_slot g) const {
    if (g >= gpus_.size()) throw invalid_argument_error("gpu", "no GPU slot " + std::to_string(g));
  }

  void push(double t, ev k, std::uint32_t target, std::uint32_t token) {
    heap_.push_back(event{t, seq_++, k, target, token});
    std::push_heap(heap_.begin(), heap_.end(), later{});
  }

  void dispatch(const event& e) {
    switch (e.kind) {
      case ev::arrival:
        on_arrival(e.target);
        break;
      case ev::batch_timer:
        if (replicas_[e.target].timer == e.token) {
          replicas_[e.target].timer_armed = false;
          try_start_batch(e.target);
        }
        break;
      case ev::batch_done:
        if (replicas_[e.target].life == e.token) on_batch_done(e.target);
        break;
      case ev::ready:
        if (replicas_[e.target].life == e.token) on_ready(e.target);
        break;
      case ev::restart:
        if (replicas_[e.target].life == e.token && replicas_[e.target].state == replica_state::crashed) {
          begin_start(e.target, 0.0);
        }
        break;
      case ev::leak_start:
        on_leak(e.target);
        break;
      case ev::oom:
        if (gpus_[e.target].oom_token == e.token) on_oom(e.target);
        break;
    }
  }

  // ---- request path --------------------------------------------------------------------------------

  void on_arrival(service_id s) {
    auto& svc = services_[s];
    ++svc.metrics.arrived;
    const replica_id r = route(svc);
    if (r == no_replica) {
      ++svc.metrics.rejected;
    } else {
      replicas_[r].queue.push(now_);
      if (!replicas_[r].busy) try_start_batch(r);
    }
    const double t = svc.arrivals.next();
    if (t < never) push(t, ev::arrival, s, 0);
  }

  replica_id route(service& svc) {
    if (svc.ready.empty()) return no_replica;
    if (svc.spec.routing == routing_policy::round_robin) {
      if (svc.rr_cursor >= svc.ready.size()) svc.rr_cursor = 0;
      return svc.ready[svc.rr_cursor++];
    }
    replica_id best = svc.ready.front();
    std::size_t best_load = outstanding(replicas_[best]);
    for (const replica_id r : svc.ready) {
      const std::size_t load = outstanding(replicas_[r]);
      if (load < best_load) {
        best = r;
        best_load = load;
      }
    }
    return best;
  }
  static std::size_t outstanding(const replica& r) noexcept {
    return r.queue.size() + (r.busy ? static_cast<std::size_t>(r.batch) : 0);
  }

  // An idle, ready replica: drop timed-out requests, then start a batch now or arm the timer.
  void try_start_batch(replica_id r) {
    auto& rep = replicas_[r];
    if (rep.busy || rep.state != replica_state::ready) return;
    auto& svc = services_[rep.svc];
    while (!rep.queue.empty() && now_ - rep.queue.front() > svc.spec.timeout_s) {
      rep.queue.pop();
      ++svc.metrics.timed_out;
    }
    if (rep.queue.empty()) return;
    const auto n = rep.queue.size();
    const auto max_b = static_cast<std::size_t>(svc.spec.max_batch);
    const double deadline = rep.queue.front() + svc.spec.max_wait_s;
    if (n < max_b && now_ < deadline) {
      if (rep.timer_armed && rep.timer_deadline == deadline) return;  // already waiting for this one
      rep.timer_armed = true;
      rep.timer_deadline = deadline;
      push(deadline, ev::batch_timer, r, ++rep.timer);
      return;
    }
    ++rep.timer;  // any armed timer is now stale
    rep.timer_armed = false;
    start_batch(r, static_cast<int>(std::min(n, max_b)));
  }

  void start_batch(replica_id r, int b) {
    auto& rep = replicas_[r];
    auto& svc = services_[rep.svc];
    rep.in_batch.clear();
    for (int i = 0; i < b; ++i) rep.in_batch.push_back(rep.queue.pop());
    const double share = svc.spec.gpu_share_milli / 1000.0;
    collect_cotenants(r);
    const auto& n = nodes_[gpus_[rep.gpu].node];
    const double cpu = cpu_contention_slowdown(n.cpu_demand, n.cpu_capacity);
    const double s = lm_->service_seconds(svc.spec.model, b, share, scratch_, cpu);
    rep.busy = true;
    rep.batch = b;
    rep.batch_start = now_;
    rep.util = lm_->tenant(svc.spec.model, b, share);
    ++svc.metrics.batches;
    svc.metrics.batched_requests += static_cast<std::uint64_t>(b);
    busy_inc(rep.gpu);
    push(now_ + s, ev::batch_done, r, rep.life);
  }

  // Busy neighbours of replica r on its GPU into scratch_ (replicas running a batch, and externals).
  void collect_cotenants(replica_id r) {
    scratch_.clear();
    const auto& d = gpus_[replicas_[r].gpu];
    for (const replica_id o : d.replicas) {
      if (o != r && replicas_[o].busy) scratch_.push_back(replicas_[o].util);
    }
    for (const external_id x : d.externals) scratch_.push_back(externals_[x].util);
  }

  void on_batch_done(replica_id r) {
    auto& rep = replicas_[r];
    auto& m = services_[rep.svc].metrics;
    for (const double arrived : rep.in_batch) m.record_completion(now_ - arrived, rep.batch_start - arrived);
    rep.in_batch.clear();
    rep.busy = false;
    rep.batch = 0;
    busy_dec(rep.gpu);
    try_start_batch(r);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------

  void begin_start(replica_id r, double delay) {
    auto& rep = replicas_[r];
    auto& list = gpus_[rep.gpu].replicas;  // the newest allocation goes last (on_oom's fallback victim)
    std::rotate(std::find(list.begin(), list.end(), r), std::find(list.begin(), list.end(), r) + 1, list.end());
    rep.state = replica_state::starting;
    rep.leaked_mib = 0.0;
    rep.leak_rate = 0.0;
    rep.leak_since = now_;
    update_memory(rep.gpu);
    if (rep.state != replica_state::starting) return;  // the placement itself ran the GPU out of memory
    if (delay <= 0.0) {
      on_ready(r);
    } else {
      push(now_ + delay, ev::ready, r, rep.life);
    }
  }

  void on_ready(replica_id r) {
    auto& rep = replicas_[r];
    if (rep.state != replica_state::starting) return;
    rep.state = replica_state::ready;
    auto& ready = services_[rep.svc].ready;
    ready.insert(std::lower_bound(ready.begin(), ready.end(), r), r);
    notes_.push_back(notification{now_, notification::kind::replica_ready, r, rep.gpu});
  }

  // Ends the replica's process: queued and running requests fail, pending events become stale.
  void stop_replica(replica_id r) {
    auto& rep = replicas_[r];
    auto& svc = services_[rep.svc];
    if (rep.state == replica_state::ready) {
      auto& ready = svc.ready;
      ready.erase(std::find(ready.begin(), ready.end(), r));
    }
    svc.metrics.failed += rep.queue.size() + rep.in_batch.size();
    rep.queue.clear();
    rep.in_batch.clear();
    if (rep.busy) busy_dec(rep.gpu);
    rep.busy = false;
    rep.batch = 0;
    ++rep.life;
    ++rep.timer;
    rep.timer_armed = false;
    rep.leaked_mib = 0.0;
    rep.leak_rate = 0.0;
  }

  void on_leak(std::uint32_t idx) {
    const leak& l = leaks_[idx];
    auto& rep = replicas_[l.replica];
    if (rep.state != replica_state::ready && rep.state != replica_state::starting) {
      notes_.push_back(notification{now_, notification::kind::leak_skipped, l.replica, rep.gpu});
      return;
    }
    rep.leaked_mib += rep.leak_rate * (now_ - rep.leak_since);
    rep.leak_since = now_;
    rep.leak_rate += l.rate;
    notes_.push_back(notification{now_, notification::kind::leak_started, l.replica, rep.gpu});
    update_memory(rep.gpu);
  }

  // ---- memory --------------------------------------------------------------------------------------

  static bool holds_memory(const replica& r) noexcept {
    return r.state == replica_state::starting || r.state == replica_state::ready;
  }
  double memory_of(const replica& r, double t) const noexcept {
    return services_[r.svc].spec.gpu_memory_mib + r.leaked_mib + r.leak_rate * (t - r.leak_since);
  }
  double memory_used(gpu_slot g, double t) const noexcept {
    double used = 0.0;
    for (const replica_id r : gpus_[g].replicas) {
      if (holds_memory(replicas_[r])) used += memory_of(replicas_[r], t);
    }
    for (const external_id x : gpus_[g].externals) used += externals_[x].memory_mib;
    return used;
  }

  // Re-plans GPU g's out-of-memory time after any change of what it holds; crashes a replica at once
  // when the memory is already exceeded.
  void update_memory(gpu_slot g) {
    if (g == no_gpu) return;
    auto& d = gpus_[g];
    ++d.oom_token;
    const double used = memory_used(g, now_);
    if (used > d.mem_total_mib + 1e-6) {
      on_oom(g);
      return;
    }
    double rate = 0.0;
    for (const replica_id r : d.replicas) {
      if (holds_memory(replicas_[r])) rate += replicas_[r].leak_rate;
    }
    if (rate > 0.0) push(now_ + (d.mem_total_mib - used) / rate, ev::oom, g, d.oom_token);
  }

  // The allocation that fails is the leaking one: the replica leaking fastest crashes (ties: lowest
  // id); without a leak, the replica placed last (its allocation did not fit).
  void on_oom(gpu_slot g) {
    auto& d = gpus_[g];
    replica_id victim = no_replica;
    double worst = 0.0;
    for (const replica_id r : d.replicas) {
      const auto& rep = replicas_[r];
      if (holds_memory(rep) && rep.leak_rate > worst) {
        victim = r;
        worst = rep.leak_rate;
      }
    }
    if (victim == no_replica) {
      for (auto it = d.replicas.rbegin(); it != d.replicas.rend(); ++it) {
        if (holds_memory(replicas_[*it])) {
          victim = *it;
          break;
        }
      }
    }
    if (victim == no_replica) return;  // only externals: the cluster simulator's business
    stop_replica(victim);
    replicas_[victim].state = replica_state::crashed;
    notes_.push_back(notification{now_, notification::kind::replica_oom, victim, g});
    if (opt_.auto_restart) push(now_ + opt_.restart_delay_s, ev::restart, victim, replicas_[victim].life);
    update_memory(g);
  }

  // ---- utilisation ---------------------------------------------------------------------------------

  void busy_inc(gpu_slot g) {
    auto& d = gpus_[g];
    if (d.busy_count++ == 0) d.busy_since = now_;
  }
  void busy_dec(gpu_slot g) {
    auto& d = gpus_[g];
    if (--d.busy_count == 0) d.busy_accum += now_ - d.busy_since;
  }

  const latency_model* lm_;
  engine_options opt_;
  double now_ = 0.0;
  std::uint64_t seq_ = 0;
  std::vector<event> heap_;
  std::vector<service> services_;
  std::vector<replica> replicas_;
  std::vector<gpu_> gpus_;
  std::vector<node> nodes_;
  std::vector<external> externals_;
  std::vector<leak> leaks_;
  std::vector<notification> notes_;
  std::vector<tenant_util> scratch_;
};

}  // namespace gpusched::sim::serving
