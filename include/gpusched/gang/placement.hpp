// gang_placer: all-or-nothing, topology-aware placement of a gang with any SchedulingProfile.
//
//   gang_placer placer(make_profile(checks(gpu_check{}, resource_fit{}), scores(...), nvlink_aware_gpus{}));
//   gang_result r = placer.place(cluster, gang);   // every member reserved, or the cluster as before
//   if (!r) puts(r.explain(gang).c_str());
//
// Per role (identical members), largest role first:
//   1. The profile filters every node once for one member (its checks are the feasibility rule and
//      give the rejection counts) and scores the nodes that pass (its score breaks topology ties).
//   2. member_capacity estimates how many members each feasible node takes.
//   3. Nodes are ordered by the topology rules, in this order of importance:
//        a. fewest nodes: largest take first, take = min(capacity, members still needed); so a
//           256-GPU job on free 8-GPU nodes takes whole nodes, never twice as many half nodes;
//        b. fewest racks: if one rack can hold the role on that fewest number of nodes, the
//           smallest such rack (best fit); otherwise racks with the most room first;
//        c. nodes and racks the gang already uses (a launcher joins its workers);
//        d. least room left over on the node (whole nodes for whole-node members);
//        e. the profile's weighted score, then the lowest node index.
//      The last node is chosen best-fit: the node in a used rack with the least room that still
//      holds the remaining members.
//   4. Members are reserved one by one through a transaction; each is first confirmed by the
//      profile's checks on the live state and given devices by the profile's GpuSelector (use
//      nvlink_aware_gpus for NVLink islands). A node that takes fewer than estimated simply ends
//      early and the next node continues.
// Elastic roles: the desired counts are tried first; if they do not fit, the minimums, then as many
// extra members as fit. A role short of its minimum rolls the whole gang back (cluster == before).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/gang/capacity.hpp"
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/overlay.hpp"
#include "gpusched/gang/rack.hpp"
#include "gpusched/gang/result.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/schedule/transaction.hpp"

namespace gpusched {

struct gang_options {
  capacity_limits limits{};  // set to the overcommit ratios of the profile's resource_fit
  bool elastic = true;       // place up to each role's desired_count when there is room
  bool prefer_racks = true;  // group members in as few racks as possible (RackedNodes clusters)
  // Run the profile's PreFilter (scoring/scorer.hpp) once per role asked for, once per place or
  // extend (an elastic gang's several packings included): a placement that is a scheduling cycle of
  // its own. False for what-ifs inside a cycle that already ran it, as gang_preemptor's dry runs
  // are (Kubernetes' PostFilter reuses the cycle's PreFilter state, it does not run PreFilter
  // again), so a scorer that counts the pods it sees counts each gang once. gang_preemptor sets it
  // false whatever the caller gives: run the gang's own place first, as a scheduling cycle does.
  bool pre_filter = true;
};

// Holds the profile and scratch buffers reused from gang to gang: after the first few gangs on a
// cluster, placing allocates only when a gang is larger than any before. Memory: about 40 bytes per
// node (reasons, candidates, marks) plus the rack tree (rack_topology).
template <class Profile>
class gang_placer {
 public:
  explicit gang_placer(Profile profile, gang_options opts = {}) : profile_(std::move(profile)), opts_(opts) {
    validate(opts_.limits);
  }

  [[nodiscard]] const Profile& profile() const noexcept { return profile_; }
  [[nodiscard]] const gang_options& options() const noexcept { return opts_; }
  // The rack tree is cached per cluster size; call this when racks change or another cluster of the
  // same size is used.
  void refresh_topology() noexcept { racks_ready_ = false; }
  [[nodiscard]] const rack_topology& racks() const noexcept { return racks_; }

  // Places the whole gang or nothing (then the cluster is exactly as before). Validates g first.
  template <MutableCluster X>
    requires SchedulingProfile<Profile, X>
  gang_result place(X& c, const gang_spec& g) {
    gang_result r;
    place(c, g, r);
    return r;
  }

  // As above, into `out` (its buffers are reused). Returns out.placed.
  template <MutableCluster X>
    requires SchedulingProfile<Profile, X>
  bool place(X& c, const gang_spec& g, gang_result& out) {
    validate(g);
    const std::size_t roles = g.roles.size();
    min_.resize(roles);
    want_.resize(roles);
    bool elastic_differs = false;
    for (std::size_t r = 0; r < roles; ++r) {
      min_[r] = g.roles[r].min_count;
      want_[r] = opts_.elastic ? g.roles[r].desired_count : g.roles[r].min_count;
      elastic_differs = elastic_differs || want_[r] != min_[r];
    }
    start(g, out);
    pre_filter(c, g, want_);
    if (elastic_differs) {
      transaction<X> tx(c, std::move(log_));
      if (pack_roles(c, g, want_, true, tx, out)) {
        tx.commit();
        log_ = tx.take_storage();
        return finish(c, out);
      }
      tx.rollback();
      log_ = tx.take_storage();
      start(g, out);
    }
    transaction<X> tx(c, std::move(log_));
    if (!pack_roles(c, g, min_, true, tx, out)) {
      tx.rollback();
      log_ = tx.take_storage();
      out.members.clear();
      std::fill(out.per_role.begin(), out.per_role.end(), 0);
      return false;
    }
    if (elastic_differs) {
      for (std::size_t r = 0; r < roles; ++r) want_[r] -= out.per_role[r];
      pack_roles(c, g, want_, false, tx, out);
    }
    tx.commit();
    log_ = tx.take_storage();
    return finish(c, out);
  }

  // Adds members to a gang that already has `out.members` (a partial hold, say): for each role r,
  // `more[r]` members. all_or_nothing: all of them or none (those added are rolled back and false is
  // returned); otherwise as many as fit. Existing members attract the new ones (same nodes, racks).
  template <MutableCluster X>
    requires SchedulingProfile<Profile, X>
  bool extend(X& c, const gang_spec& g, std::span<const std::int32_t> more, bool all_or_nothing, gang_result& out) {
    validate(g);
    if (more.size() != g.roles.size()) throw invalid_argument_error("more", "needs one count per role");
    if (out.per_role.size() != g.roles.size()) out.per_role.assign(g.roles.size(), 0);
    const std::size_t keep = out.members.size();
    had_.assign(out.per_role.begin(), out.per_role.end());
    pre_filter(c, g, more);
    transaction<X> tx(c, std::move(log_));
    const bool ok = pack_roles(c, g, more, all_or_nothing, tx, out);
    if (!ok && all_or_nothing) {
      tx.rollback();
      out.members.resize(keep);
      out.per_role.assign(had_.begin(), had_.end());
    } else {
      tx.commit();
    }
    log_ = tx.take_storage();
    finish(c, out);
    out.placed = ok;
    return ok;
  }

  // What-if: would g fit if the reservations in `leaving` were gone? Runs on `o` (reset first by the
  // caller when reused) and never touches the live cluster; the bindings returned are valid for the
  // live cluster once those reservations are released. This is the hook a preemptor uses to ask
  // whether a victim set makes room for the whole gang.
  template <Cluster X>
    requires SchedulingProfile<Profile, cluster_overlay<X>>
  gang_result plan(cluster_overlay<X>& o, const gang_spec& g,
                   std::span<const std::pair<const pod*, binding>> leaving = {}) {
    for (const auto& [p, b] : leaving) o.release(*p, b);
    return place(o, g);
  }
  template <Cluster X>
    requires SchedulingProfile<Profile, cluster_overlay<X>>
  gang_result plan(const X& c, const gang_spec& g, std::span<const std::pair<const pod*, binding>> leaving = {}) {
    cluster_overlay<X> o(c);
    return plan(o, g, leaving);
  }

 private:
  struct candidate {
    std::uint64_t hi = 0, lo = 0;  // ascending sort key; the node index is lo's low 32 bits
    std::int64_t cap = 0;
    bool used = false;
    [[nodiscard]] node_index node() const noexcept { return static_cast<node_index>(lo & 0xFFFFFFFFu); }
    friend bool operator<(const candidate& a, const candidate& b) noexcept {
      return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
    }
  };

  static void start(const gang_spec& g, gang_result& out) {
    out.placed = false;
    out.members.clear();
    out.members.reserve(static_cast<std::size_t>(g.desired_members()));
    out.per_role.assign(g.roles.size(), 0);
    out.nodes_used = out.racks_used = 0;
    out.failure = gang_failure{};
  }

  template <Cluster X>
  bool finish(const X& c, gang_result& out) {
    mark_members(c, out);
    out.nodes_used = static_cast<std::uint32_t>(touched_nodes_.size());
    out.racks_used = static_cast<std::uint32_t>(touched_racks_.size());
    out.placed = true;
    return true;
  }

  template <Cluster X>
  void prepare(const X& c) {
    const std::size_t n = num_nodes(c);
    if (!racks_ready_ || racks_.node_count() != n) {
      if (opts_.prefer_racks && RackedNodes<X>) {
        racks_.rebuild(c);
      } else {
        racks_.rebuild(no_racks{n});
      }
      racks_ready_ = true;
    }
    if (node_mark_.size() != n) node_mark_.assign(n, 0);
    if (rack_mark_.size() != racks_.rack_count()) rack_mark_.assign(racks_.rack_count(), 0);
  }

  // Marks the nodes and racks of the gang's current members.
  template <Cluster X>
  void mark_members(const X& c, const gang_result& out) {
    prepare(c);
    for (node_index n : touched_nodes_) node_mark_[n] = 0;
    for (std::uint32_t r : touched_racks_) rack_mark_[r] = 0;
    touched_nodes_.clear();
    touched_racks_.clear();
    for (const auto& m : out.members) mark(m.where.node);
  }
  void mark(node_index n) {
    if (!node_mark_[n]) {
      node_mark_[n] = 1;
      touched_nodes_.push_back(n);
    }
    const std::uint32_t r = racks_.rack_of(n);
    if (!rack_mark_[r]) {
      rack_mark_[r] = 1;
      touched_racks_.push_back(r);
    }
  }

  // Roles largest first (GPU share per member, then count, then declaration order).
  void order_roles(const gang_spec& g) {
    role_order_.resize(g.roles.size());
    for (std::size_t r = 0; r < g.roles.size(); ++r) role_order_[r] = static_cast<std::uint32_t>(r);
    std::sort(role_order_.begin(), role_order_.end(), [&](std::uint32_t a, std::uint32_t b) {  // not stable_sort: it allocates
      const pod& pa = g.roles[a].member;
      const pod& pb = g.roles[b].member;
      if (pa.gpu_milli_total() != pb.gpu_milli_total()) return pa.gpu_milli_total() > pb.gpu_milli_total();
      if (g.roles[a].desired_count != g.roles[b].desired_count) return g.roles[a].desired_count > g.roles[b].desired_count;
      return a < b;
    });
  }

  // PreFilter (scoring/scorer.hpp), as schedule_one runs it: once per role asked for, by its member
  // pod, before any role is packed (so a role after one that fails is seen too). Once per place or
  // extend, however many packings an elastic gang then tries.
  template <MutableCluster X>
  void pre_filter(const X& c, const gang_spec& g, std::span<const std::int32_t> more) {
    if constexpr (requires { profile_.pre_filter(c, g.roles[0].member); }) {
      for (std::size_t r = 0; opts_.pre_filter && r < g.roles.size(); ++r) {
        if (more[r] > 0) profile_.pre_filter(c, g.roles[r].member);
      }
    }
  }

  template <MutableCluster X>
  bool pack_roles(X& c, const gang_spec& g, std::span<const std::int32_t> more, bool all_or_nothing,
                  transaction<X>& tx, gang_result& out) {
    order_roles(g);
    for (std::uint32_t r : role_order_) {
      const std::int64_t need = more[r];
      if (need <= 0) continue;
      const std::int64_t got = pack_role(c, g, r, need, tx, out);
      if (got < need && all_or_nothing) {
        out.failure.role = r;
        out.failure.placed = out.per_role[r];
        out.failure.needed = out.per_role[r] - got + need;
        out.failure.rejections = filter_all(c, g.roles[r].member);
        return false;
      }
    }
    return true;
  }

  template <Cluster X>
  rejection_counts filter_all(const X& c, const pod& p) {
    const std::size_t n = num_nodes(c);
    reasons_.resize(n);
    if (n > 0) profile_.filter(c, p, 0, n, reasons_.data());
    rejection_counts rc;
    for (std::size_t i = 0; i < n; ++i) rc.add(reasons_[i]);
    rc.examined = static_cast<std::uint32_t>(n);
    return rc;
  }

  // Places up to `need` members of role r; returns how many it placed.
  template <MutableCluster X>
  std::int64_t pack_role(X& c, const gang_spec& g, std::uint32_t r, std::int64_t need, transaction<X>& tx,
                         gang_result& out) {
    const pod& p = g.roles[r].member;
    const std::size_t n_nodes = num_nodes(c);
    mark_members(c, out);
    filter_all(c, p);

    // Feasible nodes with their estimated capacity and take = min(capacity, need).
    cands_.clear();
    feasible_.clear();
    for (std::size_t i = 0; i < n_nodes; ++i) {
      if (reasons_[i] != reason::ok) continue;
      const auto n = static_cast<node_index>(i);
      candidate k;
      k.cap = std::max<std::int64_t>(1, member_capacity(c, p, n, opts_.limits, max_gang_members));
      k.lo = n;
      cands_.push_back(k);
      feasible_.push_back(n);
    }
    if (cands_.empty()) return 0;
    const std::size_t m = cands_.size();

    // The profile's weighted score of each feasible node.
    const std::size_t plugins = profile_.score_plugin_count();
    score_.assign(m, 0);
    if (plugins > 0) {
      raw_.assign(plugins * m, 0);
      profile_.score(c, p, std::span<const node_index>(feasible_), raw_.data());
      for (std::size_t k = 0; k < plugins; ++k) {
        const std::int64_t w = profile_.score_plugin_weight(k);
        for (std::size_t j = 0; j < m; ++j) score_[j] += raw_[k * m + j] * w;
      }
    }

    rank_racks(need);

    constexpr std::uint64_t take_max = (std::uint64_t{1} << 21) - 1;
    constexpr std::uint64_t rank_max = (std::uint64_t{1} << 20) - 1;
    constexpr std::uint64_t left_max = (std::uint64_t{1} << 21) - 1;
    constexpr std::int64_t score_max = (std::int64_t{1} << 31) - 1;
    for (std::size_t j = 0; j < m; ++j) {
      candidate& k = cands_[j];
      const node_index n = k.node();
      const std::uint32_t rack = racks_.rack_of(n);
      const auto take = static_cast<std::uint64_t>(std::min(k.cap, need));
      const auto left = std::min<std::uint64_t>(static_cast<std::uint64_t>(k.cap) - take, left_max);
      const std::uint64_t rank = std::min<std::uint64_t>(rack_rank_[rack], rank_max);
      k.hi = (std::uint64_t{rack != chosen_rack_} << 63) | ((take_max - take) << 42) |
             (std::uint64_t{node_mark_[n] == 0} << 41) | (rank << 21) | left;
      const std::int64_t s = std::clamp<std::int64_t>(score_[j], 0, score_max);
      k.lo = (static_cast<std::uint64_t>(score_max - s) << 32) | n;
    }
    std::sort(cands_.begin(), cands_.end());

    std::int64_t remaining = need;
    std::size_t i = 0;
    while (remaining > 0) {
      while (i < m && cands_[i].used) ++i;
      if (i == m) break;
      std::size_t j = i;
      if (cands_[i].cap >= remaining) j = best_fit(i, remaining);
      cands_[j].used = true;
      remaining -= place_on(c, p, r, cands_[j].node(), std::min(cands_[j].cap, remaining), tx, out);
    }
    return need - remaining;
  }

  // Among unused candidates from i on that hold `remaining`: in the chosen rack, on a node or in a
  // rack the gang uses, the better-ranked rack, the least capacity, the better score, the lowest index.
  std::size_t best_fit(std::size_t i, std::int64_t remaining) const {
    std::size_t best = i;
    auto key = [&](const candidate& k) {
      const node_index n = k.node();
      const std::uint32_t rack = racks_.rack_of(n);
      return std::make_tuple(rack != chosen_rack_, node_mark_[n] == 0, rack_mark_[rack] == 0, rack_rank_[rack], k.cap,
                             k.lo);
    };
    auto best_key = key(cands_[i]);
    for (std::size_t j = i + 1; j < cands_.size(); ++j) {
      if (cands_[j].used || cands_[j].cap < remaining) continue;
      auto kj = key(cands_[j]);
      if (kj < best_key) {
        best = j;
        best_key = kj;
      }
    }
    return best;
  }

  // Sets chosen_rack_ (the smallest rack that holds `need` on the fewest nodes, or none) and
  // rack_rank_ (racks the gang uses first, then by room, descending).
  void rank_racks(std::int64_t need) {
    const std::size_t racks = racks_.rack_count();
    rack_rank_.assign(racks, 0);
    chosen_rack_ = static_cast<std::uint32_t>(-1);
    if (racks <= 1) return;
    // Fewest nodes overall: the shortest prefix of takes, largest first, that reaches need.
    takes_.clear();
    for (const auto& k : cands_) takes_.push_back(std::min(k.cap, need));
    std::sort(takes_.begin(), takes_.end(), std::greater<>());
    std::size_t fewest = 0;
    for (std::int64_t sum = 0; fewest < takes_.size() && sum < need; ++fewest) sum += takes_[fewest];
    // Room per rack, and each rack's takes grouped together (counting sort by rack).
    rack_room_.assign(racks, 0);
    rack_begin_.assign(racks + 1, 0);
    for (const auto& k : cands_) {
      const std::uint32_t rk = racks_.rack_of(k.node());
      rack_room_[rk] += std::min(k.cap, need);
      ++rack_begin_[rk + 1];
    }
    for (std::size_t rk = 0; rk < racks; ++rk) rack_begin_[rk + 1] += rack_begin_[rk];
    by_rack_.resize(cands_.size());
    fill_.assign(rack_begin_.begin(), rack_begin_.end() - 1);
    for (const auto& k : cands_) by_rack_[fill_[racks_.rack_of(k.node())]++] = std::min(k.cap, need);
    for (std::size_t rk = 0; rk < racks; ++rk) {
      if (rack_room_[rk] < need) continue;
      const auto b = by_rack_.begin() + static_cast<std::ptrdiff_t>(rack_begin_[rk]);
      const auto e = by_rack_.begin() + static_cast<std::ptrdiff_t>(rack_begin_[rk + 1]);
      std::int64_t top = rack_room_[rk];
      if (static_cast<std::size_t>(e - b) > fewest) {
        std::nth_element(b, b + static_cast<std::ptrdiff_t>(fewest), e, std::greater<>());
        top = 0;
        for (auto it = b; it != b + static_cast<std::ptrdiff_t>(fewest); ++it) top += *it;
      }
      if (top < need) continue;
      const auto rk32 = static_cast<std::uint32_t>(rk);
      if (chosen_rack_ == static_cast<std::uint32_t>(-1) ||
          std::make_tuple(rack_mark_[rk] == 0, rack_room_[rk]) <
              std::make_tuple(rack_mark_[chosen_rack_] == 0, rack_room_[chosen_rack_])) {
        chosen_rack_ = rk32;
      }
    }
    rack_order_.resize(racks);
    for (std::size_t rk = 0; rk < racks; ++rk) rack_order_[rk] = static_cast<std::uint32_t>(rk);
    std::sort(rack_order_.begin(), rack_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::make_tuple(a != chosen_rack_, rack_mark_[a] == 0, -rack_room_[a], a) <
             std::make_tuple(b != chosen_rack_, rack_mark_[b] == 0, -rack_room_[b], b);
    });
    for (std::size_t i = 0; i < racks; ++i) rack_rank_[rack_order_[i]] = static_cast<std::uint32_t>(i);
  }

  // Reserves up to k members of role r on node n, each confirmed by the profile on the live state.
  template <MutableCluster X>
  std::int64_t place_on(X& c, const pod& p, std::uint32_t r, node_index n, std::int64_t k, transaction<X>& tx,
                        gang_result& out) {
    std::int64_t placed = 0;
    for (; placed < k; ++placed) {
      reason why = reason::ok;
      profile_.filter(c, p, n, 1, &why);
      if (why != reason::ok) break;
      const gpu_set gpus = profile_.select_gpus(c, p, n);
      if (p.wants_gpu() && gpus == 0) break;
      const binding b = make_binding(p, n, gpus);
      tx.reserve(p, b);
      out.members.push_back(member_binding{r, static_cast<std::uint32_t>(out.per_role[r]), b});
      ++out.per_role[r];
    }
    if (placed > 0) mark(n);
    return placed;
  }

  // A stand-in cluster with no racks, so that rack_topology puts every node in one rack.
  struct no_racks {
    std::size_t n;
    friend std::size_t node_count(const no_racks& x) { return x.n; }
    friend node_state node_resources(const no_racks&, node_index) { return {}; }
    friend gpu_device node_gpu(const no_racks&, node_index, int) { return {}; }
  };

  Profile profile_;
  gang_options opts_;
  rack_topology racks_;
  bool racks_ready_ = false;
  std::uint32_t chosen_rack_ = static_cast<std::uint32_t>(-1);
  transaction_log log_;  // the transactions' reused log
  std::vector<std::int32_t> min_, want_, had_;
  std::vector<std::uint32_t> role_order_;
  std::vector<reason> reasons_;
  std::vector<candidate> cands_;
  std::vector<node_index> feasible_;
  std::vector<std::int64_t> raw_, score_, takes_, rack_room_, by_rack_;
  std::vector<std::size_t> rack_begin_, fill_;
  std::vector<std::uint32_t> rack_rank_, rack_order_, touched_racks_;
  std::vector<node_index> touched_nodes_;
  std::vector<std::uint8_t> node_mark_, rack_mark_;
};

}  // namespace gpusched
