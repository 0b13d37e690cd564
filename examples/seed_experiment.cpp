// The seed's motivating experiment as an A/B report (issue 7):
//   seed_experiment --scenario data/scenarios/seed.yaml --profiles kube-default,gpusched --seeds 1-5 [--json]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <gpusched/sim/experiment/report.hpp>
#include <gpusched/sim/serving/scenario_yaml.hpp>
#include <string>
#include <vector>

using namespace gpusched;

static std::vector<std::uint64_t> parse_seeds(const std::string& s) {
  std::vector<std::uint64_t> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const auto comma = s.find(',', pos);
    const std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const auto dash = part.find('-');
    if (part.empty()) throw invalid_argument_error("--seeds", "empty entry in '" + s + "'");
    if (dash == std::string::npos) {
      out.push_back(std::stoull(part));
    } else {
      const auto a = std::stoull(part.substr(0, dash)), b = std::stoull(part.substr(dash + 1));
      if (b < a) throw invalid_argument_error("--seeds", "range '" + part + "' runs backwards");
      for (auto x = a; x <= b; ++x) out.push_back(x);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int main(int argc, char** argv) {
  CLI::App app{"A/B report of two scheduling profiles on the seed's serving + training scenario"};
  std::string file = std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed.yaml";
  std::string profiles = "kube-default,gpusched";
  std::string seeds;
  double duration = -1.0;
  bool json = false;
  app.add_option("--scenario", file, "scenario YAML");
  app.add_option("--profiles", profiles, "comma-separated profile names (two for an A/B change column)");
  app.add_option("--seeds", seeds, "e.g. 1-5 or 1,3,7 (default: the scenario's seeds)");
  app.add_option("--duration", duration, "simulated seconds (default: the scenario's duration_s)");
  app.add_flag("--json", json, "print JSON instead of the table");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto sc = sim::serving::load_scenario(file);
    std::vector<std::string> names;
    for (std::size_t pos = 0;;) {
      const auto c = profiles.find(',', pos);
      names.push_back(profiles.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    const auto sd = seeds.empty() ? sc.seeds : parse_seeds(seeds);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = sim::experiment::run_ab(sc, names, sd, duration);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (json) {
      std::fputs(sim::experiment::format_json(r).c_str(), stdout);
    } else {
      std::printf("%s: %zu seeds, %.0f s simulated per run, %.1f s wall (%.2f s per run)\n", sc.name.c_str(),
                  sd.size(), duration < 0 ? sc.duration_s : duration, wall,
                  wall / static_cast<double>(sd.size() * names.size()));
      std::fputs(sim::experiment::format_table(r).c_str(), stdout);
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "error: %s\n", ex.what());
    return 1;
  }
  return 0;
}
