// libFuzzer harness: a serving scenario file (sim/serving/scenario_yaml.hpp). Contract: the input is
// read, or refused with gpusched::file_error. A scenario that is read samples its services' arrivals
// (the first 1000 of each): the work bounds the reader enforces keep this quick.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpusched/sim/serving/arrivals.hpp"
#include "gpusched/sim/serving/scenario_yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusched::sim::serving;
  scenario sc;
  try {
    sc = parse_scenario(gpusched::fuzz::text_of(data, size), "fuzz.yaml", "");  // no file is opened
  } catch (const gpusched::file_error& e) {
    gpusched::fuzz::refused(e);
    return 0;
  }
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    arrival_process a(sc.services[i].arrivals, arrival_seed(sc.seeds.front(), i), sc.duration_s);
    double last = 0.0;
    for (int k = 0; k < 1000; ++k) {
      const double t = a.next();
      if (t == arrival_process::never) break;
      if (!(t >= last) || t > sc.duration_s) __builtin_trap();  // arrivals are sorted and within the run
      last = t;
    }
  }
  return 0;
}
