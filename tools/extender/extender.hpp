// gpusched-extender's decisions, without HTTP: each verb takes the request body kube-scheduler
// POSTs and returns the status and body to answer with (k8s.io/kube-scheduler extender/v1 types.go:
// Go field names, no JSON tags, so "Pod", "Nodes", "NodeNames", "FailedNodes", ...).
//
// State: gpusched's in_memory_cluster of the known nodes, with every bound pod reserved on concrete
// GPU indices, plus the Kubernetes-side records (node objects, pods by UID, ModelJobs). One std::shared_mutex
// guards it: decisions (filter, prioritize) read under a shared lock, so each sees one consistent
// snapshot; binds, node updates and watch events write under the exclusive lock. A bind reserves
// first (so that concurrent decisions see the pod as kube-scheduler's "assume" does), calls the API
// server without the lock, and releases exactly what it reserved when the API server refuses: the
// state is then as before.
//
// Profiles are not shared between threads (a plugin may keep a cache): each request borrows one
// from a pool of profiles parsed from the same configuration text.
//
// Decisions go through the batch engine (docs/kubernetes.md, "The program"): the state holds a
// batch node table beside the cluster, changed with it under the exclusive lock (reserve_locked,
// release_locked, build_table_locked) and only read under the shared one; each request borrows an
// engine of the profile's configured batch form (batch_worker) and scores the named nodes a run of
// consecutive nodes at a time. The profile's plugins name the rejected nodes' reasons and run what
// the engine cannot hold (batch::configured_split); the answers are theirs byte for byte.
#pragma once

#include <nlohmann/json.hpp>
#ifdef GPUSCHED_EXTENDER_SIMDJSON
#include <simdjson.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/batch/configured.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/kube/translate.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "metrics.hpp"

namespace gpusched::extender {

using json = nlohmann::json;
using cluster_t = in_memory_cluster;
using profile_t = dynamic_profile<cluster_t>;

struct options {
  std::string scheduler_name = "ai-scheduler";  // the profile of the configuration to use
  std::size_t max_body_bytes = std::size_t{16} << 20;
  std::size_t max_pending_pods = 100000;  // pods remembered between filter and bind
  // /filter and /prioritize bodies read by simdjson first (when built with it; the nlohmann reader
  // otherwise). Off: nlohmann only (the tests compare the two).
  bool simdjson = true;
  // Checks and scores through the batch engine (a node table kept beside the state, and the profile
  // in its configured batch form, batch/configured.hpp) where the profile and the pod allow; the
  // profile's per-node plugins otherwise, and always for the reasons of rejected nodes. Off: the
  // per-node plugins only (the tests compare the two).
  bool batch = true;
};

struct answer {
  int status = 200;
  std::string body;
  bool refused = false;  // a 200 answer whose Error field is set (counted as an error)
};

// Posts a Binding (with the annotations to set on the pod) to the API server; returns an error
// text, or an empty string on success.
using binder = std::function<std::string(const kube::kube_pod& pod, const std::string& node,
                                         const std::map<std::string, std::string>& annotations)>;
// Fetches a pod the extender has not seen in a filter call (bind after a restart).
using pod_fetcher = std::function<std::optional<kube::kube_pod>(const std::string& ns, const std::string& name)>;

// The extender scale: kube-scheduler accepts 0..MaxExtenderPriority (10) and multiplies by
// MaxNodeScore / MaxExtenderPriority (kube-scheduler extender/v1 types.go; pkg/scheduler/schedule_one.go).
// gpusched's weighted sum is sum(score_i * weight_i) with score_i in 0..100, so the extender score is
// that sum over 100 * sum(weight_i), times 10, rounded half up.
constexpr std::int64_t extender_score(std::int64_t weighted, std::int64_t weight_sum) noexcept {
  if (weight_sum <= 0) return 0;
  const std::int64_t den = 100 * weight_sum;
  const std::int64_t s = (weighted * 10 + den / 2) / den;
  return s < 0 ? 0 : (s > 10 ? 10 : s);
}
// extender_score for one weight sum without a division per node: weighted scores k (1..10) from
// least[k - 1] = ceil((k * den - den / 2) / 10) on, den = 100 * weight_sum (the inequality of the
// rounding above, solved for weighted).
class extender_scale {
 public:
  // weight_sum: the profile's, at most 100 per scorer (validated), so k * den cannot overflow.
  explicit constexpr extender_scale(std::int64_t weight_sum) noexcept : none_(weight_sum <= 0) {
    const std::int64_t den = 100 * weight_sum;
    for (std::int64_t k = 1; k <= 10; ++k) least_[k - 1] = none_ ? 0 : (k * den - den / 2 + 9) / 10;
  }
  constexpr std::int64_t operator()(std::int64_t weighted) const noexcept {
    if (none_) return 0;
    std::int64_t s = 0;
    for (const std::int64_t t : least_) s += weighted >= t ? 1 : 0;
    return s;
  }

 private:
  bool none_;
  std::int64_t least_[10]{};
};

class extender {
 public:
  extender(std::string config_text, std::string config_source, options opts = {})
      : config_text_(std::move(config_text)), config_source_(std::move(config_source)), opts_(std::move(opts)) {
    auto prof = make_profile();  // fails here, at start-up, on a bad configuration
    if (!opts_.batch) {
      batch_refusal_ = "turned off (options.batch)";
    } else {
      try {
        configured_.emplace(batch::configured_split(*prof, per_node_));
        for (const std::size_t k : per_node_.checks) per_node_names_.emplace_back(prof->check_name(k));
        for (const std::size_t k : per_node_.scores) per_node_names_.emplace_back(prof->score_plugin_name(k));
      } catch (const invalid_argument_error& e) {
        per_node_ = {};
        batch_refusal_ = e.what();  // a plugin without a batch form, a normalising scorer, ...
      }
    }
    release_profile(std::move(prof));
  }

  void set_binder(binder b) { binder_ = std::move(b); }
  void set_pod_fetcher(pod_fetcher f) { fetcher_ = std::move(f); }
  [[nodiscard]] class metrics& metrics() noexcept { return metrics_; }
  [[nodiscard]] std::size_t max_body_bytes() const noexcept { return opts_.max_body_bytes; }
  // For tests: how many /filter and /prioritize bodies simdjson read (0 when built without it).
  [[nodiscard]] std::uint64_t simdjson_reads() const noexcept { return simdjson_reads_.load(); }
  // Why /filter and /prioritize run the profile's per-node plugins rather than the batch engine
  // (empty: the engine, wherever the pod and the nodes are in its domain).
  [[nodiscard]] const std::string& batch_refusal() const noexcept { return batch_refusal_; }
  // The profile's plugins the batch engine does not hold, which run through the plugins themselves:
  // checks without a batch form on the nodes the engine passes, scorers without one (or normalising)
  // on the feasible nodes (Kubernetes' node-constraint plugins, for one). Checks first.
  [[nodiscard]] const std::vector<std::string>& per_node_plugins() const noexcept { return per_node_names_; }
  // For tests: how many /filter and /prioritize requests the batch engine decided, and how many it
  // handed back to the plugins because it rejected a node they pass (never expected).
  [[nodiscard]] std::uint64_t batched_decisions() const noexcept { return batched_.load(); }
  [[nodiscard]] std::uint64_t batch_disagreements() const noexcept { return batch_disagreements_.load(); }

  // --- verbs ---
  answer filter(std::string_view body) { return timed(verb::filter, [&] { return do_filter(body, false); }); }
  answer prioritize(std::string_view body) { return timed(verb::prioritize, [&] { return do_filter(body, true); }); }
  answer bind(std::string_view body) { return timed(verb::bind, [&] { return do_bind(body); }); }
  answer preempt(std::string_view body) { return timed(verb::preempt, [&] { return do_preempt(body); }); }

  [[nodiscard]] std::string metrics_text() const {
    cluster_gauges g;
    {
      std::shared_lock lock(mu_);
      g.nodes = st_.cluster.size();
      for (const auto& [uid, b] : st_.pods) g.pods_bound += b.reserved ? 1 : 0;
      for (node_index n = 0; n < st_.cluster.size(); ++n) {
        const auto& r = st_.cluster.resources(n);
        g.cpu_milli_capacity += r.cpu_capacity;
        g.cpu_milli_allocated += r.cpu_allocated;
        for (const auto& d : st_.cluster.gpus(n)) {
          ++g.gpus;
          g.gpu_milli_capacity += gpu_milli_whole;
          g.gpu_milli_allocated += gpu_milli_whole - d.milli_free;
        }
      }
    }
    return metrics_.render(g);
  }

  // --- state fed by list+watch (and by tests) ---
  // Replaces the nodes (a list, or a re-list after 410 Gone); pods on unknown nodes hold nothing until
  // their node appears.
  void replace_nodes(std::vector<kube::kube_node> nodes) {
    auto lock = write_lock();
    rebuild(std::move(nodes), st_.pods);
  }
  // Replaces the pods (a list or re-list): bound, non-terminal pods hold resources; pods the extender
  // bound itself that the API server does not show yet are kept.
  void replace_pods(const std::vector<kube::kube_pod>& pods) {
    auto lock = write_lock();
    std::unordered_map<std::string, bound> kept;
    for (const auto& [uid, b] : st_.pods) {
      if (b.own_bind) kept.emplace(uid, b);
    }
    for (const auto& p : pods) {
      if (!p.node_name.empty() && !p.terminal()) kept.insert_or_assign(p.uid, resolved(bound_of(p, false)));
    }
    auto nodes = st_.nodes;
    rebuild(std::move(nodes), std::move(kept));
  }
  void upsert_node(const kube::kube_node& n) { upsert_nodes({n}); }
  // Adds or updates nodes; the state is rebuilt once, and only when some node changed.
  void upsert_nodes(const std::vector<kube::kube_node>& ns) {
    const auto changed = [&] {
      for (const auto& n : ns) {
        const auto i = st_.cluster.find(n.spec.name);
        if (!i || !same_spec(st_.nodes[*i].spec, n.spec)) return true;
      }
      return false;
    };
    {
      std::shared_lock lock(mu_);
      if (!changed()) return;
    }
    auto lock = write_lock();
    if (!changed()) return;
    auto nodes = st_.nodes;
    for (const auto& n : ns) {
      if (const auto i = st_.cluster.find(n.spec.name)) {
        nodes[*i] = n;
      } else {
        nodes.push_back(n);
      }
    }
    rebuild(std::move(nodes), st_.pods);
  }
  void remove_node(const std::string& name) {
    auto lock = write_lock();
    const auto i = st_.cluster.find(name);
    if (!i) return;
    auto nodes = st_.nodes;
    nodes.erase(nodes.begin() + *i);
    rebuild(std::move(nodes), st_.pods);
  }
  // A pod seen by the watch: bound and running pods hold resources, terminal or deleted ones not.
  void pod_event(const kube::kube_pod& p, bool deleted) {
    auto lock = write_lock();
    const auto it = st_.pods.find(p.uid);
    const bool holds = !deleted && !p.node_name.empty() && !p.terminal();
    if (it != st_.pods.end()) {
      if (holds) {  // already accounted (our own bind, now confirmed, or an earlier event)
        it->second.own_bind = false;
        return;
      }
      if (it->second.reserved) release_locked(it->second.spec, it->second.where);
      st_.pods.erase(it);
      return;
    }
    if (!holds) return;
    bound b = resolved(bound_of(p, false));
    place(b);
    st_.pods.emplace(p.uid, std::move(b));
  }

  // --- ModelJobs (group ai.tencent.com), by "namespace/name", fed by their list+watch ---
  // A pod owned by a known ModelJob takes its modelType, priority and qosClass; its labels remain the
  // fallback for fields the ModelJob leaves out and for ModelJobs not (yet) known. A change re-derives
  // the bound pods it owns and rebuilds the state (ModelJob changes are rare; a rebuild is one pass).
  void replace_modeljobs(std::unordered_map<std::string, kube::modeljob_fields> jobs) {
    auto lock = write_lock();
    modeljobs_ = std::move(jobs);
    rederive_locked();
  }
  void modeljob_event(const std::string& key, const kube::modeljob_fields& f, bool deleted) {
    auto lock = write_lock();
    if (deleted) {
      if (modeljobs_.erase(key) == 0) return;
    } else {
      modeljobs_.insert_or_assign(key, f);
    }
    rederive_locked();
  }

  // For tests: the gpusched pod bound under `uid`, as the state holds it.
  [[nodiscard]] std::optional<pod> bound_pod(const std::string& uid) const {
    std::shared_lock lock(mu_);
    const auto it = st_.pods.find(uid);
    if (it == st_.pods.end()) return std::nullopt;
    return it->second.spec;
  }

  // For tests and benchmarks: a copy of the state's cluster and bound pods by UID.
  [[nodiscard]] std::size_t bound_pods() const {
    std::shared_lock lock(mu_);
    return st_.pods.size();
  }
  [[nodiscard]] cluster_t cluster_copy() const {
    std::shared_lock lock(mu_);
    return st_.cluster;
  }
  [[nodiscard]] std::size_t node_count() const {
    std::shared_lock lock(mu_);
    return st_.cluster.size();
  }

 private:
  struct bound {
    pod spec;
    std::string node;
    gpu_set gpus = 0;     // the devices (from our bind or the pod's annotation; 0: chosen on placing)
    bool own_bind = false;
    binding where{};
    bool reserved = false;
    std::string modeljob;        // "namespace/name" of the owning ModelJob; empty: none
    kube::modeljob_fields own;   // the pod's own modelType, priority, qosClass (labels, spec)
  };
  static bound bound_of(const kube::kube_pod& p, bool own_bind) {
    bound b{p.spec, p.node_name, p.gpu_indices.value_or(0), own_bind, {}, false, modeljob_key(p), p.own};
    return b;
  }
  static std::string modeljob_key(const kube::kube_pod& p) {
    return p.owner_modeljob.empty() ? std::string() : p.namespace_ + "/" + p.owner_modeljob;
  }
  // Node name -> node_index, built once per state (on every rebuild), with each name's JSON string
  // form: a decision looks up every candidate name and writes most of them back.
  //
  // Lookups try the node after the previous candidate's first: kube-scheduler sends the names in the
  // order of its node tree, which within a zone is the order the nodes were listed (the API server
  // lists by name, as our list+watch does), split into chunks by its parallel filter; a hit costs one
  // comparison with a name stored next to the last one. Otherwise a flat open-addressing table
  // (linear probing, load <= 1/2) whose slots carry 32 bits of the hash beside the index, so a probe
  // reads a name only when the hash agrees (the table of node indices alone missed the cache twice
  // per lookup: the slot, then the cluster's name; a third of BM_ExtenderFilter/5000's time).
  struct name_index {
    std::string text;                 // every name, back to back
    std::vector<std::uint32_t> at;    // node n's name: text[at[n], at[n + 1])
    std::string quoted;               // every name as a JSON string ("..." with escapes), back to back
    std::vector<std::uint32_t> qat;   // node n's: quoted[qat[n], qat[n + 1])
    std::vector<std::uint64_t> slots; // (hash >> 32) << 32 | (node_index + 1); 0: empty
    std::size_t mask = 0;

    static constexpr node_index none = static_cast<node_index>(-1);

    // A 64-bit hash of 8-byte words (multiply-xorshift, the finaliser of splitmix64: Steele, Lea and
    // Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014); names are short.
    static std::uint64_t hash(std::string_view s) noexcept {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
      std::size_t i = 0;
      for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
      }
      if (i < s.size()) {
        std::uint64_t w = 0;
        std::memcpy(&w, s.data() + i, s.size() - i);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
      }
      h = (h ^ (h >> 30)) * 0x94d049bb133111ebULL;
      return h ^ (h >> 31);
    }

    // Equal bytes, 8 at a time and inline: names are short, and a call to memcmp per name was 7% of
    // BM_ExtenderFilter/5000/5000.
    static bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
      std::size_t i = 0;
      for (; i + 8 <= n; i += 8) {
        std::uint64_t x, y;
        std::memcpy(&x, a + i, 8);
        std::memcpy(&y, b + i, 8);
        if (x != y) return false;
      }
      for (; i < n; ++i) {
        if (a[i] != b[i]) return false;
      }
      return true;
    }

    void build(const cluster_t& c) {
      const std::size_t n = c.size();
      text.clear();
      quoted.clear();
      at.assign(1, 0);
      qat.assign(1, 0);
      for (node_index i = 0; i < n; ++i) {
        text += c.name(i);
        append_string(quoted, c.name(i));
        if (text.size() > UINT32_MAX || quoted.size() > UINT32_MAX) throw invalid_argument_error("nodes", "names exceed 4 GiB");
        at.push_back(static_cast<std::uint32_t>(text.size()));
        qat.push_back(static_cast<std::uint32_t>(quoted.size()));
      }
      std::size_t cap = 16;
      while (cap < 2 * n) cap *= 2;
      slots.assign(cap, 0);
      mask = cap - 1;
      for (node_index i = 0; i < n; ++i) {
        const std::uint64_t h = hash(name(i));
        std::size_t s = h & mask;
        while (slots[s] != 0) s = (s + 1) & mask;
        slots[s] = (h & 0xffffffff00000000ULL) | (static_cast<std::uint64_t>(i) + 1);
      }
    }
    [[nodiscard]] std::size_t size() const noexcept { return at.empty() ? 0 : at.size() - 1; }  // empty: never built
    [[nodiscard]] std::string_view name(node_index n) const noexcept {
      return std::string_view(text).substr(at[n], at[n + 1] - at[n]);
    }
    [[nodiscard]] std::string_view json_name(node_index n) const noexcept {
      return std::string_view(quoted).substr(qat[n], qat[n + 1] - qat[n]);
    }
    // The node named `s`, or `none`; `hint` (any value) is tried first.
    [[nodiscard]] node_index find(std::string_view s, node_index hint) const noexcept {
      if (hint < size() && at[hint + 1] - at[hint] == s.size() && same_bytes(text.data() + at[hint], s.data(), s.size())) {
        return hint;
      }
      if (slots.empty()) return none;
      const std::uint64_t h = hash(s);
      const std::uint64_t tag = h & 0xffffffff00000000ULL;
      for (std::size_t i = h & mask; slots[i] != 0; i = (i + 1) & mask) {
        if ((slots[i] & 0xffffffff00000000ULL) != tag) continue;
        const auto n = static_cast<node_index>((slots[i] & 0xffffffffULL) - 1);
        if (name(n).size() == s.size() && same_bytes(name(n).data(), s.data(), s.size())) return n;
      }
      return none;
    }
  };
  struct state {
    cluster_t cluster;
    std::vector<kube::kube_node> nodes;  // by node_index
    std::unordered_map<std::string, bound> pods;  // by pod UID
    name_index by_name;
    // The cluster as the batch engine reads it (structure of arrays), kept in step by every reserve
    // and release (reserve_locked / release_locked); built with the state. Memory: docs/batch.md,
    // 97 bytes per node plus 16 per GPU slot.
    batch::node_table table;
    bool table_ok = false;         // false: no configured profile, or a node outside the engine's domain
    std::uint64_t table_build = 0;  // new with every build: engines prepared on another build re-prepare
  };

  static bool same_spec(const node_spec& a, const node_spec& b) {
    return a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib && a.gpus == b.gpus && a.rack == b.rack;
  }

  // b with its ModelJob's fields applied (caller holds a lock).
  bound resolved(bound b) const {
    kube::kube_pod k;
    k.spec = std::move(b.spec);
    k.own = b.own;
    const auto it = b.modeljob.empty() ? modeljobs_.end() : modeljobs_.find(b.modeljob);
    kube::apply_modeljob(k, it == modeljobs_.end() ? nullptr : &it->second);
    b.spec = std::move(k.spec);
    b.own = std::move(k.own);
    return b;
  }
  // A pod of a request with its ModelJob's fields applied.
  void resolve(kube::kube_pod& p) const {
    const std::string key = modeljob_key(p);
    if (key.empty()) return;
    std::shared_lock lock(mu_);
    const auto it = modeljobs_.find(key);
    kube::apply_modeljob(p, it == modeljobs_.end() ? nullptr : &it->second);
  }
  // Re-derives every owned bound pod after a ModelJob change; the state is rebuilt only when one
  // changed (the model type is counted per node by reserve, so a change is a release and a reserve).
  void rederive_locked() {
    bool changed = false;
    auto pods = st_.pods;
    for (auto& [uid, b] : pods) {
      if (b.modeljob.empty()) continue;
      bound r = resolved(b);
      if (!(r.spec.model_type == b.spec.model_type) || r.spec.priority != b.spec.priority || r.spec.qos != b.spec.qos) {
        b = std::move(r);
        changed = true;
      }
    }
    if (changed) {
      auto nodes = st_.nodes;
      rebuild(std::move(nodes), std::move(pods));
    }
  }

  // Reserves b on its node (devices from b.gpus, or chosen by the profile's selector when unknown);
  // a pod that no longer fits (its node shrank) is kept unreserved. Caller holds the exclusive lock.
  void place(bound& b) {
    b.reserved = false;
    const auto n = st_.cluster.find(b.node);
    if (!n) return;
    gpu_set gpus = b.gpus;
    if (gpus == 0 && b.spec.wants_gpu()) {
      auto prof = borrow_profile();
      gpus = prof->select_gpus(st_.cluster, b.spec, *n);
      release_profile(std::move(prof));
      if (gpus == 0) return;
    }
    const binding w = make_binding(b.spec, *n, gpus);
    try {
      reserve_locked(b.spec, w);
    } catch (const invalid_argument_error&) {
      return;
    }
    b.gpus = gpus;
    b.where = w;
    b.reserved = true;
  }
  void rebuild(std::vector<kube::kube_node> nodes, std::unordered_map<std::string, bound> pods) {
    state fresh;
    for (const auto& n : nodes) fresh.cluster.add_node(n.spec);
    fresh.by_name.build(fresh.cluster);
    fresh.nodes = std::move(nodes);
    std::swap(st_, fresh);
    try {
      for (auto& [uid, b] : pods) {
        place(b);  // a pod whose node is not known (yet) is kept unreserved until the node comes
        st_.pods.emplace(uid, std::move(b));
      }
      build_table_locked();
    } catch (...) {
      std::swap(st_, fresh);
      throw;
    }
  }
  // The node table from the cluster (caller holds the exclusive lock); without it (no configured
  // profile, or a node the engine cannot represent) decisions take the per-node plugins.
  void build_table_locked() {
    st_.table_ok = false;
    st_.table_build = ++table_builds_;
    if (!configured_) return;
    try {
      st_.table = batch::node_table(st_.cluster);
      st_.table_ok = true;
    } catch (const invalid_argument_error&) {
    }
  }
  // Every reservation and release of the state goes through these (caller holds the exclusive lock),
  // so that the node table reads what the cluster holds.
  void reserve_locked(const pod& p, const binding& w) {
    st_.cluster.reserve(p, w);
    table_changed(w.node);
  }
  void release_locked(const pod& p, const binding& w) {
    st_.cluster.release(p, w);
    table_changed(w.node);
  }
  void table_changed(node_index n) noexcept {
    if (!st_.table_ok) return;
    try {
      st_.table.refresh(st_.cluster, n);
    } catch (...) {  // the node left the engine's domain (or memory ran out): build again, which decides
      try {
        build_table_locked();
      } catch (...) {
        st_.table_ok = false;
      }
    }
  }

  // The exclusive lock, for every change of the state or the ModelJobs: the change gets a new
  // version, so that filter verdicts kept for prioritize (filter_memo) are not used across it.
  std::unique_lock<std::shared_mutex> write_lock() {
    std::unique_lock lock(mu_);
    version_.fetch_add(1, std::memory_order_acq_rel);
    return lock;
  }

  // A request's batch engine over the state's node table: one per request in flight, pooled as the
  // profiles are. Memory: the prepared columns of the profile's plugins (docs/batch.md), per node.
  struct batch_worker {
    explicit batch_worker(const batch::configured_profile& p) : engine(p, batch::batch_options{1, 0, 512, 8, 0}) {}
    batch::batch_scorer<batch::configured_profile> engine;
    batch::pod_table pods;       // the request's pod
    std::uint64_t prepared = 0;  // the table build the engine is prepared on (0: none)
  };

  // --- profiles ---
  std::unique_ptr<profile_t> make_profile() const {
    auto cfg = parse_scheduler_config<cluster_t>(config_text_, config_source_);
    return std::make_unique<profile_t>(cfg.profile(opts_.scheduler_name).profile);
  }
  std::unique_ptr<profile_t> borrow_profile() const {
    {
      std::lock_guard lock(pool_mu_);
      if (!pool_.empty()) {
        auto p = std::move(pool_.back());
        pool_.pop_back();
        return p;
      }
    }
    return make_profile();
  }
  void release_profile(std::unique_ptr<profile_t> p) const {
    std::lock_guard lock(pool_mu_);
    pool_.push_back(std::move(p));
  }
  std::unique_ptr<batch_worker> borrow_engine() {
    {
      std::lock_guard lock(engine_mu_);
      if (!engines_.empty()) {
        auto e = std::move(engines_.back());
        engines_.pop_back();
        return e;
      }
    }
    return std::make_unique<batch_worker>(*configured_);
  }
  void release_engine(std::unique_ptr<batch_worker> e) {
    std::lock_guard lock(engine_mu_);
    engines_.push_back(std::move(e));
  }

  // --- requests ---
  // Answers are written with invalid UTF-8 replaced (U+FFFD): an error text may quote the request's
  // own bytes (json::parse_error does), and a throwing dump() inside the error path would end the
  // process (found by tests/fuzz/fuzz_extender.cpp).
  static std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
  static answer bad_request(const std::string& why) { return {400, dump(json{{"Error", why}})}; }
  static answer ok(const json& j) { return {200, dump(j)}; }

  template <class F>
  answer timed(verb v, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    answer a;
    try {
      a = f();
    } catch (const invalid_argument_error& e) {
      a = bad_request(e.what());
    } catch (const json::exception& e) {
      a = bad_request(std::string("request body: ") + e.what());
    } catch (const std::exception& e) {  // a bug, not the request's fault: answered, not thrown into httplib
      a = {500, dump(json{{"Error", std::string("gpusched-extender: ") + e.what()}})};
    }
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    metrics_.decision(v, a.status == 200 && !a.refused, dt.count());
    return a;
  }

  void check_size(std::string_view body) const {
    if (body.size() > opts_.max_body_bytes) {
      throw invalid_argument_error("request body", std::to_string(body.size()) + " bytes exceed the limit of " +
                                                       std::to_string(opts_.max_body_bytes));
    }
  }
  json parse_body(std::string_view body) const {
    check_size(body);
    json j = json::parse(body.begin(), body.end());  // throws json::parse_error with the byte position
    if (!j.is_object()) throw invalid_argument_error("request body", "expected a JSON object");
    return j;
  }

  void remember_pending(const kube::kube_pod& p) {
    if (p.uid.empty()) return;
    std::lock_guard lock(pending_mu_);
    if (pending_.insert_or_assign(p.uid, p).second) pending_order_.push_back(p.uid);
    while (pending_.size() > opts_.max_pending_pods && !pending_order_.empty()) {
      pending_.erase(pending_order_.front());
      pending_order_.pop_front();
    }
  }

  // The request body as a json tree, except the elements of a top-level "NodeNames" array, which
  // are appended to `arena` (one buffer, reused between requests) with their spans: 5,000 names as
  // 5,000 json strings cost a heap allocation and a free each. The tree keeps "NodeNames" as an
  // empty array, so that a request without it, or with a NodeNames of the wrong type, reads as before.
  class request_reader {
   public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    request_reader(json& root, std::string& arena, std::vector<std::pair<std::uint32_t, std::uint32_t>>& spans)
        : dom_(root, true), arena_(arena), spans_(spans) {}

    bool null() { return scalar("null") && dom_.null(); }
    bool boolean(bool v) { return scalar("boolean") && dom_.boolean(v); }
    bool number_integer(number_integer_t v) { return scalar("number") && dom_.number_integer(v); }
    bool number_unsigned(number_unsigned_t v) { return scalar("number") && dom_.number_unsigned(v); }
    bool number_float(number_float_t v, const string_t& s) { return scalar("number") && dom_.number_float(v, s); }
    bool binary(binary_t& v) { return scalar("binary") && dom_.binary(v); }
    bool string(string_t& v) {
      if (in_names_) {
        if (arena_.size() + v.size() > UINT32_MAX) fail_element("too long");
        spans_.emplace_back(static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(v.size()));
        arena_ += v;
        return true;
      }
      names_next_ = false;
      return dom_.string(v);
    }
    bool start_object(std::size_t n) {
      if (in_names_) fail_element("expected a string, got object");
      names_next_ = false;
      ++depth_;
      return dom_.start_object(n);
    }
    bool key(string_t& k) {
      if (depth_ == 1) names_next_ = k == "NodeNames";
      return dom_.key(k);
    }
    bool end_object() {
      --depth_;
      return dom_.end_object();
    }
    bool start_array(std::size_t n) {
      if (in_names_) fail_element("expected a string, got array");
      if (depth_ == 1 && names_next_) {
        in_names_ = true;  // a repeated key: the last one wins, as in the json tree
        arena_.clear();
        spans_.clear();
      }
      names_next_ = false;
      ++depth_;
      return dom_.start_array(n);
    }
    bool end_array() {
      --depth_;
      in_names_ = false;
      return dom_.end_array();
    }
    template <class Exception>
    bool parse_error(std::size_t pos, const std::string& token, const Exception& e) {
      return dom_.parse_error(pos, token, e);  // throws e, as json::parse does
    }

   private:
    bool scalar(const char* type) {
      if (in_names_) fail_element(std::string("expected a string, got ") + type);
      names_next_ = false;
      return true;
    }
    [[noreturn]] void fail_element(const std::string& why) const {
      throw invalid_argument_error("NodeNames[" + std::to_string(spans_.size()) + "]", why);
    }
    // nlohmann's own tree builder (what json::parse uses); in detail::, but its (root, allow_exceptions)
    // constructor and event functions are those of the public json_sax interface since 3.2.
    nlohmann::detail::json_sax_dom_parser<json> dom_;
    std::string& arena_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>>& spans_;
    std::size_t depth_ = 0;
    bool names_next_ = false;
    bool in_names_ = false;
  };

  // A decision's buffers, kept per thread between requests (the hot path allocates only the answer).
  struct candidate {  // full-Node mode
    const json* object = nullptr;
    std::uint32_t error = 0;  // untranslatable node: 1 + its index in decision_scratch::errors
  };
  struct decision_scratch {
    std::string arena;  // the NodeNames elements read by nlohmann's reader
    std::vector<std::pair<std::uint32_t, std::uint32_t>> spans;
    std::vector<std::string_view> names;  // the NodeNames elements (in `arena` or simdjson's buffer)
    std::vector<std::string> object_names;  // full-Node mode, and views of them
    std::vector<std::string_view> object_views;
    std::vector<candidate> cands;
    std::vector<std::string> errors;  // full-Node mode: why a node is untranslatable
    std::vector<node_index> idx;      // each candidate's node, or name_index::none
    std::vector<std::size_t> unknown;      // candidates that are not nodes of the state
    std::vector<std::size_t> extra_at;     // where each unknown name starts in `extra`, and its end
    std::string extra;                     // the unknown names as JSON strings (prioritize)
    std::string failed, unresolvable;      // the filter answer's FailedNodes and FailedAndUnresolvableNodes members
    std::vector<node_index> feasible;
    std::vector<std::size_t> feasible_cand;
    std::vector<reason> why;
    std::vector<std::uint8_t> need;
    std::string pod_text;  // the request's Pod, written canonically (filter_memo's key)
    std::vector<std::int64_t> raw, score_of;
    std::vector<std::int32_t> totals;  // batched: each candidate's weighted total (-1: rejected)
#ifdef GPUSCHED_EXTENDER_SIMDJSON
    std::string padded;                 // the body with simdjson's padding after it
    simdjson::dom::parser parser;       // its buffers are reused between requests
#endif
  };

#ifdef GPUSCHED_EXTENDER_SIMDJSON
  // The request body read by simdjson's DOM parser (Debian libsimdjson-dev; it validates the whole
  // document, at several times the speed of nlohmann's lexer, which reads one character at a time
  // and was half of a decision's CPU time) into the same json tree and NodeNames spans as
  // request_reader builds. Returns false when simdjson refuses the document: the caller then reads
  // it with nlohmann, whose answer (the parse error with its position) stands. simdjson accepts no
  // document that nlohmann refuses (both follow RFC 8259, UTF-8 checked); it refuses some that
  // nlohmann reads (a UTF-8 byte order mark, integers beyond 64 bits, nesting deeper than 1,024),
  // and those take the nlohmann path. tests/extender/test_extender_fastjson.cpp compares the two.
  static bool read_simdjson(std::string_view body, json& req, decision_scratch& sc) {
    // The buffers of a very large earlier body are not kept by the thread (the parser's grow to the
    // largest seen); dropped here, not after that request, whose names pointed into them.
    constexpr std::size_t keep = std::size_t{8} << 20;
    if (sc.padded.capacity() > keep && body.size() + simdjson::SIMDJSON_PADDING <= keep) {
      std::string().swap(sc.padded);
      sc.parser = simdjson::dom::parser();
    }
    sc.padded.resize(body.size() + simdjson::SIMDJSON_PADDING);
    std::memcpy(sc.padded.data(), body.data(), body.size());
    simdjson::dom::element root{};
    if (sc.parser.parse(sc.padded.data(), body.size(), false).get(root) != simdjson::SUCCESS) return false;
    simdjson::dom::object top{};
    if (root.get(top) != simdjson::SUCCESS) return false;  // nlohmann's path names the error
    req = json::object();
    for (const auto field : top) {
      simdjson::dom::array names{};
      if (field.key == "NodeNames" && field.value.get(names) == simdjson::SUCCESS) {
        sc.names.clear();  // a repeated key: the last one wins, as in request_reader
        for (const auto e : names) {
          std::string_view name;  // in the parser's string buffer, kept until the next request
          if (e.get(name) != simdjson::SUCCESS) {
            throw invalid_argument_error("NodeNames[" + std::to_string(sc.names.size()) + "]",
                                         std::string("expected a string, got ") + sax_type_name(e));
          }
          sc.names.push_back(name);
        }
        req["NodeNames"] = json::array();
        continue;
      }
      req[std::string(field.key)] = to_json(field.value);
    }
    return true;
  }
  // The type names of nlohmann's type_name(), as request_reader reports a NodeNames element.
  static const char* sax_type_name(simdjson::dom::element e) {
    switch (e.type()) {
      case simdjson::dom::element_type::ARRAY: return "array";
      case simdjson::dom::element_type::OBJECT: return "object";
      case simdjson::dom::element_type::BOOL: return "boolean";
      case simdjson::dom::element_type::NULL_VALUE: return "null";
      case simdjson::dom::element_type::STRING: return "string";
      default: return "number";
    }
  }
  // A simdjson value as the json nlohmann's parser builds from the same text: non-negative integers
  // unsigned, negative ones signed, other numbers double; a repeated key's last value wins. (`-0` is
  // unsigned 0 here and signed 0 there: equal values, read alike by the translation's json_at.)
  template <class T>
  static T scalar(simdjson::dom::element e) {
    T v{};
    return e.get(v) == simdjson::SUCCESS ? v : T{};  // the caller checked the type
  }
  static json to_json(simdjson::dom::element e) {
    switch (e.type()) {
      case simdjson::dom::element_type::ARRAY: {
        json a = json::array();
        simdjson::dom::array arr{};
        if (e.get(arr) == simdjson::SUCCESS) {
          for (const auto x : arr) a.push_back(to_json(x));
        }
        return a;
      }
      case simdjson::dom::element_type::OBJECT: {
        json o = json::object();
        simdjson::dom::object obj{};
        if (e.get(obj) == simdjson::SUCCESS) {
          for (const auto f : obj) o[std::string(f.key)] = to_json(f.value);
        }
        return o;
      }
      case simdjson::dom::element_type::INT64: {
        const auto v = scalar<std::int64_t>(e);
        return v < 0 ? json(v) : json(static_cast<std::uint64_t>(v));
      }
      case simdjson::dom::element_type::UINT64: {
        const auto v = scalar<std::uint64_t>(e);
        return json(v);
      }
      case simdjson::dom::element_type::DOUBLE: {
        const auto v = scalar<double>(e);
        return json(v);
      }
      case simdjson::dom::element_type::STRING: {
        const auto v = scalar<std::string_view>(e);
        return json(std::string(v));
      }
      case simdjson::dom::element_type::BOOL: {
        const auto v = scalar<bool>(e);
        return json(v);
      }
      case simdjson::dom::element_type::NULL_VALUE: break;
    }
    return json(nullptr);
  }
#endif

  // filter and prioritize share the parsing and the per-node checks.
  answer do_filter(std::string_view body, bool scores) {
    static thread_local decision_scratch sc;
    check_size(body);
    json req;
    sc.names.clear();
    bool read = false;
#ifdef GPUSCHED_EXTENDER_SIMDJSON
    if (opts_.simdjson) read = read_simdjson(body, req, sc);
    if (read) simdjson_reads_.fetch_add(1, std::memory_order_relaxed);
#endif
    if (!read) {
      req = json();
      sc.names.clear();
      sc.arena.clear();
      sc.spans.clear();
      request_reader reader(req, sc.arena, sc.spans);
      json::sax_parse(body.begin(), body.end(), &reader);  // throws json::parse_error with the byte position
      for (const auto& [off, len] : sc.spans) sc.names.push_back(std::string_view(sc.arena).substr(off, len));
    }
    if (!req.is_object()) throw invalid_argument_error("request body", "expected a JSON object");
    const kube::json_at root(req, "");
    const auto pod_at = root.at("Pod");
    // The state version before the pod's ModelJob is applied: filter verdicts are kept and reused
    // only when nothing (ModelJobs included) changed from here to the decision.
    const std::uint64_t v0 = version_.load(std::memory_order_acquire);
    kube::kube_pod kp = kube::translate_pod(pod_at.value(), nullptr, "Pod");
    resolve(kp);
    sc.pod_text = dump(pod_at.value());

    // Candidate nodes: full Node objects (nodeCacheCapable: false) or names (true).
    auto& cands = sc.cands;  // Node objects only
    cands.clear();
    std::span<const std::string_view> cand_names;
    const auto nodes_at = root.get("Nodes");
    const auto names_at = root.get("NodeNames");
    if (nodes_at) {
      const auto items = nodes_at->at("items").items();
      std::vector<kube::kube_node> translated;
      sc.object_names.clear();
      sc.object_views.clear();
      sc.errors.clear();
      sc.object_names.reserve(items.size());  // no reallocation: the views point into these strings
      cands.reserve(items.size());
      for (const auto& it : items) {
        candidate c;
        c.object = &it.value();
        sc.object_names.push_back(kube::json_at(it.value(), it.path()).at("metadata").at("name").str());
        sc.object_views.push_back(sc.object_names.back());
        try {
          translated.push_back(kube::translate_node(it.value(), it.path()));
        } catch (const invalid_argument_error& e) {
          sc.errors.emplace_back(e.what());
          c.error = static_cast<std::uint32_t>(sc.errors.size());
        }
        cands.push_back(c);
      }
      upsert_nodes(translated);
      cand_names = sc.object_views;
    } else if (names_at) {
      if (!names_at->value().is_array()) names_at->fail("expected an array, got " + std::string(names_at->value().type_name()));
      cand_names = sc.names;
    } else {
      throw invalid_argument_error("Nodes", "one of Nodes or NodeNames is required");
    }
    remember_pending(kp);  // only a request read in full is remembered for its bind

    const std::size_t m = cand_names.size();
    auto& idx = sc.idx;
    auto& why = sc.why;
    auto& totals = sc.totals;
    idx.resize(m);
    why.assign(m, reason::ok);
    sc.unknown.clear();
    sc.extra.clear();
    sc.extra_at.clear();  // also cleared after use; here too, in case that use threw
    sc.failed.clear();
    sc.unresolvable.clear();
    auto prof = borrow_profile();
    std::unique_ptr<batch_worker> bw = configured_ ? borrow_engine() : nullptr;
    std::string out;
    {
      std::shared_lock lock(mu_);
      const name_index& names = st_.by_name;
      // Names to nodes, each tried first as the successor of the previous one's node.
      node_index hint = 0;
      for (std::size_t i = 0; i < m; ++i) {
        const node_index n = nodes_at && cands[i].error != 0 ? name_index::none : names.find(cand_names[i], hint);
        idx[i] = n;
        if (n == name_index::none) sc.unknown.push_back(i);
        hint = n + 1;  // none + 1 is 0
      }
      // The batch engine decides where the profile has a batch form, the table represents the nodes
      // and the pod is in the engine's domain. The table is read through const: a model type no node
      // serves would need a new bit in it, which only the exclusive lock may add.
      bool batched = bw != nullptr && st_.table_ok;
      if (batched) {
        try {
          bw->pods.assign(std::span<const pod>(&kp.spec, 1), std::as_const(st_.table));
        } catch (const invalid_argument_error&) {
          batched = false;  // a new model type, named resources, or values beyond the engine's exact domain
        }
      }
      if (batched) {
        if (bw->prepared != st_.table_build) {
          bw->engine.prepare(st_.table);
          bw->prepared = st_.table_build;
        } else {
          bw->engine.sync();  // the nodes reserved or released since this engine last ran
        }
        totals.assign(m, -1);
      }
      const bool same_state = version_.load(std::memory_order_acquire) == v0;
      // Prioritize takes the verdicts (and, from the engine, the totals) filter found for this pod in
      // this state.
      auto& need = sc.need;  // candidates whose node still needs the checks
      need.assign(m, 1);
      if (scores && same_state) {
        std::lock_guard memo_lock(memo_mu_);
        if (memo_.version == v0 && memo_.pod == sc.pod_text && (!batched || memo_.totals)) {
          for (std::size_t i = 0; i < m; ++i) {
            const node_index n = idx[i];
            if (n != name_index::none && n < memo_.stamp.size() && memo_.stamp[n] == memo_.epoch) {
              why[i] = memo_.why[n];
              if (batched) totals[i] = memo_.total[n];
              need[i] = 0;
            }
          }
        }
      }
      // The checks (and, batched, the scores), one call per run of consecutive nodes: f(i, j) for each
      // run [i, j) of candidates that are nodes, still need the checks and satisfy `in`.
      const auto for_each_run = [&](auto&& in, auto&& f) {
        const auto member = [&](std::size_t i) { return idx[i] != name_index::none && need[i] != 0 && in(i); };
        for (std::size_t i = 0; i < m;) {
          if (!member(i)) {
            ++i;
            continue;
          }
          std::size_t j = i + 1;
          while (j < m && member(j) && idx[j] == idx[j - 1] + 1) ++j;
          f(i, j);
          i = j;
        }
      };
      const auto every = [](std::size_t) { return true; };
      if (batched) {
        const auto ca = bw->engine.make_check_args(bw->pods, 0);
        const auto sa = bw->engine.make_score_args(bw->pods, 0);
        for_each_run(every, [&](std::size_t i, std::size_t j) {
          bw->engine.score_range(ca, sa, idx[i], static_cast<std::uint32_t>(j - i), totals.data() + i);
        });
        // A rejected node's reason is the first check of the profile that rejects it: the plugins,
        // one call per run of consecutive rejected nodes.
        bool agree = true;
        for_each_run([&](std::size_t i) { return totals[i] < 0; }, [&](std::size_t i, std::size_t j) {
          prof->filter(st_.cluster, kp.spec, idx[i], j - i, why.data() + i);
          for (; i < j; ++i) agree = agree && why[i] != reason::ok;
        });
        if (agree && !per_node_.checks.empty()) {
          // The checks without a batch form, through the plugins, on the nodes the engine passed (the
          // others have their reason): the first of them to reject a node names it.
          for_each_run(every, [&](std::size_t i, std::size_t j) {
            for (const std::size_t k : per_node_.checks) prof->filter_check(k, st_.cluster, kp.spec, idx[i], j - i, why.data() + i);
          });
          for (std::size_t i = 0; i < m; ++i) {
            if (need[i] != 0 && why[i] != reason::ok) totals[i] = -1;
          }
        }
        if (!agree) {  // never expected (the batch forms decide as the plugins): the plugins' verdicts stand
          batch_disagreements_.fetch_add(1, std::memory_order_relaxed);
          batched = false;
          for (std::size_t i = 0; i < m; ++i) {
            if (need[i] != 0) why[i] = reason::ok;
          }
        } else {
          batched_.fetch_add(1, std::memory_order_relaxed);
        }
      }
      if (!batched) {
        for_each_run(every, [&](std::size_t i, std::size_t j) { prof->filter(st_.cluster, kp.spec, idx[i], j - i, why.data() + i); });
      }
      if (!scores && same_state) {
        std::lock_guard memo_lock(memo_mu_);
        if (memo_.version != v0 || memo_.pod != sc.pod_text) {
          memo_.version = v0;
          memo_.pod = sc.pod_text;
          memo_.totals = batched;
          if (++memo_.epoch == 0) {  // after 2^32 pods: no old stamp may match
            std::fill(memo_.stamp.begin(), memo_.stamp.end(), 0);
            memo_.epoch = 1;
          }
        }
        memo_.totals = memo_.totals && batched;
        if (memo_.stamp.size() < st_.cluster.size()) {
          memo_.stamp.resize(st_.cluster.size(), 0);
          memo_.why.resize(st_.cluster.size(), reason::ok);
          memo_.total.resize(st_.cluster.size(), -1);
        }
        for (std::size_t i = 0; i < m; ++i) {
          if (idx[i] == name_index::none) continue;
          memo_.why[idx[i]] = why[i];
          memo_.stamp[idx[i]] = memo_.epoch;
          if (batched) memo_.total[idx[i]] = totals[i];
        }
      }
      if (scores) {
        // Names not in the state are answered with score 0, quoted here.
        for (const std::size_t i : sc.unknown) {
          sc.extra_at.push_back(sc.extra.size());
          append_string(sc.extra, cand_names[i]);
        }
        sc.extra_at.push_back(sc.extra.size());
        std::int64_t wsum = 0;
        for (std::size_t s = 0; s < prof->score_plugin_count(); ++s) wsum += prof->score_plugin_weight(s);
        const extender_scale scale(wsum);
        // score_of: first the plugins' part of each feasible candidate's weighted sum (64 bits), then
        // its extender score. The plugins score what the engine did not: every scorer, or batched, the
        // scorers it does not hold, over the feasible candidates (their NormalizeScore sees the same
        // nodes either way).
        auto& score_of = sc.score_of;
        score_of.assign(m, 0);
        const std::size_t plugin_scorers = batched ? per_node_.scores.size() : prof->score_plugin_count();
        if (plugin_scorers > 0) {
          auto& feasible = sc.feasible;
          auto& feasible_cand = sc.feasible_cand;
          feasible.clear();
          feasible_cand.clear();
          for (std::size_t i = 0; i < m; ++i) {
            if (idx[i] != name_index::none && why[i] == reason::ok) {
              feasible.push_back(idx[i]);
              feasible_cand.push_back(i);
            }
          }
          auto& raw = sc.raw;
          raw.assign(feasible.size(), 0);
          // No PreFilter here (scoring/scorer.hpp): requests come in parallel and in no arrival order,
          // and the one scorer hook that needs it, FillAwareRefill's count (observeDemand), is refused
          // for profiles loaded here (plugin_context::counts_pods).
          for (std::size_t s = 0; s < plugin_scorers && !feasible.empty(); ++s) {
            const std::size_t k = batched ? per_node_.scores[s] : s;
            prof->score_plugin(k, st_.cluster, kp.spec, feasible, raw.data());
            for (std::size_t j = 0; j < feasible.size(); ++j) score_of[feasible_cand[j]] += raw[j] * prof->score_plugin_weight(k);
          }
        }
        for (std::size_t i = 0; i < m; ++i) {
          if (idx[i] != name_index::none && why[i] == reason::ok) score_of[i] = scale((batched ? totals[i] : 0) + score_of[i]);
        }
        // HostPriorityList, written into a buffer sized first (the text after each name is one of eleven).
        static constexpr std::string_view host = R"({"Host":)";
        static constexpr std::array<std::string_view, 11> score_tail = {
            R"(,"Score":0})", R"(,"Score":1})", R"(,"Score":2})", R"(,"Score":3})", R"(,"Score":4})", R"(,"Score":5})",
            R"(,"Score":6})", R"(,"Score":7})", R"(,"Score":8})", R"(,"Score":9})", R"(,"Score":10})"};
        std::size_t size = 2 + (m == 0 ? 0 : m - 1) + sc.extra.size();
        for (std::size_t i = 0; i < m; ++i) {
          size += host.size() + score_tail[static_cast<std::size_t>(score_of[i])].size();
          if (idx[i] != name_index::none) size += names.json_name(idx[i]).size();
        }
        out.resize(size);
        char* p = out.data();
        *p++ = '[';
        std::size_t u = 0;  // the next unknown name
        for (std::size_t i = 0; i < m; ++i) {
          if (i != 0) *p++ = ',';
          p = put(p, host);
          if (idx[i] != name_index::none) {
            p = put(p, names.json_name(idx[i]));
          } else {
            p = put(p, std::string_view(sc.extra).substr(sc.extra_at[u], sc.extra_at[u + 1] - sc.extra_at[u]));
            ++u;
          }
          p = put(p, score_tail[static_cast<std::size_t>(score_of[i])]);
        }
        *p++ = ']';
        sc.extra_at.clear();
      } else {
        // ExtenderFilterResult. FailedAndUnresolvableNodes lists the unknown or untranslatable nodes
        // first, then those failing for a reason evicting pods cannot cure.
        std::string& unres = sc.unresolvable;
        std::string& failed = sc.failed;
        for (const std::size_t i : sc.unknown) {
          if (!unres.empty()) unres += ',';
          append_string(unres, cand_names[i]);
          unres += ':';
          if (nodes_at && cands[i].error != 0) {
            append_string(unres, sc.errors[cands[i].error - 1]);
          } else {
            append_string(unres, "node '" + std::string(cand_names[i]) + "' is not in gpusched-extender's cache");
          }
          metrics_.unresolvable_node();
        }
        std::size_t passed_names = 0, passed_bytes = 0;
        for (std::size_t i = 0; i < m; ++i) {
          if (idx[i] == name_index::none) continue;
          if (why[i] == reason::ok) {
            ++passed_names;
            passed_bytes += names.json_name(idx[i]).size();
            continue;
          }
          metrics_.rejection(why[i]);
          std::string& to = unresolvable_reason(why[i]) ? unres : failed;
          if (!to.empty()) to += ',';
          to += names.json_name(idx[i]);
          to += ':';
          to += quoted_reason(why[i]);
        }
        static constexpr std::string_view head = R"({"Error":"","FailedNodes":{)";
        static constexpr std::string_view mid = R"(},"FailedAndUnresolvableNodes":{)";
        static constexpr std::string_view by_name = R"(},"Nodes":null,"NodeNames":[)";
        std::string objects;
        std::size_t size = head.size() + failed.size() + mid.size() + unres.size();
        if (nodes_at) {
          json passed = json::array();
          for (std::size_t i = 0; i < m; ++i) {
            if (idx[i] != name_index::none && why[i] == reason::ok) passed.push_back(*cands[i].object);
          }
          objects = R"(},"NodeNames":null,"Nodes":)" + dump(json{{"metadata", json::object()}, {"items", std::move(passed)}}) + "}";
          size += objects.size();
        } else {
          size += by_name.size() + 2 + (passed_names == 0 ? 0 : passed_names - 1) + passed_bytes;
        }
        out.resize(size);
        char* p = out.data();
        p = put(p, head);
        p = put(p, failed);
        p = put(p, mid);
        p = put(p, unres);
        if (nodes_at) {
          p = put(p, objects);
        } else {
          p = put(p, by_name);
          bool first = true;
          for (std::size_t i = 0; i < m; ++i) {
            if (idx[i] == name_index::none || why[i] != reason::ok) continue;
            if (!first) *p++ = ',';
            first = false;
            p = put(p, names.json_name(idx[i]));
          }
          *p++ = ']';
          *p++ = '}';
        }
      }
    }
    if (bw) release_engine(std::move(bw));
    release_profile(std::move(prof));
    return {200, std::move(out)};
  }
  static char* put(char* p, std::string_view s) noexcept {
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
  }

  // Appends s as a JSON string; plain names are copied, anything needing escapes goes through json.
  static void append_string(std::string& out, std::string_view s) {
    bool plain = true;
    for (const char ch : s) {
      const auto u = static_cast<unsigned char>(ch);
      if (u < 0x20 || u >= 0x80 || ch == '"' || ch == '\\') {
        plain = false;
        break;
      }
    }
    if (plain) {
      const std::size_t at = out.size();
      out.resize(at + s.size() + 2);  // one size check, not three
      char* p = out.data() + at;
      *p = '"';
      std::memcpy(p + 1, s.data(), s.size());
      p[s.size() + 1] = '"';
    } else {
      out += json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }

  // to_string(r) as a JSON string, written once.
  static std::string_view quoted_reason(reason r) {
    static const std::array<std::string, reason_count> quoted = [] {
      std::array<std::string, reason_count> q;
      for (std::size_t i = 0; i < reason_count; ++i) append_string(q[i], to_string(static_cast<reason>(i)));
      return q;
    }();
    return quoted[static_cast<std::size_t>(r)];
  }

  // A failure that evicting pods cannot cure: the node lacks the GPUs or the model at all.
  static bool unresolvable_reason(reason r) {
    return r == reason::no_gpu || r == reason::gpu_model_not_allowed || r == reason::insufficient_gpu_count;
  }

  answer do_bind(std::string_view body) {
    const json req = parse_body(body);
    const kube::json_at root(req, "");
    const std::string name = root.at("PodName").str();
    const std::string ns = root.at("PodNamespace").str();
    const std::string uid = root.at("PodUID").str();
    const std::string node = root.at("Node").str();
    const auto fail = [](const std::string& why) { return answer{200, dump(json{{"Error", why}}), true}; };

    {
      std::shared_lock lock(mu_);
      if (st_.pods.contains(uid)) return fail("pod " + ns + "/" + name + " is already bound");
    }
    std::optional<kube::kube_pod> kp;
    {
      std::lock_guard lock(pending_mu_);
      if (const auto it = pending_.find(uid); it != pending_.end()) kp = it->second;
    }
    if (!kp && fetcher_) kp = fetcher_(ns, name);
    if (kp) resolve(*kp);  // the ModelJob as it is now (it may have changed since the filter call)
    if (!kp) return fail("pod " + ns + "/" + name + " (uid " + uid + ") was not seen in a filter call and cannot be fetched");
    kp->uid = uid;

    bound b{kp->spec, node, 0, true, {}, false, modeljob_key(*kp), kp->own};
    std::vector<std::string> uuids;  // the node's GPU UUIDs (HAMi's register annotation), when known
    std::int64_t device_mem_mib = 0;
    {
      auto lock = write_lock();
      if (st_.pods.contains(uid)) return fail("pod " + ns + "/" + name + " is already bound");
      const auto n = st_.cluster.find(node);
      if (!n) return fail("node '" + node + "' is not in gpusched-extender's cache");
      auto prof = borrow_profile();
      reason r = reason::ok;
      prof->filter(st_.cluster, kp->spec, *n, 1, &r);
      const gpu_set gpus = r == reason::ok ? prof->select_gpus(st_.cluster, kp->spec, *n) : 0;
      release_profile(std::move(prof));
      if (r != reason::ok) return fail("pod " + ns + "/" + name + " no longer fits node '" + node + "': " + std::string(to_string(r)));
      if (kp->spec.wants_gpu() && gpus == 0) return fail("no GPUs of node '" + node + "' fit pod " + ns + "/" + name);
      b.gpus = gpus;
      uuids = st_.nodes[*n].gpu_uuids;
      if (gpus != 0) device_mem_mib = st_.cluster.gpus(*n)[static_cast<std::size_t>(std::countr_zero(gpus))].mem_total_mib;
      b.where = make_binding(kp->spec, *n, gpus);
      reserve_locked(kp->spec, b.where);
      b.reserved = true;
      st_.pods.emplace(uid, b);
    }
    if (binder_) {
      std::map<std::string, std::string> annotations;
      if (kp->spec.wants_gpu()) {
        annotations.emplace(kube::names::annotation_gpu_indices, kube::format_gpu_indices(b.gpus));
        add_hami_annotations(annotations, kp->spec, node, b.gpus, uuids, device_mem_mib);
      }
      const std::string err = binder_(*kp, node, annotations);
      if (!err.empty()) {
        auto lock = write_lock();
        if (const auto it = st_.pods.find(uid); it != st_.pods.end() && it->second.own_bind) {
          if (it->second.reserved) release_locked(it->second.spec, it->second.where);
          st_.pods.erase(it);
        }
        return fail("binding pod " + ns + "/" + name + " to '" + node + "': " + err);
      }
    }
    {
      std::lock_guard lock(pending_mu_);
      pending_.erase(uid);
    }
    return ok(json{{"Error", ""}});
  }

  // HAMi's bind protocol, so that HAMi's NVIDIA device plugin hands the chosen GPUs to the pod
  // (Project-HAMi/HAMi pkg/util/types.go; the plugin's GetPendingPod looks for bind-phase
  // "allocating", bind-time and vgpu-node naming its node, then reads vgpu-devices-to-allocate).
  // Written only when the node registered every chosen GPU's UUID (hami.io/node-nvidia-register);
  // without HAMi the pod gets gpusched's own annotation alone. Memory per GPU: the pod's
  // nvidia.com/gpumem, else the whole device; cores: the pod's share in percent (100: whole GPU).
  static void add_hami_annotations(std::map<std::string, std::string>& out, const pod& p, const std::string& node, gpu_set gpus,
                                   const std::vector<std::string>& uuids, std::int64_t device_mem_mib) {
    bool known = gpus != 0;
    for_each_gpu(gpus, [&](int g) { known = known && static_cast<std::size_t>(g) < uuids.size(); });
    if (!known) return;
    const std::int64_t mem = p.gpu_mem_mib > 0 ? p.gpu_mem_mib : device_mem_mib;
    const std::string devices = kube::hami_pod_devices(uuids, gpus, mem, p.gpu_milli / 10);
    out.emplace(kube::names::hami_devices_allocated, devices);
    out.emplace(kube::names::hami_devices_to_allocate, devices);
    out.emplace(kube::names::hami_assigned_node, node);
    out.emplace(kube::names::hami_bind_phase, kube::names::hami_bind_allocating);
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    out.emplace(kube::names::hami_bind_time, std::to_string(now.count()));
  }

  // ExtenderPreemptionArgs -> ExtenderPreemptionResult. For each node kube-scheduler proposes,
  // gpusched's victim rules on its own accounting: all proposed victims leave; if the pod still does
  // not fit, or a victim is prod and the preemptor dev, the node is dropped; otherwise victims are
  // added back most important first (higher priority, then earlier submit) while the pod still fits,
  // as Kubernetes' SelectVictimsOnNode reprieves. Victims the extender does not account (pods without
  // a record) stay victims. The state is restored before the lock is released.
  answer do_preempt(std::string_view body) {
    const json req = parse_body(body);
    const kube::json_at root(req, "");
    kube::kube_pod kp = kube::translate_pod(root.at("Pod").value(), nullptr, "Pod");
    resolve(kp);
    struct proposal {
      std::string node;
      std::vector<std::string> uids;
      std::int64_t pdb = 0;
    };
    std::vector<proposal> props;
    const auto meta = root.get("NodeNameToMetaVictims");
    const auto full = root.get("NodeNameToVictims");
    const auto& src = meta ? meta : full;
    if (!src) throw invalid_argument_error("NodeNameToMetaVictims", "one of NodeNameToMetaVictims or NodeNameToVictims is required");
    for (const auto& [node, v] : src->members()) {
      proposal p{node, {}, 0};
      if (const auto pdb = v.get("NumPDBViolations")) p.pdb = pdb->integer(0, INT64_MAX);
      if (const auto pods = v.get("Pods")) {
        for (const auto& x : pods->items()) {
          p.uids.push_back(meta ? x.at("UID").str() : x.at("metadata").at("uid").str());
        }
      }
      props.push_back(std::move(p));
    }

    json out = json::object();
    auto prof = borrow_profile();
    {
      auto lock = write_lock();
      for (const auto& p : props) {
        const auto n = st_.cluster.find(p.node);
        std::vector<std::string> victims;
        std::vector<bound*> known;
        bool allowed = true;
        for (const auto& uid : p.uids) {
          const auto it = st_.pods.find(uid);
          if (it == st_.pods.end() || !it->second.reserved || !n || it->second.where.node != *n) {
            victims.push_back(uid);
            continue;
          }
          if (kp.spec.tier_ == tier::dev && it->second.spec.tier_ == tier::prod) allowed = false;
          known.push_back(&it->second);
        }
        if (!n) {  // not accounted here: kube-scheduler's proposal stands
          out[p.node] = meta_victims(p.uids, p.pdb);
          continue;
        }
        if (!allowed) continue;
        for (bound* b : known) release_locked(b->spec, b->where);
        const auto fits = [&] {
          reason r = reason::ok;
          prof->filter(st_.cluster, kp.spec, *n, 1, &r);
          return r == reason::ok && (!kp.spec.wants_gpu() || prof->select_gpus(st_.cluster, kp.spec, *n) != 0);
        };
        std::vector<bound*> evicted;
        if (fits()) {
          std::stable_sort(known.begin(), known.end(), [](const bound* a, const bound* b) {
            if (a->spec.priority != b->spec.priority) return a->spec.priority > b->spec.priority;
            return a->spec.submit_time < b->spec.submit_time;
          });
          for (bound* b : known) {
            reserve_locked(b->spec, b->where);
            if (!fits()) {
              release_locked(b->spec, b->where);
              evicted.push_back(b);
            }
          }
          for (bound* b : evicted) {
            for (const auto& [uid, rec] : st_.pods) {
              if (&rec == b) victims.push_back(uid);
            }
          }
          out[p.node] = meta_victims(victims, p.pdb);
        } else {
          evicted = known;  // the node is dropped; put everything back
        }
        for (bound* b : evicted) reserve_locked(b->spec, b->where);
      }
    }
    release_profile(std::move(prof));
    return ok(json{{"NodeNameToMetaVictims", out}});
  }
  static json meta_victims(const std::vector<std::string>& uids, std::int64_t pdb) {
    json pods = json::array();
    for (const auto& u : uids) pods.push_back(json{{"UID", u}});
    return json{{"Pods", pods}, {"NumPDBViolations", pdb}};
  }

  std::string config_text_;
  std::string config_source_;
  options opts_;
  binder binder_;
  pod_fetcher fetcher_;
  class metrics metrics_;

  std::atomic<std::uint64_t> simdjson_reads_{0};

  mutable std::shared_mutex mu_;
  state st_;
  std::atomic<std::uint64_t> version_{1};  // changed under the exclusive lock with every change

  // The last filter's verdicts by node, for the prioritize call kube-scheduler sends next for the
  // same pod (with the nodes filter passed): prioritize then runs the checks only on nodes filter
  // did not see. Valid for one state version and one Pod object (its JSON text, written canonically).
  struct filter_memo {
    std::uint64_t version = 0;           // 0: nothing kept
    std::string pod;
    std::vector<reason> why;             // by node_index
    std::vector<std::uint32_t> stamp;    // by node_index: == epoch where `why` is this memo's
    std::vector<std::int32_t> total;     // by node_index: the batch engine's weighted total, when `totals`
    bool totals = false;                 // every stamped node's total is kept (filter ran the engine)
    std::uint32_t epoch = 0;
  };
  std::mutex memo_mu_;  // taken inside the state lock, never the other way round
  filter_memo memo_;
  std::unordered_map<std::string, kube::modeljob_fields> modeljobs_;  // under mu_; outlives rebuilds

  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<profile_t>> pool_;

  // The profile's configured batch form (none: the per-node plugins decide, batch_refusal_ says why)
  // and engines over the state's node table (batch_worker), pooled as the profiles are.
  std::optional<batch::configured_profile> configured_;
  batch::per_node_plugins per_node_;  // the profile's plugins the batch form leaves to the extender
  std::vector<std::string> per_node_names_;
  std::string batch_refusal_;
  std::uint64_t table_builds_ = 0;  // under the exclusive lock
  std::atomic<std::uint64_t> batched_{0};
  std::atomic<std::uint64_t> batch_disagreements_{0};
  std::mutex engine_mu_;
  std::vector<std::unique_ptr<batch_worker>> engines_;

  std::mutex pending_mu_;
  std::unordered_map<std::string, kube::kube_pod> pending_;
  std::deque<std::string> pending_order_;
};

}  // namespace gpusched::extender
