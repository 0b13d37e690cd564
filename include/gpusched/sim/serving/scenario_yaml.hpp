// Reads a serving scenario from YAML (yaml-cpp; link gpusched::yaml). Strict (profile/yaml_strict.hpp):
// unknown and duplicate keys, a second document, wrong types, quoted or ambiguous numbers, values out
// of range and scenarios beyond the work bounds below are file_error with file:line and the field,
// and nothing is returned.
// Format and an example: docs/serving.md, data/scenarios/seed.yaml.
#pragma once

#if __has_include(<yaml-cpp/yaml.h>)

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "gpusched/core/error.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/profile/yaml_strict.hpp"
#include "gpusched/sim/serving/scenario.hpp"

namespace gpusched::sim::serving {

// Bounds on the work one scenario may ask for, so that every loop of a run ends (issue 15 item 3;
// docs/hardening.md). The reader refuses a scenario beyond any of them with file:line and the field.
inline constexpr double max_duration_s = 365.0 * 86400.0;  // duration_s: one year
// The arrival sampler opens a window every diurnal.period_s / 288 (arrivals.hpp): per service,
// duration_s * 288 / period_s windows at most.
inline constexpr double max_thinning_windows = 1e8;
// Requests per run: rate_qps * (1 + diurnal.amplitude) * the largest burst multiplier * duration_s,
// summed over services (an upper bound of the expected count).
inline constexpr double max_requests = 1e10;
// Burst windows per service: those listed, and the expected number of random ones
// (random_bursts.per_day * duration_s / 86400); merging them is quadratic in their number.
inline constexpr double max_burst_windows = 1000.0;
inline constexpr double max_utilisation_samples = 1e7;  // duration_s / metrics.utilisation_sample_s
// Pods: replicas and scale_up steps of every service plus training count * workers.
inline constexpr double max_pods = 100'000.0;

namespace yaml_detail {

// The scenario's typed reads over a strict document (profile/yaml_strict.hpp): unknown and duplicate
// keys, quoted numbers and YAML 1.1/1.2-ambiguous forms are errors with file:line and the field.
class reader {
 public:
  explicit reader(const yaml_strict::document& doc) : doc_(doc) {}

  [[nodiscard]] const std::string& file() const noexcept { return doc_.file(); }
  [[nodiscard]] std::size_t line(const YAML::Node& n) const { return doc_.line(n); }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& path, const std::string& why) const {
    doc_.fail(at, path, why);
  }

  void expect_map(const YAML::Node& n, const std::string& path) const { doc_.expect_map(n, path); }

  // Every key of map `n` must be one of `allowed` (catches typos such as "max_wait_s" for "max_wait_ms").
  void allow_keys(const YAML::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed) const {
    doc_.allow_keys(n, path, allowed);
  }

  // The value of `key` in map `n`; fails at the map when it is missing.
  YAML::Node required(const YAML::Node& n, std::string_view key, const std::string& path) const {
    const YAML::Node v = n[std::string(key)];
    if (!v.IsDefined()) fail(n, path + "." + std::string(key), "missing");
    return v;
  }

  double number(const YAML::Node& v, const std::string& path, double lo, double hi) const {
    return doc_.number(v, path, lo, hi, range_text(lo, hi));
  }

  long long integer(const YAML::Node& v, const std::string& path, long long lo, long long hi) const {
    return static_cast<long long>(doc_.integer(v, path, static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)));
  }

  std::string text(const YAML::Node& v, const std::string& path, bool allow_empty = false) const {
    return doc_.string(v, path, allow_empty);
  }

  bool boolean(const YAML::Node& v, const std::string& path) const { return doc_.boolean(v, path); }

  // Optional keys: the default when absent.
  double number_or(const YAML::Node& n, std::string_view key, const std::string& path, double def, double lo,
                   double hi) const {
    const YAML::Node v = n[std::string(key)];
    return v.IsDefined() ? number(v, path + "." + std::string(key), lo, hi) : def;
  }
  long long integer_or(const YAML::Node& n, std::string_view key, const std::string& path, long long def, long long lo,
                       long long hi) const {
    const YAML::Node v = n[std::string(key)];
    return v.IsDefined() ? integer(v, path + "." + std::string(key), lo, hi) : def;
  }
  double req_number(const YAML::Node& n, std::string_view key, const std::string& path, double lo, double hi) const {
    return number(required(n, key, path), path + "." + std::string(key), lo, hi);
  }
  long long req_integer(const YAML::Node& n, std::string_view key, const std::string& path, long long lo,
                        long long hi) const {
    return integer(required(n, key, path), path + "." + std::string(key), lo, hi);
  }
  std::string req_text(const YAML::Node& n, std::string_view key, const std::string& path) const {
    return text(required(n, key, path), path + "." + std::string(key));
  }

  template <class F>
  void each(const YAML::Node& list, const std::string& path, F&& f) const {
    if (!list.IsDefined() || list.IsNull()) return;
    if (!list.IsSequence()) fail(list, path, "expected a list");
    for (std::size_t i = 0; i < list.size(); ++i) f(list[i], path + "[" + std::to_string(i) + "]");
  }

  // "> 0" for a tiny positive lower bound (a strict "positive"), ">= lo" without an upper bound.
  static std::string range_text(double lo, double hi) {
    auto show = [](double x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", x);
      return std::string(buf);
    };
    const bool unbounded = hi == std::numeric_limits<double>::max();
    if (lo > 0.0 && lo <= 1e-6) return unbounded ? "> 0" : "> 0 and <= " + show(hi);
    if (unbounded) return ">= " + show(lo);
    return "within " + show(lo) + ".." + show(hi);
  }

 private:
  const yaml_strict::document& doc_;
};

inline constexpr double big = std::numeric_limits<double>::max();

inline tier parse_tier(const reader& r, const YAML::Node& v, const std::string& path) {
  const std::string s = r.text(v, path);
  if (s == "prod") return tier::prod;
  if (s == "dev") return tier::dev;
  r.fail(v, path, "expected prod or dev, got '" + s + "'");
}

inline arrival_params parse_arrivals(const reader& r, const YAML::Node& n, const std::string& path) {
  r.allow_keys(n, path, {"rate_qps", "diurnal", "bursts", "random_bursts"});
  arrival_params a;
  a.rate_qps = r.req_number(n, "rate_qps", path, 0.0, 1e9);
  if (const YAML::Node d = n["diurnal"]; d.IsDefined() && !d.IsNull()) {
    const std::string p = path + ".diurnal";
    r.allow_keys(d, p, {"amplitude", "period_s", "peak_s"});
    a.diurnal_amplitude = r.req_number(d, "amplitude", p, 0.0, 1.0);
    a.diurnal_period_s = r.number_or(d, "period_s", p, 86400.0, 1e-9, big);
    a.diurnal_peak_s = r.number_or(d, "peak_s", p, 0.0, -big, big);
  }
  r.each(n["bursts"], path + ".bursts", [&](const YAML::Node& b, const std::string& p) {
    r.allow_keys(b, p, {"start_s", "duration_s", "multiplier"});
    a.bursts.push_back(burst_window{r.req_number(b, "start_s", p, 0.0, big), r.req_number(b, "duration_s", p, 0.0, big),
                                    r.req_number(b, "multiplier", p, 0.0, 1000.0)});
  });
  if (const YAML::Node b = n["random_bursts"]; b.IsDefined() && !b.IsNull()) {
    const std::string p = path + ".random_bursts";
    r.allow_keys(b, p, {"per_day", "duration_s", "multiplier"});
    a.random_bursts_per_day = r.req_number(b, "per_day", p, 0.0, 1e6);
    a.random_burst_duration_s = r.req_number(b, "duration_s", p, 0.0, big);
    a.random_burst_multiplier = r.req_number(b, "multiplier", p, 0.0, 1000.0);
  }
  return a;
}

inline std::string resolve(const std::string& base_dir, const std::string& p) {
  const std::filesystem::path path(p);
  if (path.is_absolute() || base_dir.empty()) return p;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

inline scenario parse_root(const reader& r, const YAML::Node& root, const std::string& base_dir) {
  scenario sc;
  sc.file = r.file();
  r.allow_keys(root, "scenario",
               {"name", "duration_s", "seeds", "nodes", "latency_model", "engine", "metrics", "services", "training",
                "leaks", "profiles"});
  sc.name = r.req_text(root, "name", "scenario");
  sc.duration_s = r.req_number(root, "duration_s", "scenario", 1e-9, max_duration_s);
  {
    const YAML::Node seeds = r.required(root, "seeds", "scenario");
    if (!seeds.IsSequence() || seeds.size() == 0) r.fail(seeds, "seeds", "expected a non-empty list of integers");
    r.each(seeds, "seeds", [&](const YAML::Node& v, const std::string& p) {
      sc.seeds.push_back(static_cast<std::uint64_t>(r.integer(v, p, 0, std::numeric_limits<long long>::max())));
    });
  }
  {
    const YAML::Node n = r.required(root, "nodes", "scenario");
    const std::string p = "nodes";
    r.allow_keys(
        n, p, {"count", "gpus_per_node", "gpu_model", "gpu_memory_mib", "cpu_milli", "memory_mib", "nvlink_islands"});
    auto& np = sc.nodes;
    np.count = static_cast<int>(r.req_integer(n, "count", p, 1, 1'000'000));
    np.gpus_per_node = static_cast<int>(r.req_integer(n, "gpus_per_node", p, 0, max_gpus_per_node));
    np.gpu_model = r.req_text(n, "gpu_model", p);
    if (np.gpu_model.size() > short_name::max_size)
      r.fail(n["gpu_model"], p + ".gpu_model", "longer than " + std::to_string(short_name::max_size) + " characters");
    np.gpu_memory_mib = static_cast<std::int32_t>(r.req_integer(n, "gpu_memory_mib", p, 1, 1 << 30));
    np.cpu_milli = r.req_integer(n, "cpu_milli", p, 1, std::int64_t{1} << 40);
    np.memory_mib = r.req_integer(n, "memory_mib", p, 1, std::int64_t{1} << 40);
    np.nvlink_islands = static_cast<int>(r.integer_or(n, "nvlink_islands", p, 1, 1, std::max(1, np.gpus_per_node)));
  }
  {
    const YAML::Node n = r.required(root, "latency_model", "scenario");
    const std::string p = "latency_model";
    r.allow_keys(n, p, {"util_csv", "constants_csv", "duration_unit", "share_scaling", "multi_tenant", "models"});
    auto& lc = sc.latency;
    lc.line = r.line(n);
    lc.util_csv = resolve(base_dir, r.req_text(n, "util_csv", p));
    lc.constants_csv = resolve(base_dir, r.req_text(n, "constants_csv", p));
    const YAML::Node unit = r.required(n, "duration_unit", p);
    const std::string u = r.text(unit, p + ".duration_unit");
    if (u == "s") {
      lc.unit = duration_unit::seconds;
    } else if (u == "ms") {
      lc.unit = duration_unit::milliseconds;
    } else {
      r.fail(unit, p + ".duration_unit", "expected s or ms, got '" + u + "'");
    }
    if (const YAML::Node s = n["share_scaling"]; s.IsDefined()) {
      const std::string v = r.text(s, p + ".share_scaling");
      if (v == "none") {
        lc.scaling = share_scaling::none;
      } else if (v == "linear") {
        lc.scaling = share_scaling::linear;
      } else if (v == "amdahl_sm") {
        lc.scaling = share_scaling::amdahl_sm;
      } else {
        r.fail(s, p + ".share_scaling", "expected none, linear or amdahl_sm, got '" + v + "'");
      }
    }
    if (const YAML::Node m = n["multi_tenant"]; m.IsDefined()) {
      lc.multi_tenant = r.text(m, p + ".multi_tenant");
      if (lc.multi_tenant != "sum_of_excess") r.fail(m, p + ".multi_tenant", "expected sum_of_excess");
    }
    const YAML::Node models = r.required(n, "models", p);
    if (!models.IsSequence() || models.size() == 0) r.fail(models, p + ".models", "expected a non-empty list");
    r.each(models, p + ".models", [&](const YAML::Node& m, const std::string& mp) {
      r.allow_keys(m, mp, {"name", "gpu_scale", "cpu_ms_per_item"});
      model_config mc;
      mc.line = r.line(m);
      mc.name = r.req_text(m, "name", mp);
      for (const auto& o : lc.models) {
        if (o.name == mc.name) r.fail(m["name"], mp + ".name", "'" + mc.name + "' listed twice");
      }
      mc.gpu_scale = r.req_number(m, "gpu_scale", mp, 1e-9, 1e6);
      mc.cpu_ms_per_item = r.number_or(m, "cpu_ms_per_item", mp, 0.0, 0.0, 1e6);
      lc.models.push_back(std::move(mc));
    });
  }
  if (const YAML::Node n = root["engine"]; n.IsDefined() && !n.IsNull()) {
    const std::string p = "engine";
    r.allow_keys(n, p, {"startup_s", "restart_delay_s", "auto_restart", "keep_samples"});
    sc.engine.startup_s = r.number_or(n, "startup_s", p, sc.engine.startup_s, 0.0, big);
    sc.engine.restart_delay_s = r.number_or(n, "restart_delay_s", p, sc.engine.restart_delay_s, 0.0, big);
    if (n["auto_restart"].IsDefined()) sc.engine.auto_restart = r.boolean(n["auto_restart"], p + ".auto_restart");
    if (n["keep_samples"].IsDefined()) sc.engine.keep_samples = r.boolean(n["keep_samples"], p + ".keep_samples");
  }
  if (const YAML::Node n = root["metrics"]; n.IsDefined() && !n.IsNull()) {
    r.allow_keys(n, "metrics", {"utilisation_sample_s"});
    sc.utilisation_sample_s = r.number_or(n, "utilisation_sample_s", "metrics", sc.utilisation_sample_s, 1e-6, big);
  }
  const YAML::Node services = r.required(root, "services", "scenario");
  if (!services.IsSequence()) r.fail(services, "services", "expected a list");
  r.each(services, "services", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(
        n, p,
        {"name", "model", "replicas", "gpu_share_milli", "gpu_memory_mib", "cpu_milli", "memory_mib", "priority",
         "tier", "max_batch", "max_wait_ms", "slo_ms", "timeout_ms", "routing", "arrivals", "scale_up"});
    service_config s;
    s.line = r.line(n);
    s.name = r.req_text(n, "name", p);
    for (const auto& o : sc.services) {
      if (o.name == s.name) r.fail(n["name"], p + ".name", "'" + s.name + "' listed twice");
    }
    s.model = r.req_text(n, "model", p);
    if (s.model.size() > short_name::max_size) r.fail(n["model"], p + ".model", "longer than " + std::to_string(short_name::max_size) + " characters");
    s.replicas = static_cast<int>(r.req_integer(n, "replicas", p, 0, 100'000));
    s.gpu_share_milli = static_cast<std::int32_t>(r.req_integer(n, "gpu_share_milli", p, 1, gpu_milli_whole));
    s.gpu_memory_mib = static_cast<std::int32_t>(r.req_integer(n, "gpu_memory_mib", p, 0, sc.nodes.gpu_memory_mib));
    s.cpu_milli = r.integer_or(n, "cpu_milli", p, 0, 0, sc.nodes.cpu_milli);
    s.memory_mib = r.integer_or(n, "memory_mib", p, 0, 0, sc.nodes.memory_mib);
    s.priority = static_cast<int>(r.integer_or(n, "priority", p, 8, seed_min_priority, seed_max_priority));
    if (n["tier"].IsDefined()) s.tier_ = parse_tier(r, n["tier"], p + ".tier");
    s.max_batch = static_cast<int>(r.req_integer(n, "max_batch", p, 1, 4096));
    s.max_wait_s = r.number_or(n, "max_wait_ms", p, 0.0, 0.0, 1e9) / 1000.0;
    s.slo_s = r.req_number(n, "slo_ms", p, 1e-6, 1e9) / 1000.0;
    if (const YAML::Node t = n["timeout_ms"]; t.IsDefined() && !t.IsNull()) {
      s.timeout_s = r.number(t, p + ".timeout_ms", 1e-6, 1e12) / 1000.0;
    }
    if (const YAML::Node rt = n["routing"]; rt.IsDefined()) {
      try {
        s.routing = parse_routing_policy(r.text(rt, p + ".routing"), p + ".routing");
      } catch (const invalid_argument_error& e) {
        throw file_error(r.file(), r.line(rt), e.what());
      }
    }
    s.arrivals = parse_arrivals(r, r.required(n, "arrivals", p), p + ".arrivals");
    r.each(n["scale_up"], p + ".scale_up", [&](const YAML::Node& st, const std::string& sp) {
      r.allow_keys(st, sp, {"at_s", "replicas"});
      service_config::scale_step step;
      step.line = r.line(st);
      step.at_s = r.req_number(st, "at_s", sp, 0.0, big);
      step.replicas = static_cast<int>(r.req_integer(st, "replicas", sp, 1, 100'000));
      s.scale_up.push_back(step);
    });
    sc.services.push_back(std::move(s));
  });
  r.each(root["training"], "training", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p,
                 {"name", "count", "submit_s", "every_s", "workers", "gpus_per_worker", "gpu_milli", "gpu_memory_mib",
                  "cpu_milli", "memory_mib", "priority", "tier", "duration_s", "interference_proxy"});
    training_config t;
    t.line = r.line(n);
    t.name = r.req_text(n, "name", p);
    for (const auto& o : sc.training) {
      if (o.name == t.name) r.fail(n["name"], p + ".name", "'" + t.name + "' listed twice");
    }
    t.count = static_cast<int>(r.integer_or(n, "count", p, 1, 1, 1'000'000));
    t.submit_s = r.number_or(n, "submit_s", p, 0.0, 0.0, big);
    t.every_s = r.number_or(n, "every_s", p, 0.0, 0.0, big);
    t.workers = static_cast<int>(r.req_integer(n, "workers", p, 1, 100'000));
    t.gpus_per_worker =
        static_cast<int>(r.req_integer(n, "gpus_per_worker", p, 1, std::max(1, sc.nodes.gpus_per_node)));
    t.gpu_milli = static_cast<std::int32_t>(r.integer_or(n, "gpu_milli", p, gpu_milli_whole, 1, gpu_milli_whole));
    t.gpu_memory_mib = static_cast<std::int32_t>(r.integer_or(n, "gpu_memory_mib", p, 0, 0, sc.nodes.gpu_memory_mib));
    t.cpu_milli = r.integer_or(n, "cpu_milli", p, 0, 0, sc.nodes.cpu_milli);
    t.memory_mib = r.integer_or(n, "memory_mib", p, 0, 0, sc.nodes.memory_mib);
    t.priority = static_cast<int>(r.integer_or(n, "priority", p, 2, seed_min_priority, seed_max_priority));
    if (n["tier"].IsDefined()) t.tier_ = parse_tier(r, n["tier"], p + ".tier");
    t.duration_s = r.req_number(n, "duration_s", p, 1e-9, big);
    const YAML::Node proxy = r.required(n, "interference_proxy", p);
    r.allow_keys(proxy, p + ".interference_proxy", {"model", "batch"});
    t.proxy_model = r.req_text(proxy, "model", p + ".interference_proxy");
    if (t.proxy_model.size() > short_name::max_size) {
      r.fail(proxy["model"], p + ".interference_proxy.model", "longer than " + std::to_string(short_name::max_size) + " characters");
    }
    t.proxy_batch = static_cast<int>(r.req_integer(proxy, "batch", p + ".interference_proxy", 1, 4096));
    sc.training.push_back(std::move(t));
  });
  r.each(root["leaks"], "leaks", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p, {"at_s", "service", "replica", "mib_per_min"});
    leak_config l;
    l.line = r.line(n);
    l.at_s = r.req_number(n, "at_s", p, 0.0, big);
    l.service = r.req_text(n, "service", p);
    l.replica = static_cast<int>(r.req_integer(n, "replica", p, 0, 100'000));
    l.mib_per_min = r.req_number(n, "mib_per_min", p, 1e-9, 1e12);
    sc.leaks.push_back(std::move(l));
  });
  r.each(root["profiles"], "profiles", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p,
                 {"name", "config", "queue", "dev_share_period", "gangs", "preemption", "overcommit", "leak_eviction"});
    profile_config pc;
    pc.line = r.line(n);
    pc.name = r.req_text(n, "name", p);
    for (const auto& o : sc.profiles) {
      if (o.name == pc.name) r.fail(n["name"], p + ".name", "'" + pc.name + "' listed twice");
    }
    if (const YAML::Node c = n["config"]; c.IsDefined() && !c.IsNull())
      pc.config = resolve(base_dir, r.text(c, p + ".config"));
    if (const YAML::Node q = n["queue"]; q.IsDefined()) {
      const std::string v = r.text(q, p + ".queue");
      if (v != "two_tier" && v != "priority") r.fail(q, p + ".queue", "expected two_tier or priority, got '" + v + "'");
      pc.two_tier_queue = v == "two_tier";
    }
    if (n["dev_share_period"].IsDefined()) {
      const auto v = r.integer(n["dev_share_period"], p + ".dev_share_period", 0, 1'000'000);
      if (v == 1)
        r.fail(n["dev_share_period"], p + ".dev_share_period", "must be 0 (prod strictly first) or >= 2, got 1");
      pc.dev_share_period = static_cast<int>(v);
    }
    if (const YAML::Node g = n["gangs"]; g.IsDefined()) {
      const std::string v = r.text(g, p + ".gangs");
      if (v != "all_or_nothing" && v != "one_by_one")
        r.fail(g, p + ".gangs", "expected all_or_nothing or one_by_one, got '" + v + "'");
      pc.gang_all_or_nothing = v == "all_or_nothing";
    }
    if (const YAML::Node pr = n["preemption"]; pr.IsDefined()) {
      const std::string pp = p + ".preemption";
      r.allow_keys(pr, pp, {"enabled", "budget"});
      pc.preemption = r.boolean(r.required(pr, "enabled", pp), pp + ".enabled");
      if (const YAML::Node b = pr["budget"]; b.IsDefined()) {
        const std::string bp = pp + ".budget";
        if (b.IsScalar() && b.Scalar() == "none") {
          pc.preemption_budget = false;
        } else {
          r.allow_keys(b, bp, {"max_preemptions", "window_s", "cooldown_s"});
          pc.preemption_budget = true;
          pc.budget_max_preemptions = static_cast<int>(r.req_integer(b, "max_preemptions", bp, 1, 1'000'000));
          pc.budget_window_s = r.req_number(b, "window_s", bp, 1e-9, 1e12);
          pc.budget_cooldown_s = r.req_number(b, "cooldown_s", bp, 0.0, 1e12);
        }
      }
    }
    if (const YAML::Node o = n["overcommit"]; o.IsDefined()) {
      const std::string op = p + ".overcommit";
      if (o.IsScalar() && o.Scalar() == "none") {
        pc.overcommit_cpu = 1.0;
        pc.overcommit_memory = 1.0;
      } else {
        r.allow_keys(o, op, {"cpu", "memory"});
        // overcommit_policy accepts 1000..10000 permille: ratios 1.0..10.0
        pc.overcommit_cpu = r.req_number(o, "cpu", op, 1.0, 10.0);
        pc.overcommit_memory = r.req_number(o, "memory", op, 1.0, 10.0);
      }
    }
    if (const YAML::Node le = n["leak_eviction"]; le.IsDefined()) {
      const std::string lp = p + ".leak_eviction";
      r.allow_keys(le, lp, {"enabled", "window", "min_samples", "min_slope_mib_per_s", "min_r2"});
      pc.leak_eviction = r.boolean(r.required(le, "enabled", lp), lp + ".enabled");
      pc.leak_window = static_cast<std::size_t>(r.integer_or(le, "window", lp, 30, 2, 100'000));
      pc.leak_min_samples =
          static_cast<std::size_t>(r.integer_or(le, "min_samples", lp, 10, 2, static_cast<long long>(pc.leak_window)));
      pc.leak_min_slope_mib_per_s = r.number_or(le, "min_slope_mib_per_s", lp, 1.0, 1e-9, 1e12);
      pc.leak_min_r2 = r.number_or(le, "min_r2", lp, 0.8, 0.0, 1.0);
    }
    sc.profiles.push_back(std::move(pc));
  });
  return sc;
}

// Refuses a scenario whose run would exceed a work bound (max_* above), at the line of the field.
inline void check_work_bounds(const reader& r, const YAML::Node& root, const scenario& sc) {
  auto show = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return std::string(buf);
  };
  const double T = sc.duration_s;
  const YAML::Node services = root["services"];
  double requests = 0.0;
  double pods = 0.0;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const auto& s = sc.services[i];
    const auto& a = s.arrivals;
    const std::string p = "services[" + std::to_string(i) + "].arrivals";
    const YAML::Node an = services[i]["arrivals"];
    const double windows = T * 288.0 / a.diurnal_period_s;
    if (windows > max_thinning_windows) {
      const YAML::Node d = an["diurnal"];
      r.fail(d["period_s"].IsDefined() ? d["period_s"] : d, p + ".diurnal.period_s",
             show(a.diurnal_period_s) + " s over duration_s " + show(T) + " makes " + show(windows) +
                 " arrival windows (duration_s * 288 / period_s), at most " + show(max_thinning_windows) +
                 ": period_s must be >= " + show(T * 288.0 / max_thinning_windows));
    }
    if (static_cast<double>(a.bursts.size()) > max_burst_windows) {
      r.fail(an["bursts"], p + ".bursts",
             std::to_string(a.bursts.size()) + " bursts, at most " + show(max_burst_windows));
    }
    const bool random = a.random_bursts_per_day > 0.0 && a.random_burst_duration_s > 0.0;
    const double expected_random = random ? a.random_bursts_per_day * T / 86400.0 : 0.0;
    if (expected_random > max_burst_windows) {
      r.fail(an["random_bursts"]["per_day"], p + ".random_bursts.per_day",
             show(a.random_bursts_per_day) + " per day over duration_s " + show(T) + " expects " +
                 show(expected_random) + " bursts, at most " + show(max_burst_windows));
    }
    double m = 1.0;
    for (const auto& b : a.bursts) m = std::max(m, b.multiplier);
    if (random) m = std::max(m, a.random_burst_multiplier);
    requests += a.rate_qps * (1.0 + a.diurnal_amplitude) * m * T;
    if (requests > max_requests) {
      r.fail(an["rate_qps"], p + ".rate_qps",
             "the services ask for up to " + show(requests) +
                 " requests by here (rate_qps * (1 + diurnal.amplitude) * largest burst multiplier * duration_s, "
                 "summed over services), at most " +
                 show(max_requests));
    }
    pods += s.replicas;  // summed here in double: total_replicas() is an int
    for (const auto& st : s.scale_up) pods += st.replicas;
    if (pods > max_pods) {
      r.fail(services[i], "services[" + std::to_string(i) + "]",
             show(pods) + " pods by here (replicas and scale_up, with training count * workers), at most " +
                 show(max_pods));
    }
  }
  const YAML::Node training = root["training"];
  for (std::size_t i = 0; i < sc.training.size(); ++i) {
    pods += static_cast<double>(sc.training[i].count) * sc.training[i].workers;
    if (pods > max_pods) {
      r.fail(training[i], "training[" + std::to_string(i) + "]",
             show(pods) + " pods by here (replicas and scale_up, with training count * workers), at most " +
                 show(max_pods));
    }
  }
  const double samples = T / sc.utilisation_sample_s;
  if (samples > max_utilisation_samples) {
    const YAML::Node m = root["metrics"];
    r.fail(m.IsDefined() && m["utilisation_sample_s"].IsDefined() ? m["utilisation_sample_s"] : root["duration_s"],
           "metrics.utilisation_sample_s",
           show(sc.utilisation_sample_s) + " s over duration_s " + show(T) + " makes " + show(samples) +
               " samples, at most " + show(max_utilisation_samples));
  }
}

}  // namespace yaml_detail

// Parses scenario text; `file` names it in errors, relative paths resolve against `base_dir`.
inline scenario parse_scenario(const std::string& text, const std::string& file, const std::string& base_dir = "") {
  const yaml_strict::document doc(text, file);
  const yaml_detail::reader r(doc);
  if (!doc.root().IsMap()) doc.fail(doc.root(), "expected a mapping at the top level");
  try {
    scenario sc = yaml_detail::parse_root(r, doc.root(), base_dir);
    yaml_detail::check_work_bounds(r, doc.root(), sc);
    return sc;
  } catch (const YAML::Exception& e) {  // not expected after the strict checks; still reported with its line
    throw file_error(file, e.mark.line >= 0 ? static_cast<std::size_t>(e.mark.line) + 1 : 0, "YAML: " + e.msg);
  }
}

// Reads a scenario file; relative paths in it resolve against its folder.
inline scenario load_scenario(const std::string& path) {
  return parse_scenario(read_text_file(path), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace gpusched::sim::serving

#endif  // __has_include(<yaml-cpp/yaml.h>)
