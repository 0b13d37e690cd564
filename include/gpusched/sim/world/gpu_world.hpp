// A one-GPU world (issue 17, first part, item 3): the building blocks of sim/world/ wired into an
// event loop over one GPU that holds at most one inference replica and any number of trainers, so
// that the seed's failure modes can be shown and checked by hand (tests/world/test_gpu_world.cpp).
// Not the scenario driver: the cluster-wide run belongs to issue 12's driver (docs/adr/0016).
//
// The rules (docs/experiment-world.md):
//  - each process reserves device memory at its start by its framework (memory.hpp); a start or a
//    growth that does not fit fails in that process (the OOM rule), which exits and is restarted
//    by the kubelet's CrashLoopBackOff (crash_loop.hpp); an incarnation starts with its base working
//    set (a growth applies to the incarnation alive at its time);
//  - a trainer is always runnable while alive; the replica is runnable while a batch runs; rates
//    follow the sharing model (sharing.hpp) and are recomputed at every event (processor sharing);
//  - the replica serves from start + startup_s; a request that arrives while it does not serve, or
//    is queued or running when it dies, is dropped; a batch starts when the replica is idle and
//    max_batch requests wait or the oldest has waited max_wait_ms (dynamic batching).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/world/crash_loop.hpp"
#include "gpusched/sim/world/memory.hpp"
#include "gpusched/sim/world/quantile_sketch.hpp"
#include "gpusched/sim/world/sharing.hpp"

namespace gpusched::sim::world {

// Solo batch times by batch size (published points, sorted); linear between them, as gpu-let
// interpolates its profiles.
struct batch_table {
  std::vector<std::pair<int, double>> ms;  // (batch, solo ms)

  [[nodiscard]] double at(int batch) const {
    if (ms.empty() || batch < ms.front().first || batch > ms.back().first) {
      throw invalid_argument_error("batch", "outside the table's batch sizes");
    }
    auto hi = std::lower_bound(ms.begin(), ms.end(), batch, [](const auto& p, int b) { return p.first < b; });
    if (hi->first == batch) return hi->second;
    auto lo = hi - 1;
    const double f = static_cast<double>(batch - lo->first) / static_cast<double>(hi->first - lo->first);
    return lo->second + (hi->second - lo->second) * f;
  }
};

struct process_spec {
  framework_memory framework = framework_memory::pytorch_caching;
  double working_set_mib = 0.0;
  double limit_mib = 0.0;  // the framework's configured limit (0: none)
  double start_s = 0.0;
  double grow_at_s = std::numeric_limits<double>::infinity();  // working set grows to grown_mib then
  double grown_mib = 0.0;
};

struct replica_spec {
  process_spec process;
  batch_table batches;
  int max_batch = 1;
  double max_wait_ms = 0.0;
  double startup_s = 0.0;
  double arrival_interval_s = 1.0;  // deterministic arrivals i * interval, i >= 0, before `until`
};

struct world_result {
  quantile_sketch latency_ms{0.01, 1e-3, 1e7};
  std::uint64_t served = 0;
  std::uint64_t dropped = 0;
  std::uint64_t oom_kills = 0;
  double gpu_busy_s = 0.0;
};

// Runs the world from 0 to `until_s`. `replica` may be null (a GPU of trainers only). Under
// `exclusive` pass one process only (the device plugin gives the GPU to one pod).
inline world_result run_one_gpu(const sharing_params& sharing, double capacity_mib, const replica_spec* replica,
                                std::span<const process_spec> trainers, double until_s,
                                crash_loop_params restart = {}) {
  sharing.validate();
  constexpr double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = trainers.size() + (replica ? 1U : 0U);
  const std::size_t rep = trainers.size();  // the replica's index, when there is one
  auto spec = [&](std::size_t i) -> const process_spec& { return i == rep ? replica->process : trainers[i]; };

  std::vector<double> reserved(n, 0.0);
  std::vector<bool> alive(n, false);
  std::vector<double> next_start(n), grow_at(n);
  std::vector<crash_loop_backoff> backoff(n, crash_loop_backoff(restart));
  for (std::size_t i = 0; i < n; ++i) {
    next_start[i] = spec(i).start_s;
    grow_at[i] = spec(i).grow_at_s;
  }
  std::vector<gpu_context> ctx(n);
  std::vector<double> rate(n, 0.0);

  world_result r;
  // The replica's state.
  double serve_from = inf;
  std::vector<double> queue;  // arrival times, FIFO from `head`
  std::size_t head = 0;
  if (replica) queue.reserve(static_cast<std::size_t>(until_s / replica->arrival_interval_s) + 2);
  std::uint64_t next_arrival = 0;
  bool busy = false;
  int batch_n = 0;
  double batch_work_s = 0.0;  // solo seconds left

  auto kill = [&](std::size_t i, double t) {
    ++r.oom_kills;
    alive[i] = false;
    reserved[i] = 0.0;
    next_start[i] = t + backoff[i].on_exit(t);
    grow_at[i] = inf;  // a growth belongs to the incarnation that died
    if (i == rep) {
      r.dropped += static_cast<std::uint64_t>(queue.size() - head) + static_cast<std::uint64_t>(busy ? batch_n : 0);
      head = queue.size();
      busy = false;
      serve_from = inf;
    }
  };
  auto refresh_rates = [&] {
    for (std::size_t i = 0; i < n; ++i) ctx[i].runnable = alive[i] && (i != rep || busy);
    rates(sharing, ctx, rate);
  };

  double t = 0.0;
  refresh_rates();
  for (;;) {
    // The next event.
    double next = until_s;
    for (std::size_t i = 0; i < n; ++i) {
      if (!alive[i]) next = std::min(next, next_start[i]);
      if (alive[i]) next = std::min(next, grow_at[i]);
    }
    double batch_end = inf, batch_timer = inf, arrival = inf;
    if (replica) {
      arrival = static_cast<double>(next_arrival) * replica->arrival_interval_s;
      next = std::min(next, arrival);
      if (busy && rate[rep] > 0.0) batch_end = t + batch_work_s / rate[rep];
      if (!busy && head < queue.size()) batch_timer = std::max(t, queue[head] + replica->max_wait_ms / 1000.0);
      next = std::min({next, batch_end, batch_timer, serve_from > t ? serve_from : inf});
    }
    // Advance to it.
    const double dt = next - t;
    r.gpu_busy_s += busy_share(sharing, ctx) * dt;
    if (busy) batch_work_s -= rate[rep] * dt;
    t = next;
    if (t >= until_s) break;

    // Handle every event due at t, in a fixed order: batch end, deaths by growth, starts, arrival,
    // batch start.
    if (busy && t >= batch_end) {
      for (int j = 0; j < batch_n; ++j) {
        r.latency_ms.add((t - queue[head - static_cast<std::size_t>(batch_n) + static_cast<std::size_t>(j)]) * 1000.0);
      }
      r.served += static_cast<std::uint64_t>(batch_n);
      busy = false;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (alive[i] && t >= grow_at[i]) {
        grow_at[i] = inf;
        const double extra = growth_request_mib(spec(i).framework, reserved[i], spec(i).grown_mib, spec(i).limit_mib);
        if (extra > 0.0 && !try_reserve(capacity_mib, reserved, i, extra)) kill(i, t);
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (alive[i] || t < next_start[i]) continue;
      double used = 0.0;
      for (double x : reserved) used += x;
      const auto& s = spec(i);
      const double need = initial_reservation_mib(s.framework, s.working_set_mib, capacity_mib - used, s.limit_mib);
      if (try_reserve(capacity_mib, reserved, i, need)) {
        alive[i] = true;
        next_start[i] = inf;
        if (grow_at[i] <= t) grow_at[i] = inf;  // the growth came while it was down
        if (i == rep) serve_from = t + replica->startup_s;
      } else {
        kill(i, t);
      }
    }
    if (replica && t >= arrival) {
      ++next_arrival;
      if (alive[rep] && t >= serve_from) {
        queue.push_back(arrival);
      } else {
        ++r.dropped;
      }
    }
    if (replica && !busy && head < queue.size()) {
      const auto waiting = queue.size() - head;
      if (waiting >= static_cast<std::size_t>(replica->max_batch) ||
          t >= queue[head] + replica->max_wait_ms / 1000.0 - 1e-12) {
        batch_n = static_cast<int>(std::min(waiting, static_cast<std::size_t>(replica->max_batch)));
        batch_work_s = replica->batches.at(batch_n) / 1000.0;
        head += static_cast<std::size_t>(batch_n);
        busy = true;
      }
    }
    refresh_rates();
  }
  return r;
}

}  // namespace gpusched::sim::world
