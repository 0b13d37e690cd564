// Randomised invariant test (issue 15): mixed valid and invalid operations from a fixed seed, on
// in_memory_cluster and on bound_cluster, some inside transactions that commit or roll back, each
// checked against a reference model made of plain vectors and maps. After every operation the
// outcome (applied or refused with invalid_argument_error) must be the model's prediction and the
// whole cluster must equal the model, node by node, device by device (bound_cluster's pods by name:
// their count after every operation, each pod's binding and priority every 64 operations and at the
// end).
//
// The model states the documented rules (core/in_memory_cluster.hpp, core/bound_cluster.hpp) on its
// own data; it shares no code with the cluster beyond the vocabulary types and validate(pod).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/schedule/transaction.hpp"

using namespace gpusched;

namespace {

struct model_node {
  std::string name;
  milli cpu_cap = 0, cpu_alloc = 0;
  mib mem_cap = 0, mem_alloc = 0;
  std::vector<gpu_device> gpus;
  std::map<std::string, int> replicas;
  std::optional<node_metrics> load;  // as the cluster should report it
  std::optional<node_metrics> read;  // as the host set it
  std::int64_t net_cpu = 0, net_mem = 0, net_gpu = 0;
};

struct reference {
  std::vector<model_node> nodes;
  std::int64_t ceiling = 0;                              // no GPU memory ceiling
  bool bookkeeping = false;                              // bound_cluster: pods known by name
  std::map<std::string, std::pair<pod, binding>> bound;  // bookkeeping only

  [[nodiscard]] bool binding_ok(const binding& b) const {
    if (b.node >= nodes.size()) return false;
    const std::size_t count = nodes[b.node].gpus.size();
    if (count < 64 && (b.gpus >> count) != 0) return false;
    return b.gpu_milli >= 0 && b.gpu_milli <= 1000 && b.cpu_milli >= 0 && b.cpu_milli <= max_quantity &&
           b.memory_mib >= 0 && b.memory_mib <= max_quantity && b.gpu_mem_mib >= 0;
  }
  [[nodiscard]] static bool pod_ok(const pod& p) {
    try {
      validate(p);
      return true;
    } catch (const invalid_argument_error&) {
      return false;
    }
  }

  [[nodiscard]] bool can_reserve(const pod& p, const binding& b) const {
    if (!pod_ok(p) || !binding_ok(b)) return false;
    if (bookkeeping && bound.count(p.name) != 0) return false;
    const model_node& n = nodes[b.node];
    if (n.cpu_alloc + b.cpu_milli > max_quantity || n.mem_alloc + b.memory_mib > max_quantity) return false;
    for (int g = 0; g < 64; ++g) {
      if (((b.gpus >> g) & 1U) == 0) continue;
      const gpu_device& d = n.gpus[static_cast<std::size_t>(g)];
      if (d.milli_free < b.gpu_milli) return false;
      const std::int64_t used_after = std::int64_t{d.mem_total_mib} - d.mem_free_mib + b.gpu_mem_mib;
      if (ceiling != 0 && used_after * 1000 > std::int64_t{d.mem_total_mib} * ceiling) return false;  // > total*c/1000
      if (std::int64_t{d.mem_free_mib} - b.gpu_mem_mib < std::numeric_limits<std::int32_t>::min()) return false;
    }
    return true;
  }

  [[nodiscard]] bool can_release(const pod& p, const binding& b) const {
    if (bookkeeping) {
      const auto it = bound.find(p.name);
      return it != bound.end() && it->second.second == b;  // then giving it back keeps every bound
    }
    if (!pod_ok(p) || !binding_ok(b)) return false;
    const model_node& n = nodes[b.node];
    if (b.cpu_milli > n.cpu_alloc || b.memory_mib > n.mem_alloc) return false;
    for (int g = 0; g < 64; ++g) {
      if (((b.gpus >> g) & 1U) == 0) continue;
      const gpu_device& d = n.gpus[static_cast<std::size_t>(g)];
      if (d.milli_free + b.gpu_milli > 1000) return false;
      if (std::int64_t{d.mem_free_mib} + b.gpu_mem_mib > d.mem_total_mib) return false;
    }
    if (!p.model_type.empty()) {
      const auto it = n.replicas.find(p.model_type.str());
      if (it == n.replicas.end()) return false;
    }
    return true;
  }

  void apply(const pod& given, const binding& b, int sign) {
    // bound_cluster releases the pod it recorded under that name, whatever else `given` says.
    const pod p = bookkeeping && sign < 0 ? bound.at(given.name).first : given;
    model_node& n = nodes[b.node];
    n.cpu_alloc += sign * b.cpu_milli;
    n.mem_alloc += sign * b.memory_mib;
    int count = 0;
    for (int g = 0; g < 64; ++g) {
      if (((b.gpus >> g) & 1U) == 0) continue;
      ++count;
      n.gpus[static_cast<std::size_t>(g)].milli_free -= sign * b.gpu_milli;
      n.gpus[static_cast<std::size_t>(g)].mem_free_mib -= sign * b.gpu_mem_mib;
    }
    if (n.load) {  // the reading's value plus the net reservations since, never below zero
      n.net_cpu += sign * b.cpu_milli;
      n.net_mem += sign * b.memory_mib;
      n.net_gpu += sign * std::int64_t{b.gpu_milli} * count;
      auto clamp = [](std::int64_t v) { return v < 0 ? 0 : v; };
      n.load->assigned_cpu_since = clamp(n.read->assigned_cpu_since + n.net_cpu);
      n.load->assigned_mem_since = clamp(n.read->assigned_mem_since + n.net_mem);
      n.load->assigned_gpu_milli_since = clamp(n.read->assigned_gpu_milli_since + n.net_gpu);
    }
    if (!p.model_type.empty()) {
      int& r = n.replicas[p.model_type.str()];
      r += sign;
      if (r == 0) n.replicas.erase(p.model_type.str());
    }
    if (bookkeeping) {
      if (sign > 0) {
        bound.emplace(p.name, std::make_pair(p, b));
      } else {
        bound.erase(p.name);
      }
    }
  }
};

const in_memory_cluster& base_of(const in_memory_cluster& c) { return c; }
const in_memory_cluster& base_of(const bound_cluster<>& c) { return c.base(); }
in_memory_cluster& mutable_base(in_memory_cluster& c) { return c; }
in_memory_cluster& mutable_base(bound_cluster<>& c) { return c.base(); }

// Empty when equal, else the first difference.
// Bound pods are compared one by one only when `all` (a lookup by name costs a string).
template <class C>
std::string difference(const C& cluster, const reference& m, bool all) {
  const in_memory_cluster& c = base_of(cluster);
  if (c.size() != m.nodes.size()) return "node count";
  if (c.gpu_memory_ceiling() != m.ceiling) return "GPU memory ceiling";
  for (node_index i = 0; i < c.size(); ++i) {
    const model_node& n = m.nodes[i];
    const std::string at = "node " + std::to_string(i) + ": ";
    if (c.name(i) != n.name || c.find(n.name) != i) return at + "name";
    const node_state r = c.resources(i);
    if (r.cpu_capacity != n.cpu_cap || r.cpu_allocated != n.cpu_alloc) return at + "cpu";
    if (r.mem_capacity != n.mem_cap || r.mem_allocated != n.mem_alloc) return at + "memory";
    if (r.gpu_count != static_cast<int>(n.gpus.size())) return at + "gpu count";
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      if (!(c.gpus(i)[g] == n.gpus[g])) return at + "gpu " + std::to_string(g);
    }
    const node_metrics* l = c.load(i);
    if ((l != nullptr) != n.load.has_value() || (l != nullptr && !(*l == *n.load))) {
      if (l == nullptr || !n.load) return at + "load presence";
      return at + "load " + std::to_string(l->cpu_used) + "/" + std::to_string(n.load->cpu_used) + " " +
             std::to_string(l->assigned_cpu_since) + "/" + std::to_string(n.load->assigned_cpu_since) + " " +
             std::to_string(l->assigned_mem_since) + "/" + std::to_string(n.load->assigned_mem_since) + " " +
             std::to_string(l->assigned_gpu_milli_since) + "/" + std::to_string(n.load->assigned_gpu_milli_since);
    }
    if (c.model_types(i).size() != n.replicas.size()) return at + "model count";
    for (const model_count& mc : c.model_types(i)) {
      const auto it = n.replicas.find(mc.model.str());
      if (it == n.replicas.end() || it->second != mc.replicas) return at + "replicas of " + mc.model.str();
    }
  }
  if constexpr (!std::is_same_v<C, in_memory_cluster>) {
    if (cluster.bound_count() != m.bound.size()) return "bound count";
    for (const auto& [name, pb] : m.bound) {
      if (!all) break;
      const bound_pod* f = cluster.find(name);
      if (f == nullptr || !(f->where == pb.second) || f->priority != pb.first.priority) return "bound pod " + name;
    }
  }
  return {};
}

struct generator {
  std::mt19937_64 rng;
  explicit generator(std::uint64_t seed) : rng(seed) {}
  int uni(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(int percent) { return uni(0, 99) < percent; }

  node_spec node(int pool) {
    node_spec n;
    n.name = "n" + std::to_string(uni(0, pool - 1));
    n.cpu_milli = milli{uni(1, 96)} * 1000;
    n.memory_mib = mib{uni(1, 256)} * 1024;
    const int gpus = uni(0, 8);
    const int mem = chance(50) ? 16384 : 32768;
    n.add_gpus(gpus, chance(50) ? "V100M32" : "T4", mem, static_cast<std::int16_t>(uni(0, 1)));
    switch (uni(0, 19)) {  // one in four invalid
      case 0:
        n.cpu_milli = -1;
        break;
      case 1:
        n.memory_mib = max_quantity + 1;
        break;
      case 2:
        n.name.clear();
        break;
      case 3:
        if (gpus > 0) n.gpus[0].mem_free_mib = n.gpus[0].mem_total_mib + 1;
        break;
      case 4:
        n.cpu_milli = max_quantity;
        break;  // valid: the largest capacity
      default:
        break;
    }
    return n;
  }

  pod make(int names) {
    pod p;
    p.name = "pod-" + std::to_string(uni(0, names - 1));
    p.cpu_milli = chance(3) ? max_quantity : milli{uni(0, 40)} * 500;
    p.memory_mib = mib{uni(0, 64)} * 512;
    switch (uni(0, 3)) {
      case 0:
        break;
      case 1:
        p.num_gpu = 1;
        p.gpu_milli = uni(1, 10) * 100;
        break;
      default:
        p.num_gpu = uni(1, 4);
        p.gpu_milli = 1000;
        break;
    }
    if (p.num_gpu > 0) p.gpu_mem_mib = chance(10) ? 40000 : uni(0, 16) * 1024;
    if (chance(30)) p.model_type = short_name(chance(50) ? "bert" : "resnet50");
    p.priority = uni(0, 10);
    switch (uni(0, 29)) {  // one in ten invalid
      case 0:
        p.num_gpu = -3;
        break;
      case 1:
        p.priority = 99;
        break;
      case 2:
        p.name.clear();
        break;
      default:
        break;
    }
    return p;
  }

  binding bind_for(const pod& p, const reference& m) {
    binding b = make_binding(p, 0, 0);
    if (m.nodes.empty() || chance(3)) {
      b.node = static_cast<node_index>(m.nodes.size() + static_cast<std::size_t>(uni(0, 2)));  // no such node
      return b;
    }
    b.node = static_cast<node_index>(uni(0, static_cast<int>(m.nodes.size()) - 1));
    const int count = static_cast<int>(m.nodes[b.node].gpus.size());
    for (int k = 0; k < p.num_gpu && count > 0; ++k) b.gpus |= gpu_set{1} << uni(0, count - 1);
    switch (uni(0, 39)) {  // one in eight corrupted
      case 0:
        b.gpus |= gpu_set{1} << 63;
        break;
      case 1:
        b.gpu_milli = 1500;
        break;
      case 2:
        b.cpu_milli = std::numeric_limits<milli>::max();
        break;
      case 3:
        b.memory_mib = -5;
        break;
      case 4:
        b.gpu_mem_mib = -1;
        break;
      default:
        break;
    }
    return b;
  }

  node_metrics load() {
    node_metrics l{uni(0, 100) / 100.0, uni(0, 100) / 100.0, uni(0, 100) / 100.0,
                   milli{uni(0, 4000)}, mib{uni(0, 4096)},   0};
    if (chance(10)) l.cpu_used = 1.5;  // invalid
    return l;
  }
};

// Runs `ops` operations; returns how many were applied and how many refused.
template <class C>
std::pair<long, long> run(C& c, reference& m, std::uint64_t seed, long ops) {
  generator gen(seed);
  std::vector<std::pair<pod, binding>> held;  // reservations made, to release most of them validly
  long applied = 0, refused = 0;
  auto outcome = [&](bool expect, auto&& op) {
    bool threw = false;
    try {
      op();
    } catch (const invalid_argument_error&) {
      threw = true;
    }
    REQUIRE(threw == !expect);
    ++(expect ? applied : refused);
    return expect;
  };
  auto reserve_or_release = [&](auto&& reserve, auto&& release) {
    if (!held.empty() && gen.chance(45)) {  // release one held reservation (most are valid)
      const std::size_t k = static_cast<std::size_t>(gen.uni(0, static_cast<int>(held.size()) - 1));
      std::pair<pod, binding> h = held[k];
      if (gen.chance(5)) h.second.cpu_milli += 1;  // not what was reserved
      const bool ok = m.can_release(h.first, h.second);
      if (outcome(ok, [&] { release(h.first, h.second); })) {
        m.apply(h.first, h.second, -1);
        held[k] = held.back();
        held.pop_back();
      }
    } else if (gen.chance(10)) {  // release something never reserved
      const pod p = gen.make(400);
      const binding b = gen.bind_for(p, m);
      if (outcome(m.can_release(p, b), [&] { release(p, b); })) m.apply(p, b, -1);
    } else {
      const pod p = gen.make(400);
      const binding b = gen.bind_for(p, m);
      if (outcome(m.can_reserve(p, b), [&] { reserve(p, b); })) {
        m.apply(p, b, +1);
        held.emplace_back(p, b);
      }
    }
  };
  auto direct_reserve = [&](const pod& p, const binding& b) { traits_of<C>::reserve(c, p, b); };
  auto direct_release = [&](const pod& p, const binding& b) { traits_of<C>::release(c, p, b); };

  long done = 0;
  while (done < ops) {
    const int kind = gen.uni(0, 99);
    if (kind < 4 && m.nodes.size() < 40) {
      const node_spec n = gen.node(48);
      bool ok = true;
      try {
        validate(n);
      } catch (const invalid_argument_error&) {
        ok = false;
      }
      for (const model_node& x : m.nodes) ok = ok && x.name != n.name;
      if (outcome(ok, [&] { mutable_base(c).add_node(n); })) {
        model_node x;
        x.name = n.name;
        x.cpu_cap = n.cpu_milli;
        x.mem_cap = n.memory_mib;
        x.gpus = n.gpus;
        m.nodes.push_back(x);
      }
      ++done;
    } else if (kind < 6) {
      const auto n = static_cast<node_index>(gen.uni(0, static_cast<int>(m.nodes.size())));  // may be out of range
      const bool clear = gen.chance(20);
      const node_metrics l = gen.load();
      const bool ok = n < m.nodes.size() && (clear || l.cpu_used <= 1.0);
      if (outcome(ok, [&] { mutable_base(c).set_load(n, clear ? nullptr : &l); })) {
        m.nodes[n].load = clear ? std::nullopt : std::optional<node_metrics>(l);
        m.nodes[n].read = m.nodes[n].load;
        m.nodes[n].net_cpu = m.nodes[n].net_mem = m.nodes[n].net_gpu = 0;
      }
      ++done;
    } else if (kind < 7) {
      const std::int64_t permille = gen.chance(30) ? 0 : gen.chance(80) ? gen.uni(10, 13) * 100 : gen.uni(1, 20000);
      bool ok = permille == 0 || (permille >= 1000 && permille <= 10000);
      for (const model_node& x : m.nodes) {
        if (permille == 0) break;
        for (const gpu_device& d : x.gpus) {
          ok =
              ok && (std::int64_t{d.mem_total_mib} - d.mem_free_mib) * 1000 <= std::int64_t{d.mem_total_mib} * permille;
        }
      }
      if (outcome(ok, [&] { mutable_base(c).set_gpu_memory_ceiling(permille); })) m.ceiling = permille;
      ++done;
    } else if (kind < 15) {
      // A group inside a transaction: commit keeps the model's changes, rollback restores them.
      const reference before = m;
      const auto held_before = held;
      const bool commit = gen.chance(50);
      {
        transaction<C> tx(c);
        const int steps = gen.uni(1, 6);
        for (int s = 0; s < steps; ++s) {
          reserve_or_release([&](const pod& p, const binding& b) { tx.reserve(p, b); },
                             [&](const pod& p, const binding& b) { tx.release(p, b); });
          ++done;
          const std::string d = difference(c, m, done % 64 == 0);
          REQUIRE_MESSAGE(d.empty(), "op " << done << ": " << d);
        }
        if (commit) {
          tx.commit();
        } else if (gen.chance(50)) {
          tx.rollback();  // the host did not touch the cluster: must not throw
        }                 // else: the destructor rolls back
      }
      if (!commit) {
        m = before;
        held = held_before;
      }
    } else {
      reserve_or_release(direct_reserve, direct_release);
      ++done;
    }
    const std::string d = difference(c, m, done % 64 == 0 || done >= ops);
    REQUIRE_MESSAGE(d.empty(), "op " << done << ": " << d);
  }
  return {applied, refused};
}

}  // namespace

TEST_CASE("invariants.random: 120000 mixed operations on in_memory_cluster match the reference model") {
  in_memory_cluster c;
  reference m;
  const auto [applied, refused] = run(c, m, 20261203, 120000);
  MESSAGE("in_memory_cluster: " << applied << " applied, " << refused << " refused");
  CHECK(applied + refused >= 120000);
  CHECK(applied > 30000);  // the mix exercises both outcomes
  CHECK(refused > 10000);
}

TEST_CASE("invariants.random: 120000 mixed operations on bound_cluster match the reference model") {
  bound_cluster<> c;
  reference m;
  m.bookkeeping = true;
  const auto [applied, refused] = run(c, m, 15, 120000);
  MESSAGE("bound_cluster: " << applied << " applied, " << refused << " refused");
  CHECK(applied + refused >= 120000);
  CHECK(applied > 30000);
  CHECK(refused > 10000);
}
