// Standard Workload Format traces for laas-sim.
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    int skipped = 0;
    (void)laas::sim::read_swf(in, "fuzz.swf", &skipped);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
