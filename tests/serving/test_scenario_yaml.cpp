// The scenario file read strictly (issue 15 items 3 and 4): every loop of a run is bounded by the
// file's values (the max_* bounds of scenario_yaml.hpp), and YAML is read as for the scheduler config.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "gpusched/sim/serving/scenario_yaml.hpp"
#include "serving/scenario_fixture.hpp"

using namespace gpusched;
using namespace gpusched::sim::serving;

namespace {

using gpusched::test::interference_dir;

// The fixture's scenario with `duration` on line 2 and `arrivals` on line 18 (the service's).
std::string scenario_text(const std::string& duration = "100", const std::string& arrivals = "{rate_qps: 50}",
                          const std::string& tail = "") {
  using gpusched::test::replace_line;
  return replace_line(replace_line(gpusched::test::minimal_scenario_head(), 2, "duration_s: " + duration), 18,
                      "    arrivals: " + arrivals) +
         tail;
}

std::string timed_error_of(const std::string& text) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string out = "no error";
  try {
    (void)parse_scenario(text, "t.yaml", interference_dir);
  } catch (const file_error& e) {
    out = e.what();
  }
  // Refused (or read) at once: the reader does not run what it bounds.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  return out;
}

}  // namespace

TEST_CASE("serving.scenario yaml.duration_s: nan, inf, huge, zero, negative and quoted are refused") {
  CHECK(timed_error_of(scenario_text()) == "no error");
  CHECK(timed_error_of(scenario_text(".nan")) == "t.yaml:2: scenario.duration_s: must be finite, got .nan");
  CHECK(timed_error_of(scenario_text(".inf")) == "t.yaml:2: scenario.duration_s: must be finite, got .inf");
  CHECK(timed_error_of(scenario_text("1e400")) == "t.yaml:2: scenario.duration_s: out of a double's range: 1e400");
  // max_duration_s: 365 days = 31,536,000 s.
  CHECK(timed_error_of(scenario_text("31536000")) == "no error");
  CHECK(timed_error_of(scenario_text("31536001")) ==
        "t.yaml:2: scenario.duration_s: must be > 0 and <= 3.1536e+07, got 31536001");
  CHECK(timed_error_of(scenario_text("1e9")) == "t.yaml:2: scenario.duration_s: must be > 0 and <= 3.1536e+07, got 1e9");
  CHECK(timed_error_of(scenario_text("0")) == "t.yaml:2: scenario.duration_s: must be > 0 and <= 3.1536e+07, got 0");
  CHECK(timed_error_of(scenario_text("-5")) == "t.yaml:2: scenario.duration_s: must be > 0 and <= 3.1536e+07, got -5");
  CHECK(
      timed_error_of(scenario_text("'100'")) ==
      "t.yaml:2: scenario.duration_s: expected a number, got the string '100' (a quoted or tagged scalar is a string; "
      "write it unquoted)");
  CHECK(
      timed_error_of(scenario_text("0100")) ==
      "t.yaml:2: scenario.duration_s: expected a number, got '0100' (a leading zero: YAML 1.1 reads it as octal, YAML "
      "1.2 as decimal)");
  CHECK(timed_error_of(scenario_text("")) == "t.yaml:2: scenario.duration_s: expected a number, got an empty value");
}

TEST_CASE("serving.scenario yaml.diurnal.period_s 1e-9 (a run that never ends) is refused at its line") {
  // duration_s 100: 100 * 288 / period_s windows <= 1e8 needs period_s >= 2.88e-4.
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 50, diurnal: {amplitude: 0.5, period_s: 1e-9}}")) ==
        "t.yaml:18: services[0].arrivals.diurnal.period_s: 1e-09 s over duration_s 100 makes 2.88e+13 arrival windows "
        "(duration_s * 288 / period_s), at most 1e+08: period_s must be >= 0.000288");
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 50, diurnal: {amplitude: 0.5, period_s: 2.9e-4}}")) == "no error");
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 50, diurnal: {amplitude: 0.5, period_s: 2.8e-4}}")) != "no error");
  // Without a diurnal entry the period is a day: one window per 300 s.
  CHECK(timed_error_of(scenario_text("31536000")) == "no error");
}

TEST_CASE("serving.scenario yaml.requests, bursts, samples and pods are bounded") {
  // 1e8 qps * (1 + 0) * 1 * 100 s = 1e10 requests: the bound; 1.1e8 qps is above it.
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 1e8}")) == "no error");
  CHECK(
      timed_error_of(scenario_text("100", "{rate_qps: 1.1e8}")) ==
      "t.yaml:18: services[0].arrivals.rate_qps: the services ask for up to 1.1e+10 requests by here (rate_qps * (1 + "
      "diurnal.amplitude) * largest burst multiplier * duration_s, summed over services), at most 1e+10");
  // A burst multiplier counts: 5e7 * 3 * 100 = 1.5e10.
  CHECK(
      timed_error_of(scenario_text("100", "{rate_qps: 5e7, bursts: [{start_s: 0, duration_s: 1, multiplier: 3}]}")) ==
      "t.yaml:18: services[0].arrivals.rate_qps: the services ask for up to 1.5e+10 requests by here (rate_qps * (1 + "
      "diurnal.amplitude) * largest burst multiplier * duration_s, summed over services), at most 1e+10");
  // Random bursts: 1e6 per day over 100 s expects 1157 windows (> 1000); 8e5 expects 926.
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 1, random_bursts: {per_day: 1e6, duration_s: 1, multiplier: 2}}")) ==
        "t.yaml:18: services[0].arrivals.random_bursts.per_day: 1e+06 per day over duration_s 100 expects 1.16e+03 "
        "bursts, at most 1e+03");
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 1, random_bursts: {per_day: 8e5, duration_s: 1, multiplier: 2}}")) ==
        "no error");
  // Utilisation samples: 1e6 s / 0.05 s = 2e7 > 1e7.
  CHECK(timed_error_of(scenario_text("1e6", "{rate_qps: 1}", "metrics: {utilisation_sample_s: 0.05}\n")) ==
        "t.yaml:19: metrics.utilisation_sample_s: 0.05 s over duration_s 1e+06 makes 2e+07 samples, at most 1e+07");
  // Pods: 2 replicas + 30 steps of 5000 = 150002 > 100000.
  std::string steps = "    scale_up:\n";
  for (int i = 0; i < 30; ++i) steps += "      - {at_s: " + std::to_string(i + 1) + ", replicas: 5000}\n";
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 1}", steps)) ==
        "t.yaml:11: services[0]: 1.5e+05 pods by here (replicas and scale_up, with training count * workers), at most "
        "1e+05");
}

TEST_CASE("serving.scenario yaml.duplicate keys, a second document, quoted and ambiguous values") {
  CHECK(timed_error_of(scenario_text() + "name: u\n") == "t.yaml:19: name: duplicate key (first at line 1)");
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 50, rate_qps: 60}")) ==
        "t.yaml:18: services[0].arrivals.rate_qps: duplicate key (first at line 18)");
  CHECK(timed_error_of(scenario_text() + "---\nname: u\n") ==
        "t.yaml:20: a second YAML document; the file must hold exactly one (delete it or the '---' before it)");
  CHECK(
      timed_error_of(scenario_text() + "engine: {auto_restart: yes}\n") ==
      "t.yaml:19: engine.auto_restart: expected true or false, got 'yes' (YAML 1.1 reads it as a boolean, YAML 1.2 as "
      "a string)");
  CHECK(timed_error_of(scenario_text() + "seeds_: [1]\n")
            .rfind("t.yaml:19: scenario.seeds_: unknown key (allowed: name, duration_s, ", 0) == 0);
  CHECK(timed_error_of(scenario_text("100", "{rate_qps: 0x10}")) == "no error");  // 16: YAML 1.1 and 1.2 agree
}
