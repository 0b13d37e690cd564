// libFuzzer harness: an openb pod list (sim/openb.hpp, read_openb_pods; the 11- and 5-column forms).
// Contract: the file is read, or refused with gpusched::file_error naming file:line.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpusched/sim/openb.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)gpusched::sim::read_openb_pods(gpusched::fuzz::scratch_file(data, size, "-pods.csv"));
  } catch (const gpusched::file_error& e) {
    gpusched::fuzz::refused(e);
  }
  return 0;
}
