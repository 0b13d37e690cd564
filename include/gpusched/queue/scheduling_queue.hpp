// scheduling_queue: which pending pod or gang goes next (the QueueSort extension point).
//
// Order, from the outside in:
//   1. Tier: prod before dev; with dev_share_period P > 0, every P-th pop made while both tiers
//      have ready units takes dev instead (dev's guaranteed share 1/P).
//   2. Effective priority e = min(11, p + floor(w / a)), w the time since the unit became ready,
//      a = age_step_s. Level 11 ("starving") is above every real priority.
//   3. Below level 11: the tenant with the lowest weighted dominant share (fair_share.hpp).
//   4. FIFO: earlier ready time, then earlier arrival.
// A unit is one pod, or a gang (pods sharing pod.gang) once gang_min_members of it have arrived.
// Unschedulable units back off (min(initial * 2^(n-1), max)) and park until a cluster event that
// could help them (a node added; resources released, for units that failed on resources) or until
// max_unschedulable_s; then they are ready again, with a new ready time.
//
// Wait bound (docs/queue.md): a unit of base priority p in tier T that becomes ready while n units
// of T are ready is popped within
//   (11 - p) * a  +  (n + 1) * c_T * tau
// seconds, where tau is the longest gap between pops while units are ready, c_prod = 1 for P = 0
// and P/(P-1) for P > 0, c_dev = P (dev has no bound for P = 0).
//
// Cost: push O(1); pop O(number of non-empty (tenant, priority) buckets of the tier), at most
// 11 * tenants. Pushing and popping single pods allocate nothing once the slots, tenants and
// buckets have been seen; a gang allocates one map entry while it collects members.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/queue/fair_share.hpp"
#include "gpusched/queue/queue_policy.hpp"

namespace gpusched {

struct queue_ticket {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  friend bool operator==(const queue_ticket&, const queue_ticket&) = default;
};

// Cluster changes that may let parked units fit (Kubernetes' queueing hints, coarsely).
enum class cluster_event : std::uint8_t {
  node_added,          // helps every parked unit
  resources_released,  // a pod left a node: helps units that failed on resources or load
};

struct attempt_record {
  double time = 0.0;
  rejection_counts why;
};

struct popped_unit {
  queue_ticket ticket;
  std::span<const pod* const> pods;  // valid until the ticket is resolved
  tier tier_ = tier::dev;
  std::int32_t priority = 0;
  int effective_priority = 0;
  double waited = 0.0;  // since it became ready
  int attempts = 0;     // failed attempts so far
};

struct timeout_report {
  std::vector<const pod*> pods;
  double first_push = 0.0;
  double waited = 0.0;  // since first_push
  int attempts = 0;
  std::int32_t gang_min_members = 0;  // > pods.size() for a gang that never gathered
  std::vector<attempt_record> history;  // oldest first, at most queue_options::history

  [[nodiscard]] std::string explain() const {
    std::string s = pods.empty() ? std::string("?") : "'" + pods.front()->name + "'";
    if (!pods.empty() && !pods.front()->gang.empty()) {
      s = "gang '" + pods.front()->gang + "' (" + std::to_string(pods.size()) + "/" +
          std::to_string(gang_min_members) + " members)";
    }
    s += " timed out after " + std::to_string(static_cast<long long>(waited)) + " s, " + std::to_string(attempts) +
         " failed attempts";
    for (const auto& a : history) s += "; t=" + std::to_string(static_cast<long long>(a.time)) + ": " + a.why.to_string();
    return s;
  }
};

class scheduling_queue {
 public:
  explicit scheduling_queue(queue_options opts = {}) : opts_(opts) { opts_.validate(); }

  [[nodiscard]] const queue_options& options() const noexcept { return opts_; }

  // Cluster totals against which tenants' dominant shares are taken.
  void set_capacity(const resource_amount& total) {
    if (total.cpu < 0 || total.memory < 0 || total.gpu_milli < 0) {
      throw invalid_argument_error("queue.capacity", "must be >= 0 for every resource");
    }
    total_ = total;
  }
  void set_tenant_weight(const std::string& tenant, double weight) {
    if (!std::isfinite(weight) || weight <= 0.0) {
      throw invalid_argument_error("tenant '" + tenant + "'.weight", "must be a finite number > 0");
    }
    tenants_[tenant_index(tenant)].weight = weight;
  }
  [[nodiscard]] double tenant_share(const std::string& tenant) const {
    auto it = tenant_ids_.find(tenant);
    if (it == tenant_ids_.end()) return 0.0;
    const tenant_rec& t = tenants_[it->second];
    return dominant_share(t.used, total_, t.weight);
  }

  // Queues p (which must outlive its ticket). A gang member joins its gang's gathering unit; the
  // unit becomes ready when gang_min_members have arrived. Throws invalid_argument_error naming
  // the field (and changes nothing) for a bad pod, a gang member that disagrees with its gang, or
  // a time earlier than the last one seen.
  queue_ticket push(const pod& p, double now) {
    check_time(now);
    check_pod(p);
    const std::uint32_t t = tenant_index(p.tenant);
    if (p.gang.empty()) {
      const std::uint32_t s = new_unit(p, t, now);
      try {
        units_[s].members.push_back(&p);  // capacity kept from earlier use of the slot
      } catch (...) {
        free_unit(s);
        throw;
      }
      make_ready(s, now);
      return ticket_of(s);
    }
    auto it = gathering_.find(p.gang);
    if (it != gathering_.end()) {
      unit& u = units_[it->second];
      const pod& first = *u.members.front();
      if (p.gang_min_members != u.gang_min) {
        throw invalid_argument_error("pod '" + p.name + "'.gang_min_members",
                                     "differs from gang '" + p.gang + "' (" + std::to_string(u.gang_min) + ")");
      }
      if (p.priority != u.priority) throw invalid_argument_error("pod '" + p.name + "'.priority", "differs from gang '" + p.gang + "'");
      if (p.tier_ != u.tier_) throw invalid_argument_error("pod '" + p.name + "'.tier", "differs from gang '" + p.gang + "'");
      if (p.tenant != first.tenant) throw invalid_argument_error("pod '" + p.name + "'.tenant", "differs from gang '" + p.gang + "'");
      u.members.push_back(&p);
      u.request += request_of(p);
      const std::uint32_t s = it->second;
      if (u.members.size() >= static_cast<std::size_t>(u.gang_min)) {
        gathering_.erase(it);
        make_ready(s, now);
      }
      return ticket_of(s);
    }
    const std::uint32_t s = new_unit(p, t, now);
    const bool complete = p.gang_min_members <= 1;
    try {
      units_[s].members.push_back(&p);
      if (!complete) gathering_.emplace(p.gang, s);
    } catch (...) {
      free_unit(s);
      throw;
    }
    if (complete) make_ready(s, now);  // else it stays gathering
    return ticket_of(s);
  }

  // The next ready unit, now in flight until scheduled(), unschedulable() or remove(); nullopt when
  // none is ready. Moves units whose backoff or parking ended first.
  std::optional<popped_unit> pop(double now) {
    check_time(now);
    advance(now);
    const bool prod = ready_[0] > 0, dev = ready_[1] > 0;
    if (!prod && !dev) return std::nullopt;
    tier t = prod ? tier::prod : tier::dev;
    if (prod && dev && opts_.dev_share_period > 0) {
      if (++contended_ % static_cast<std::uint64_t>(opts_.dev_share_period) == 0) t = tier::dev;
    }
    const std::uint32_t s = best_in(t, now);
    unit& u = units_[s];
    unlink_ready(s);
    u.state = unit_state::in_flight;
    popped_unit out;
    out.ticket = ticket_of(s);
    out.pods = std::span<const pod* const>(u.members.data(), u.members.size());
    out.tier_ = u.tier_;
    out.priority = u.priority;
    out.effective_priority = effective_priority(u.priority, now - u.ready, opts_.age_step_s);
    out.waited = now - u.ready;
    out.attempts = u.attempts;
    return out;
  }

  // The popped unit was placed: its requests count towards its tenant's share; the ticket ends.
  void scheduled(queue_ticket tk, double now) {
    check_time(now);
    unit& u = in_flight(tk, "scheduled");
    tenants_[u.tenant].used += u.request;
    free_unit(tk.slot);
  }

  // The popped unit did not fit: it backs off and parks, with why kept in its history.
  void unschedulable(queue_ticket tk, double now, const rejection_counts& why) {
    check_time(now);
    unit& u = in_flight(tk, "unschedulable");
    if (u.history.capacity() < opts_.history) u.history.reserve(opts_.history);  // may throw: nothing changed yet
    if (opts_.history > 0) {
      if (u.history.size() == opts_.history) u.history.erase(u.history.begin());
      u.history.push_back(attempt_record{now, why});
    }
    ++u.attempts;
    u.backoff_until = now + backoff_duration(u.attempts, opts_.initial_backoff_s, opts_.max_backoff_s);
    u.helped_by_release = why.examined == 0 ? false : resources_could_help(why);
    u.parked_at = now;
    u.state = unit_state::parked;
    link_tail(parked_, s_of(tk));
  }

  // Moves the parked units this event could help: to ready when their backoff has passed, else to
  // the backoff queue.
  void on_cluster_event(cluster_event e, double now) {
    check_time(now);
    backoff_.reserve(units_.size());
    std::uint32_t s = parked_.head;
    while (s != npos) {
      const std::uint32_t next = units_[s].next;
      if (e == cluster_event::node_added || units_[s].helped_by_release) unpark(s, now);
      s = next;
    }
  }

  // Drops a unit in any state (the host deleted it).
  void remove(queue_ticket tk) {
    unit& u = valid(tk);
    switch (u.state) {
      case unit_state::ready: unlink_ready(tk.slot); break;
      case unit_state::parked: unlink(parked_, tk.slot); break;
      case unit_state::gathering: gathering_.erase(u.members.front()->gang); break;
      case unit_state::backoff:
      case unit_state::in_flight:
      case unit_state::free: break;  // the backoff heap skips stale entries
    }
    free_unit(tk.slot);
  }

  // A bound pod finished or was evicted: its requests leave its tenant's share.
  void released(const pod& p) {
    auto it = tenant_ids_.find(p.tenant);
    if (it == tenant_ids_.end()) throw invalid_argument_error("pod '" + p.name + "'.tenant", "unknown to the queue");
    resource_amount& u = tenants_[it->second].used;
    const resource_amount r = request_of(p);
    u.cpu = std::max<milli>(0, u.cpu - r.cpu);
    u.memory = std::max<mib>(0, u.memory - r.memory);
    u.gpu_milli = std::max<milli>(0, u.gpu_milli - r.gpu_milli);
  }

  // Units queued for timeout_s or more since their first push (in flight ones excepted) are
  // dropped and reported with their reason history.
  std::vector<timeout_report> expired(double now) {
    check_time(now);
    std::vector<timeout_report> out;
    if (opts_.timeout_s <= 0.0) return out;
    std::uint32_t s = age_.head;
    while (s != npos && units_[s].first_push + opts_.timeout_s <= now) {
      const std::uint32_t next = units_[s].age_next;
      unit& u = units_[s];
      if (u.state != unit_state::in_flight) {
        timeout_report r;
        r.pods = u.members;
        r.first_push = u.first_push;
        r.waited = now - u.first_push;
        r.attempts = u.attempts;
        r.gang_min_members = u.gang_min;
        r.history = u.history;
        out.push_back(std::move(r));
        remove(ticket_of(s));
      }
      s = next;
    }
    return out;
  }

  [[nodiscard]] std::size_t ready_count(tier t) const noexcept { return ready_[t == tier::prod ? 0 : 1]; }
  [[nodiscard]] std::size_t size() const noexcept { return live_; }  // units in any state
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }

 private:
  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();
  static constexpr int levels = max_priority + 1;  // base priorities 0..10

  enum class unit_state : std::uint8_t { free, gathering, ready, in_flight, parked, backoff };

  struct unit {
    std::vector<const pod*> members;        // capacity kept across reuse of the slot
    std::vector<attempt_record> history;    // ditto
    resource_amount request;
    double first_push = 0.0, ready = 0.0, backoff_until = 0.0, parked_at = 0.0;
    std::uint64_t seq = 0;
    std::uint32_t tenant = 0;
    std::uint32_t prev = npos, next = npos;          // ready bucket or parked list
    std::uint32_t age_prev = npos, age_next = npos;  // every live unit, by first push
    std::uint32_t generation = 0;
    std::int32_t priority = 0;
    std::int32_t gang_min = 0;
    int attempts = 0;
    tier tier_ = tier::dev;
    unit_state state = unit_state::free;
    bool helped_by_release = true;
  };
  struct list {
    std::uint32_t head = npos, tail = npos;
  };
  struct tier_buckets {
    std::array<list, levels> bucket{};
    std::uint16_t mask = 0;         // bit p: bucket p is not empty
    std::uint32_t active_pos = npos;  // position in active_[tier]
  };
  struct tenant_rec {
    double weight = 1.0;
    resource_amount used;
    std::array<tier_buckets, 2> tiers{};
  };
  struct backoff_entry {
    double until;
    std::uint64_t seq;
    std::uint32_t slot, generation;
    bool operator<(const backoff_entry& o) const noexcept {  // max-heap on "later": top is earliest
      return until != o.until ? until > o.until : seq > o.seq;
    }
  };

  static constexpr std::size_t ti(tier t) noexcept { return t == tier::prod ? 0 : 1; }
  static std::uint32_t s_of(queue_ticket tk) noexcept { return tk.slot; }
  queue_ticket ticket_of(std::uint32_t s) const noexcept { return {s, units_[s].generation}; }

  void check_time(double now) {
    if (!std::isfinite(now) || now < last_now_) {
      throw invalid_argument_error("now", "must be finite and never earlier than the last time given (" +
                                              std::to_string(last_now_) + ")");
    }
    last_now_ = now;
  }
  static void check_pod(const pod& p) {
    if (p.name.empty()) throw invalid_argument_error("pod.name", "must not be empty");
    if (p.priority < min_priority || p.priority > max_priority) {
      throw invalid_argument_error("pod '" + p.name + "'.priority", "must be within 0..10, got " + std::to_string(p.priority));
    }
    if (!p.gang.empty() && p.gang_min_members < 1) {
      throw invalid_argument_error("pod '" + p.name + "'.gang_min_members", "must be >= 1 for a gang member");
    }
    if (p.cpu_milli < 0 || p.memory_mib < 0 || p.num_gpu < 0 || p.gpu_milli < 0) {
      throw invalid_argument_error("pod '" + p.name + "'.requests", "must be >= 0");
    }
  }

  std::uint32_t tenant_index(const std::string& name) {
    if (!tenants_.empty() && name == last_tenant_name_) return last_tenant_;
    auto it = tenant_ids_.find(name);
    std::uint32_t id;
    if (it == tenant_ids_.end()) {
      tenants_.reserve(tenants_.size() + 1);
      id = static_cast<std::uint32_t>(tenants_.size());
      tenant_ids_.emplace(name, id);
      tenants_.emplace_back();
    } else {
      id = it->second;
    }
    last_tenant_name_ = name;
    last_tenant_ = id;
    return id;
  }

  std::uint32_t new_unit(const pod& p, std::uint32_t tenant, double now) {
    std::uint32_t s;
    if (free_.empty()) {
      units_.emplace_back();
      free_.reserve(units_.size());
      s = static_cast<std::uint32_t>(units_.size() - 1);
    } else {
      s = free_.back();
      free_.pop_back();
    }
    unit& u = units_[s];
    u.members.clear();
    u.history.clear();
    u.request = request_of(p);
    u.first_push = now;
    u.tenant = tenant;
    u.priority = p.priority;
    u.gang_min = p.gang.empty() ? 0 : p.gang_min_members;
    u.attempts = 0;
    u.tier_ = p.tier_;
    u.helped_by_release = true;
    u.state = unit_state::gathering;
    u.prev = u.next = npos;
    link_age(s);
    ++live_;
    return s;
  }
  void free_unit(std::uint32_t s) {
    unit& u = units_[s];
    unlink_age(s);
    u.state = unit_state::free;
    ++u.generation;
    free_.push_back(s);  // capacity reserved in new_unit
    --live_;
  }

  unit& valid(queue_ticket tk) {
    if (tk.slot >= units_.size() || units_[tk.slot].generation != tk.generation || units_[tk.slot].state == unit_state::free) {
      throw invalid_argument_error("ticket", "does not name a queued unit (already resolved or removed)");
    }
    return units_[tk.slot];
  }
  unit& in_flight(queue_ticket tk, const char* what) {
    unit& u = valid(tk);
    if (u.state != unit_state::in_flight) {
      throw invalid_argument_error("ticket", std::string(what) + "() needs a popped unit still in flight");
    }
    return u;
  }

  // Intrusive doubly linked lists over units_ (prev/next: bucket or parked list).
  void link_tail(list& l, std::uint32_t s) noexcept {
    unit& u = units_[s];
    u.prev = l.tail;
    u.next = npos;
    if (l.tail != npos) units_[l.tail].next = s; else l.head = s;
    l.tail = s;
  }
  void unlink(list& l, std::uint32_t s) noexcept {
    unit& u = units_[s];
    if (u.prev != npos) units_[u.prev].next = u.next; else l.head = u.next;
    if (u.next != npos) units_[u.next].prev = u.prev; else l.tail = u.prev;
    u.prev = u.next = npos;
  }
  void link_age(std::uint32_t s) noexcept {
    unit& u = units_[s];
    u.age_prev = age_.tail;
    u.age_next = npos;
    if (age_.tail != npos) units_[age_.tail].age_next = s; else age_.head = s;
    age_.tail = s;
  }
  void unlink_age(std::uint32_t s) noexcept {
    unit& u = units_[s];
    if (u.age_prev != npos) units_[u.age_prev].age_next = u.age_next; else age_.head = u.age_next;
    if (u.age_next != npos) units_[u.age_next].age_prev = u.age_prev; else age_.tail = u.age_prev;
    u.age_prev = u.age_next = npos;
  }

  void make_ready(std::uint32_t s, double now) {
    unit& u = units_[s];
    u.state = unit_state::ready;
    u.ready = now;
    u.seq = ++seq_;
    tier_buckets& tb = tenants_[u.tenant].tiers[ti(u.tier_)];
    link_tail(tb.bucket[static_cast<std::size_t>(u.priority)], s);
    if (tb.mask == 0) {
      auto& act = active_[ti(u.tier_)];
      act.reserve(tenants_.size());  // allocates only when a new tenant first appears
      tb.active_pos = static_cast<std::uint32_t>(act.size());
      act.push_back(u.tenant);
    }
    tb.mask = static_cast<std::uint16_t>(tb.mask | (1U << u.priority));
    ++ready_[ti(u.tier_)];
  }
  void unlink_ready(std::uint32_t s) noexcept {
    unit& u = units_[s];
    tier_buckets& tb = tenants_[u.tenant].tiers[ti(u.tier_)];
    list& b = tb.bucket[static_cast<std::size_t>(u.priority)];
    unlink(b, s);
    if (b.head == npos) {
      tb.mask = static_cast<std::uint16_t>(tb.mask & ~(1U << u.priority));
      if (tb.mask == 0) {
        auto& act = active_[ti(u.tier_)];
        const std::uint32_t moved = act.back();
        act[tb.active_pos] = moved;
        tenants_[moved].tiers[ti(u.tier_)].active_pos = tb.active_pos;
        act.pop_back();
        tb.active_pos = npos;
      }
    }
    --ready_[ti(u.tier_)];
  }

  // The best ready unit of tier t: highest effective priority; below the starving level the
  // lowest tenant share; then earliest ready time, then earliest arrival. Each bucket is FIFO with
  // one base priority, so its head is its best unit and only heads are compared.
  std::uint32_t best_in(tier t, double now) const noexcept {
    const auto& act = active_[ti(t)];
    std::uint32_t best = npos;
    int best_eff = -1;
    double best_share = 0.0;
    for (const std::uint32_t tn : act) {
      const tenant_rec& rec = tenants_[tn];
      const tier_buckets& tb = rec.tiers[ti(t)];
      const double share = act.size() > 1 ? dominant_share(rec.used, total_, rec.weight) : 0.0;
      for (unsigned m = tb.mask; m != 0; m &= m - 1) {
        const int p = std::countr_zero(m);
        const std::uint32_t h = tb.bucket[static_cast<std::size_t>(p)].head;
        const unit& u = units_[h];
        const int eff = effective_priority(p, now - u.ready, opts_.age_step_s);
        bool better;
        if (best == npos || eff != best_eff) {
          better = best == npos || eff > best_eff;
        } else if (eff < starving_level && share != best_share) {
          better = share < best_share;
        } else {
          const unit& b = units_[best];
          better = u.ready != b.ready ? u.ready < b.ready : u.seq < b.seq;
        }
        if (better) {
          best = h;
          best_eff = eff;
          best_share = share;
        }
      }
    }
    return best;
  }

  void unpark(std::uint32_t s, double now) {
    unlink(parked_, s);
    unit& u = units_[s];
    if (now >= u.backoff_until) {
      make_ready(s, now);
    } else {
      u.state = unit_state::backoff;
      backoff_.push_back(backoff_entry{u.backoff_until, ++seq_, s, u.generation});  // capacity reserved below
      std::push_heap(backoff_.begin(), backoff_.end());
    }
  }

  void advance(double now) {
    while (!backoff_.empty() && backoff_.front().until <= now) {
      const backoff_entry e = backoff_.front();
      std::pop_heap(backoff_.begin(), backoff_.end());
      backoff_.pop_back();
      if (units_[e.slot].generation == e.generation && units_[e.slot].state == unit_state::backoff) make_ready(e.slot, now);
    }
    while (parked_.head != npos && units_[parked_.head].parked_at + opts_.max_unschedulable_s <= now) {
      backoff_.reserve(units_.size());
      unpark(parked_.head, now);
    }
  }

  static bool resources_could_help(const rejection_counts& why) noexcept {
    for (reason r : {reason::insufficient_cpu, reason::insufficient_memory, reason::insufficient_gpu_share,
                     reason::insufficient_gpu_memory, reason::cpu_load_too_high, reason::memory_load_too_high,
                     reason::gpu_load_too_high, reason::custom}) {
      if (why[r] > 0) return true;
    }
    return why.fits() > 0;  // it fitted somewhere yet was not placed (e.g. a gang partner failed)
  }

 public:
  // Reserve room for n units (so a benchmark's warm-up or a host's start-up takes the allocations).
  void reserve(std::size_t n) {
    units_.reserve(n);
    free_.reserve(n);
    backoff_.reserve(n);
  }

 private:
  queue_options opts_;
  resource_amount total_{};
  std::vector<unit> units_;
  std::vector<std::uint32_t> free_;
  std::vector<tenant_rec> tenants_;
  std::unordered_map<std::string, std::uint32_t> tenant_ids_;
  std::string last_tenant_name_;
  std::uint32_t last_tenant_ = 0;
  std::unordered_map<std::string, std::uint32_t> gathering_;  // gang name -> unit still gathering
  std::array<std::vector<std::uint32_t>, 2> active_{};         // tenants with ready units, per tier
  std::array<std::size_t, 2> ready_{};
  std::vector<backoff_entry> backoff_;
  list parked_{};
  list age_{};
  std::uint64_t seq_ = 0;
  std::uint64_t contended_ = 0;
  std::size_t live_ = 0;
  double last_now_ = 0.0;
};

}  // namespace gpusched
