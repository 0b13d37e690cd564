// gang_coordinator: the gangs waiting for room, cycle after cycle, free of deadlock.
//
//   gang_coordinator coord(profile);            // hold_policy{} : one head-of-line hold, 300 s timeout
//   auto id = coord.submit(gang);
//   coord.run_cycle(cluster, now);              // places whole gangs; bind those in report.started
//   coord.finish(cluster, id);                  // a running gang is done: its members are released
//
// A cycle:
//   1. Timeout fallback: when a partial hold is older than hold_policy::timeout, every partial hold
//      is released whole, and those gangs may not hold again for hold_policy::backoff seconds.
//      Releasing all of them (not just the expired one) is what guarantees progress with several
//      holders: otherwise holds that expire at staggered times can keep some room held forever,
//      starving a gang that needs the whole cluster. After such a cycle no capacity is held.
//   2. Detection: among gangs holding partial reservations, a -> b when a could not complete even if
//      every running gang left (running gangs finish, holds do not), and a node where b holds members
//      would take one of a's missing members if b's hold were gone. Every cycle
//      of that wait-for graph is broken by releasing the hold of the gang that gives way first
//      (lowest priority, then youngest; wait_for.hpp). That gang also backs off.
//   3. Gangs are tried in order: priority (high first), then submit time (old first), then
//      submission order. A holder tries to complete (all-or-nothing for its missing members); any
//      other gang is placed whole by gang_placer, or not at all. A gang that does not fit may keep a
//      partial reservation only while fewer than hold_policy::max_holders gangs hold, only outside
//      its backoff, and never in a cycle that released holds in steps 1-2 (so such a cycle tries
//      every waiting gang against room that nobody holds).
// By construction: with max_holders == 0 nothing partial is ever held and no gang waits on
// another; with max_holders == 1 (the default) the lone holder is the head-of-line reservation
// that keeps small gangs from starving a large one, and it can only wait on running gangs. Only
// max_holders >= 2 can form a cycle: interleaved holds (members_per_cycle > 0, Kubernetes'
// one-pod-at-a-time binding, which lets two gangs each grab half the cluster), or a higher-priority
// gang that starts holding freed room after a lower one did. Step 2 breaks it; step 1 bounds it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/overlay.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/gang/result.hpp"
#include "gpusched/gang/wait_for.hpp"

namespace gpusched {

struct hold_policy {
  int max_holders = 1;                // gangs that may keep partial reservations across cycles; 0: none
  std::int32_t members_per_cycle = 0; // members a holder adds per cycle; 0: as many as fit
  double timeout = 300.0;             // seconds a partial reservation may last
  double backoff = 60.0;              // seconds a gang whose hold was dropped waits before holding again
};

inline void validate(const hold_policy& h) {
  if (h.max_holders < 0) throw invalid_argument_error("hold_policy.max_holders", "must be >= 0");
  if (h.members_per_cycle < 0) throw invalid_argument_error("hold_policy.members_per_cycle", "must be >= 0");
  if (!std::isfinite(h.timeout) || h.timeout <= 0.0) throw invalid_argument_error("hold_policy.timeout", "must be a finite time > 0");
  if (!std::isfinite(h.backoff) || h.backoff < 0.0) throw invalid_argument_error("hold_policy.backoff", "must be a finite time >= 0");
}

enum class gang_state : std::uint8_t { pending, holding, running, done };

using gang_id = std::uint64_t;

struct cycle_report {
  std::vector<gang_id> started;    // placed whole in this cycle: bind their members now
  std::vector<gang_id> timed_out;  // partial holds dropped by the timeout fallback (all of them)
  std::vector<gang_id> gave_way;   // partial holds dropped to break wait-for cycles
  std::vector<gang_id> holding;    // gangs holding partial reservations after the cycle
};

template <class Profile>
class gang_coordinator {
 public:
  explicit gang_coordinator(Profile profile, gang_options opts = {}, hold_policy holds = {})
      : placer_(std::move(profile), opts), holds_(holds) {
    validate(holds_);
  }

  [[nodiscard]] const hold_policy& holds() const noexcept { return holds_; }
  [[nodiscard]] gang_placer<Profile>& placer() noexcept { return placer_; }

  // Queues a gang (validated: throws naming the field, and queues nothing). Ids count from 0.
  gang_id submit(gang_spec g) {
    validate(g);
    const gang_id id = next_id_++;
    entry e;
    e.spec = std::move(g);
    gangs_.emplace(id, std::move(e));
    return id;
  }

  template <MutableCluster C>
    requires SchedulingProfile<Profile, C> && SchedulingProfile<Profile, cluster_overlay<C>>
  cycle_report run_cycle(C& c, double now) {
    if (!std::isfinite(now)) throw invalid_argument_error("now", "must be a finite time");
    cycle_report rep;
    // 1. Timeout fallback: one expired hold releases them all (see the header comment).
    bool expired = false;
    for (const auto& [id, e] : gangs_) expired = expired || (e.state == gang_state::holding && now - e.hold_since >= holds_.timeout);
    if (expired) {
      for (auto& [id, e] : gangs_) {
        if (e.state != gang_state::holding) continue;
        drop_hold(c, e, now);
        rep.timed_out.push_back(id);
      }
    }
    // 2. Wait-for cycles among holders.
    break_wait_cycles(c, now, rep.gave_way);
    const bool released = !rep.timed_out.empty() || !rep.gave_way.empty();

    // 3. Everyone waiting, in order.
    order_.clear();
    int holders = 0;
    for (auto& [id, e] : gangs_) {
      if (e.state == gang_state::pending || e.state == gang_state::holding) order_.push_back(id);
      holders += e.state == gang_state::holding ? 1 : 0;
    }
    std::sort(order_.begin(), order_.end(), [&](gang_id a, gang_id b) {
      const gang_spec& x = gangs_.at(a).spec;
      const gang_spec& y = gangs_.at(b).spec;
      if (x.priority != y.priority) return x.priority > y.priority;
      if (x.submit_time != y.submit_time) return x.submit_time < y.submit_time;
      return a < b;
    });
    for (gang_id id : order_) {
      entry& e = gangs_.at(id);
      const gang_spec& g = e.spec;
      if (e.state == gang_state::holding) {
        missing(e, g, /*desired=*/false);
        if (placer_.extend(c, g, more_, true, e.result)) {
          grow_extras(c, e);
          e.state = gang_state::running;
          --holders;
          rep.started.push_back(id);
        } else {
          cap_step(g);
          placer_.extend(c, g, more_, false, e.result);
          e.result.placed = false;
        }
        continue;
      }
      if (placer_.place(c, g, e.result)) {
        e.state = gang_state::running;
        rep.started.push_back(id);
        continue;
      }
      if (released || holders >= holds_.max_holders || now < e.no_hold_until) continue;
      e.result.members.clear();
      e.result.per_role.assign(g.roles.size(), 0);
      missing(e, g, false);
      cap_step(g);
      placer_.extend(c, g, more_, false, e.result);
      e.result.placed = false;
      if (!e.result.members.empty()) {
        e.state = gang_state::holding;
        e.hold_since = now;
        ++holders;
      }
    }
    for (auto& [id, e] : gangs_) {
      if (e.state == gang_state::holding) rep.holding.push_back(id);
    }
    return rep;
  }

  // A running gang is done (or evicted whole): every member is released.
  template <MutableCluster C>
  void finish(C& c, gang_id id) {
    entry& e = find(id, "finish");
    if (e.state != gang_state::running) throw invalid_argument_error("gang_id", "gang " + std::to_string(id) + " is not running");
    release_gang(c, e.spec, e.result);
    gangs_.erase(id);
  }

  // A waiting gang is cancelled; a partial hold is released.
  template <MutableCluster C>
  void withdraw(C& c, gang_id id) {
    entry& e = find(id, "withdraw");
    if (e.state == gang_state::running) throw invalid_argument_error("gang_id", "gang " + std::to_string(id) + " is running; use finish");
    if (e.state == gang_state::holding) release_gang(c, e.spec, e.result);
    gangs_.erase(id);
  }

  [[nodiscard]] gang_state state(gang_id id) const {
    auto it = gangs_.find(id);
    if (it == gangs_.end()) {
      if (id < next_id_) return gang_state::done;
      throw invalid_argument_error("gang_id", "no gang " + std::to_string(id));
    }
    return it->second.state;
  }
  [[nodiscard]] const gang_spec& spec(gang_id id) const { return find(id, "spec").spec; }
  // Running: every member's binding. Holding: the members held so far (not bound). Otherwise empty
  // or the last failure (placement(id).explain(spec(id)) says why the gang waits).
  [[nodiscard]] const gang_result& placement(gang_id id) const { return find(id, "placement").result; }
  [[nodiscard]] std::size_t size() const noexcept { return gangs_.size(); }

  // The earliest time after `now` when a hold times out or a backoff ends (a host runs a cycle then
  // even if nothing else happened); +infinity when none.
  [[nodiscard]] double next_wakeup(double now) const noexcept {
    double t = std::numeric_limits<double>::infinity();
    for (const auto& [id, e] : gangs_) {
      if (e.state == gang_state::holding) t = std::min(t, e.hold_since + holds_.timeout);
      if (e.state == gang_state::pending && e.no_hold_until > now) t = std::min(t, e.no_hold_until);
    }
    return t;
  }

 private:
  struct entry {
    gang_spec spec;
    gang_state state = gang_state::pending;
    gang_result result;
    double hold_since = 0.0;
    double no_hold_until = -std::numeric_limits<double>::infinity();
  };

  entry& find(gang_id id, const char* what) {
    auto it = gangs_.find(id);
    if (it == gangs_.end()) throw invalid_argument_error("gang_id", std::string(what) + ": no waiting or running gang " + std::to_string(id));
    return it->second;
  }
  const entry& find(gang_id id, const char* what) const { return const_cast<gang_coordinator*>(this)->find(id, what); }

  template <MutableCluster C>
  void drop_hold(C& c, entry& e, double now) {
    release_gang(c, e.spec, e.result);
    e.result.members.clear();
    std::fill(e.result.per_role.begin(), e.result.per_role.end(), 0);
    e.state = gang_state::pending;
    e.no_hold_until = now + holds_.backoff;
  }

  // more_[r] = members role r lacks up to its minimum (or desired count).
  void missing(const entry& e, const gang_spec& g, bool desired) {
    more_.assign(g.roles.size(), 0);
    for (std::size_t r = 0; r < g.roles.size(); ++r) {
      const std::int32_t have = r < e.result.per_role.size() ? e.result.per_role[r] : 0;
      more_[r] = std::max(0, (desired ? g.roles[r].desired_count : g.roles[r].min_count) - have);
    }
  }

  // Caps more_ at members_per_cycle in total, filling roles in declaration order.
  void cap_step(const gang_spec& g) {
    if (holds_.members_per_cycle == 0) return;
    std::int32_t left = holds_.members_per_cycle;
    for (std::size_t r = 0; r < g.roles.size(); ++r) {
      more_[r] = std::min(more_[r], left);
      left -= more_[r];
    }
  }

  template <MutableCluster C>
  void grow_extras(C& c, entry& e) {
    if (!placer_.options().elastic) return;
    missing(e, e.spec, true);
    placer_.extend(c, e.spec, more_, false, e.result);
    e.result.placed = true;
  }

  template <MutableCluster C>
  void break_wait_cycles(C& c, double now, std::vector<gang_id>& gave_way) {
    holder_ids_.clear();
    for (const auto& [id, e] : gangs_) {
      if (e.state == gang_state::holding) holder_ids_.push_back(id);
    }
    const std::size_t h = holder_ids_.size();
    if (h < 2) return;
    // Which holders could not complete even once every running gang has left (running gangs finish;
    // holds do not)? Tried on an overlay: nothing changes.
    cluster_overlay<C> o(c);
    auto without_running = [&]() {
      o.reset();
      for (const auto& [id, e] : gangs_) {
        if (e.state != gang_state::running) continue;
        for (const auto& m : e.result.members) o.release(e.spec.roles[m.role].member, m.where);
      }
    };
    blocked_.assign(h, 0);
    for (std::size_t a = 0; a < h; ++a) {
      entry& e = gangs_.at(holder_ids_[a]);
      missing(e, e.spec, false);
      scratch_ = e.result;
      without_running();
      blocked_[a] = placer_.extend(o, e.spec, more_, true, scratch_) ? 0 : 1;
    }
    // a -> b: a is blocked and a node where b holds members would take one of a's missing members
    // if b's hold (and the running gangs) were gone.
    graph_.reset(h);
    keys_.resize(h);
    for (std::size_t b = 0; b < h; ++b) {
      const entry& eb = gangs_.at(holder_ids_[b]);
      keys_[b] = waiting_gang_key{eb.spec.priority, eb.spec.submit_time, holder_ids_[b]};
      without_running();
      for (const auto& m : eb.result.members) o.release(eb.spec.roles[m.role].member, m.where);
      for (std::size_t a = 0; a < h; ++a) {
        if (a == b || !blocked_[a]) continue;
        const entry& ea = gangs_.at(holder_ids_[a]);
        if (could_use(o, ea, eb)) graph_.add_wait(a, b);
      }
    }
    for (std::size_t v : graph_.break_cycles(keys_)) {
      entry& e = gangs_.at(holder_ids_[v]);
      drop_hold(c, e, now);
      gave_way.push_back(holder_ids_[v]);
    }
  }

  // Would a node where `holder` holds members take one of `waiter`'s missing members, on `o` (where
  // holder's hold is released)?
  template <Cluster X>
  bool could_use(const X& o, const entry& waiter, const entry& holder) const {
    for (std::size_t r = 0; r < waiter.spec.roles.size(); ++r) {
      const std::int32_t have = r < waiter.result.per_role.size() ? waiter.result.per_role[r] : 0;
      if (have >= waiter.spec.roles[r].min_count) continue;
      for (const auto& m : holder.result.members) {
        reason why = reason::ok;
        placer_.profile().filter(o, waiter.spec.roles[r].member, m.where.node, 1, &why);
        if (why == reason::ok) return true;
      }
    }
    return false;
  }

  gang_placer<Profile> placer_;
  hold_policy holds_;
  std::map<gang_id, entry> gangs_;
  gang_id next_id_ = 0;
  std::vector<gang_id> order_, holder_ids_;
  std::vector<std::int32_t> more_;
  std::vector<std::uint8_t> blocked_;
  std::vector<waiting_gang_key> keys_;
  gang_result scratch_;
  wait_for_graph graph_;
};

}  // namespace gpusched
