// Randomised invariants of preemption over many seeds, each checked independently of the code
// under test: the dry run changes nothing; victims are lower, never prod for a dev preemptor, and
// whole gangs; every victim on the chosen node was needed; after apply the preemptor is bound and
// no node is allocated beyond what its bound pods hold; "no plan" means no node can be freed.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fixtures.hpp"

using namespace gpusched;

namespace {

struct world {
  fx::cluster c;
  std::vector<pod> pods;  // every pod ever bound, by value
};

// A random cluster of 3..8 nodes of 1..8 GPUs, filled with single pods and gangs spanning nodes.
world make_world(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  world w;
  const int nodes = uni(3, 8);
  for (int n = 0; n < nodes; ++n) fx::add_node(w.c, "n" + std::to_string(n), uni(1, 8), 32000, 131072);
  int gang_no = 0;
  for (int attempt = 0; attempt < 40; ++attempt) {
    const int members = uni(0, 3) == 0 ? uni(2, 3) : 1;
    const int prio = uni(0, 9);
    const bool prod = uni(0, 2) == 0;
    const auto qos = static_cast<qos_class>(uni(0, 2));
    const std::string gang = members > 1 ? "gang" + std::to_string(gang_no++) : "";
    std::vector<std::pair<pod, binding>> placed;
    for (int m = 0; m < members; ++m) {
      auto b = make_pod("p" + std::to_string(w.pods.size() + placed.size())).cpu(uni(1, 8) * 1000).memory(uni(1, 16) * 1024)
                   .priority(prio).qos(qos);
      if (uni(0, 1) == 0) b.gpus(uni(1, 2)); else b.gpu_share(uni(1, 9) * 100).gpu_memory(uni(1, 8) * 1024);
      if (prod) b.prod();
      if (!gang.empty()) b.gang(gang, members);
      const pod p = b;
      // First node (from a random start) where it fits, on best-fit devices.
      const auto profile = fx::fit_profile();
      bool ok = false;
      const node_index start = static_cast<node_index>(uni(0, nodes - 1));
      for (int k = 0; k < nodes && !ok; ++k) {
        const auto n = static_cast<node_index>((start + static_cast<node_index>(k)) % static_cast<node_index>(nodes));
        reason r = reason::ok;
        profile.filter(w.c, p, n, 1, &r);
        if (r != reason::ok) continue;
        const gpu_set g = profile.select_gpus(w.c, p, n);
        const binding bnd = make_binding(p, n, g);
        w.c.bind(p, bnd, static_cast<double>(uni(0, 1000)));
        placed.emplace_back(p, bnd);
        ok = true;
      }
      if (!ok) break;
    }
    if (static_cast<int>(placed.size()) != members) {  // a gang that did not fully fit leaves again
      for (auto& [p, b] : placed) w.c.unbind(w.c.find(p.name)->id);
      continue;
    }
    for (auto& [p, b] : placed) w.pods.push_back(p);
  }
  return w;
}

bool may_preempt(const pod& preemptor, const bound_pod& v) {
  return v.priority < preemptor.priority && !(preemptor.tier_ == tier::dev && v.tier_ == tier::prod);
}

// Does p fit node n once every pod of `gone` (by id) has left? Checked on an overlay.
bool fits_without(const fx::cluster& c, const pod& p, node_index n, const std::set<pod_id>& gone) {
  node_overlay<fx::cluster> o(c);
  o.focus(n);
  for (const bound_pod& bp : c.pods_on(n)) {
    if (gone.count(bp.id)) o.remove(bp);
  }
  reason r = reason::ok;
  fx::fit_profile().filter(o, p, n, 1, &r);
  return r == reason::ok;
}

// The node's allocation equals the sum of its bound pods' bindings.
bool books_balance(const fx::cluster& c, node_index n) {
  milli cpu = 0;
  mib mem = 0;
  std::vector<std::int64_t> used(static_cast<std::size_t>(c.base().resources(n).gpu_count), 0);
  for (const bound_pod& bp : c.pods_on(n)) {
    cpu += bp.where.cpu_milli;
    mem += bp.where.memory_mib;
    for_each_gpu(bp.where.gpus, [&](int g) { used[static_cast<std::size_t>(g)] += bp.where.gpu_milli; });
  }
  if (cpu != c.base().resources(n).cpu_allocated || mem != c.base().resources(n).mem_allocated) return false;
  for (std::size_t g = 0; g < used.size(); ++g) {
    if (c.base().gpus(n)[g].milli_free != gpu_milli_whole - used[g]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("preemption.properties over 300 random clusters") {
  int found = 0, not_found = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    world w = make_world(seed);
    std::mt19937_64 rng(seed * 7919);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto b = make_pod("preemptor").cpu(uni(1, 16) * 1000).memory(uni(1, 32) * 1024).priority(uni(1, 10));
    if (uni(0, 1) == 0) b.gpus(uni(1, 8)); else b.gpu_share(uni(1, 9) * 100).gpu_memory(uni(1, 16) * 1024);
    if (uni(0, 1) == 0) b.prod();
    const pod p = b;
    preemption_options o;
    o.sample_candidates = uni(0, 1) == 0;
    o.seed = seed;
    fx::preemptor pre(fx::fit_profile(), o);
    const fx::cluster before = w.c;
    const preemption_result r = pre.plan(w.c, p, 2000.0);
    REQUIRE(w.c == before);  // dry run
    const node_index nodes = static_cast<node_index>(w.c.base().size());

    if (!r.found) {
      ++not_found;
      // No node can be freed: removing every pod it may preempt (whole gangs only) is not enough,
      // or the node needs no preemption at all.
      for (node_index n = 0; n < nodes; ++n) {
        std::set<pod_id> gone;
        for (const bound_pod& bp : w.c.pods_on(n)) {
          bool ok = may_preempt(p, bp);
          if (bp.gang != no_gang) {
            for (pod_id m : w.c.gang(bp.gang)) ok = ok && may_preempt(p, *w.c.find(m));
          }
          if (ok) gone.insert(bp.id);
        }
        const bool cannot_be_freed = gone.empty() || !fits_without(w.c, p, n, gone) || fits_without(w.c, p, n, {});
        CHECK(cannot_be_freed);
      }
      continue;
    }
    ++found;
    std::set<pod_id> victims;
    std::set<gang_key> victim_gangs;
    for (const auto& v : r.victims) {
      CHECK(may_preempt(p, v.record));
      victims.insert(v.record.id);
      if (v.record.gang != no_gang) victim_gangs.insert(v.record.gang);
    }
    for (gang_key g : victim_gangs) {
      for (pod_id m : w.c.gang(g)) CHECK(victims.count(m) == 1);  // whole gangs
    }
    CHECK(fits_without(w.c, p, r.node, victims));
    CHECK_FALSE(fits_without(w.c, p, r.node, {}));
    // Every victim unit was needed: adding it back alone to the final state breaks the fit.
    std::map<std::uint64_t, std::set<pod_id>> units;  // gang key or (1 << 40) + id for single pods
    for (const auto& v : r.victims) {
      units[v.record.gang != no_gang ? v.record.gang : (std::uint64_t{1} << 40) + v.record.id].insert(v.record.id);
    }
    for (const auto& [key, members] : units) {
      bool on_node = false;
      for (pod_id m : members) on_node = on_node || w.c.find(m)->where.node == r.node;
      if (!on_node) continue;
      std::set<pod_id> rest = victims;
      for (pod_id m : members) rest.erase(m);
      CHECK_FALSE(fits_without(w.c, p, r.node, rest));
    }
    pre.apply(w.c, p, r, 2000.0);
    REQUIRE(w.c.find("preemptor") != nullptr);
    CHECK(w.c.find("preemptor")->where.node == r.node);
    for (pod_id v : victims) {
      const bool gone = w.c.find(v) == nullptr || w.c.find(v)->key != before.find(v)->key;  // id reused by the preemptor
      CHECK(gone);
    }
    for (node_index n = 0; n < nodes; ++n) CHECK(books_balance(w.c, n));
  }
  // Both branches must have been exercised for the run to mean anything.
  CHECK(found > 50);
  CHECK(not_found > 20);
}
