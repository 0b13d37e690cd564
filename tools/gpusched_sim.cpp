// gpusched-sim: replay the Alibaba openb trace (or any trace in its format) with the FGD paper's
// baselines and gpusched's own policy, in parallel over seeds and policies.
//
//   gpusched-sim                                   # default trace, all 9 policies, seeds 42-51
//   gpusched-sim --policy FGD,gpusched --seeds 42-44 --output-json out.json
//   gpusched-sim --mode dynamic --policy FGD --time-scale 1
//   gpusched-sim --mode dynamic --time-scale 100 --preemption   # pods preempt lower priorities
//   gpusched-sim --mode dynamic --preemption --priority-by-qos --queue priority   # Kubernetes' PrioritySort
//   gpusched-sim --profile-file data/profiles/fgd.yaml   # a policy as a profile file (data/profiles/)
//   gpusched-sim --scenario data/scenarios/seed.yaml --profiles kube-default,gpusched --seeds 1-5 [--json]
//                                                  # the seed's serving A/B report (docs/experiment.md)
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/sim/dynamic.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/policies.hpp"
#include "gpusched/sim/replay_fields.hpp"
#include "gpusched/sim/results_json.hpp"
#include "gpusched/sim/sha256.hpp"
#include "gpusched/sim/trace.hpp"
#if defined(GPUSCHED_SIM_SCENARIO)
#include "gpusched/profile/profile_file.hpp"
#include "gpusched/sim/experiment/report.hpp"
#include "gpusched/sim/serving/scenario_yaml.hpp"
#include "gpusched/sim/world/run_world.hpp"
#endif

namespace {

using namespace gpusched;
using json = nlohmann::ordered_json;

#ifndef GPUSCHED_SOURCE_DIR
#define GPUSCHED_SOURCE_DIR "."
#endif

std::string default_data(const char* file) {
  const std::filesystem::path here = std::filesystem::path("data/openb") / file;
  if (std::filesystem::exists(here)) return here.string();
  return (std::filesystem::path(GPUSCHED_SOURCE_DIR) / "data/openb" / file).string();
}

// Limits of the command line (docs/simulator.md, "Strictness and limits"): at most max_seeds seeds, since every
// seed is a full replay per policy (about 0.3 s each on the default trace).
constexpr std::size_t max_seeds = 100000;

// "a,b,c" -> {"a", "b", "c"}; unlike getline, keeps empty items ("42," has two) so they are refused.
std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t comma = text.find(',');
    out.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

// A whole decimal number (no sign, spaces, base prefix or trailing text).
std::optional<std::uint64_t> whole_number(std::string_view s) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// "42-51", "42,43,50" or a mix; every seed a whole decimal number within 0..2^64-1, ranges ascending,
// no seed twice, at most max_seeds in all. Throws std::invalid_argument with the reason.
std::vector<std::uint64_t> parse_seeds(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::string_view item : split_commas(text)) {
    if (item.empty()) throw std::invalid_argument("'" + sim::detail::excerpt(text) + "' has an empty item");
    const std::string quoted = "'" + sim::detail::excerpt(item) + "'";
    const std::size_t dash = item.find('-');
    const auto a = whole_number(item.substr(0, dash));
    const auto b = dash == std::string_view::npos ? a : whole_number(item.substr(dash + 1));
    if (!a || !b) {
      throw std::invalid_argument(quoted +
                                  " is not a seed (a whole number 0..18446744073709551615) or a range like 42-51");
    }
    if (*b < *a) throw std::invalid_argument("range " + quoted + " ends before it starts");
    if (*b - *a >= max_seeds - out.size()) {
      throw std::invalid_argument("more than " + std::to_string(max_seeds) + " seeds (" + quoted + ")");
    }
    for (std::uint64_t s = *a;; ++s) {  // s <= *b as the loop test would wrap when *b is the largest seed
      out.push_back(s);
      if (s == *b) break;
    }
  }
  std::vector<std::uint64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (const auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end()) {
    throw std::invalid_argument("seed " + std::to_string(*d) + " is given twice");
  }
  return out;
}

// "FGD,gpusched" or "all"; unknown or repeated names are refused. Throws std::invalid_argument.
std::vector<sim::policy_kind> parse_policies(const std::string& text) {
  std::vector<sim::policy_kind> out;
  for (const std::string_view item : split_commas(text)) {
    if (item == "all" && text == "all") {
      for (const auto& p : sim::policies) out.push_back(p.kind);
      continue;
    }
    const auto k = sim::find_policy(item);
    if (!k) {
      std::string names;
      for (const auto& p : sim::policies) names += std::string(names.empty() ? "" : ", ") + std::string(p.name);
      throw std::invalid_argument("unknown policy '" + sim::detail::excerpt(item) + "' (known: " + names +
                                  "; or 'all' alone)");
    }
    if (std::find(out.begin(), out.end(), *k) != out.end()) {
      throw std::invalid_argument("policy '" + std::string(item) + "' is given twice");
    }
    out.push_back(*k);
  }
  return out;
}

// CLI11 validators. CLI11 converts numbers with strtoll (base 0: "010" is 8, "0x10" is 16) and
// strtold ("nan", "inf", " 5" pass, and Range lets nan through), so numbers are checked here first.
template <class Parse>
CLI::Validator parsed_by(Parse parse, const std::string& name) {
  return CLI::Validator(
      [parse](std::string& s) -> std::string {
        try {
          (void)parse(s);
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
        return {};
      },
      name);
}

// A whole decimal number within lo..hi; rewritten to its plain form before CLI11 converts it.
CLI::Validator decimal_integer(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const auto v = whole_number(s);
        if (!v) return "'" + sim::detail::excerpt(s) + "' is not a whole decimal number";
        if (*v < lo || *v > hi) return s + " is outside " + std::to_string(lo) + ".." + std::to_string(hi);
        s = std::to_string(*v);
        return {};
      },
      "INT in " + std::to_string(lo) + ".." + std::to_string(hi));
}

// A finite decimal number within lo..hi (plain or exponent notation).
CLI::Validator finite_number(double lo, double hi) {
  std::ostringstream range;
  range << lo << ".." << hi;
  return CLI::Validator(
      [lo, hi, r = range.str()](std::string& s) -> std::string {
        double v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
          return "'" + sim::detail::excerpt(s) + "' is not a finite decimal number";
        }
        if (v < lo || v > hi) return s + " is outside " + r;
        return {};
      },
      "NUMBER in " + range.str());
}

// A row of the table: a built-in policy, or a profile file (--profile-file) named by its
// schedulerName (kind: the policy of that name, if any, for the published column).
struct policy_row {
  std::string name;
  std::optional<sim::policy_kind> kind;
  std::string file;  // empty: the built-in policy `kind`
};
struct task {
  std::size_t row;
  std::uint64_t seed;
};
using outcome = std::variant<std::monostate, sim::paper_result, sim::dynamic_result>;

// "[=========>          ] 23/70 runs, 12.3 s"
class progress_bar {
 public:
  progress_bar(std::size_t total, bool enabled) : total_(total), enabled_(enabled), start_(clock::now()) {}
  void done(const std::string& what) {
    std::lock_guard<std::mutex> lock(m_);
    ++n_;
    if (!enabled_) return;
    constexpr int width = 30;
    const int filled = static_cast<int>(width * n_ / std::max<std::size_t>(total_, 1));
    const double secs = std::chrono::duration<double>(clock::now() - start_).count();
    std::fprintf(stderr, "\r[%s%s] %zu/%zu runs, %.1f s (%s)   ",
                 std::string(static_cast<std::size_t>(filled), '=').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), n_, total_, secs, what.c_str());
    if (n_ == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  using clock = std::chrono::steady_clock;
  std::size_t total_, n_ = 0;
  bool enabled_;
  clock::time_point start_;
  std::mutex m_;
};

// One run's JSON: policy, seed, the field list's scalars (same keys as Python's run_paper / run_dynamic
// dicts), then the series.
template <class Fields, class R>
json run_json(const std::string& policy, std::uint64_t seed, const Fields& fields, const R& r) {
  json j;
  j["policy"] = policy;
  j["seed"] = seed;
  for (const auto& f : fields) j[std::string(f.key)] = sim::value_json(f, f.get(r));
  return j;
}

double round4(double x) { return std::round(x * 1e4) / 1e4; }

json paper_json(const sim::paper_result& r, int max_pct) {
  json j = run_json(r.policy, r.seed, sim::paper_fields, sim::view(r, max_pct));
  const auto curve = r.curve(max_pct);
  json arrived = json::array(), alloc = json::array(), frag = json::array(), ratio = json::array();
  for (const auto& b : curve) {
    arrived.push_back(b.arrived_pct);
    alloc.push_back(round4(b.allocation_pct));
    frag.push_back(round4(b.frag_amount_pct));
    ratio.push_back(round4(b.frag_ratio_pct));
  }
  j["arrived_pct"] = arrived;
  j["allocation_pct"] = alloc;
  j["frag_amount_pct"] = frag;
  j["frag_ratio_pct"] = ratio;
  j["failed_by_shape"] = r.failed_by_shape;
  return j;
}

// Counts by priority as a JSON object keyed by the priority's decimal string (JSON keys are strings).
json by_priority(const std::map<std::int32_t, std::size_t>& m) {
  json o = json::object();
  for (const auto& [priority, count] : m) o[std::to_string(priority)] = count;
  return o;
}

json dynamic_json(const sim::dynamic_result& r) {
  json j = run_json(r.policy, r.seed, sim::dynamic_fields, r);
  const double cap = static_cast<double>(r.gpu_capacity);
  // A sample series as parallel arrays under `prefix`: the 6-hourly samples (""), and the evenly
  // spaced points of the arrival window ("window_", dynamic_options::window_samples).
  const auto put_series = [&](const auto& samples, const std::string& prefix) {
    json t = json::array(), alloc = json::array(), running = json::array(), pending = json::array(), frag = json::array();
    json whole = json::array(), partial = json::array(), one = json::array(), multi = json::array();
    const auto pct = [&](double m) { return round4(m / cap * 100.0); };
    for (const auto& s : samples) {
      t.push_back(s.time);
      alloc.push_back(pct(static_cast<double>(s.allocated_gpu_milli)));
      running.push_back(s.running);
      pending.push_back(s.pending);
      frag.push_back(pct(s.frag_gpu_milli));
      whole.push_back(pct(static_cast<double>(s.whole_free_gpu_milli)));
      partial.push_back(pct(static_cast<double>(s.partly_free_gpu_milli(r.gpu_capacity))));
      one.push_back(pct(static_cast<double>(s.waiting_one_gpu_milli)));
      multi.push_back(pct(static_cast<double>(s.waiting_multi_gpu_milli)));
    }
    j[prefix + "time_s"] = t;
    j[prefix + "allocation_pct"] = alloc;
    j[prefix + "running_pods"] = running;
    j[prefix + "pending_pods"] = pending;
    j[prefix + "frag_amount_pct"] = frag;
    j[prefix + "free_in_whole_gpus_pct"] = whole;
    j[prefix + "free_in_partly_used_gpus_pct"] = partial;
    j[prefix + "waiting_one_gpu_pct"] = one;
    j[prefix + "waiting_multi_gpu_pct"] = multi;
  };
  put_series(r.samples, "");
  put_series(r.window, "window_");
  j["window_days"] = r.days();
  j["withdrawn_by_shape"] = r.withdrawn_by_shape;
  j["preempted_by_shape"] = r.preempted_by_shape;
  j["pods_by_priority"] = by_priority(r.pods_by_priority);
  j["withdrawn_by_priority"] = by_priority(r.withdrawn_by_priority);
  return j;
}

// A policy's summary: its seeds and, per field, the per-seed values with mean, sd and 95% half-width.
template <class Fields, class R>
json summary_json(const std::string& policy, const std::vector<std::uint64_t>& seeds, const Fields& fields,
                  const std::vector<R>& runs) {
  json sj{{"policy", policy}, {"runs", runs.size()}, {"seeds", seeds}};
  json& m = sj["metrics"] = json::object();
  for (const auto& f : fields) m[std::string(f.key)] = sim::summary_json(f, sim::values_of(f, runs));
  return sj;
}

// Right-aligns `s` in `width` characters, as printf's "%<width>s".
std::string pad_left(const std::string& s, int width) {
  return s.size() >= static_cast<std::size_t>(width) ? s : std::string(static_cast<std::size_t>(width) - s.size(), ' ') + s;
}

// Flushes stdout; a failed write (a full disk, a closed pipe) is an error, not a silent short table.
int finish_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "error: cannot write the report to standard output\n");
    return 2;
  }
  return 0;
}

}  // namespace

#if defined(GPUSCHED_SIM_SCENARIO)
// --scenario mode: two (or more) profiles on the same arrival sequences, mean and 95% CI over seeds.
int run_scenario(const std::string& file, const std::string& profiles, const std::string& seeds_text, bool seeds_given,
                 double duration, bool as_json, bool progress) {
  try {
    const auto sc = sim::serving::load_scenario(file);
    std::vector<std::string> names;
    for (const std::string_view item : split_commas(profiles)) {
      if (item.empty()) throw invalid_argument_error("--profiles", "empty name in '" + profiles + "'");
      if (std::find(names.begin(), names.end(), item) != names.end()) {
        throw invalid_argument_error("--profiles", "'" + std::string(item) + "' is given twice");
      }
      names.emplace_back(item);
    }
    const auto seeds = seeds_given ? parse_seeds(seeds_text) : sc.seeds;
    const auto t0 = std::chrono::steady_clock::now();
    progress_bar bar(names.size() * seeds.size(), progress);
    const auto r = sim::experiment::run_ab(sc, names, seeds, duration,
                                           [&](std::size_t, std::size_t, const std::string& p, std::uint64_t s) {
                                             bar.done(p + " seed " + std::to_string(s));
                                           });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (as_json) {
      std::fputs(sim::experiment::format_json(r, "gpusched-sim").c_str(), stdout);
    } else {
      std::printf("%s: %zu seeds, %.0f s simulated per run, %.1f s wall (%.2f s per run)\n", sc.name.c_str(),
                  seeds.size(), duration < 0 ? sc.duration_s : duration, wall,
                  wall / static_cast<double>(seeds.size() * names.size()));
      std::fputs(sim::experiment::format_table(r).c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return finish_stdout();
}
#endif

int main(int argc, char** argv) {
  CLI::App app{"gpusched-sim: replay a GPU cluster trace with the FGD paper's baselines and gpusched's policy"};
  std::string nodes_file = default_data("openb_node_list_gpu_node.csv");
  std::string pods_file = default_data("openb_pod_list_default.csv");
  std::string policy_text = "all", seeds_text = "42-51", output_json, mode = "paper", queue = "fifo";
  double tune = 1.3, time_scale = 1.0;
  unsigned jobs = std::max(1U, std::thread::hardware_concurrency());
  bool progress = isatty(STDERR_FILENO) != 0, quiet = false, list = false, preemption = false,
       qos_priorities = false;
  std::vector<CLI::Option*> replay_opts;  // the options of the openb replay (paper and dynamic modes)
  replay_opts.push_back(app.add_option("--nodes", nodes_file, "node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
                            ->check(CLI::ExistingFile)
                            ->capture_default_str());
  replay_opts.push_back(app.add_option("--pods", pods_file, "pod list CSV (openb format)")
                            ->check(CLI::ExistingFile)
                            ->capture_default_str());
  replay_opts.push_back(app.add_option("--policy", policy_text, "policies, comma-separated, or 'all'")
                            ->check(parsed_by(parse_policies, "POLICIES"))
                            ->capture_default_str());
  CLI::Option* seeds_opt = app.add_option("--seeds", seeds_text, "seeds: 42-51, or 42,43,50 (at most 100000)")
                               ->check(parsed_by(parse_seeds, "SEEDS"))
                               ->capture_default_str();
  // The table reports the allocation at round(tune x 100)% arrived, so tune is at least 0.01.
  CLI::Option* tune_opt = app.add_option("--tune", tune, "paper mode: GPU demand as a multiple of cluster GPU capacity")
                              ->check(finite_number(0.01, 100.0))
                              ->capture_default_str();
  replay_opts.push_back(tune_opt);
  replay_opts.push_back(app.add_option("--jobs,-j", jobs, "parallel runs (threads)")
                            ->transform(decimal_integer(1, 1024))
                            ->capture_default_str());
  replay_opts.push_back(
      app.add_option("--output-json", output_json, "write every run (series and final metrics) to this file"));
  replay_opts.push_back(
      app.add_option("--mode", mode, "paper (arrivals only, the FGD protocol) or dynamic (creation/deletion times)")
          ->check(CLI::IsMember({"paper", "dynamic"}))
          ->capture_default_str());
  CLI::Option* time_scale_opt =
      app.add_option("--time-scale", time_scale, "dynamic mode: divide arrival times by this (>= 1) to raise the load")
          ->check(finite_number(1.0, 1e9))
          ->capture_default_str();
  replay_opts.push_back(time_scale_opt);
  CLI::Option* queue_opt =
      app.add_option("--queue", queue,
                     "dynamic mode: the order in which waiting pods are retried: fifo (arrival) or priority "
                     "(higher priority first, then arrival: Kubernetes' PrioritySort, kube-scheduler's default)")
          ->check(CLI::IsMember({"fifo", "priority"}))
          ->capture_default_str();
  replay_opts.push_back(queue_opt);
  CLI::Option* progress_opt = app.add_flag("--progress,!--no-progress", progress,
                                           "progress bar on stderr (default: when stderr is a terminal)");
  replay_opts.push_back(app.add_flag("--quiet,-q", quiet, "no summary table"));
  CLI::Option* preemption_opt =
      app.add_flag("--preemption", preemption,
                   "a pod that fits nowhere may preempt lower-priority pods (Kubernetes' DefaultPreemption); paper "
                   "mode: the victims are gone, dynamic: they wait again");
  replay_opts.push_back(preemption_opt);
  // With --preemption (what a pod may evict) or --queue priority (the retry order); checked below.
  CLI::Option* qos_opt = app.add_flag("--priority-by-qos", qos_priorities,
                                      "pod priorities from the trace's qos column (Koordinator's classes: LS, "
                                      "Guaranteed, Burstable 9000, BE 5000; the openb traces give every pod 0); "
                                      "needs --preemption or --queue priority");
  replay_opts.push_back(qos_opt);
  std::vector<std::string> profile_files;
#if defined(GPUSCHED_SIM_SCENARIO)
  CLI::Option* profile_file_opt =
      app.add_option("--profile-file", profile_files,
                     "replay with this profile file (a KubeSchedulerConfiguration with one profile, e.g. "
                     "data/profiles/fgd.yaml) instead of --policy; repeatable")
          ->check(CLI::ExistingFile);
  profile_file_opt->excludes(replay_opts[2]);  // --policy
  replay_opts.push_back(profile_file_opt);
#endif
  CLI::Option* list_opt = app.add_flag("--list-policies", list, "list the policies and exit");
  for (CLI::Option* o : replay_opts) list_opt->excludes(o);
  list_opt->excludes(seeds_opt);
  list_opt->excludes(progress_opt);
#if defined(GPUSCHED_SIM_SCENARIO)
  std::string scenario_file, profiles_text = "kube-default,gpusched";
  double duration = -1.0;
  bool as_json = false;
  CLI::Option* scenario_opt =
      app.add_option("--scenario", scenario_file, "serving scenario YAML: print the A/B report of --profiles instead")
          ->check(CLI::ExistingFile);
  app.add_option("--profiles", profiles_text, "scenario mode: profiles, comma-separated (two give a change column)")
      ->capture_default_str()
      ->needs(scenario_opt);
  // The same range as the scenario file's duration_s (at most a year, sim::serving::max_duration_s);
  // a run costs about 10 s of wall time per simulated day with data/scenarios/seed.yaml.
  app.add_option("--duration", duration, "scenario mode: simulated seconds (default: the scenario's duration_s)")
      ->check(finite_number(1e-9, sim::serving::max_duration_s))
      ->needs(scenario_opt);
  app.add_flag("--json", as_json, "scenario mode: JSON (mean and ci95 per metric and profile) instead of the table")
      ->needs(scenario_opt);
  for (CLI::Option* o : replay_opts) {
    if (o->get_name() != "--jobs") scenario_opt->excludes(o);  // a world scenario's sweep takes --jobs
  }
  scenario_opt->excludes(list_opt);
#endif
  CLI11_PARSE(app, argc, argv);
#if defined(GPUSCHED_SIM_SCENARIO)
  if (!scenario_file.empty()) {
    if (sim::world::is_world_scenario_file(scenario_file)) {  // issue 17: the seed's world (sim/world/run_world.hpp)
      return sim::world::run_world_main(scenario_file, app.count("--profiles") > 0 ? profiles_text : "",
                                        app.count("--seeds") > 0 ? parse_seeds(seeds_text) : std::vector<std::uint64_t>{},
                                        duration, as_json, jobs, progress);
    }
    if (app.count("--jobs") > 0) {
      std::fprintf(stderr, "error: --jobs: a serving scenario runs its profiles one at a time\n");
      return 2;
    }
    return run_scenario(scenario_file, profiles_text, seeds_text, app.count("--seeds") > 0, duration, as_json,
                        progress);
  }
#endif

  if (list) {
    int list_w = 0;
    for (const auto& p : sim::policies) list_w = std::max(list_w, static_cast<int>(p.name.size()));
    for (const auto& p : sim::policies)
      std::printf("%-*s %s\n", list_w, std::string(p.name).c_str(), std::string(p.summary).c_str());
    return finish_stdout();
  }
  if (mode == "dynamic" && tune_opt->count() > 0) {
    std::fprintf(stderr, "error: --tune applies to --mode paper only\n");
    return 2;
  }
  if (mode == "paper" && time_scale_opt->count() > 0) {
    std::fprintf(stderr, "error: --time-scale applies to --mode dynamic only\n");
    return 2;
  }
  if (qos_opt->count() > 0 && !preemption && queue != "priority") {  // priorities would change nothing
    std::fprintf(stderr, "error: --priority-by-qos requires --preemption or --queue priority\n");
    return 2;
  }
  if (mode == "paper" && queue_opt->count() > 0) {  // the paper protocol has no queue: a pod that fits nowhere fails
    std::fprintf(stderr, "error: --queue applies to --mode dynamic only\n");
    return 2;
  }
  std::vector<policy_row> rows;
  if (profile_files.empty()) {
    for (const auto k : parse_policies(policy_text)) rows.push_back({std::string(sim::policy_name(k)), k, {}});  // validated by CLI11
  }
  const std::vector<std::uint64_t> seeds = parse_seeds(seeds_text);

  // The output file is checked before any work: opened for appending (which creates it and changes no
  // byte of an existing one); it is written at the end, and removed again if it was new and a run fails.
  bool output_created = false;
  if (!output_json.empty()) {
    std::error_code ec;
    output_created = !std::filesystem::exists(output_json, ec);
    std::ofstream probe(output_json, std::ios::app);
    if (!probe) {
      std::fprintf(stderr, "error: --output-json: cannot write %s: %s\n", output_json.c_str(), std::strerror(errno));
      return 2;
    }
  }
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    if (output_created) {
      std::error_code ec;
      std::filesystem::remove(output_json, ec);
    }
    return 2;
  };

  sim::trace t;
  try {
    t = sim::trace::load(nodes_file, pods_file);
    sim::check_replayable(t);
    if (qos_priorities) sim::set_priorities_by_qos(t);
    if (mode == "dynamic" && !t.has_times()) {
      return fail(pods_file + " has no creation/deletion times; dynamic mode needs the 11-column format");
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }

#if defined(GPUSCHED_SIM_SCENARIO)
  try {  // each file is checked (and named) before any run
    for (const auto& f : profile_files) {
      const auto fp = load_profile_file<sim::replay_cluster>(f, plugin_context{t.typical, 0, true});
      if (fp.options.percentage_of_nodes_to_score != 100) {
        return fail(f + ": percentageOfNodesToScore: the replay examines every node; give 100 or leave it out");
      }
      for (const auto& r : rows) {
        if (r.name == fp.name) return fail(f + ": schedulerName '" + fp.name + "' is given by another profile file");
      }
      rows.push_back({fp.name, sim::find_policy(fp.name), f});
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
#endif
  std::vector<task> tasks;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (const auto s : seeds) tasks.push_back({r, s});
  }
  std::vector<outcome> results(tasks.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_m;
  progress_bar bar(tasks.size(), progress);
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < tasks.size();) {
      const task& tk = tasks[i];
      try {
        const policy_row& row = rows[tk.row];
        const std::string& name = row.name;
        // Calls f(profile, ties) with the row's profile: the built-in policy's static profile, or
        // the file's, built with the trace's typical pods and the run's seed.
        auto with_row = [&](auto&& f) -> outcome {
#if defined(GPUSCHED_SIM_SCENARIO)
          if (!row.file.empty()) {
            auto fp = load_profile_file<sim::replay_cluster>(row.file, plugin_context{t.typical, tk.seed, true});
            const tie_break_rule ties = fp.profile.preferred_ties().value_or(tie_break_rule::first_node);
            return f(std::move(fp.profile), ties);
          }
#endif
          return sim::with_policy(*row.kind, t.typical, tk.seed,
                                  [&](auto prof) -> outcome { return f(std::move(prof), sim::policy_ties(*row.kind)); });
        };
        if (mode == "paper") {
          sim::paper_options o;
          o.seed = tk.seed;
          o.tune = tune;
          o.preemption = preemption;
          results[i] = with_row([&](auto prof, tie_break_rule ties) -> outcome {
            o.ties = ties;
            return sim::run_paper(t, std::move(prof), o, name);
          });
        } else {
          sim::dynamic_options o;
          o.seed = tk.seed;
          o.time_scale = time_scale;
          o.preemption = preemption;
          o.queue = queue == "priority" ? sim::queue_order::priority : sim::queue_order::fifo;
          results[i] = with_row([&](auto prof, tie_break_rule ties) -> outcome {
            o.ties = ties;
            return sim::run_dynamic(t, std::move(prof), o, name);
          });
        }
        bar.done(name + " seed " + std::to_string(tk.seed));
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(failure_m);
        failure = e.what();
        failed = true;
        next = tasks.size();
      }
    }
  };
  const auto wall = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  const unsigned nthreads = static_cast<unsigned>(std::min<std::size_t>(jobs, tasks.size()));
  for (unsigned i = 0; i < nthreads; ++i) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  if (failed) return fail(failure);

  const int max_pct = static_cast<int>(std::lround(tune * 100));
  const bool default_trace = pods_file.find("openb_pod_list_default.csv") != std::string::npos &&
                             nodes_file.find("openb_node_list_gpu_node.csv") != std::string::npos &&
                             std::fabs(tune - 1.3) < 1e-9;
  json out;
  out["tool"] = "gpusched-sim";
  out["version"] = GPUSCHED_VERSION_STRING;
  out["kind"] = mode == "paper" ? "openb_paper" : "openb_dynamic";
  out["mode"] = mode;
  try {
    out["inputs"] = json::array({{{"role", "nodes"}, {"path", nodes_file}, {"sha256", sim::sha256_file(nodes_file)}},
                                 {{"role", "pods"}, {"path", pods_file}, {"sha256", sim::sha256_file(pods_file)}}});
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  out["seeds"] = seeds;
  if (mode == "paper") out["tune"] = tune;
  if (mode == "dynamic") {
    out["time_scale"] = time_scale;
    out["queue"] = queue;
  }
  out["preemption"] = preemption;
  out["priority_by_qos"] = qos_priorities;
  out["gpu_capacity_milli"] = t.gpu_milli_capacity;
  out["fields"] = mode == "paper" ? sim::fields_json(sim::paper_fields)
                                  : sim::fields_json(sim::dynamic_fields);
  out["runs"] = json::array();
  json summary = json::array();
  // The table's trailing columns: the fields with a width, in list order ("  %<width>.<precision>f");
  // the preemption counts only when the replay preempts.
  auto column = [&](const auto& f) { return f.width > 0 && (preemption || !sim::preemption_field(f.key)); };
  auto header_cells = [&](const auto& fields) {
    std::string h;
    for (const auto& f : fields) {
      if (column(f)) h += "  " + pad_left(std::string(f.label), f.width);
    }
    return h;
  };
  auto row_cells = [&](const auto& fields, const auto& runs) {
    std::string row;
    char cell[64];
    for (const auto& f : fields) {
      if (!column(f)) continue;
      std::snprintf(cell, sizeof cell, "  %*.*f", f.width, f.precision, sim::summarise(sim::values_of(f, runs)).mean);
      row += cell;
    }
    return row;
  };

  int name_w = 14;  // the table's policy column: as wide as its longest name
  for (const auto& r : rows) name_w = std::max(name_w, static_cast<int>(r.name.size()));
  if (mode == "paper") {
    if (!quiet) {
      std::printf("%s, %zu pods, %zu nodes (%lld GPUs), tune %.2f, seeds %s: GPU allocation at %d%% arrived%s\n",
                  pods_file.c_str(), t.pods.size(), t.nodes.size(), static_cast<long long>(t.gpu_milli_capacity / 1000),
                  tune, seeds_text.c_str(), max_pct,
                  preemption ? (qos_priorities ? ", preemption, priorities by qos" : ", preemption") : "");
      std::printf("%-*s %4s  %-15s %9s %7s%s\n", name_w, "policy", "runs", "alloc % (sd)", "published", "diff",
                  header_cells(sim::paper_fields).c_str());
    }
    double fgd_unalloc = -1, gpusched_unalloc = -1;
    for (std::size_t row = 0; row < rows.size(); ++row) {
      std::vector<sim::paper_run> runs;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].row != row) continue;
        const auto& r = std::get<sim::paper_result>(results[i]);
        runs.push_back(sim::view(r, max_pct));
        out["runs"].push_back(paper_json(r, max_pct));
      }
      const std::string& row_name = rows[row].name;
      const double published = rows[row].kind ? sim::info(*rows[row].kind).paper_allocation_pct : 0.0;
      const sim::mean_ci a = sim::summarise(sim::values_of(sim::paper_fields[0], runs));  // allocation_pct_at_tune
      if (rows[row].kind == sim::policy_kind::fgd) fgd_unalloc = 100 - a.mean;
      if (rows[row].kind == sim::policy_kind::gpusched) gpusched_unalloc = 100 - a.mean;
      json sj = summary_json(row_name, seeds, sim::paper_fields, runs);
      if (default_trace && published > 0) sj["published_allocation_pct"] = published;
      summary.push_back(sj);
      if (!quiet) {
        char pub[32] = "-", diff[32] = "-";
        if (default_trace && published > 0) {
          std::snprintf(pub, sizeof pub, "%.2f", published);
          std::snprintf(diff, sizeof diff, "%+.2f", a.mean - published);
        }
        char alloc[32];
        std::snprintf(alloc, sizeof alloc, "%.2f (%.2f)", a.mean, a.sd);
        std::printf("%-*s %4zu  %-15s %9s %7s%s\n", name_w, row_name.c_str(), runs.size(), alloc, pub, diff,
                    row_cells(sim::paper_fields, runs).c_str());
      }
    }
    if (!quiet && fgd_unalloc > 0 && gpusched_unalloc >= 0) {
      std::printf("gpusched leaves %.2f%% of GPU capacity unallocated, %.1f%% less than FGD's %.2f%%.\n",
                  gpusched_unalloc, (1 - gpusched_unalloc / fgd_unalloc) * 100, fgd_unalloc);
    }
  } else {
    if (!quiet) {
      std::printf("%s, %zu pods, %zu nodes, dynamic replay (time scale %.0f), seeds %s%s%s\n", pods_file.c_str(),
                  t.pods.size(), t.nodes.size(), time_scale, seeds_text.c_str(),
                  preemption ? (qos_priorities ? ", preemption, priorities by qos" : ", preemption") : "",
                  queue == "priority" ? ", priority queue" : "");
      std::printf("%-*s %4s%s\n", name_w, "policy", "runs", header_cells(sim::dynamic_fields).c_str());
    }
    for (std::size_t row = 0; row < rows.size(); ++row) {
      std::vector<sim::dynamic_result> runs;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].row != row) continue;
        runs.push_back(std::get<sim::dynamic_result>(results[i]));
        out["runs"].push_back(dynamic_json(runs.back()));
      }
      const std::string& name = rows[row].name;
      summary.push_back(summary_json(name, seeds, sim::dynamic_fields, runs));
      if (!quiet) std::printf("%-*s %4zu%s\n", name_w, name.c_str(), runs.size(), row_cells(sim::dynamic_fields, runs).c_str());
    }
  }
  if (!quiet) std::printf("%zu runs in %.1f s on %u threads\n", tasks.size(), wall_s, nthreads);
  out["summary"] = summary;
  out["wall_s"] = wall_s;
  if (!output_json.empty()) {
    std::ofstream f(output_json, std::ios::trunc);
    f << out.dump(1) << '\n';
    f.flush();
    if (!f) return fail("--output-json: cannot write " + output_json);
  }
  return finish_stdout();
}
