// scheduling_queue: which pending pod or gang goes next (the QueueSort extension point).
//
// Order, from the outside in:
//   1. Tier: prod before dev; with dev_share_period P > 0, every P-th pop made while both tiers
//      have ready units takes dev instead (dev's guaranteed share 1/P).
//   2. Effective priority (queue_policy.hpp, effective_priority): priorities are Kubernetes' int32;
//      in the seed's band (p <= 10) e = p + floor(w / a) while that is <= 10, else "starving"
//      (starving_level = 2^31, above every real priority); w the time since the unit became ready,
//      a = age_step_s. Above the band e = p: strict priority, no aging (Kubernetes' PrioritySort).
//   3. Below the starving level: the tenant with the lowest weighted dominant share (fair_share.hpp).
//   4. FIFO: earlier ready time, then earlier arrival.
// A unit is one pod, or a gang (pods sharing pod.gang) once gang_min_members of it have arrived.
// Unschedulable units back off (min(initial * 2^(n-1), max)) and park until a cluster event that
// could help them (a node added; resources released, for units that failed on resources) or until
// max_unschedulable_s; then they are ready again, with a new ready time.
//
// Wait bound (docs/queue.md): a unit of base priority p <= 10 in tier T that becomes ready while n
// units of T are ready is popped within
//   (11 - p) * a  +  (n + 1) * c_T * tau
// seconds, where tau is the longest gap between pops while units are ready, c_prod = 1 for P = 0
// and P/(P-1) for P > 0, c_dev = P (dev has no bound for P = 0). Units above the band have no
// bound: like Kubernetes, a stream of higher priorities may hold them back.
//
// Cost: push O(log L), L the distinct base priorities the unit's (tenant, tier) has seen; pop
// O(number of non-empty (tenant, priority) buckets of the tier). Pushing and popping single pods
// allocate nothing once the slots, tenants and (tenant, tier, priority) buckets have been seen; a
// gang allocates one map entry while it collects members.
#pragma once

#include <algorithm>
#include <array>
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
  std::int64_t effective_priority = 0;  // starving_level (2^31) once starving
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
  explicit scheduling_queue(queue_options opts = {}) : opts_(opts) {
    opts_.validate();
    inv_age_step_ = 1.0 / opts_.age_step_s;
  }

  [[nodiscard]] const queue_options& options() const noexcept { return opts_; }

  // Cluster totals against which tenants' dominant shares are taken.
  void set_capacity(const resource_amount& total) {
    if (total.cpu < 0 || total.memory < 0 || total.gpu_milli < 0) {
      throw invalid_argument_error("queue.capacity", "must be >= 0 for every resource");
    }
    total_ = total;
    for (tenant_rec& t : tenants_) t.share = dominant_share(t.used, total_, t.weight);
  }
  void set_tenant_weight(const std::string& tenant, double weight) {
    if (!std::isfinite(weight) || weight <= 0.0) {
      throw invalid_argument_error("tenant '" + tenant + "'.weight", "must be a finite number > 0");
    }
    tenant_rec& t = tenants_[tenant_index(tenant)];
    t.weight = weight;
    t.share = dominant_share(t.used, total_, t.weight);
  }
  [[nodiscard]] double tenant_share(const std::string& tenant) const {
    auto it = tenant_ids_.find(tenant);
    if (it == tenant_ids_.end()) return 0.0;
    return tenants_[it->second].share;
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
      const std::uint32_t s = new_unit(p, t, now, false);
      make_ready(s, now);
      return ticket_of(s);
    }
    auto it = gathering_.find(p.gang);
    if (it != gathering_.end()) {
      const std::uint32_t s = it->second;
      unit& u = at(s);
      cold& k = cold_[s];
      const pod& first = *k.members.front();
      if (p.gang_min_members != k.gang_min) {
        throw invalid_argument_error("pod '" + p.name + "'.gang_min_members",
                                     "differs from gang '" + p.gang + "' (" + std::to_string(k.gang_min) + ")");
      }
      if (p.priority != u.priority) throw invalid_argument_error("pod '" + p.name + "'.priority", "differs from gang '" + p.gang + "'");
      if (p.tier_ != u.tier_) throw invalid_argument_error("pod '" + p.name + "'.tier", "differs from gang '" + p.gang + "'");
      if (p.tenant != first.tenant) throw invalid_argument_error("pod '" + p.name + "'.tenant", "differs from gang '" + p.gang + "'");
      k.members.push_back(&p);
      u.request += request_of(p);
      if (k.members.size() >= static_cast<std::size_t>(k.gang_min)) {
        gathering_.erase(it);
        make_ready(s, now);
      }
      return ticket_of(s);
    }
    const std::uint32_t s = new_unit(p, t, now, true);
    const bool complete = p.gang_min_members <= 1;
    try {
      cold_[s].members.push_back(&p);  // capacity kept from earlier use of the slot
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
    const auto [tn, p] = best_in(t, now);
    ring& r = tenants_[tn].tiers[ti(t)].levels[p].r;
    const std::uint32_t s = r.front().slot;
    r.pop_front();
    if (!r.empty()) prefetch(&at(r.front().slot));  // the bucket's next unit, popped some pops later
    after_front_change(tn, t, p);
    --ready_[ti(t)];
    unit& u = at(s);
    u.state = unit_state::in_flight;
    popped_unit out;
    out.ticket = ticket_of(s);
    out.pods = u.gang ? std::span<const pod* const>(cold_[s].members.data(), cold_[s].members.size())
                      : std::span<const pod* const>(&u.first, 1);
    out.tier_ = u.tier_;
    out.priority = u.priority;
    out.effective_priority = aged(u.priority, now - u.ready);
    out.waited = now - u.ready;
    out.attempts = u.attempts;
    return out;
  }

  // The popped unit was placed: its requests count towards its tenant's share; the ticket ends.
  void scheduled(queue_ticket tk, double now) {
    check_time(now);
    unit& u = in_flight(tk, "scheduled");
    tenant_rec& t = tenants_[u.tenant];
    t.used += u.request;
    t.share = dominant_share(t.used, total_, t.weight);
    free_unit(tk.slot);
  }

  // The popped unit did not fit: it backs off and parks, with why kept in its history.
  void unschedulable(queue_ticket tk, double now, const rejection_counts& why) {
    check_time(now);
    unit& u = in_flight(tk, "unschedulable");
    cold& k = cold_[tk.slot];
    if (u.attempts == 0) k.history.clear();  // the slot's previous unit may have left some
    if (k.history.capacity() < opts_.history) k.history.reserve(opts_.history);  // may throw: nothing changed yet
    if (opts_.history > 0) {
      if (k.history.size() == opts_.history) k.history.erase(k.history.begin());
      k.history.push_back(attempt_record{now, why});
    }
    ++u.attempts;
    k.backoff_until = now + backoff_duration(u.attempts, opts_.initial_backoff_s, opts_.max_backoff_s);
    k.helped_by_release = why.examined == 0 ? false : resources_could_help(why);
    k.parked_at = now;
    u.state = unit_state::parked;
    link_parked(tk.slot);
  }

  // Moves the parked units this event could help: to ready when their backoff has passed, else to
  // the backoff queue.
  void on_cluster_event(cluster_event e, double now) {
    check_time(now);
    if (backoff_.capacity() < slots_) backoff_.reserve(2 * slots_ + 4);
    std::uint32_t s = parked_head_;
    while (s != npos) {
      const std::uint32_t next = cold_[s].next;
      if (e == cluster_event::node_added || cold_[s].helped_by_release) unpark(s, now);
      s = next;
    }
  }

  // Drops a unit in any state (the host deleted it).
  void remove(queue_ticket tk) {
    unit& u = valid(tk);
    const unit_state st = u.state;
    if (st == unit_state::parked) unlink_parked(tk.slot);
    if (st == unit_state::gathering) gathering_.erase(cold_[tk.slot].members.front()->gang);
    if (st == unit_state::ready) --ready_[ti(u.tier_)];
    const std::uint32_t tn = u.tenant;
    const tier t = u.tier_;
    const std::uint32_t lvl = u.level;
    free_unit(tk.slot);  // a ready unit's queue entry is now stale: dropped when it reaches the front
    if (st == unit_state::ready) {
      ++tenants_[tn].tiers[ti(t)].levels[lvl].r.stale;
      after_front_change(tn, t, lvl);
    }
  }

  // A bound pod finished or was evicted: its requests leave its tenant's share.
  void released(const pod& p) {
    auto it = tenant_ids_.find(p.tenant);
    if (it == tenant_ids_.end()) throw invalid_argument_error("pod '" + p.name + "'.tenant", "unknown to the queue");
    tenant_rec& t = tenants_[it->second];
    const resource_amount r = request_of(p);
    t.used.cpu = std::max<milli>(0, t.used.cpu - r.cpu);
    t.used.memory = std::max<mib>(0, t.used.memory - r.memory);
    t.used.gpu_milli = std::max<milli>(0, t.used.gpu_milli - r.gpu_milli);
    t.share = dominant_share(t.used, total_, t.weight);
  }

  // Units queued for timeout_s or more since their first push (in flight ones excepted) are
  // dropped and reported with their reason history.
  std::vector<timeout_report> expired(double now) {
    check_time(now);
    std::vector<timeout_report> out;
    if (opts_.timeout_s <= 0.0) return out;
    std::uint32_t s = age_head_;
    while (s != npos && cold_[s].first_push + opts_.timeout_s <= now) {
      const std::uint32_t next = cold_[s].age_next;
      const unit& u = at(s);
      if (u.state != unit_state::in_flight) {
        const cold& k = cold_[s];
        timeout_report r;
        if (u.gang) r.pods = k.members; else r.pods.push_back(u.first);
        r.first_push = k.first_push;
        r.waited = now - k.first_push;
        r.attempts = u.attempts;
        r.gang_min_members = u.gang ? k.gang_min : 0;
        if (u.attempts > 0) r.history = k.history;
        out.push_back(std::move(r));
        remove(ticket_of(s));
      }
      s = next;
    }
    return out;
  }

  [[nodiscard]] std::size_t ready_count(tier t) const noexcept { return ready_[ti(t)]; }
  [[nodiscard]] std::size_t size() const noexcept { return live_; }  // units in any state
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }

  // Room for n units at once (a host's start-up or a benchmark's warm-up takes the allocations).
  void reserve(std::size_t n) {
    while (chunks_.size() * chunk_units < n) chunks_.emplace_back(chunk_units);
    cold_.reserve(n);
    free_.reserve(n);
    backoff_.reserve(n);
  }

 private:
  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t chunk_bits = 12;
  static constexpr std::size_t chunk_units = std::size_t{1} << chunk_bits;

  enum class unit_state : std::uint8_t { free, gathering, ready, in_flight, parked, backoff };

  // What every push and pop touches: 64 bytes, in chunks so that addresses never move (a popped
  // single pod's span points at `first`).
  struct unit {
    const pod* first = nullptr;
    resource_amount request;
    double ready = 0.0;
    std::uint32_t tenant = 0;
    std::uint32_t generation = 0;
    std::int32_t priority = 0;
    std::int32_t attempts = 0;
    std::uint32_t level = 0;  // index of its priority's bucket in its tenant's tier_buckets
    tier tier_ = tier::dev;
    unit_state state = unit_state::free;
    bool gang = false;
  };
  // What only gangs, failures and timeouts touch.
  struct cold {
    std::vector<const pod*> members;       // gangs; capacity kept across reuse of the slot
    std::vector<attempt_record> history;   // ditto
    double first_push = 0.0, backoff_until = 0.0, parked_at = 0.0;
    std::uint32_t prev = npos, next = npos;          // parked list
    std::uint32_t age_prev = npos, age_next = npos;  // every live unit by first push (timeouts only)
    std::int32_t gang_min = 0;
    bool helped_by_release = true;
  };
  // A ready unit in its FIFO bucket; contiguous, so the order scan and pops read no unit.
  struct entry {
    std::uint32_t slot;
    std::uint32_t generation;
    double ready;
    std::uint64_t seq;
  };
  // A FIFO ring that grows by doubling (allocation during warm-up only).
  struct ring {
    std::vector<entry> buf;
    std::size_t head = 0, count = 0;
    std::uint32_t stale = 0;  // entries of removed units not yet dropped

    [[nodiscard]] bool empty() const noexcept { return count == 0; }
    [[nodiscard]] const entry& front() const noexcept { return buf[head]; }
    void pop_front() noexcept {
      head = head + 1 == buf.size() ? 0 : head + 1;
      --count;
    }
    void push_back(const entry& e) {
      if (count == buf.size()) {
        std::vector<entry> grown(buf.empty() ? 16 : 2 * buf.size());
        for (std::size_t i = 0; i < count; ++i) grown[i] = buf[(head + i) % buf.size()];
        buf.swap(grown);
        head = 0;
      }
      buf[(head + count) % buf.size()] = e;
      ++count;
    }
  };
  // One FIFO bucket per base priority that the (tenant, tier) has seen; any int32 priority.
  struct level {
    std::int32_t priority = 0;
    std::uint32_t nonempty_pos = npos;  // position in tier_buckets::nonempty, npos when empty
    ring r;
  };
  struct tier_buckets {
    std::vector<level> levels;                                      // never shrinks: indices are stable
    std::vector<std::pair<std::int32_t, std::uint32_t>> by_priority;  // (priority, index), sorted
    std::vector<std::uint32_t> nonempty;  // indices of non-empty levels; capacity kept >= levels.size()
    std::uint32_t active_pos = npos;      // position in active_[tier]

    // The index of priority p's bucket; creates it (the only allocation) the first time p is seen.
    std::uint32_t level_of(std::int32_t p) {
      auto it = std::lower_bound(by_priority.begin(), by_priority.end(), p,
                                 [](const std::pair<std::int32_t, std::uint32_t>& e, std::int32_t v) { return e.first < v; });
      if (it != by_priority.end() && it->first == p) return it->second;
      const auto idx = static_cast<std::uint32_t>(levels.size());
      const auto pos = it - by_priority.begin();
      if (levels.size() == levels.capacity()) {  // grow all three together; a throw changes nothing
        const std::size_t cap = 2 * levels.size() + 4;
        by_priority.reserve(cap);
        nonempty.reserve(cap);  // activation never allocates
        levels.reserve(cap);
      }
      by_priority.insert(by_priority.begin() + pos, {p, idx});  // capacity reserved: cannot throw
      levels.push_back(level{p, npos, ring{}});
      return idx;
    }
  };
  struct tenant_rec {
    std::string name;
    double weight = 1.0;
    double share = 0.0;  // dominant_share(used, total_, weight), kept current
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

  static constexpr std::size_t push_prefetch_distance = 8;  // pushes ahead: covers a memory round trip
  static constexpr std::size_t ti(tier t) noexcept { return t == tier::prod ? 0 : 1; }
  // A million queued units do not fit in cache: the unit a coming pop or push will write is
  // fetched ahead of time.
  static void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 1);
#else
    (void)p;
#endif
  }
  unit& at(std::uint32_t s) noexcept { return chunks_[s >> chunk_bits][s & (chunk_units - 1)]; }
  const unit& at(std::uint32_t s) const noexcept { return chunks_[s >> chunk_bits][s & (chunk_units - 1)]; }
  queue_ticket ticket_of(std::uint32_t s) const noexcept { return {s, at(s).generation}; }

  void check_time(double now) {
    if (!std::isfinite(now) || now < last_now_) {
      throw invalid_argument_error("now", "must be finite and never earlier than the last time given (" +
                                              std::to_string(last_now_) + ")");
    }
    last_now_ = now;
  }
  static void check_pod(const pod& p) {
    if (p.name.empty()) throw invalid_argument_error("pod.name", "must not be empty");
    if (!p.gang.empty() && p.gang_min_members < 1) {
      throw invalid_argument_error("pod '" + p.name + "'.gang_min_members", "must be >= 1 for a gang member");
    }
    if (p.cpu_milli < 0 || p.memory_mib < 0 || p.num_gpu < 0 || p.gpu_milli < 0) {
      throw invalid_argument_error("pod '" + p.name + "'.requests", "must be >= 0");
    }
  }

  std::uint32_t tenant_index(const std::string& name) {
    if (!tenants_.empty() && name == tenants_[last_tenant_].name) return last_tenant_;
    auto it = tenant_ids_.find(name);
    std::uint32_t id;
    if (it == tenant_ids_.end()) {
      if (tenants_.size() == tenants_.capacity()) tenants_.reserve(2 * tenants_.size() + 4);
      id = static_cast<std::uint32_t>(tenants_.size());
      tenant_ids_.emplace(name, id);
      tenants_.emplace_back();
      tenants_.back().name = name;
      for (auto& act : active_) act.reserve(tenants_.capacity());  // activation never allocates
    } else {
      id = it->second;
    }
    last_tenant_ = id;
    return id;
  }

  std::uint32_t new_unit(const pod& p, std::uint32_t tenant, double now, bool gang) {
    std::uint32_t s;
    if (free_.empty()) {
      if (slots_ == chunks_.size() * chunk_units) chunks_.emplace_back(chunk_units);
      cold_.emplace_back();
      if (free_.capacity() < cold_.size()) free_.reserve(2 * cold_.size() + 4);
      s = static_cast<std::uint32_t>(slots_++);
    } else {
      s = free_.back();
      free_.pop_back();
      if (free_.size() > push_prefetch_distance) prefetch(&at(free_[free_.size() - 1 - push_prefetch_distance]));
    }
    unit& u = at(s);
    u.first = &p;
    u.request = request_of(p);
    u.ready = now;
    u.tenant = tenant;
    u.priority = p.priority;
    u.attempts = 0;
    u.tier_ = p.tier_;
    u.state = unit_state::gathering;
    u.gang = gang;
    if (gang) {
      cold_[s].members.clear();
      cold_[s].gang_min = p.gang_min_members;
    }
    if (opts_.timeout_s > 0.0) {  // the age list serves timeouts only
      cold_[s].first_push = now;
      link_age(s);
    }
    ++live_;
    return s;
  }
  void free_unit(std::uint32_t s) {
    unit& u = at(s);
    if (opts_.timeout_s > 0.0) unlink_age(s);
    u.state = unit_state::free;
    ++u.generation;
    free_.push_back(s);  // capacity reserved in new_unit
    --live_;
  }

  unit& valid(queue_ticket tk) {
    if (tk.slot >= slots_ || at(tk.slot).generation != tk.generation || at(tk.slot).state == unit_state::free) {
      throw invalid_argument_error("ticket", "does not name a queued unit (already resolved or removed)");
    }
    return at(tk.slot);
  }
  unit& in_flight(queue_ticket tk, const char* what) {
    unit& u = valid(tk);
    if (u.state != unit_state::in_flight) {
      throw invalid_argument_error("ticket", std::string(what) + "() needs a popped unit still in flight");
    }
    return u;
  }

  void link_parked(std::uint32_t s) noexcept {
    cold& k = cold_[s];
    k.prev = parked_tail_;
    k.next = npos;
    if (parked_tail_ != npos) cold_[parked_tail_].next = s; else parked_head_ = s;
    parked_tail_ = s;
  }
  void unlink_parked(std::uint32_t s) noexcept {
    cold& k = cold_[s];
    if (k.prev != npos) cold_[k.prev].next = k.next; else parked_head_ = k.next;
    if (k.next != npos) cold_[k.next].prev = k.prev; else parked_tail_ = k.prev;
    k.prev = k.next = npos;
  }
  void link_age(std::uint32_t s) noexcept {
    cold& k = cold_[s];
    k.age_prev = age_tail_;
    k.age_next = npos;
    if (age_tail_ != npos) cold_[age_tail_].age_next = s; else age_head_ = s;
    age_tail_ = s;
  }
  void unlink_age(std::uint32_t s) noexcept {
    cold& k = cold_[s];
    if (k.age_prev != npos) cold_[k.age_prev].age_next = k.age_next; else age_head_ = k.age_next;
    if (k.age_next != npos) cold_[k.age_next].age_prev = k.age_prev; else age_tail_ = k.age_prev;
    k.age_prev = k.age_next = npos;
  }

  void make_ready(std::uint32_t s, double now) {
    unit& u = at(s);
    tier_buckets& tb = tenants_[u.tenant].tiers[ti(u.tier_)];
    u.level = tb.level_of(u.priority);  // may grow (a priority first seen)
    level& lv = tb.levels[u.level];
    lv.r.push_back(entry{s, u.generation, now, ++seq_});  // may grow
    u.state = unit_state::ready;
    u.ready = now;
    if (tb.nonempty.empty()) {
      auto& act = active_[ti(u.tier_)];
      tb.active_pos = static_cast<std::uint32_t>(act.size());
      act.push_back(u.tenant);  // capacity reserved when the tenant appeared
    }
    if (lv.nonempty_pos == npos) {
      lv.nonempty_pos = static_cast<std::uint32_t>(tb.nonempty.size());
      tb.nonempty.push_back(u.level);  // capacity reserved in level_of
    }
    ++ready_[ti(u.tier_)];
  }

  // Drops entries of removed units from the front of a bucket and keeps the non-empty list and the
  // active tenant list in step, so that a front entry is always a ready unit.
  void after_front_change(std::uint32_t tn, tier t, std::uint32_t lvl) noexcept {
    tier_buckets& tb = tenants_[tn].tiers[ti(t)];
    level& lv = tb.levels[lvl];
    ring& r = lv.r;
    while (r.stale > 0 && !r.empty() && at(r.front().slot).generation != r.front().generation) {
      r.pop_front();
      --r.stale;
    }
    if (!r.empty()) return;
    r.stale = 0;
    if (lv.nonempty_pos != npos) {
      const std::uint32_t moved = tb.nonempty.back();
      tb.nonempty[lv.nonempty_pos] = moved;
      tb.levels[moved].nonempty_pos = lv.nonempty_pos;
      tb.nonempty.pop_back();
      lv.nonempty_pos = npos;
    }
    if (tb.nonempty.empty() && tb.active_pos != npos) {
      auto& act = active_[ti(t)];
      const std::uint32_t moved = act.back();
      act[tb.active_pos] = moved;
      tenants_[moved].tiers[ti(t)].active_pos = tb.active_pos;
      act.pop_back();
      tb.active_pos = npos;
    }
  }

  // The best ready unit of tier t, as (tenant, level index) of its bucket: highest effective
  // priority; below the starving level the lowest tenant share; then earliest ready time, then
  // earliest arrival. Each bucket is FIFO with one base priority, so its front is its best unit
  // and only fronts are compared.
  std::pair<std::uint32_t, std::uint32_t> best_in(tier t, double now) const noexcept {
    const auto& act = active_[ti(t)];
    const entry* best = nullptr;
    std::uint32_t best_tn = 0, best_p = 0;
    std::int64_t best_eff = 0;
    double best_share = 0.0;
    for (const std::uint32_t tn : act) {
      const tenant_rec& rec = tenants_[tn];
      const tier_buckets& tb = rec.tiers[ti(t)];
      for (const std::uint32_t p : tb.nonempty) {
        const level& lv = tb.levels[p];
        const entry& e = lv.r.front();
        const std::int64_t eff = aged(lv.priority, now - e.ready);
        bool better;
        if (best == nullptr || eff != best_eff) {
          better = best == nullptr || eff > best_eff;
        } else if (eff < starving_level && rec.share != best_share) {
          better = rec.share < best_share;
        } else if (e.ready != best->ready) {
          better = e.ready < best->ready;
        } else {
          better = e.seq < best->seq;
        }
        if (better) {
          best = &e;
          best_tn = tn;
          best_p = p;
          best_eff = eff;
          best_share = rec.share;
        }
      }
    }
    return {best_tn, best_p};
  }

  // effective_priority() without a division: a multiplication by 1/a, then corrected so that the
  // level is exactly the largest k with k * a <= waited.
  std::int64_t aged(std::int32_t base, double waited) const noexcept {
    if (base > seed_max_priority || !(waited > 0.0)) return base;
    const std::int64_t to_starve = std::int64_t{seed_max_priority} + 1 - base;
    const double x = waited * inv_age_step_;
    if (x >= static_cast<double>(to_starve + 1)) return starving_level;
    auto k = static_cast<std::int64_t>(x);
    if (static_cast<double>(k + 1) * opts_.age_step_s <= waited) {
      ++k;
    } else if (k > 0 && static_cast<double>(k) * opts_.age_step_s > waited) {
      --k;
    }
    return k >= to_starve ? starving_level : base + k;
  }

  void unpark(std::uint32_t s, double now) {
    unlink_parked(s);
    unit& u = at(s);
    if (now >= cold_[s].backoff_until) {
      make_ready(s, now);
    } else {
      u.state = unit_state::backoff;
      backoff_.push_back(backoff_entry{cold_[s].backoff_until, ++seq_, s, u.generation});  // capacity reserved by callers
      std::push_heap(backoff_.begin(), backoff_.end());
    }
  }

  void advance(double now) {
    while (!backoff_.empty() && backoff_.front().until <= now) {
      const backoff_entry e = backoff_.front();
      std::pop_heap(backoff_.begin(), backoff_.end());
      backoff_.pop_back();
      if (at(e.slot).generation == e.generation && at(e.slot).state == unit_state::backoff) make_ready(e.slot, now);
    }
    while (parked_head_ != npos && cold_[parked_head_].parked_at + opts_.max_unschedulable_s <= now) {
      if (backoff_.capacity() < slots_) backoff_.reserve(2 * slots_ + 4);
      unpark(parked_head_, now);
    }
  }

  static bool resources_could_help(const rejection_counts& why) noexcept {
    for (reason r : {reason::insufficient_cpu, reason::insufficient_memory, reason::insufficient_gpu_share,
                     reason::insufficient_gpu_memory, reason::cpu_load_too_high, reason::memory_load_too_high,
                     reason::gpu_load_too_high, reason::custom, reason::too_many_pods, reason::insufficient_named}) {
      if (why[r] > 0) return true;
    }
    return why.fits() > 0;  // it fitted somewhere yet was not placed (e.g. a gang partner failed)
  }

  queue_options opts_;
  double inv_age_step_ = 1.0;
  resource_amount total_{};
  std::vector<std::vector<unit>> chunks_;  // fixed-size chunks: units never move
  std::size_t slots_ = 0;
  std::vector<cold> cold_;
  std::vector<std::uint32_t> free_;
  std::vector<tenant_rec> tenants_;
  std::unordered_map<std::string, std::uint32_t> tenant_ids_;
  std::uint32_t last_tenant_ = 0;
  std::unordered_map<std::string, std::uint32_t> gathering_;  // gang name -> unit still gathering
  std::array<std::vector<std::uint32_t>, 2> active_{};         // tenants with ready units, per tier
  std::array<std::size_t, 2> ready_{};
  std::vector<backoff_entry> backoff_;
  std::uint32_t parked_head_ = npos, parked_tail_ = npos;
  std::uint32_t age_head_ = npos, age_tail_ = npos;
  std::uint64_t seq_ = 0;
  std::uint64_t contended_ = 0;
  std::size_t live_ = 0;
  double last_now_ = 0.0;
};

}  // namespace gpusched
